//! The held-out test's figures: the protocol's two baselines ([`Baselines`]), each case's
//! errors ([`Row`]), the mean absolute errors with their bootstrap intervals and the
//! bracket's coverage ([`analyse`]), and the acceptance rule's verdict.

use energy_harness::{Error, ErrorKind, Result};
use serde::Serialize;

use super::case::Case;
use crate::protocol::Acceptance;

/// Bootstrap resamples of the mean error (the protocol's 10 000).
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// The bootstrap's seed, fixed so that the interval is the same on every run.
pub const BOOTSTRAP_SEED: u64 = 35;

/// A training kernel as the baselines see it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrainingPoint {
    /// Measured dynamic energy, J.
    pub dynamic_j: f64,
    /// Kernel time, s.
    pub time_s: f64,
    /// Executed warp-instructions (`None`: not profiled).
    pub instructions: Option<f64>,
}

/// The protocol's two baselines, fitted on the training kernels (switching regime).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Baselines {
    /// The training kernels' mean dynamic power, W (time × mean power).
    pub mean_power_w: f64,
    /// One cost per executed warp-instruction, J, by least squares on relative errors (each
    /// kernel weighed by 1 / its energy, as the model's fit): `None` when a training kernel
    /// lacks its count.
    pub j_per_instruction: Option<f64>,
}

impl Baselines {
    /// Fits both baselines; refuses no kernel, or one whose energy or time is not positive.
    pub fn fit(training: &[TrainingPoint]) -> Result<Baselines> {
        if training.is_empty() {
            return Err(Error::new(ErrorKind::Analysis, "no training kernel to fit the baselines on"));
        }
        if let Some(bad) = training.iter().find(|t| !(t.dynamic_j > 0.0 && t.time_s > 0.0)) {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!("a training kernel of {} J in {} s: both must be positive", bad.dynamic_j, bad.time_s),
            ));
        }
        let mean_power_w = training.iter().map(|t| t.dynamic_j / t.time_s).sum::<f64>() / training.len() as f64;
        // min Σ ((c·I − E) / E)²: c = Σ (I/E) / Σ (I/E)².
        let ratios: Option<Vec<f64>> = training.iter().map(|t| t.instructions.map(|i| i / t.dynamic_j)).collect();
        let j_per_instruction = ratios.and_then(|r| {
            let squares: f64 = r.iter().map(|x| x * x).sum();
            (squares > 0.0).then(|| r.iter().sum::<f64>() / squares)
        });
        Ok(Baselines { mean_power_w, j_per_instruction })
    }
}

/// One row of the held-out table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The case.
    pub case: Case,
    /// The model's signed error, % of measured.
    pub error_pct: f64,
    /// Time × mean power's signed error, %.
    pub time_power_error_pct: f64,
    /// The instruction count's signed error, % (`None`: no count or no cost).
    pub instruction_error_pct: Option<f64>,
    /// Whether the measured value lies inside the bracket (`None`: no bracket).
    pub in_bracket: Option<bool>,
    /// Operand activity: (measured − constant) / (switching − constant) of the predictions
    /// (`None`: no constant-data costs, or switching not above constant).
    pub activity: Option<f64>,
    /// The model's error on total energy (`predicted + idle × time` against the measured
    /// total), percent.
    pub total_error_pct: f64,
}

/// A mean absolute error over kernels, with its bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MeanError {
    /// Kernels averaged.
    pub kernels: usize,
    /// Mean absolute error, %.
    pub mean_pct: f64,
    /// Its 95 % bootstrap interval (percentiles of [`BOOTSTRAP_RESAMPLES`] resamples), %.
    pub ci_pct: (f64, f64),
}

