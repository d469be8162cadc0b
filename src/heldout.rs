//! The held-out test of the energy model (issue 35, `docs/results/model-protocol.json`):
//! each held-out benchmark's dynamic energy predicted as `cargo energy explain` predicts it
//! ([`predict`]: every launch of one iteration priced by `explain`, summed), set beside the
//! measured one; the mean absolute error over the kernels on their own data with a bootstrap interval;
//! the protocol's two baselines on the same kernels ([`Baselines`]: kernel time × the
//! training kernels' mean dynamic power, and executed warp-instructions × one cost fitted
//! over the training kernels); and the share of measurements inside the predicted bracket
//! ([`analyse`], [`render_markdown`]).

use energy_harness::units::format_si;
use energy_harness::unstable::explain::{
    explain, launches_per_call, one_call, regime_totals, EnergyModel, NcuKernel, TEST_CALLS,
};
use energy_harness::unstable::report::ResultSet;
use energy_harness::{Error, ErrorKind, Result, ResultFile};
use serde::Serialize;

use std::path::Path;

use crate::model::{measured_launches, SuiteRun};
use crate::protocol::{Acceptance, HeldOutKernel, Protocol};

/// The ncu metric the instruction-count baseline counts: executed warp-instructions.
pub const INSTRUCTIONS_METRIC: &str = "smsp__inst_executed.sum";

/// Bootstrap resamples of the mean error (the protocol's 10 000).
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// The bootstrap's seed, fixed so that the interval is the same on every run.
pub const BOOTSTRAP_SEED: u64 = 35;

/// Sensor ticks a measurement's windows must span for their energy to rest on the sensor
/// (fewer: the window lies between two updates and its energy is interpolated, not
/// measured).
pub const MIN_TICKS_PER_WINDOW: f64 = 1.0;

/// Why a result cannot be tested against (`None`: it can): windows spanning fewer than
/// [`MIN_TICKS_PER_WINDOW`] sensor ticks.
pub fn unmeasured(result: &ResultFile) -> Option<String> {
    (result.ticks_per_window < MIN_TICKS_PER_WINDOW).then(|| {
        format!(
            "its windows span {:.2} sensor tick(s) ({} launch(es) of {} each): shorter than one update of the \
             sensor, their energy is interpolated, not measured",
            result.ticks_per_window,
            result.launches_per_window,
            format_si(result.time_s.mean, "s", 3)
        )
    })
}

/// The model's prediction of one iteration: every launch priced by `explain` against the
/// measured result, summed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// Dynamic energy on switching data (the model's prediction), J.
    pub switching_j: f64,
    /// Its 95 % interval, J (`None` when a launch has none).
    pub switching_ci_j: Option<(f64, f64)>,
    /// Dynamic energy on constant data, J (`None`: the model has no constant-data costs).
    pub constant_j: Option<f64>,
    /// The bracket, J: from the constant-data prediction's 95 % low end to the switching-data
    /// prediction's high end, as `cargo energy explain` places a kernel inside or outside it
    /// (`None`: no constant-data costs).
    pub bracket_j: Option<(f64, f64)>,
    /// The work without a term that any launch's profile counts, by name, in
    /// `UNPRICED_WORK`'s order.
    pub unpriced: Vec<String>,
    /// The power limit's bound (`energy_harness::unstable::explain::PowerBound`): `None` when the model states no tolerance or
    /// the result records no limit; `Some(true)` when it lowered the prediction.
    pub bounded: Option<bool>,
    /// Where a bound applied or could: the prediction without it (the terms' sum and its
    /// bracket), to say what the bound changes.
    pub unbounded: Option<Unbounded>,
}

/// A prediction without the power limit's bound: the terms' sum on switching data and the
/// bracket of the two regimes, as protocol v2 predicted.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Unbounded {
    /// The terms' sum on switching data, J.
    pub switching_j: f64,
    /// The bracket, J (`None`: no constant-data costs).
    pub bracket_j: Option<(f64, f64)>,
}

