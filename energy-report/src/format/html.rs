//! The report as a standalone HTML page: the table (regressions in red, improvements in
//! green), its notes, each benchmark's SVG power plot from the run directory and, against
//! a baseline, the overlay of both runs' window energies ([`super::overlay`]).

use std::fmt::Write as _;

use super::super::compare::ResultSet;
use super::overlay::overlay;
use super::partial::partial_line;
use super::shown_dir;
use super::table::{Cells, Table, HEADER};
use super::{Report, ReportFormat};
use energy_results::detect::Verdict;
use energy_results::escape::html as escape;
use energy_results::file_stem;
use energy_results::Result;

/// The standalone HTML page (`--format html`).
pub struct Html;

impl ReportFormat for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    /// Each run's page, one after the other; the line of each partial run after the first
    /// page's `<body>`, before every table; a paragraph per directory that measured nothing
    /// at the end.
    fn render(&self, report: &Report<'_>) -> Result<String> {
        let partial: String = report
            .partial
            .iter()
            .map(|p| format!("<p class=\"partial\" style=\"background:#fdd;color:#900;padding:4px 8px\"><strong>PARTIAL RUN:</strong> {}</p>\n", escape(&partial_line(p))))
            .collect();
        let several = report.runs.len() > 1;
        let mut out = String::new();
        for (i, run) in report.runs.iter().enumerate() {
            let table = Table::new(Cells::Html, run.current, run.baseline_set(), run.comparison());
            out.push_str(&html(&table, run.current, run.baseline_set(), if i == 0 { &partial } else { "" }));
            if several {
                out.push('\n');
            }
        }
        for (_, line) in &report.measured_nothing {
            let _ = writeln!(out, "<p>{}</p>", escape(line));
        }
        Ok(out)
    }
}

/// The class of a row: `regression` (red), `inconclusive` (amber: a rise the unknown drift
/// between runs could explain), `improvement` (green), or none.
fn row_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(Verdict::Regression) => " class=\"regression\"",
        Some(Verdict::Inconclusive) => " class=\"inconclusive\"",
        Some(Verdict::Improvement) => " class=\"improvement\"",
        _ => "",
    }
}

/// The page of `table`, with the plots of `current`'s benchmarks (in the table's order)
/// and, when `baseline` is given, each compared benchmark's overlay; `after_body` (HTML)
/// opens the body, above the title.
pub fn html(table: &Table<'_>, current: &ResultSet, baseline: Option<&ResultSet>, after_body: &str) -> String {
    let t = table.title(escape);
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child{{text-align:left}}tr.regression td{{background:#fdd;color:#900}}tr.inconclusive td{{background:#ffe9c4;color:#7a4a00}}tr.improvement td{{background:#dfd;color:#060}}</style></head><body>{after_body}<h2>{t}</h2>\n<table><tr>"
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
            .and_then(|base| overlay(base, r, &baseline.unwrap_or(current).run_name(), &current.run_name()))
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
    out.push_str(&crate::sweep::sweeps_html(current, baseline));
    out.push_str("</body></html>\n");
    out
}
