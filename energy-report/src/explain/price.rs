//! Pricing a profiled kernel with a model: each term, the prediction beside the measured
//! energy, and the notes and warnings that go with it ([`explain`]).

use serde::{Deserialize, Serialize};

use super::{
    num, operand_bracket, regime_totals, unpriced_work, EnergyModel, OperandBracket, PowerBound, UnpricedWork,
    TENSOR_PIPE_HFMA2,
};
use crate::ncu::NcuKernel;
use energy_results::echo;
use energy_results::ResultFile;
use energy_results::WarningKind;
use energy_results::GENERIC_POWER_CEILING_W;
use energy_results::{Error, ErrorKind, Result};
use energy_units::format_si;

/// One line of an explanation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExplainedTerm {
    /// The class.
    pub name: String,
    /// `compute`, `data movement` or `time` (power while a kernel runs, above active idle).
    pub kind: String,
    /// Units per launch (mean over the profiled launches).
    pub units: f64,
    /// Predicted dynamic energy per launch, J, with the interval from the cost's.
    pub j: f64,
    /// Its interval, when the cost has one.
    pub ci_j: Option<(f64, f64)>,
    /// With a model fitted in both data regimes: the term priced with its constant-data cost,
    /// J (the bracket's low end; `j` is then the switching-data end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant_j: Option<f64>,
    /// Its interval, when the constant-data cost has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant_ci_j: Option<(f64, f64)>,
}

/// A kernel's energy, predicted by class and measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Explanation {
    /// Benchmark id.
    pub id: String,
    /// The GPU it was measured on.
    pub gpu: String,
    /// Its UUID.
    pub uuid: String,
    /// The kernel as ncu names it, and the launches averaged.
    pub kernel: String,
    /// Launches averaged.
    pub launches: usize,
    /// The terms.
    pub terms: Vec<ExplainedTerm>,
    /// Sum of the terms, J.
    pub predicted_dynamic_j: f64,
    /// Measured dynamic energy per launch, J (mean, 95 % interval).
    pub measured_dynamic_j: (f64, f64, f64),
    /// Measured energy per launch, J.
    pub measured_total_j: f64,
    /// Static energy per launch: total less dynamic (active idle over the launch), J.
    pub static_j: f64,
    /// Measured dynamic less predicted, J (what the model does not explain).
    pub unexplained_j: f64,
    /// The prediction's interval, J: the terms' intervals added (a term without one at its
    /// figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_ci_j: Option<(f64, f64)>,
    /// When the measured dynamic energy lies outside the prediction's interval: by how much,
    /// and the likely causes. Printed first. With a model fitted in both data regimes, outside
    /// the bracket instead (the bracket's line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// With a model fitted in both data regimes: the prediction on constant and on switching
    /// data and where the measurement lies between them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bracket: Option<OperandBracket>,
    /// Work the kernel does that the model has no term for ([`UNPRICED_WORK`](super::UNPRICED_WORK)), when its
    /// profile counted it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<UnpricedWork>,
    /// When the measured run's SM clock fell below the clock the model's costs are for (a
    /// power cap or a thermal throttle): the range, and what it does to the prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_note: Option<String>,
    /// When the export lacks the tensor pipe's HFMA2.MMA count: tensor MMAs were counted as
    /// protocol v3 counted them, register moves included, and how to profile again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counting_note: Option<String>,
    /// With a model that states a power-controller tolerance and a result that records the
    /// board's power limit: the limit's bound on the prediction ([`PowerBound`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_bound: Option<PowerBound>,
}

impl Explanation {
    /// Whether the power limit's bound lowered the prediction ([`PowerBound::applied`]).
    pub fn is_bounded(&self) -> bool {
        self.power_bound.as_ref().is_some_and(|p| p.applied)
    }