/// [`Prediction`] of one call with `model`, against the measured `result`: `call` is one
/// launch holding the call's counts ([`one_call`]), or launches of one kernel, each a call,
/// averaged; explained as `cargo energy explain` explains them.
pub fn predict(model: &EnergyModel, result: &ResultFile, call: &[NcuKernel]) -> Result<Prediction> {
    let refs: Vec<&NcuKernel> = call.iter().collect();
    let e = explain(model, result, &refs)?;
    // The same terms, unbounded: their sum and the two regimes' totals.
    let unbounded = e.power_bound.as_ref().map(|_| {
        let ((_, (constant_low, _)), (_, (_, switching_high))) = regime_totals(&e.terms);
        Unbounded {
            switching_j: e.predicted_dynamic_j,
            bracket_j: e.bracket.is_some().then_some((constant_low, switching_high)),
        }
    });
    Ok(Prediction {
        unbounded,
        switching_j: e.prediction_j(),
        switching_ci_j: e.prediction_ci_j(),
        constant_j: e.bracket.as_ref().map(|b| b.constant_j),
        bracket_j: e.bracket.as_ref().map(|b| (b.constant_ci_j.0, b.switching_ci_j.1)),
        unpriced: e.unpriced.iter().map(|w| w.name.clone()).collect(),
        bounded: e.power_bound.as_ref().map(|b| b.applied),
    })
}

/// Executed warp-instructions over `launches` ([`INSTRUCTIONS_METRIC`]).
pub fn instructions(launches: &[NcuKernel]) -> Result<f64> {
    launches.iter().map(|l| l.metric(INSTRUCTIONS_METRIC)).sum()
}

/// One held-out benchmark: what was measured and what was predicted, per iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Case {
    /// The benchmark (`heldout_reduce_own`).
    pub benchmark: String,
    /// Its data regime (`own`, `constant`).
    pub regime: String,
    /// Whether the model's authors did not write it (the protocol's `third_party`): the goal
    /// is judged on these.
    pub third_party: bool,
    /// Measured dynamic energy, J.
    pub measured_j: f64,
    /// Its 95 % interval, J.
    pub measured_ci_j: (f64, f64),
    /// Measured kernel time, s.
    pub time_s: f64,
    /// The model's dynamic energy, J.
    pub predicted_j: f64,
    /// The model's dynamic energy on constant data, J (`None`: no constant-data costs).
    pub constant_j: Option<f64>,
    /// The predicted bracket, J: the constant-data prediction's low end to the
    /// switching-data prediction's high end ([`Prediction::bracket_j`]; `None`: no
    /// constant-data costs).
    pub bracket_j: Option<(f64, f64)>,
    /// Executed warp-instructions (`None`: not profiled).
    pub instructions: Option<f64>,
    /// Measured total energy (dynamic + active idle over the launch), J.
    pub measured_total_j: f64,
    /// Measured active idle, W: what turns a dynamic prediction into a total one
    /// (`predicted + idle × time`, the static part taken from the measurement).
    pub idle_w: f64,
    /// The lowest and highest SM clock of its windows, MHz (`None`: not recorded): below
    /// the model's clock at the power cap, where an operation costs less than the model's.
    pub sm_clock_mhz: Option<(u32, u32)>,
    /// Work its profile counts that the model has no term for (`explain`'s unpriced work:
    /// wgmma, TMA, atomics, DMMA), by name.
    pub unpriced: Vec<String>,
    /// Whether the power limit's bound lowered the prediction ([`Prediction::bounded`]; `None`:
    /// not bounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounded: Option<bool>,
    /// The prediction without the bound ([`Prediction::unbounded`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbounded: Option<Unbounded>,
}

impl Case {
    /// The case of `benchmark` from its result and all its profiled launches, priced with
    /// `model`: the last call's launches as one ([`one_call`]), as the protocol's rules say
    /// (`cargo energy explain` prices a call of several kernels the same way, and averages
    /// every launch of a one-kernel export instead); an error when no repeat of the launches
    /// lasts about the measured call.
    pub fn measure(
        benchmark: &str,
        regime: &str,
        third_party: bool,
        model: &EnergyModel,
        result: &ResultFile,
        launches: &[NcuKernel],
    ) -> Result<Case> {
        // The protocol's rule: the last call, its launches' counts summed (a call is the
        // repeat of launch names that fits three times; of those, the one lasting about the
        // measured call, which is the largest on every committed run).
        let per_call = launches_per_call(launches, Some(result.time_s.mean)).ok_or_else(|| {
            Error::new(
                ErrorKind::Format,
                format!(
                    "{benchmark}: {} profiled launch(es) whose last ones do not repeat {TEST_CALLS} times in calls lasting \
                     about the measured {}: not a `--test` run of one benchmark",
                    launches.len(),
                    format_si(result.time_s.mean, "s", 3)
                ),
            )
        })?;
        let call = one_call(launches, per_call)?;
        let prediction = predict(model, result, std::slice::from_ref(&call))?;
        let instructions = call.metric(INSTRUCTIONS_METRIC).ok();
        Ok(Case {
            benchmark: benchmark.into(),
            regime: regime.into(),
            third_party,
            measured_j: result.dynamic_j.mean,
            measured_ci_j: (result.dynamic_j.ci_low, result.dynamic_j.ci_high),
            time_s: result.time_s.mean,
            predicted_j: prediction.switching_j,
            constant_j: prediction.constant_j,
            bracket_j: prediction.bracket_j,
            instructions,
            measured_total_j: result.energy_j.mean,
            idle_w: result.idle_w,
            sm_clock_mhz: crate::model::clock_range(result),
            unpriced: prediction.unpriced,
            bounded: prediction.bounded,
            unbounded: prediction.unbounded,
        })
    }
}

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

