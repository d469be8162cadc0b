//! The report as a markdown table, ready for a pull-request comment.

use std::fmt::Write as _;

use super::super::escape::markdown_text;
use super::table::{Table, HEADER};

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
