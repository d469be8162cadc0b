//! What a verdict between two runs rests on when the GPU may drift between them: the basis
//! `compare` judges on ([`DriftBasis`]) and the comparison it makes on each
//! ([`compare_runs`]).
//!
//! Two runs made apart differ by more than their within-run intervals: the board's state
//! moves (on an H100, the same code and binaries twelve minutes apart rose by +0.17 …
//! +6.51 %, median +2.78 %, at the same temperature; its active idle moved from 125.7 to
//! 133.6 W). A rise that this drift could explain is no regression. So a single saved
//! baseline, whose between-run drift nothing in the two runs measures, never gives the
//! verdict "regression" by default: such a rise is **inconclusive** (exit 3 in `compare`),
//! unless the user asks for the within-run test alone. The drift is measured, and the
//! verdict rests on it, with several saved baseline runs (their spread,
//! [`super::compare_with_baselines`]), with control benchmarks (unchanged code measured in
//! both runs: their mean change is the drift, their spread the noise, [`compare_with_controls`]),
//! or with a stated drift (`--drift PCT`: the spread of an unchanged benchmark's change between
//! two runs on this board, from repeats).

use super::change::{judge, standard_error};
use super::{compare, compare_with_baselines, Change, Comparison, ResultSet};
use energy_results::detect::Verdict;
use energy_results::detect::{Detectability, NoiseBasis};
use energy_results::echo;
use energy_results::{Error, ErrorKind, Result};

/// What `compare` knows of the drift between the baseline's and the candidate's runs.
#[derive(Clone, Debug, PartialEq)]
pub enum DriftBasis {
    /// Nothing (the default): with one baseline run, a rise that the within-run test calls
    /// a regression is [`Verdict::Inconclusive`]; several baseline runs measure the drift.
    Unknown,
    /// The within-run test alone (`--within-run`): drift between runs is not in the noise,
    /// and a run-to-run drift beyond the threshold is called a regression.
    WithinRunOnly,
    /// A stated drift: the standard deviation of an unchanged benchmark's change between two
    /// runs on this board, percent (`--drift PCT`), added to the within-run noise.
    Stated(f64),
    /// Control benchmarks (`--control ID`, two or more): unchanged code measured in both
    /// runs, whose changes measure the drift.
    Controls(Vec<String>),
}

impl DriftBasis {
    /// Checks the basis against the number of baseline runs.
    fn check(&self, baselines: usize) -> Result<()> {
        let refuse = |why: String| Err(Error::new(ErrorKind::InvalidInput, why));
        match self {
            DriftBasis::Stated(pct) if !(pct.is_finite() && *pct > 0.0 && *pct < 100.0) => {
                refuse(format!("--drift {pct}: give the between-run drift as a percentage above 0 and below 100"))
            }
            DriftBasis::Controls(ids) if ids.len() < 2 => refuse(format!(
                "--control: {} control benchmark(s); the spread of their changes is the noise of every verdict, which \
                 needs two or more",
                ids.len()
            )),
            DriftBasis::Unknown => Ok(()),
            _ if baselines > 1 => refuse(
                "several --baseline runs measure the drift between runs already: drop --within-run, --drift or \
                 --control, or give one --baseline"
                    .to_string(),
            ),
            _ => Ok(()),
        }
    }
}

/// The drift two runs were judged with, as a line of the comparison says it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DriftNote {
    /// What the verdicts rest on, in words.
    pub basis: String,
    /// Whether some rise was inconclusive for want of a drift estimate.
    pub inconclusive: bool,
}

/// Compares `candidate` with `baselines` (one run or several of the baseline code) on the
/// drift basis `drift` (see the module's documentation).
pub fn compare_runs(
    baselines: &[ResultSet],
    candidate: &ResultSet,
    threshold_pct: f64,
    drift: &DriftBasis,
) -> Result<Comparison> {
    drift.check(baselines.len())?;
    let Some(first) = baselines.first() else {
        return Err(Error::new(ErrorKind::InvalidInput, "no baseline run to compare with"));
    };
    if baselines.len() > 1 {
        let mut c = compare_with_baselines(baselines, candidate, threshold_pct)?;
        c.drift = Some(DriftNote {
            basis: format!("between-run drift measured: the spread of {} saved baseline runs", baselines.len()),
            inconclusive: false,
        });
        return Ok(c);
    }
    match drift {
        DriftBasis::WithinRunOnly => {
            let mut c = compare(first, candidate, threshold_pct)?;
            c.drift = Some(DriftNote {
                basis: "within-run intervals only (--within-run): between-run drift is not in the noise, and a drift \
                        beyond the threshold is called a regression"
                    .into(),
                inconclusive: false,
            });
            Ok(c)
        }
        DriftBasis::Unknown => {
            let mut c = compare(first, candidate, threshold_pct)?;
            let mut inconclusive = false;
            for change in &mut c.changes {
                if change.verdict == Verdict::Regression {
                    change.verdict = Verdict::Inconclusive;
                    inconclusive = true;
                }
            }
            c.drift = Some(DriftNote {
                basis: "between-run drift unknown (one baseline run): a rise beyond the threshold that is significant \
                        within the runs is INCONCLUSIVE, whatever its size, since nothing here measures how far this \
                        board drifts between two runs (unchanged code rose by up to +6.5 % in 12 minutes on an H100; \
                        another board may drift more). To decide: gate with `cargo energy gate` or `cargo energy \
                        ab` (paired runs), or give several --baseline runs, two or more --control benchmarks, or \
                        --drift PCT; --within-run judges on the within-run intervals alone"
                    .into(),
                inconclusive,
            });
            Ok(c)
        }
        DriftBasis::Stated(pct) => {
            let mut c = compare_stated(first, candidate, threshold_pct, *pct)?;
            c.drift = Some(DriftNote {
                basis: format!("a stated between-run drift of {pct:.2} % (--drift), added to the within-run noise"),
                inconclusive: false,
            });
            Ok(c)
        }
        DriftBasis::Controls(ids) => compare_with_controls(first, candidate, threshold_pct, ids),
    }
}

