//! The held-out test of the energy model (issue 35, `docs/results/model-protocol.json`):
//! each held-out benchmark's dynamic energy predicted as `cargo energy explain` predicts it
//! ([`predict`]: every launch of one iteration priced by `explain`, summed), set beside the
//! measured one; the mean absolute error over the kernels on their own data with a bootstrap interval;
//! the protocol's two baselines on the same kernels ([`Baselines`]: kernel time × the
//! training kernels' mean dynamic power, and executed warp-instructions × one cost fitted
//! over the training kernels); and the share of measurements inside the predicted bracket
//! ([`analyse`], [`render_markdown`]).

use energy_harness::units::format_si;
use energy_harness::unstable::explain::{explain, EnergyModel, NcuKernel};
use energy_harness::{Error, ErrorKind, Result, ResultFile};
use serde::Serialize;

use crate::protocol::Acceptance;

/// The ncu metric the instruction-count baseline counts: executed warp-instructions.
pub const INSTRUCTIONS_METRIC: &str = "smsp__inst_executed.sum";

/// Bootstrap resamples of the mean error (the protocol's 10 000).
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// The bootstrap's seed, fixed so that the interval is the same on every run.
pub const BOOTSTRAP_SEED: u64 = 35;

/// The last iteration of a benchmark's profiled launches: its last `per_iteration` launches,
/// which must repeat the names of the `per_iteration` before them (a `--test` run profiles
/// setup launches, then three iterations). An error says what does not match.
pub fn last_iteration<'a>(launches: &'a [NcuKernel], per_iteration: usize, what: &str) -> Result<&'a [NcuKernel]> {
    let n = launches.len();
    if per_iteration == 0 || n < 2 * per_iteration {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{what}: {n} profiled launch(es), fewer than two iterations of {per_iteration}"),
        ));
    }
    let (before, last) = launches[n - 2 * per_iteration..].split_at(per_iteration);
    if let Some((a, b)) = before.iter().zip(last).find(|(a, b)| a.name != b.name) {
        return Err(Error::new(
            ErrorKind::Format,
            format!(
                "{what}: the last two iterations of {per_iteration} launch(es) differ (`{}` against `{}`): not \
                 {per_iteration} launch(es) per iteration",
                a.name, b.name
            ),
        ));
    }
    Ok(last)
}

/// The model's prediction of one iteration: every launch priced by `explain` against the
/// measured `result`, summed (J), with the summed interval (`None` when a launch has none).
pub fn predict(model: &EnergyModel, result: &ResultFile, iteration: &[NcuKernel]) -> Result<(f64, Option<(f64, f64)>)> {
    let mut j = 0.0;
    let mut interval = Some((0.0, 0.0));
    for launch in iteration {
        let e = explain(model, result, &[launch])?;
        j += e.predicted_dynamic_j;
        interval = interval.zip(e.predicted_ci_j).map(|((lo, hi), (a, b))| (lo + a, hi + b));
    }
    Ok((j, interval))
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
    /// Measured kernel time, s.
    pub time_s: f64,
    /// The model's dynamic energy, J.
    pub predicted_j: f64,
    /// The predicted bracket, J: [constant-data, switching-data] where both fits exist, else
    /// the prediction's interval (`None`: neither).
    pub bracket_j: Option<(f64, f64)>,
    /// Executed warp-instructions (`None`: not profiled).
    pub instructions: Option<f64>,
    /// Measured total energy (dynamic + active idle over the launch), J.
    pub measured_total_j: f64,
    /// Measured active idle, W: what turns a dynamic prediction into a total one
    /// (`predicted + idle × time`, the static part taken from the measurement).
    pub idle_w: f64,
}

impl Case {
    /// The case of `benchmark` from its result and its profiled launches (`per_iteration`
    /// launches to one iteration), priced with `model`; the bracket is the prediction's
    /// interval.
    pub fn measure(
        benchmark: &str,
        regime: &str,
        third_party: bool,
        model: &EnergyModel,
        result: &ResultFile,
        launches: &[NcuKernel],
        per_iteration: usize,
    ) -> Result<Case> {
        let iteration = last_iteration(launches, per_iteration, benchmark)?;
        let (predicted_j, bracket_j) = predict(model, result, iteration)?;
        Ok(Case {
            benchmark: benchmark.into(),
            regime: regime.into(),
            third_party,
            measured_j: result.dynamic_j.mean,
            time_s: result.time_s.mean,
            predicted_j,
            bracket_j,
            instructions: instructions(iteration).ok(),
            measured_total_j: result.energy_j.mean,
            idle_w: result.idle_w,
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
    /// Operand activity: (measured − low) / (high − low) of the bracket.
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
        let activity = c.bracket_j.filter(|(lo, hi)| hi > lo).map(|(lo, hi)| (c.measured_j - lo) / (hi - lo));
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
    Ok(Analysis {
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
        "| benchmark | written by | data | measured | predicted | bracket [constant, switching] | error | error on total | time × power | instructions | in bracket | activity |\n\
         |---|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|\n",
    );
    let ordered = a.rows.iter().filter(|r| r.case.third_party).chain(a.rows.iter().filter(|r| !r.case.third_party));
    for r in ordered {
        let c = &r.case;
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.benchmark,
            if c.third_party { "third party" } else { "this project" },
            c.regime,
            format_si(c.measured_j, "J", 4),
            format_si(c.predicted_j, "J", 4),
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
    out
}
