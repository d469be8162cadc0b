//! Result sets (`target/energy/<run>/*.json`) and their comparison: what `cargo energy
//! report` tabulates and `cargo energy compare` gates CI on.
//!
//! The rule for a regression: a benchmark's energy per launch rose by more than the
//! threshold (the estimate of the change exceeds it) **and** the rise is statistically
//! significant: one-sided at 1 % false alarms ([`super::detect`]), given the noise the
//! comparison has. The noise comes from both runs' intervals (independent measurements; a
//! ratio by the delta method), or, with several saved runs of the baseline, from their
//! spread ([`compare_with_baselines`]), which holds the between-run drift the within-run
//! intervals do not. Every change states the smallest change it could have detected.
//! When both runs carry the energy at the reference temperature (a thermally calibrated
//! board, the harness's thermal calibration), that figure is compared, and the change says so.
//! Improvements and changes that are not significant are reported, never failed.

use serde::Serialize;

use energy_results::echo;
use energy_results::RunManifest;
use energy_results::{Error, ErrorKind, Result};

mod across_boards;
mod baselines;
mod change;
mod drift;
mod result_set;
mod thermal;

pub use across_boards::{compare_across_boards, ACROSS_BOARDS_MIN_THRESHOLD_PCT};
pub use baselines::compare_with_baselines;
pub use change::{change, check_comparable_figure, Change, Figure, TEMPERATURE_NOTE_C};
pub use drift::{compare_runs, compare_with_controls, DriftBasis, DriftNote};
use energy_results::detect::Verdict;
pub use result_set::ResultSet;

use change::temperature_note;
use thermal::{normalized_change, normalized_pair, raw_note};

/// The comparison of two runs.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// The threshold, percent.
    pub threshold_pct: f64,
    /// How results were paired when they come from different boards
    /// ([`compare_across_boards`]); `None` for one GPU.
    pub rule: Option<String>,
    /// Benchmarks in both runs.
    pub changes: Vec<Change>,
    /// Benchmarks only in the candidate.
    pub added: Vec<String>,
    /// Benchmarks only in the baseline: a failure unless each was removed on purpose
    /// ([`Comparison::check_missing`]).
    pub removed: Vec<String>,
    /// What the verdicts rest on as to the drift between runs, when [`compare_runs`] made it.
    pub drift: Option<DriftNote>,
}

impl Comparison {
    /// The benchmarks that regressed.
    pub fn regressions(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.verdict == Verdict::Regression).collect()
    }

    /// The benchmarks whose rise was inconclusive for want of a drift estimate.
    pub fn inconclusive(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.verdict == Verdict::Inconclusive).collect()
    }

    /// Refuses a candidate that lacks a benchmark of the baseline, unless it is among
    /// `removed_on_purpose`: a benchmark that vanished (its bench target crashed at start,
    /// the run was interrupted between two targets, a filter left it out) is not a pass.
    /// The error names what is missing, the bench targets of both runs (from their
    /// manifests) and the flag that declares a removal.
    pub fn check_missing(
        &self,
        baseline: &ResultSet,
        candidate: &ResultSet,
        removed_on_purpose: &[String],
    ) -> Result<()> {
        let missing: Vec<&str> =
            self.removed.iter().map(String::as_str).filter(|id| !removed_on_purpose.iter().any(|r| r == id)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        const SHOWN: usize = 10;
        let list = |ids: &[&str], sep: &str, each: &dyn Fn(&str) -> String| {
            let mut text = ids.iter().take(SHOWN).map(|id| each(id)).collect::<Vec<_>>().join(sep);
            if ids.len() > SHOWN {
                text.push_str(&format!(" … ({} more)", ids.len() - SHOWN));
            }
            text
        };
        let run_name = |set: &ResultSet| {
            set.dir.file_name().map_or_else(|| set.dir.display().to_string(), |n| n.to_string_lossy().into_owned())
        };
        let targets = |set: &ResultSet| {
            RunManifest::read_manifest(&set.dir).ok().map(|m| {
                let names: Vec<String> = m.targets.iter().map(|t| echo(&t.name)).collect();
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            })
        };
        let targets_note = match (targets(baseline), targets(candidate)) {
            (Some(b), Some(c)) => {
                format!(" (bench targets of `{}`: {b}; of `{}`: {c})", run_name(baseline), run_name(candidate))
            }
            _ => String::new(),
        };
        let not_run_note = candidate.not_run_note("not run there", missing.iter().copied());
        Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "run `{}` in `{}` lacks {} benchmark(s) of the baseline `{}`: {}{targets_note}{not_run_note}. A benchmark that vanished or was not run is not a pass: its bench target crashed at start, the run was interrupted between two bench targets, a filter left it out, or it needs a GPU this run did not have. Run every bench target again (on the baseline's kind of device); if a benchmark was removed on purpose, say so: {}",
                run_name(candidate),
                candidate.dir.display(),
                missing.len(),
                run_name(baseline),
                list(&missing, ", ", &|id| echo(id)),
                list(&missing, " ", &|id| format!("--removed '{}'", echo(id).replace('\'', "'\\''")))
            ),
        ))
    }
}

/// Compares two result sets (after [`ResultSet::check_comparable`]). Errors when they share
/// no benchmark.
pub fn compare(baseline: &ResultSet, candidate: &ResultSet, threshold_pct: f64) -> Result<Comparison> {
    baseline.check_comparable(candidate)?;
    pair(baseline, candidate, threshold_pct, Figure::Energy)
}

/// The changes of every benchmark in both sets, on `figure` (each result checked by
/// [`check_comparable_figure`], whatever the mode), and what is in one set only; an error
/// when they have none in common.
fn pair(baseline: &ResultSet, candidate: &ResultSet, threshold_pct: f64, figure: Figure) -> Result<Comparison> {
    let mut changes = Vec::new();
    let mut removed = Vec::new();
    for (id, base) in &baseline.results {
        match candidate.results.get(id) {
            Some(cand) => {
                check_comparable_figure(&baseline.dir, base, figure)?;
                check_comparable_figure(&candidate.dir, cand, figure)?;
                let normalized = match figure {
                    Figure::Energy => normalized_pair(base, cand),
                    Figure::Dynamic => None,
                };
                let mut c = match &normalized {
                    Some((b, c, _)) => normalized_change(id, b, c, threshold_pct)?,
                    None => change(id, figure.of(base), figure.of(cand), threshold_pct)?,
                };
                c.temperature_c = (base.mean_temperature_c(), cand.mean_temperature_c());
                match normalized {
                    Some((_, _, note)) => {
                        c.normalized = true;
                        c.figure_note = Some(note);
                    }
                    None => {
                        c.temperature_note = temperature_note(c.temperature_c.0, c.temperature_c.1);
                        if figure == Figure::Energy {
                            c.figure_note = raw_note(base, cand);
                        }
                    }
                }
                changes.push(c);
            }
            None => removed.push(id.clone()),
        }
    }
    let added: Vec<String> =
        candidate.results.keys().filter(|id| !baseline.results.contains_key(*id)).cloned().collect();
    if changes.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}` and `{}` have no benchmark in common: nothing to compare",
                baseline.dir.display(),
                candidate.dir.display()
            ),
        ));
    }
    Ok(Comparison { threshold_pct, rule: None, changes, added, removed, drift: None })
}

#[cfg(test)]
mod tests;
