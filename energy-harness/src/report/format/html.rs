//! The report as a standalone HTML page: the table (regressions in red, improvements in
//! green), its notes, each benchmark's SVG power plot from the run directory and, against
//! a baseline, the overlay of both runs' window energies ([`super::overlay`]).

use std::fmt::Write as _;

use super::super::compare::{ResultSet, Verdict};
use super::super::escape::html as escape;
use super::super::file_stem;
use super::overlay::overlay;
use super::shown_dir;
use super::table::{Table, HEADER};

/// The class of a row: `regression` (red), `improvement` (green), or none.
fn row_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(Verdict::Regression) => " class=\"regression\"",
        Some(Verdict::Improvement) => " class=\"improvement\"",
        _ => "",
    }
}

/// The name of a run as the legend shows it: its directory's last component.
fn run_name(set: &ResultSet) -> String {
    set.dir.file_name().map_or_else(|| shown_dir(&set.dir), |n| n.to_string_lossy().into_owned())
}

/// The page of `table`, with the plots of `current`'s benchmarks (in the table's order)
/// and, when `baseline` is given, each compared benchmark's overlay.
pub fn html(table: &Table<'_>, current: &ResultSet, baseline: Option<&ResultSet>) -> String {
    let t = table.title(escape);
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child{{text-align:left}}tr.regression td{{background:#fdd;color:#900}}tr.improvement td{{background:#dfd;color:#060}}</style></head><body><h2>{t}</h2>\n<table><tr>"
    );
    for h in HEADER {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for (row, (_, verdict)) in table.rows.iter().zip(&table.row_ids) {
        let _ = write!(out, "<tr{}>", row_class(*verdict));
        for cell in row {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    for note in &table.notes {
        let _ = writeln!(out, "<p>{note}</p>");
    }
    for (id, _) in &table.row_ids {
        let Some(r) = current.results.get(id) else { continue };
        let _ = writeln!(out, "<h3>{}</h3>", escape(&r.id));
        if let Some(svg) = baseline
            .and_then(|b| b.results.get(id))
            .and_then(|base| overlay(base, r, &run_name(baseline.unwrap_or(current)), &run_name(current)))
        {
            out.push_str(&svg);
        }
        let file = format!("{}.svg", file_stem(&r.id));
        match std::fs::read_to_string(current.dir.join(&file)) {
            Ok(svg) => out.push_str(&svg),
            Err(_) => {
                let shown = shown_dir(&current.dir.join(&file));
                let _ = writeln!(out, "<p>(no plot: {} is missing)</p>", escape(&shown));
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}