/// The held-out test's outcome. The goal's figures (`model`, the baselines, `in_bracket`)
/// are over the third-party kernels; the project-written held-out kernels have their own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// Every benchmark, in the order given.
    pub rows: Vec<Row>,
    /// The model's mean absolute error over the third-party kernels on their own data.
    pub model: Option<MeanError>,
    /// Time × mean power's, on the same kernels.
    pub time_power: Option<MeanError>,
    /// The instruction count's, on the same kernels (`None`: a count is missing).
    pub instruction: Option<MeanError>,
    /// The model's over every third-party benchmark, both regimes.
    pub model_all_regimes: Option<MeanError>,
    /// The model's on total energy, third-party kernels on their own data.
    pub model_total: Option<MeanError>,
    /// Third-party measurements inside their bracket, and those with one.
    pub in_bracket: (usize, usize),
    /// The model's mean absolute error over the project-written held-out kernels on their
    /// own data (not counted toward the goal).
    pub model_project: Option<MeanError>,
    /// Project-written measurements inside their bracket, and those with one.
    pub in_bracket_project: (usize, usize),
    /// Where predictions were bounded by the power limit: the same test without the bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_bound: Option<WithoutBound>,
}

/// The goal's test on the predictions without the power limit's bound (the terms' sums, as
/// protocol v2 predicted): what the bound changes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WithoutBound {
    /// Third-party own-data kernels whose prediction the bound lowered.
    pub bounded_kernels: usize,
    /// The mean absolute error without the bound, third-party kernels on their own data.
    pub model: Option<MeanError>,
    /// The same over the kernels the bound left alone.
    pub model_unbounded_kernels: Option<MeanError>,
    /// Third-party measurements inside the unbounded bracket, and those with one.
    pub in_bracket: (usize, usize),
}

/// Deterministic pseudo-random numbers (splitmix64).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The mean of `values` with its 95 % percentile bootstrap interval (`resamples` resamples
/// with replacement, seeded with `seed`); `None` for no values.
pub fn bootstrap_mean(values: &[f64], resamples: usize, seed: u64) -> Option<(f64, (f64, f64))> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let mut state = seed;
    let mut means: Vec<f64> = (0..resamples.max(1))
        .map(|_| (0..n).map(|_| values[(splitmix(&mut state) % n as u64) as usize]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (means.len() - 1) as f64).round() as usize).min(means.len() - 1)];
    Some((mean, (at(0.025), at(0.975))))
}

/// The mean absolute error of signed errors (%), with its bootstrap interval.
fn mean_error(errors: impl IntoIterator<Item = f64>) -> Option<MeanError> {
    let absolute: Vec<f64> = errors.into_iter().map(f64::abs).collect();
    let (mean_pct, ci_pct) = bootstrap_mean(&absolute, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)?;
    Some(MeanError { kernels: absolute.len(), mean_pct, ci_pct })
}

/// Signed error of `predicted` against `measured`, %.
fn error_pct(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured * 100.0
}