/// [`compare`] with a stated between-run drift `drift_pct` in the noise of every change
/// (in quadrature with the within-run noise, on the within-run degrees of freedom).
fn compare_stated(
    baseline: &ResultSet,
    candidate: &ResultSet,
    threshold_pct: f64,
    drift_pct: f64,
) -> Result<Comparison> {
    let mut c = compare(baseline, candidate, threshold_pct)?;
    for change in &mut c.changes {
        let d = change.detectability;
        let se = d.standard_error_pct.hypot(drift_pct * (1.0 + change.change_pct / 100.0));
        *change =
            rejudge(change, Detectability::new(se, d.degrees_of_freedom, NoiseBasis::StatedDrift), threshold_pct)?;
    }
    Ok(c)
}

/// `change` judged again with the noise `detect`, its notes kept.
fn rejudge(change: &Change, detect: Detectability, threshold_pct: f64) -> Result<Change> {
    let ratio = 1.0 + change.change_pct / 100.0;
    let judged = judge(&change.id, &change.baseline_j, &change.candidate_j, ratio, detect, threshold_pct)?;
    Ok(Change {
        verdict: judged.verdict,
        change_low_pct: judged.change_low_pct,
        change_high_pct: judged.change_high_pct,
        detectability: judged.detectability,
        ..change.clone()
    })
}

/// Compares with control benchmarks `controls` (two or more, in both runs): the mean of
/// their log changes is the drift between the runs, taken out of every other benchmark's
/// change; the spread of their changes (at least each benchmark's own within-run error) is
/// the noise, `s · √(1 + 1/k)` on `k − 1` degrees of freedom. The controls are not judged:
/// their changes are the drift.
pub fn compare_with_controls(
    baseline: &ResultSet,
    candidate: &ResultSet,
    threshold_pct: f64,
    controls: &[String],
) -> Result<Comparison> {
    DriftBasis::Controls(controls.to_vec()).check(1)?;
    let plain = compare(baseline, candidate, threshold_pct)?;
    let mut logs = Vec::new();
    for id in controls {
        let Some(c) = plain.changes.iter().find(|c| &c.id == id) else {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("--control `{}` is not a benchmark of both runs: name benchmarks both runs measured", echo(id)),
            ));
        };
        logs.push((1.0 + c.change_pct / 100.0).ln());
    }
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
    let mut changes = Vec::new();
    for c in plain.changes.iter().filter(|c| !controls.contains(&c.id)) {
        let log = (1.0 + c.change_pct / 100.0).ln() - mean;
        let rel = |e: &energy_results::Estimate| standard_error(e) / e.mean;
        let own = (rel(&c.baseline_j).powi(2) + rel(&c.candidate_j).powi(2)).sqrt();
        let se = sd.max(own) * (1.0 + 1.0 / k).sqrt();
        let detect = Detectability::new(100.0 * se, k - 1.0, NoiseBasis::Controls);
        let mut judged = judge(&c.id, &c.baseline_j, &c.candidate_j, log.exp(), detect, threshold_pct)?;
        judged.temperature_c = c.temperature_c;
        judged.temperature_note = c.temperature_note.clone();
        judged.normalized = c.normalized;
        judged.figure_note = Some(format!(
            "relative to the controls' drift {:+.2} % (raw change {:+.2} %){}",
            100.0 * (mean.exp() - 1.0),
            c.change_pct,
            c.figure_note.as_deref().map_or(String::new(), |n| format!("; {n}"))
        ));
        changes.push(judged);
    }
    if changes.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "every benchmark in both runs is a --control: nothing is left to judge",
        ));
    }
    let named: Vec<String> = plain
        .changes
        .iter()
        .filter(|c| controls.contains(&c.id))
        .map(|c| format!("`{}` {:+.2} %", echo(&c.id), c.change_pct))
        .collect();
    Ok(Comparison {
        changes,
        drift: Some(DriftNote {
            basis: format!(
                "between-run drift from {} control benchmarks ({}): {:+.2} %, their spread {:.2} %",
                controls.len(),
                named.join(", "),
                100.0 * (mean.exp() - 1.0),
                100.0 * sd
            ),
            inconclusive: false,
        }),
        ..plain
    })
}