/// A signed error as the table prints it.
fn pct(v: f64) -> String {
    format!("{v:+.1} %")
}

/// A mean error as the summary prints it.
fn mean_text(m: Option<MeanError>) -> String {
    m.map_or("–".into(), |m| {
        format!(
            "{:.1} % (95 % bootstrap interval {:.1}–{:.1} %, {} kernels)",
            m.mean_pct, m.ci_pct.0, m.ci_pct.1, m.kernels
        )
    })
}

/// The analysis as markdown: one row per benchmark (third-party first, then the
/// project-written), then the mean errors and the bracket's coverage.
pub fn render_markdown(a: &Analysis) -> String {
    let mut out = String::from(
        "| benchmark | written by | data | measured | predicted | bracket [constant, switching] | error | error on total | time × power | instructions | in bracket | activity | SM clock, MHz | work without a term |\n\
         |---|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|---|---|\n",
    );
    let ordered = a.rows.iter().filter(|r| r.case.third_party).chain(a.rows.iter().filter(|r| !r.case.third_party));
    for r in ordered {
        let c = &r.case;
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.benchmark,
            if c.third_party { "third party" } else { "this project" },
            c.regime,
            format_si(c.measured_j, "J", 4),
            format_si(c.predicted_j, "J", 4),
            if c.bounded == Some(true) { " ‡" } else { "" },
            c.bracket_j.map_or("–".into(), |(lo, hi)| format!(
                "{} – {}",
                format_si(lo, "J", 3),
                format_si(hi, "J", 3)
            )),
            pct(r.error_pct),
            pct(r.total_error_pct),
            pct(r.time_power_error_pct),
            r.instruction_error_pct.map_or("–".into(), pct),
            r.in_bracket.map_or("–", |b| if b { "yes" } else { "no" }),
            r.activity.map_or("–".into(), |x| format!("{x:.2}")),
            match c.sm_clock_mhz {
                Some((low, high)) if low == high => format!("{low}"),
                Some((low, high)) => format!("{low}–{high}"),
                None => "–".into(),
            },
            if c.unpriced.is_empty() { "–".to_string() } else { c.unpriced.join(", ") },
        ));
    }
    // The power limit's bound (protocol v3): which predictions it lowered, and which results
    // it could not bound (no limit recorded) while others were.
    let names = |pick: fn(Option<bool>) -> bool| -> Vec<String> {
        a.rows.iter().filter(|r| pick(r.case.bounded)).map(|r| format!("`{}`", r.case.benchmark)).collect()
    };
    let bounded = names(|b| b == Some(true));
    if !bounded.is_empty() {
        out.push_str(&format!(
            "\n‡ Bounded by the board's power limit (the terms priced more than the board draws at its limit, above \
             active idle, over the measured time; the prediction is that bound): {}.\n",
            bounded.join(", ")
        ));
    }
    let unbounded = names(|b| b.is_none());
    if unbounded.len() < a.rows.len() && !unbounded.is_empty() {
        out.push_str(&format!(
            "\nNot bounded by the power limit (the result records none): {}.\n",
            unbounded.join(", ")
        ));
    }
    // The bracket rule compares the measured mean; say where its interval reaches inside.
    let near: Vec<String> = a
        .rows
        .iter()
        .filter(|r| r.in_bracket == Some(false))
        .filter_map(|r| {
            let (lo, hi) = r.case.bracket_j?;
            let (m_lo, m_hi) = r.case.measured_ci_j;
            (m_lo <= hi && m_hi >= lo).then(|| {
                format!(
                    "`{}` (measured {} [{} … {}], bracket {} – {})",
                    r.case.benchmark,
                    format_si(r.case.measured_j, "J", 4),
                    format_si(m_lo, "J", 4),
                    format_si(m_hi, "J", 4),
                    format_si(lo, "J", 4),
                    format_si(hi, "J", 4)
                )
            })
        })
        .collect();
    if !near.is_empty() {
        out.push_str(&format!(
            "\nOutside the bracket by their mean, but with a 95 % interval that reaches into it: {}.\n",
            near.join("; ")
        ));
    }
    out.push_str(&format!(
        "\nMean absolute error on dynamic energy, third-party kernels on their own data (the goal's test):\n\n\
         - the model: {}\n- time × mean training power: {}\n- instruction count: {}\n\n\
         The model over both regimes (third party): {}. On total energy (the static part measured), own data: {}. \
         Inside the bracket: {} of {} third-party measurements.\n\n\
         Project-written held-out kernels (not counted toward the goal), own data: {}; inside the bracket: {} of {}.\n",
        mean_text(a.model),
        mean_text(a.time_power),
        mean_text(a.instruction),
        mean_text(a.model_all_regimes),
        mean_text(a.model_total),
        a.in_bracket.0,
        a.in_bracket.1,
        mean_text(a.model_project),
        a.in_bracket_project.0,
        a.in_bracket_project.1,
    ));
    if let Some(w) = &a.without_bound {
        out.push_str(&format!(
            "\nWithout the power limit's bound (the terms' sums, as protocol v2 predicted), third-party kernels on their \
             own data: {}; inside the unbounded bracket: {} of {} third-party measurements. The bound lowered {} of \
             those predictions; over the others, which the terms alone price: {}.\n",
            mean_text(w.model),
            w.in_bracket.0,
            w.in_bracket.1,
            w.bounded_kernels,
            mean_text(w.model_unbounded_kernels),
        ));
    }
    out
}

