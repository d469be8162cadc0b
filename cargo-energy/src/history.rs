//! `cargo energy history DIR…`: saved runs across commits, drawn per benchmark.

use std::path::{Path, PathBuf};

use energy_report::{read_history, text_table, write_history};
use energy_results::Result;

/// Reads the runs under `dirs` (only `gpu`'s results when given), writes one SVG per
/// benchmark and `index.html` into `output` (atomically), and prints the text table.
pub(super) fn run(dirs: &[PathBuf], threshold: f64, gpu: Option<&str>, output: &Path) -> Result<()> {
    super::results::check_threshold(threshold)?;
    let history = read_history(dirs, threshold, gpu)?;
    let written = write_history(&history, output)?;
    let mut text = text_table(&history);
    if let Some(index) = written.last() {
        text.push_str(&format!("{} chart(s) and {}\n", written.len() - 1, index.display()));
    }
    crate::output::emit(&text)
}