    /// The prediction: the sum of the terms, or the power limit's bound where that is lower
    /// ([`PowerBound`]).
    pub fn prediction_j(&self) -> f64 {
        match &self.power_bound {
            Some(b) => self.predicted_dynamic_j.min(b.bound_j),
            None => self.predicted_dynamic_j,
        }
    }

    /// The prediction's interval, bounded as [`Explanation::prediction_j`] is.
    pub fn prediction_ci_j(&self) -> Option<(f64, f64)> {
        let ci = self.predicted_ci_j?;
        Some(match &self.power_bound {
            Some(b) => b.clamp((self.predicted_dynamic_j, ci)).1,
            None => ci,
        })
    }
}

/// The note on a run whose SM clock fell below the model's `model_mhz` (by more than one
/// 15 MHz step of the clock's range): `None` when it did not, or either clock is unknown.
/// The counting line of an explanation ([`Explanation::counting_note`]), when a class counted
/// tensor-pipe register moves for want of the metric that leaves them out.
pub fn counting_note(model: &EnergyModel, launches: &[&NcuKernel]) -> Option<String> {
    let class = model.classes.iter().find(|c| launches.iter().any(|l| c.counts_tensor_moves(l)))?;
    Some(format!(
        "this export has no `{TENSOR_PIPE_HFMA2}`, so `{}` counts the tensor pipe less the fp16 count, as protocol \
         v3 did: the HFMA2.MMA register moves ptxas places on that pipe (one per warp in an FFMA loop) are priced as \
         tensor MMAs; profile again with the command `cargo energy explain` prints to leave them out",
        class.name
    ))
}

/// The clock line of an explanation, when the run's SM clock fell below the model's.
pub fn clock_note(result: &ResultFile, model_mhz: f64) -> Option<String> {
    let drift = result.drift.as_ref()?;
    let (low, high) = (drift.sm_clock_min_mhz?, drift.sm_clock_max_mhz?);
    (model_mhz > 0.0 && f64::from(low) < model_mhz - 15.0).then(|| {
        // The throttling warning's message ends with the reasons NVML gave.
        let reasons: Vec<&str> = result
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::Throttling)
            .map(|w| w.message.split_once("throttle reasons: ").map_or(w.message.as_str(), |(_, r)| r))
            .collect();
        let why = if reasons.is_empty() {
            "the result names no throttle reason".to_string()
        } else {
            format!("throttle reasons: {}", reasons.join(", "))
        };
        format!(
            "the measured run's SM clock was {low}–{high} MHz, below the {model_mhz:.0} MHz the model's costs are \
             for ({why}): at a lower clock and voltage each operation costs less than the model's cost, which \
             pushes the prediction high (other errors may outweigh it)"
        )
    })
}

/// The warning for a measured dynamic energy `measured` outside the prediction's interval
/// `(low, high)`, J; `None` inside it.
pub fn outside_prediction(measured: f64, (low, high): (f64, f64)) -> Option<String> {
    if measured < low {
        Some(format!(
            "warning: the measured dynamic energy ({}) is {:.1} % below the lowest prediction ({}): the model, fitted on \
             full-entropy data, over-prices this kernel; likely causes: operands of low entropy (zeros, constants, \
             repeated values switch fewer bits), a lower SM clock than the model's, or a unit counted that did not work",
            format_si(measured, "J", 4),
            (1.0 - measured / low) * 100.0,
            format_si(low, "J", 4)
        ))
    } else if measured > high {
        Some(format!(
            "warning: the measured dynamic energy ({}) is {:.1} % above the highest prediction ({}): likely causes: work \
             the model has no term for (atomics, texture, TMA, warpgroup MMA, local memory), a higher clock than the \
             model's, or accesses dearer than the suite's pointer chases",
            format_si(measured, "J", 4),
            (measured / high - 1.0) * 100.0,
            format_si(high, "J", 4)
        ))
    } else {
        None
    }
}