/// The file stem of a board's held-out report for fit folder `fit`: `heldout` for `fit`,
/// `heldout-<fit>` for another (`heldout-fit-v1`).
pub fn report_stem(fit: &str) -> String {
    if fit == "fit" {
        "heldout".to_string()
    } else {
        format!("heldout-{fit}")
    }
}

/// One board's held-out test under the committed protocol, as `examples/heldout.rs` writes it
/// (`heldout.md`, `heldout.json` in the board's folder).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardReport {
    /// The GPU model.
    pub gpu: String,
    /// The board's UUID.
    pub uuid: String,
    /// The protocol's hash (the model's and the committed protocol's).
    pub protocol_hash: String,
    /// The clock the model was fitted at, MHz.
    pub model_sm_clock_mhz: f64,
    /// The baselines, fitted on the model's training kernels.
    pub baselines: Baselines,
    /// The analysis of every tested benchmark.
    pub analysis: Analysis,
    /// Held-out benchmarks that could not be tested, with why.
    pub missing: Vec<(String, String)>,
    /// What the acceptance rule finds short (empty: met).
    pub shortfalls: Vec<String>,
    /// Training kernels the fit left out, with why (below the fit's clock).
    pub left_out: Vec<String>,
    /// The model's terms whose 95 % interval spans zero, or that the fit held at zero, by
    /// regime (`switching`, `constant`): kept in the model, as the protocol's rules say, and
    /// said here.
    pub spanning_zero: Vec<(String, String)>,
    /// Under a protocol after the first: the held-out kernels of the earlier protocols, seen
    /// before this one was written, predicted by this model and shown apart (never counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<Seen>,
}

/// Held-out kernels of earlier protocols, predicted by a later protocol's model: shown apart,
/// never counted toward the goal (their results shaped the later protocol).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Seen {
    /// The analysis of those measured and profiled.
    pub analysis: Analysis,
    /// Those that could not be tested, with why.
    pub missing: Vec<(String, String)>,
}

