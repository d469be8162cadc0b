//! The report as a markdown table, ready for a pull-request comment.

use std::fmt::Write as _;

use super::super::compare::{Comparison, ResultSet};
use super::partial::partial_line;
use super::table::{Cells, Table, HEADER};
use super::ReportFormat;
use energy_results::escape::markdown_text;
use energy_results::PartialRun;
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

    fn render(&self, current: &ResultSet, baseline: Option<(&ResultSet, &Comparison)>) -> Result<String> {
        let table = markdown(&Table::new(Cells::Markdown, current, baseline.map(|b| b.0), baseline.map(|b| b.1)));
        Ok(table + &crate::sweep::sweeps_markdown(current, baseline.map(|b| b.0)))
    }

    fn add_measured_nothing(
        &self,
        mut report: String,
        _empty: &[std::path::PathBuf],
        lines: &[String],
    ) -> Result<String> {
        for line in lines {
            let _ = write!(report, "{}\n\n", markdown_text(line));
        }
        Ok(report)
    }

    /// The line of each partial run first, as a quote.
    fn mark_partial(&self, report: String, partial: &[PartialRun]) -> Result<String> {
        let mut out: String =
            partial.iter().map(|p| format!("> **PARTIAL RUN:** {}\n\n", markdown_text(&partial_line(p)))).collect();
        out.push_str(&report);
        Ok(out)
    }
}

/// The table under a `###` title, its notes below.
pub fn markdown(table: &Table<'_>) -> String {
    let mut out =
        format!("### {}\n\n| {} |\n|{}\n", table.title(markdown_text), HEADER.join(" | "), "---|".repeat(HEADER.len()));
    for row in &table.rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    for note in &table.notes {
        let _ = write!(out, "\n{note}\n");
    }
    out
}
