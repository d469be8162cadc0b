//! `cargo energy report` and `cargo energy compare`: result sets under target/energy.

use std::fmt::Write as _;
use std::path::Path;

use energy_harness::units::format_si;
use energy_harness::write_atomically;
use energy_harness::{compare as compare_sets, CompareVerdict as Verdict, ResultSet};
use energy_harness::{render_table as render, TableFormat as Format};
use energy_harness::{Error, ErrorKind, Result};

fn check_threshold(threshold: f64) -> Result<()> {
    if threshold.is_finite() && threshold >= 0.0 {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::InvalidInput, format!("--threshold {threshold} must be a non-negative percentage")))
    }
}

pub(super) fn report(
    dir: &Path,
    run: &str,
    baseline: Option<&str>,
    format: Format,
    threshold: f64,
    output: Option<&Path>,
) -> Result<()> {
    check_threshold(threshold)?;
    let current = ResultSet::read(&dir.join(run))?;
    let base = baseline.map(|b| ResultSet::read(&dir.join(b))).transpose()?;
    let text = render(&current, base.as_ref(), threshold, format)?;
    match output {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => super::emit(&text),
    }
}

/// Prints the comparison; `Ok(true)` when something regressed.
pub(super) fn compare(dir: &Path, baseline: &str, candidate: &str, threshold: f64) -> Result<bool> {
    check_threshold(threshold)?;
    let base = ResultSet::read(&dir.join(baseline))?;
    let cand = ResultSet::read(&dir.join(candidate))?;
    let comparison = compare_sets(&base, &cand, threshold)?;
    let mut out = String::new();
    let _ = writeln!(out,
        "energy per launch, {candidate} against {baseline} (regression: a rise above {threshold:.1} % whose 95 % interval excludes zero)"
    );
    for c in &comparison.changes {
        let label = match c.verdict {
            Verdict::Regression => "REGRESSION",
            Verdict::Improvement => "improvement",
            Verdict::WithinThreshold => "rise within threshold",
            Verdict::NotSignificant => "no significant change",
        };
        let _ = writeln!(
            out,
            "  {:<40} {} → {}  {:+.2} % [{:+.2}, {:+.2}]  {label}",
            c.id,
            format_si(c.baseline_j.mean, "J", 4),
            format_si(c.candidate_j.mean, "J", 4),
            c.change_pct,
            c.change_low_pct,
            c.change_high_pct
        );
        if let Some(note) = &c.temperature_note {
            let _ = writeln!(out, "  {:<40} note: {note}", "");
        }
    }
    for id in &comparison.added {
        let _ = writeln!(out, "  {id:<40} new in {candidate}");
    }
    for id in &comparison.removed {
        let _ = writeln!(out, "  {id:<40} only in {baseline}");
    }
    let regressions = comparison.regressions();
    if regressions.is_empty() {
        let _ = writeln!(out, "no energy regression");
    } else {
        let ids: Vec<&str> = regressions.iter().map(|c| c.id.as_str()).collect();
        let _ = writeln!(out, "{} energy regression(s): {}", regressions.len(), ids.join(", "));
    }
    super::emit(&out)?;
    Ok(!regressions.is_empty())
}