/// The held-out test of the board whose folder is `board`: `run-model/` and `ncu-model/`
/// (the training suite and its ncu exports), `run-heldout/` and `ncu-heldout/` (the held-out
/// suite), `<fit>/model.json` (fit_model's fit of that training run under a committed
/// protocol, the one the test follows: a model of no committed protocol is refused). Every held-out benchmark of the protocol
/// is tested or listed as missing with why (not measured, windows shorter than a sensor
/// tick, ncu export missing, partial or not one `--test` run); messages name files under
/// `shown_as` instead of `board`, so the report is the same wherever the folder lies.
pub fn board_report(board: &Path, fit: &str, shown_as: &str) -> Result<BoardReport> {
    let model = EnergyModel::read_json(&board.join(fit).join("model.json"))?;
    let Some(hash) = model.protocol_hash.as_deref() else {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{shown_as}/{fit}/model.json: fitted under no protocol (no protocol_hash): refit it with fit_model"
            ),
        ));
    };
    let (version, protocol) = Protocol::of_hash(hash).map_err(|e| {
        e.context(format!("{shown_as}/{fit}/model.json: refit it with fit_model under a committed protocol"))
    })?;
    // The baselines, fitted on the training kernels the model was fitted on.
    let training = SuiteRun::read_run_and_ncu(&board.join("run-model"), &board.join("ncu-model"))?.under(&protocol)?;
    let (kept, mut left_out) = training.training()?;
    left_out.extend(training.constant_training()?.1);
    let mut spanning_zero = Vec::new();
    for class in &model.classes {
        let regimes = [
            ("switching", Some((class.j_per_unit, class.ci_j))),
            ("constant", class.constant.as_ref().map(|c| (c.j_per_unit, c.ci_j))),
        ];
        for (regime, cost) in regimes {
            match cost {
                Some((_, Some((low, _)))) if low < 0.0 => spanning_zero.push((class.name.clone(), regime.to_string())),
                Some((0.0, None)) => {
                    spanning_zero.push((class.name.clone(), format!("{regime}, held at zero by the fit")))
                }
                _ => {}
            }
        }
    }
    let mut points = Vec::with_capacity(kept.len());
    for o in &kept {
        let (result, launches) = training.profiled(&o.name)?;
        let measured = measured_launches(launches, &o.name)?;
        points.push(TrainingPoint {
            dynamic_j: o.dynamic_j,
            time_s: result.time_s.mean,
            instructions: instructions(&measured).ok().map(|i| i / measured.len() as f64),
        });
    }
    let baselines = Baselines::fit(&points)?;

    let held = SuiteRun::read_run_and_ncu(&board.join("run-heldout"), &board.join("ncu-heldout"))?;
    let relative = |text: String| text.replace(&board.display().to_string(), shown_as);
    let test = |kernels: &[HeldOutKernel], absent_is_missing: bool| {
        let mut cases = Vec::new();
        let mut missing = Vec::new();
        for h in kernels {
            let Some(result) = held.results.get(&h.benchmark) else {
                if absent_is_missing {
                    missing.push((h.benchmark.clone(), "not measured: no result in the run".to_string()));
                }
                continue;
            };
            if let Some(why) = unmeasured(result) {
                missing.push((h.benchmark.clone(), why));
                continue;
            }
            let case = held.profiled(&h.benchmark).and_then(|(result, launches)| {
                Case::measure(&h.benchmark, &h.regime, h.third_party, &model, result, launches)
            });
            match case {
                Ok(c) => cases.push(c),
                Err(e) => missing.push((h.benchmark.clone(), relative(e.to_string()))),
            }
        }
        (cases, missing)
    };
    let (cases, missing) = test(&protocol.held_out, true);
    let analysis = analyse(&cases, &baselines)?;
    // The earlier protocols' held-out kernels this run measured: shown apart.
    let mut earlier = Vec::new();
    for v in 1..version {
        earlier.extend(Protocol::version(v)?.held_out);
    }
    let seen = if earlier.is_empty() {
        None
    } else {
        let (cases, missing) = test(&earlier, false);
        // A run that measured none of them (protocol v3's) shows no such section.
        if cases.is_empty() && missing.is_empty() {
            None
        } else {
            Some(Seen { analysis: analyse(&cases, &baselines)?, missing })
        }
    };
    let shortfalls = analysis.shortfalls(&protocol.acceptance);
    let first =
        held.results.values().next().ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no held-out result"))?;
    Ok(BoardReport {
        gpu: first.device.name.clone(),
        uuid: first.device.uuid.clone(),
        protocol_hash: protocol.hash,
        model_sm_clock_mhz: model.sm_clock_mhz,
        baselines,
        analysis,
        missing,
        shortfalls,
        left_out,
        spanning_zero,
        seen,
    })
}

