//! One held-out benchmark as the test sees it ([`Case`]): its measurement, whether it can be
//! tested against ([`unmeasured`]), and the model's prediction of one call ([`predict`]).

use energy_harness::units::format_si;
use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_report::{
    explain_as_fitted, launches_per_call, one_call, regime_totals, EnergyModel, NcuKernel, TEST_CALLS,
};
use serde::Serialize;

/// The ncu metric the instruction-count baseline counts: executed warp-instructions.
pub const INSTRUCTIONS_METRIC: &str = "smsp__inst_executed.sum";

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
    /// The power limit's bound (`energy_report::PowerBound`): `None` when the model states no tolerance or
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
    let e = explain_as_fitted(model, result, &refs)?;
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