/// Prices `launches` (profiled launches of one kernel, averaged) with `model` and sets the
/// prediction beside the measured `result`. Refuses a model of another GPU model and a
/// launch that lacks a metric the model needs (naming the command that collects it), and
/// checks every figure before it is returned: the model and the result as their readers do,
/// each class's units in each launch finite and not negative, every term finite, and the
/// prediction no more than any GPU can draw in the launch's measured time
/// ([`GENERIC_POWER_CEILING_W`]). The error names the class, the launch and what to do.
pub fn explain(model: &EnergyModel, result: &ResultFile, launches: &[&NcuKernel]) -> Result<Explanation> {
    price(model, result, launches, Counting::Priced)
}

/// [`explain`], every class counted exactly as its file defines it
/// ([`ModelClass::units`](super::ModelClass::units)):
/// how a model's own fit and its published held-out checks price kernels, so that they
/// regenerate from their raw data as they were published.
pub fn explain_as_fitted(model: &EnergyModel, result: &ResultFile, launches: &[&NcuKernel]) -> Result<Explanation> {
    price(model, result, launches, Counting::AsFitted)
}

/// How a class's units are counted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counting {
    /// As `explain` prices a user's kernel
    /// ([`ModelClass::priced_units`](super::ModelClass::priced_units)).
    Priced,
    /// As the class's file defines it ([`ModelClass::units`](super::ModelClass::units)).
    AsFitted,
}