/// Sets every case's prediction and the baselines' beside the measurement. Refuses a case
/// whose measured energy or time is not positive and finite, or whose prediction is not
/// finite.
pub fn analyse(cases: &[Case], baselines: &Baselines) -> Result<Analysis> {
    let mut rows = Vec::with_capacity(cases.len());
    for c in cases {
        let finite =
            [c.measured_j, c.time_s, c.predicted_j, c.measured_total_j, c.idle_w].iter().all(|v| v.is_finite());
        if !(finite && c.measured_j > 0.0 && c.time_s > 0.0 && c.measured_total_j >= c.measured_j && c.idle_w >= 0.0) {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "{}: measured {} J in {} s, predicted {} J: not a measurement to test against",
                    c.benchmark, c.measured_j, c.time_s, c.predicted_j
                ),
            ));
        }
        let in_bracket = c.bracket_j.map(|(lo, hi)| (lo..=hi).contains(&c.measured_j));
        let activity = c.constant_j.filter(|k| c.predicted_j > *k).map(|k| (c.measured_j - k) / (c.predicted_j - k));
        rows.push(Row {
            case: c.clone(),
            error_pct: error_pct(c.predicted_j, c.measured_j),
            time_power_error_pct: error_pct(c.time_s * baselines.mean_power_w, c.measured_j),
            instruction_error_pct: c
                .instructions
                .zip(baselines.j_per_instruction)
                .map(|(i, cost)| error_pct(i * cost, c.measured_j)),
            in_bracket,
            activity,
            total_error_pct: error_pct(c.predicted_j + c.idle_w * c.time_s, c.measured_total_j),
        });
    }
    let third: Vec<&Row> = rows.iter().filter(|r| r.case.third_party).collect();
    let project: Vec<&Row> = rows.iter().filter(|r| !r.case.third_party).collect();
    let own =
        |set: &[&Row]| -> Vec<Row> { set.iter().filter(|r| r.case.regime == "own").map(|r| (*r).clone()).collect() };
    let coverage = |set: &[&Row]| {
        let bracketed: Vec<bool> = set.iter().filter_map(|r| r.in_bracket).collect();
        (bracketed.iter().filter(|b| **b).count(), bracketed.len())
    };
    let own_third = own(&third);
    let instruction = own_third.iter().map(|r| r.instruction_error_pct).collect::<Option<Vec<f64>>>();
    let without_bound = third.iter().any(|r| r.case.unbounded.is_some()).then(|| {
        // A case the bound could not reach (no limit recorded) is its own unbounded prediction.
        let unbounded = |r: &Row| r.case.unbounded.map_or(r.case.predicted_j, |u| u.switching_j);
        let bracket = |r: &Row| r.case.unbounded.map_or(r.case.bracket_j, |u| u.bracket_j);
        let inside: Vec<bool> =
            third.iter().filter_map(|r| bracket(r).map(|(lo, hi)| (lo..=hi).contains(&r.case.measured_j))).collect();
        WithoutBound {
            bounded_kernels: own_third.iter().filter(|r| r.case.bounded == Some(true)).count(),
            model: mean_error(own_third.iter().map(|r| error_pct(unbounded(r), r.case.measured_j))),
            model_unbounded_kernels: mean_error(
                own_third.iter().filter(|r| r.case.bounded != Some(true)).map(|r| r.error_pct),
            ),
            in_bracket: (inside.iter().filter(|b| **b).count(), inside.len()),
        }
    });
    Ok(Analysis {
        without_bound,
        model: mean_error(own_third.iter().map(|r| r.error_pct)),
        time_power: mean_error(own_third.iter().map(|r| r.time_power_error_pct)),
        instruction: instruction.and_then(mean_error),
        model_all_regimes: mean_error(third.iter().map(|r| r.error_pct)),
        model_total: mean_error(own_third.iter().map(|r| r.total_error_pct)),
        in_bracket: coverage(&third),
        model_project: mean_error(own(&project).iter().map(|r| r.error_pct)),
        in_bracket_project: coverage(&project),
        rows,
    })
}

impl Analysis {
    /// What the protocol's acceptance rule finds wrong (empty: accepted on this GPU).
    pub fn shortfalls(&self, acceptance: &Acceptance) -> Vec<String> {
        let mut wrong = Vec::new();
        match self.model {
            None => wrong.push("no third-party kernel on its own data".to_string()),
            Some(m) => {
                if m.kernels < acceptance.min_kernels {
                    wrong.push(format!(
                        "{} third-party kernels on their own data, fewer than {}",
                        m.kernels, acceptance.min_kernels
                    ));
                }
                if m.mean_pct > acceptance.max_mean_abs_error_pct {
                    wrong.push(format!(
                        "mean absolute error {:.1} %, above {} %",
                        m.mean_pct, acceptance.max_mean_abs_error_pct
                    ));
                }
            }
        }
        let (inside, of) = self.in_bracket;
        if of == 0 || (inside as f64) < acceptance.min_in_bracket_share * of as f64 {
            wrong.push(format!(
                "{inside} of {of} measurements inside the bracket, fewer than {:.0} %",
                acceptance.min_in_bracket_share * 100.0
            ));
        }
        wrong
    }
}
