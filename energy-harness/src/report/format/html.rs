//! The report as a standalone HTML page: the table, its notes, and each benchmark's SVG
//! power plot from the run directory.

use std::fmt::Write as _;

use super::super::compare::ResultSet;
use super::super::escape::html as escape;
use super::super::file_stem;
use super::table::{Table, HEADER};

/// The page of `table`, with the plots of `current`'s benchmarks.
pub fn html(table: &Table<'_>, current: &ResultSet) -> String {
    let t = table.title(escape);
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child{{text-align:left}}</style></head><body><h2>{t}</h2>\n<table><tr>"
    );
    for h in HEADER {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    for note in &table.notes {
        let _ = writeln!(out, "<p>{note}</p>");
    }
    for r in current.results.values() {
        let svg_path = current.dir.join(format!("{}.svg", file_stem(&r.id)));
        let _ = writeln!(out, "<h3>{}</h3>", escape(&r.id));
        match std::fs::read_to_string(&svg_path) {
            Ok(svg) => out.push_str(&svg),
            Err(_) => {
                let _ = writeln!(out, "<p>(no plot: {} is missing)</p>", escape(&svg_path.display().to_string()));
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}