fn price(model: &EnergyModel, result: &ResultFile, launches: &[&NcuKernel], counting: Counting) -> Result<Explanation> {
    if result.device.simulated {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("`{}` is a simulated result: explain a measured one", echo(&result.id)),
        ));
    }
    model.validate().map_err(|problem| Error::new(ErrorKind::InvalidInput, format!("the model: {problem}")))?;
    result.validate().map_err(|problem| Error::new(ErrorKind::InvalidInput, format!("the result: {problem}")))?;
    if model.gpu != result.device.name {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "no fitted model for the {}: the model given is of the {} (a model holds for one GPU model; fit one \
                 from that GPU's suites)",
                echo(&result.device.name),
                echo(&model.gpu)
            ),
        ));
    }
    let Some(first) = launches.first() else {
        return Err(Error::new(ErrorKind::InvalidInput, "no profiled launch to explain"));
    };
    let n = launches.len() as f64;
    let mut terms = Vec::new();
    for class in &model.classes {
        let mut units = 0.0;
        for launch in launches {
            let count = match counting {
                Counting::Priced => class.priced_units(launch),
                Counting::AsFitted => class.units(launch),
            };
            let count = count.map_err(|e| {
                e.context(format!(
                    "the model's class `{}`; profile with: {}",
                    echo(&class.name),
                    model.ncu_command(&launch.name)
                ))
            })?;
            if !(count.is_finite() && count >= 0.0) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "the model's class `{}` counts {} units in ncu launch {} (`{}`): {}",
                        echo(&class.name),
                        num(count),
                        launch.id,
                        echo(&launch.name),
                        if count.is_finite() {
                            "a count is never negative: its subtract_metrics exceed its ncu_metrics in this export, so \
                             the model does not fit this GPU's counters"
                                .to_string()
                        } else {
                            format!(
                                "not a finite number (its metrics times its scale {}): the model's scale or the \
                                 export's counts are corrupt",
                                num(class.scale)
                            )
                        }
                    ),
                ));
            }
            units += count / n;
        }
        let j = units * class.j_per_unit;
        let ci_j = class.ci_j.map(|(lo, hi)| (units * lo.max(0.0), units * hi));
        if !(j.is_finite() && ci_j.is_none_or(|(lo, hi)| lo.is_finite() && hi.is_finite())) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the model's class `{}` prices {} units per launch at {} J each: the product is not a finite \
                     number; the model's cost or scale, or the export's counts, are corrupt",
                    echo(&class.name),
                    num(units),
                    num(class.j_per_unit)
                ),
            ));
        }
        let constant_j = class.constant.map(|k| units * k.j_per_unit);
        let constant_ci_j = class.constant.and_then(|k| k.ci_j).map(|(lo, hi)| (units * lo.max(0.0), units * hi));
        terms.push(ExplainedTerm {
            name: class.name.clone(),
            kind: class.kind.clone(),
            units,
            j,
            ci_j,
            constant_j,
            constant_ci_j,
        });
    }
    let predicted_dynamic_j: f64 = terms.iter().map(|t| t.j).sum();
    // No board draws more than the ceiling over the launch's measured time.
    let time_s = result.time_s.mean;
    let ceiling_j = time_s * GENERIC_POWER_CEILING_W;
    if !(predicted_dynamic_j.is_finite() && predicted_dynamic_j <= ceiling_j) {
        let largest = terms.iter().max_by(|a, b| a.j.total_cmp(&b.j)).expect("a model has a class");
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "the model predicts {predicted_dynamic_j:.4e} J per launch (`{}` alone {:.4e} J), more than any GPU \
                 draws in the launch's measured {} ({} at {GENERIC_POWER_CEILING_W} W): the model's costs or scales, \
                 or the export's counts, are corrupt, or the export profiles another kernel or problem size than the \
                 result",
                echo(&largest.name),
                largest.j,
                format_si(time_s, "s", 4),
                format_si(ceiling_j, "J", 4)
            ),
        ));
    }
    let d = &result.dynamic_j;
    let total = result.energy_j.mean;
    let static_j = total - d.mean;
    if static_j < -1e-9 * total {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "the result `{}`: its dynamic energy {:.4e} J is more than its total {total:.4e} J: a board never \
                 draws less than nothing at idle; the result is corrupt: measure it again",
                echo(&result.id),
                d.mean
            ),
        ));
    }
    let power_bound = model
        .power_limit_tolerance
        .and_then(|tolerance| PowerBound::of(result, tolerance))
        .map(|b| PowerBound { applied: predicted_dynamic_j > b.bound_j, ..b });
    let predicted_ci_j = terms.iter().try_fold((0.0, 0.0), |(lo, hi), t| {
        let (a, b) = t.ci_j.unwrap_or((t.j, t.j));
        Some((lo + a.min(t.j), hi + b.max(t.j)))
    });
    let bracket = model.has_constant_costs().then(|| {
        let (mut constant, mut switching) = regime_totals(&terms);
        if let Some(bound) = &power_bound {
            (constant, switching) = (bound.clamp(constant), bound.clamp(switching));
        }
        let mut b = operand_bracket(d.mean, constant, switching);
        b.constant_above_switching = model
            .classes
            .iter()
            .zip(&terms)
            .filter(|(c, t)| t.units > 0.0 && c.constant_exceeds_switching())
            .map(|(c, _)| c.name.clone())
            .collect();
        b
    });
    let warning = match &bracket {
        Some(b) if b.placement != "inside" => Some(format!("warning: {}", b.line)),
        Some(_) => None,
        None => predicted_ci_j
            .map(|ci| power_bound.as_ref().map_or(ci, |b| b.clamp((predicted_dynamic_j, ci)).1))
            .and_then(|interval| outside_prediction(d.mean, interval)),
    };
    Ok(Explanation {
        clock_note: clock_note(result, model.sm_clock_mhz),
        counting_note: if counting == Counting::Priced { counting_note(model, launches) } else { None },
        power_bound,
        unpriced: unpriced_work(model, launches),
        bracket,
        predicted_ci_j,
        warning,
        id: result.id.clone(),
        gpu: result.device.name.clone(),
        uuid: result.device.uuid.clone(),
        kernel: first.name.clone(),
        launches: launches.len(),
        terms,
        predicted_dynamic_j,
        measured_dynamic_j: (d.mean, d.ci_low, d.ci_high),
        measured_total_j: total,
        static_j: static_j.max(0.0),
        unexplained_j: d.mean - predicted_dynamic_j,
    })
}