/// A board's held-out test as markdown: what it rests on, the table, the missing
/// benchmarks, the acceptance rule's verdict.
pub fn render_board(r: &BoardReport) -> String {
    let mut s = format!(
        "# Held-out test: {} ({})\n\nProtocol {} (frozen before these measurements); the model fitted on this board's \
         training run in both data regimes, at {:.0} MHz. Baselines: time × {:.1} W (the training kernels' mean \
         dynamic power); {}.\n\n",
        r.gpu,
        r.uuid,
        r.protocol_hash,
        r.model_sm_clock_mhz,
        r.baselines.mean_power_w,
        r.baselines
            .j_per_instruction
            .map_or("no instruction-count baseline".to_string(), |c| format!("{:.2} nJ per warp-instruction", c * 1e9)),
    );
    s.push_str(&render_markdown(&r.analysis));
    if !r.left_out.is_empty() {
        s.push_str(&format!("\nLeft out of the fit by rule: {}.\n", r.left_out.join("; ")));
    }
    if !r.spanning_zero.is_empty() {
        let terms: Vec<String> = r.spanning_zero.iter().map(|(name, regime)| format!("{name} ({regime})")).collect();
        s.push_str(&format!(
            "\nTerms whose 95 % interval spans zero or that the fit held at zero (kept in the model, as the protocol's \
             rules say): {}.\n",
            terms.join(", ")
        ));
    }
    if !r.missing.is_empty() {
        s.push_str("\nNot tested (the protocol counts them as missing):\n\n");
        for (name, why) in &r.missing {
            s.push_str(&format!("- `{name}`: {why}\n"));
        }
    }
    s.push_str(&if r.shortfalls.is_empty() {
        "\nThe protocol's acceptance rule: met on this board.\n".to_string()
    } else {
        format!("\nThe protocol's acceptance rule: not met on this board: {}.\n", r.shortfalls.join("; "))
    });
    if let Some(seen) = &r.seen {
        s.push_str(
            "\n## Held-out kernels of the earlier protocol (seen before this one: not counted)\n\nTheir results shaped \
             this protocol's terms, so they test nothing; predicted by this board's model all the same.\n\n",
        );
        s.push_str(&render_markdown(&seen.analysis));
        if !seen.missing.is_empty() {
            s.push_str("\nNot tested:\n\n");
            for (name, why) in &seen.missing {
                s.push_str(&format!("- `{name}`: {why}\n"));
            }
        }
    }
    s
}

/// The held-out benchmarks measured twice on one board (two runs of the held-out suite): each
/// one's dynamic energy per launch in both, and their difference, as markdown; the
/// benchmarks of `first` in name order, those missing from `second` said so, and those whose
/// windows were shorter than a sensor tick ([`unmeasured`]) not compared.
pub fn render_repeat(first: &Path, second: &Path) -> Result<String> {
    let read = |dir: &Path| ResultSet::read_run(dir).map(|s| s.results);
    let (a, b) = (read(first)?, read(second)?);
    let mut out = String::from(
        "| benchmark | dynamic, first run | dynamic, second run | difference | first run's 95 % interval |\n|---|---:|---:|---:|---:|\n",
    );
    let mut differences = Vec::new();
    for (id, ra) in &a {
        let name = id.split('/').next().unwrap_or(id);
        let Some(rb) = b.get(id) else {
            out.push_str(&format!("| `{name}` | {} | not measured | – | – |\n", format_si(ra.dynamic_j.mean, "J", 4)));
            continue;
        };
        if unmeasured(ra).or_else(|| unmeasured(rb)).is_some() {
            out.push_str(&format!(
                "| `{name}` | {} | {} | not compared: windows shorter than one sensor tick | – |\n",
                format_si(ra.dynamic_j.mean, "J", 4),
                format_si(rb.dynamic_j.mean, "J", 4)
            ));
            continue;
        }
        let d = (rb.dynamic_j.mean / ra.dynamic_j.mean - 1.0) * 100.0;
        let half = (ra.dynamic_j.ci_high - ra.dynamic_j.ci_low) / 2.0 / ra.dynamic_j.mean * 100.0;
        differences.push(d);
        out.push_str(&format!(
            "| `{name}` | {} | {} | {d:+.2} % | ±{half:.2} % |\n",
            format_si(ra.dynamic_j.mean, "J", 4),
            format_si(rb.dynamic_j.mean, "J", 4)
        ));
    }
    let higher = differences.iter().filter(|d| **d > 0.0).count();
    let mut magnitudes: Vec<f64> = differences.iter().map(|d| d.abs()).collect();
    magnitudes.sort_by(f64::total_cmp);
    if let (Some(median), Some(largest)) = (magnitudes.get(magnitudes.len() / 2), magnitudes.last()) {
        out.push_str(&format!(
            "\n{} benchmarks compared: median absolute difference {median:.2} %, largest {largest:.2} %; the second \
             run higher for {higher} of them.\n",
            magnitudes.len()
        ));
    }
    Ok(out)
}
