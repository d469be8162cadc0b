//! What `cargo energy compare` prints: one line per benchmark with its change and verdict,
//! the new, removed and excused benchmarks, and the closing count of regressions.

use std::fmt::Write as _;
use std::path::Path;

use super::super::compare::{Comparison, ResultSet};
use super::super::natural::sort_natural;
use energy_results::detect::Verdict;
use energy_results::detect::FALSE_ALARM_RATE;
use energy_results::escape::visible;
use energy_units::format_si;

/// What was compared, as the command line named it.
pub struct Compared<'a> {
    /// The directory, when the comparison is one of several (`== DIR` heads its text).
    pub dir: Option<&'a Path>,
    /// The baseline run's name.
    pub baseline: &'a str,
    /// The candidate run's name.
    pub candidate: &'a str,
    /// Dynamic energy across boards of one model, not energy on one board.
    pub across_boards: bool,
    /// Baseline benchmarks declared removed (`--removed`).
    pub removed: &'a [String],
}

/// The verdict of a change as the terminal shows it.
pub fn verdict_label(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "REGRESSION",
        Verdict::Improvement => "improvement",
        Verdict::WithinThreshold => "rise within threshold",
        Verdict::NotSignificant => "no significant change",
        Verdict::Inconclusive => "INCONCLUSIVE (between-run drift unknown)",
    }
}

/// The text of `comparison`, whose candidate set is `candidate`. Ids are shown through
/// [`visible`]: no control character reaches the terminal.
pub fn compare_text(comparison: &Comparison, candidate: &ResultSet, asked: &Compared<'_>) -> String {
    let Compared { dir, baseline, candidate: candidate_name, across_boards, removed } = *asked;
    let mut out = String::new();
    if let Some(dir) = dir {
        let _ = writeln!(out, "== {}", dir.display());
    }
    let what = if across_boards { "dynamic energy per launch" } else { "energy per launch" };
    let _ = writeln!(
        out,
        "{what}, {candidate_name} against {baseline} (regression: a rise above the threshold {:.2} %, significant at {:.0} % false alarms, one-sided; intervals 95 %; a rise below the threshold is never failed, however detectable)",
        comparison.threshold_pct,
        FALSE_ALARM_RATE * 100.0
    );
    if let Some(rule) = &comparison.rule {
        let _ = writeln!(out, "rule: {rule}");
    }
    if let Some(drift) = &comparison.drift {
        let _ = writeln!(out, "drift between runs: {}", drift.basis);
    }
    // Every list in natural order of the ids (`saxpy/1ms` before `saxpy/10ms`).
    let mut changes: Vec<_> = comparison.changes.iter().collect();
    sort_natural(&mut changes, |c| c.id.as_str());
    let mut added: Vec<&String> = comparison.added.iter().collect();
    sort_natural(&mut added, |id| id.as_str());
    let mut gone: Vec<&String> = comparison.removed.iter().collect();
    sort_natural(&mut gone, |id| id.as_str());
    for c in changes {
        let _ = writeln!(
            out,
            "  {:<40} {} → {}  {:+.2} % [{:+.2}, {:+.2}]  {}",
            visible(&c.id),
            format_si(c.baseline_j.mean, "J", 4),
            format_si(c.candidate_j.mean, "J", 4),
            c.change_pct,
            c.change_low_pct,
            c.change_high_pct,
            verdict_label(c.verdict)
        );
        if let Some(note) = &c.figure_note {
            let _ = writeln!(out, "  {:<40} compared: {note}", "");
        }
        let _ = writeln!(out, "  {:<40} {}", "", c.detectability.describe());
        if let Some(note) = c.detectability.threshold_note(comparison.threshold_pct) {
            let _ = writeln!(out, "  {:<40} note: {note}", "");
        }
        if let Some(note) = &c.temperature_note {
            let _ = writeln!(out, "  {:<40} note: {note}", "");
        }
    }
    for id in added {
        let _ = writeln!(out, "  {:<40} new in {candidate_name}", visible(id));
    }
    let mut not_run: Vec<(&String, &String)> = candidate.not_run.iter().collect();
    sort_natural(&mut not_run, |(id, _)| id.as_str());
    for (id, why) in not_run {
        let _ = writeln!(out, "  {:<40} not run in {candidate_name}: {}", visible(id), visible(why));
    }
    for id in gone {
        let _ = writeln!(out, "  {:<40} removed on purpose (--removed): only in {baseline}", visible(id));
    }
    for id in removed.iter().filter(|id| !comparison.removed.contains(id)) {
        let why = if candidate.results.contains_key(id) {
            format!("{candidate_name} still has it: compared as usual")
        } else {
            format!("not in {baseline}: nothing to excuse")
        };
        let _ = writeln!(out, "  {:<40} note: --removed, but {why}", visible(id));
    }
    let regressions = comparison.regressions();
    let inconclusive = comparison.inconclusive();
    if !inconclusive.is_empty() {
        let mut ids: Vec<&str> = inconclusive.iter().map(|c| c.id.as_str()).collect();
        sort_natural(&mut ids, |id| id);
        let _ = writeln!(
            out,
            "{} inconclusive rise(s), beyond the threshold but within what the unknown drift between runs could explain: {}",
            inconclusive.len(),
            ids.join(", ")
        );
    }
    if regressions.is_empty() && !inconclusive.is_empty() {
        let _ = writeln!(out, "no regression decided: the verdict is inconclusive (exit 3)");
    } else if regressions.is_empty() {
        let _ = writeln!(out, "no energy regression");
    } else {
        let mut ids: Vec<&str> = regressions.iter().map(|c| c.id.as_str()).collect();
        sort_natural(&mut ids, |id| id);
        let _ = writeln!(out, "{} energy regression(s): {}", regressions.len(), ids.join(", "));
    }
    out
}
