//! The report as a markdown table, ready for a pull-request comment.

use std::fmt::Write as _;

use super::partial::partial_line;
use super::table::{Cells, Table};
use super::{Report, ReportFormat};
use energy_results::escape::markdown_text;

use energy_results::Result;

/// The markdown table (`--format markdown`, or `md`).
pub struct Markdown;

impl ReportFormat for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["md"]
    }

    /// The line of each partial run first, as a quote; each run's table (and its sweeps),
    /// one after the other; then a line per directory that measured nothing.
    fn render(&self, report: &Report<'_>) -> Result<String> {
        let mut out: String = report
            .partial
            .iter()
            .map(|p| format!("> **PARTIAL RUN:** {}\n\n", markdown_text(&partial_line(p))))
            .collect();
        let several = report.runs.len() > 1;
        for run in &report.runs {
            let table = markdown(&Table::new(Cells::Markdown, run.current, run.baseline_set(), run.comparison()));
            out.push_str(&table);
            out.push_str(&crate::sweep::sweeps_markdown(run.current, run.baseline_set()));
            if several {
                out.push('\n');
            }
        }
        for (_, line) in &report.measured_nothing {
            let _ = write!(out, "{}\n\n", markdown_text(line));
        }
        Ok(out)
    }
}

/// The table under a `###` title, its notes below.
pub fn markdown(table: &Table<'_>) -> String {
    let header = table.header();
    let mut out = format!(
        "### {}\n\n{}\n\n| {} |\n|{}\n",
        table.title(markdown_text),
        table.summary,
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in &table.rows {
        let _ = writeln!(out, "| {} |", table.cells(row).join(" | "));
    }
    for note in &table.notes {
        let _ = write!(out, "\n{note}\n");
    }
    out
}
