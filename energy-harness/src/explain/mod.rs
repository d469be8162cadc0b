//! `cargo energy explain`: where a kernel's energy goes, predicted from costs per
//! instruction class and per memory access fitted on a GPU model's suites, set beside what
//! was measured.
//!
//! - [`nnls`]: non-negative least squares with intervals, the fit's solver;
//! - [`EnergyModel`]: the model file (`energy-model/1`), one per GPU model, with the GPU it
//!   was fitted on, its clock, and each class's cost per unit with its interval and the
//!   Nsight Compute metrics that count the class in an application kernel;
//! - [`explain`]: a measured result and one profiled launch priced with a model: compute by
//!   class, data movement by level, static energy, the unexplained rest; with a model fitted
//!   in both data regimes (each class's [`ModelClass::constant`]), a bracket [constant data,
//!   switching data] per term and in total, and the kernel's operand activity in it
//!   ([`OperandBracket`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::engine::analyze::GENERIC_POWER_CEILING_W;
use crate::engine::WarningKind;
use crate::error::{echo, Error, ErrorKind, Result};
use crate::ncu::NcuKernel;
use crate::report::escape::{markdown_code_span, markdown_text, xml};
use crate::report::ResultFile;
use crate::units::format_si;

pub mod nnls;

/// The schema tag of a model file.
pub const MODEL_SCHEMA: &str = "energy-model/1";

/// The kinds of class a model may hold.
pub const CLASS_KINDS: [&str; 3] = ["compute", "data movement", "time"];

/// The highest SM clock a model may record, MHz (GPUs run below 3 GHz).
pub const MAX_SM_CLOCK_MHZ: f64 = 10_000.0;

/// `v` as a message quotes it: plain between 10⁻³ and 10⁷, else with an exponent (a
/// corrupt 1e300 is not 301 digits).
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-3..1e7).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// One term of a model: a class of instructions or of memory accesses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelClass {
    /// `fp32`, `int`, `dram loads`, ...
    pub name: String,
    /// `compute`, `data movement` or `time` (power while a kernel runs, above active idle).
    pub kind: String,
    /// What one unit is (`warp-instruction`, `32 B sector`).
    pub unit: String,
    /// The ncu metrics whose sum, less `subtract_metrics`, times `scale`, counts the units
    /// in a profiled launch.
    pub ncu_metrics: Vec<String>,
    /// Metrics subtracted from that sum (on Hopper the tensor pipe's count holds half the
    /// HFMA2s: tensor MMAs are the pipe's count less its HFMA2 share).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtract_metrics: Vec<String>,
    /// Units per metric count (e.g. 1/32 for a byte metric of 32 B sectors).
    pub scale: f64,
    /// Dynamic energy per unit, J.
    pub j_per_unit: f64,
    /// Its 95 % interval, J (`None`: held at zero by the fit, or not fitted).
    pub ci_j: Option<(f64, f64)>,
    /// The cost fitted on constant data (the `train_*_const` kernels: operands that never
    /// switch), when the model was fitted in both regimes; `j_per_unit` and `ci_j` are then
    /// the switching-data (random operands) cost. Absent from models fitted in one regime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<RegimeCost>,
}

/// A class's cost in one data regime: dynamic energy per unit, J, and its 95 % interval
/// (`None`: held at zero by the fit).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegimeCost {
    /// Dynamic energy per unit, J.
    pub j_per_unit: f64,
    /// Its 95 % interval, J.
    pub ci_j: Option<(f64, f64)>,
}

/// Checks a cost: finite, not negative, inside its interval (`what` names the fields).
fn check_cost(class: &str, what: &str, j: f64, ci: Option<(f64, f64)>) -> std::result::Result<(), String> {
    if !(j.is_finite() && j >= 0.0) {
        return Err(format!(
            "{class}: {what}j_per_unit {} J is not a cost: a fitted cost is a finite number, never below zero",
            num(j)
        ));
    }
    let largest = ci.map_or(j, |(lo, hi)| j.max(lo.abs()).max(hi.abs()));
    if largest > crate::report::MAX_ENERGY_PER_LAUNCH_J {
        return Err(format!(
            "{class}: {what}j_per_unit or its interval reaches {} J per unit, beyond any GPU (a unit cannot cost more \
             than the most a launch can draw, {} J)",
            num(largest),
            num(crate::report::MAX_ENERGY_PER_LAUNCH_J)
        ));
    }
    if let Some((lo, hi)) = ci {
        if !(lo.is_finite() && hi.is_finite() && lo <= j && j <= hi) {
            return Err(format!(
                "{class}: the interval {what}ci_j [{}, {}] J does not hold the cost {} J",
                num(lo),
                num(hi),
                num(j)
            ));
        }
    }
    Ok(())
}

impl ModelClass {
    /// Whether its constant-data cost exceeds its switching-data cost beyond both intervals
    /// (the fit keeps it as fitted; an explanation names the class).
    pub fn constant_exceeds_switching(&self) -> bool {
        self.constant.is_some_and(|c| {
            let c_low = c.ci_j.map_or(c.j_per_unit, |(lo, _)| lo);
            let s_high = self.ci_j.map_or(self.j_per_unit, |(_, hi)| hi);
            c_low > s_high
        })
    }

    /// The class's units in one profiled launch (errors name the missing metric).
    pub fn units(&self, launch: &NcuKernel) -> Result<f64> {
        let mut count = 0.0;
        for metric in &self.ncu_metrics {
            count += launch.metric(metric)?;
        }
        for metric in &self.subtract_metrics {
            count -= launch.metric(metric)?;
        }
        Ok(count * self.scale)
    }
}

/// A fitted model, one per GPU model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnergyModel {
    /// [`MODEL_SCHEMA`].
    pub format: String,
    /// The GPU model it holds for (NVML's name, `NVIDIA H100 80GB HBM3`).
    pub gpu: String,
    /// The boards whose suites it was fitted on.
    pub fitted_on: Vec<String>,
    /// SM clock of the fit's measurements, MHz (never set by the project: as found).
    pub sm_clock_mhz: f64,
    /// When and from what it was fitted.
    pub source: String,
    /// The classes.
    pub classes: Vec<ModelClass>,
    /// Active idle power of the GPU during the fit's measurements, W (static power: what a
    /// launch costs per second besides its dynamic energy).
    #[serde(default)]
    pub active_idle_w: Option<f64>,
    /// What the model holds for and what it does not (printed with every explanation).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The hash of the fit protocol (term list, training and held-out sets) the model was
    /// fitted under, as the protocol file states it (`None`: fitted before there was one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_hash: Option<String>,
    /// The power controller's tolerance about the board's limit, as a fraction of it (0.02:
    /// a launch's mean power stays within ±2 % of the limit when the limit holds it). With it,
    /// `explain` bounds every prediction by what the board can draw at its limit over the
    /// launch's measured time ([`PowerBound`]); `None` (models fitted before protocol v3): no
    /// bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_tolerance: Option<f64>,
}

impl EnergyModel {
    /// Reads a model file, checking its format and every figure ([`EnergyModel::validate`]).
    pub fn read_json(path: &Path) -> Result<EnergyModel> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the energy model", e))?;
        EnergyModel::parse(&text, path)
    }

    /// Parses the text of a model file (`path` names it in errors), checking it as
    /// [`EnergyModel::read_json`] does.
    pub fn parse(text: &str, path: &Path) -> Result<EnergyModel> {
        let model: EnergyModel = serde_json::from_str(text).map_err(|e| {
            Error::new(ErrorKind::Format, format!("{} is not an energy model ({MODEL_SCHEMA}): {e}", path.display()))
        })?;
        if model.format != MODEL_SCHEMA {
            return Err(Error::new(
                ErrorKind::Format,
                format!("{} is a `{}` file, not {MODEL_SCHEMA}", path.display(), echo(&model.format)),
            ));
        }
        model.validate().map_err(|problem| {
            Error::new(
                ErrorKind::Format,
                format!(
                    "{}: {problem}; the model is corrupt: fit it again (cargo bench --bench model, then the fit) or \
                     restore the file",
                    path.display()
                ),
            )
        })?;
        Ok(model)
    }

    /// Checks every figure a model holds: the SM clock a clock (0 when not recorded, at most
    /// [`MAX_SM_CLOCK_MHZ`]), active idle a power (finite, 0 to [`GENERIC_POWER_CEILING_W`]),
    /// at least one class, and each class of a known kind, counting at least one metric, with
    /// a finite positive scale, a finite non-negative cost and an interval that holds it.
    /// A model fitted in both data regimes holds a constant-data cost, checked alike, in
    /// every class. The error names the class and the field.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if !(self.sm_clock_mhz.is_finite() && (0.0..=MAX_SM_CLOCK_MHZ).contains(&self.sm_clock_mhz)) {
            return Err(format!(
                "sm_clock_mhz {} is not a GPU's clock (0 when not recorded, at most {MAX_SM_CLOCK_MHZ} MHz)",
                num(self.sm_clock_mhz)
            ));
        }
        if let Some(idle) = self.active_idle_w {
            if !(idle.is_finite() && (0.0..=GENERIC_POWER_CEILING_W).contains(&idle)) {
                return Err(format!(
                    "active_idle_w {} W is not a GPU's power (0 to {GENERIC_POWER_CEILING_W} W)",
                    num(idle)
                ));
            }
        }
        if let Some(t) = self.power_limit_tolerance {
            if !(t.is_finite() && (0.0..MAX_POWER_LIMIT_TOLERANCE).contains(&t)) {
                return Err(format!(
                    "power_limit_tolerance {} is not a power controller's tolerance (a fraction of the limit, 0 to \
                     below {MAX_POWER_LIMIT_TOLERANCE})",
                    num(t)
                ));
            }
        }
        if self.classes.is_empty() {
            return Err("it has no class to price a kernel with".into());
        }
        // Once for every class (a scan per class was quadratic in the classes).
        let has_constant_costs = self.has_constant_costs();
        for (i, c) in self.classes.iter().enumerate() {
            let class = format!("class {} (`{}`)", i + 1, echo(&c.name));
            if !CLASS_KINDS.contains(&c.kind.as_str()) {
                return Err(format!("{class}: kind `{}` is none of {}", echo(&c.kind), CLASS_KINDS.join(", ")));
            }
            if c.ncu_metrics.is_empty() {
                return Err(format!("{class}: ncu_metrics is empty: the class counts nothing"));
            }
            if !(c.scale.is_finite() && c.scale > 0.0) {
                return Err(format!("{class}: scale {} is not a positive number of units per count", num(c.scale)));
            }
            check_cost(&class, "", c.j_per_unit, c.ci_j)?;
            if let Some(k) = c.constant {
                check_cost(&class, "constant.", k.j_per_unit, k.ci_j)?;
            } else if has_constant_costs {
                return Err(format!(
                    "{class}: no constant-data cost, while other classes have one (a model is fitted in both data \
                     regimes for every class, or in one)"
                ));
            }
        }
        Ok(())
    }

    /// Whether the model was fitted in both data regimes (constant and switching data).
    pub fn has_constant_costs(&self) -> bool {
        self.classes.iter().any(|c| c.constant.is_some())
    }

    /// Every ncu metric the model needs, comma-separated, for `ncu --metrics`.
    pub fn metrics(&self) -> String {
        self.metric_names().join(",")
    }

    /// Every ncu metric the model needs, sorted, each once.
    pub fn metric_names(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .classes
            .iter()
            .flat_map(|c| c.ncu_metrics.iter().chain(&c.subtract_metrics).map(String::as_str))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The model's metrics, then those of the work it may have no term for
    /// ([`UNPRICED_WORK`]), each once: what an export needs for `explain` to price a kernel and
    /// name the rest.
    pub fn metric_names_with_unpriced(&self) -> Vec<&str> {
        let mut all = self.metric_names();
        for (_, names) in UNPRICED_WORK.iter() {
            all.extend(names.iter().copied().filter(|m| !all.contains(m)).collect::<Vec<_>>());
        }
        all
    }

    /// [`EnergyModel::metric_names_with_unpriced`], comma-separated, for `ncu --metrics`.
    pub fn metrics_with_unpriced(&self) -> String {
        self.metric_names_with_unpriced().join(",")
    }

    /// The command that profiles a bench's launches of `kernel` for this model (clocks and
    /// caches left as they are, as the model suite was profiled).
    pub fn ncu_command(&self, kernel: &str) -> String {
        format!(
            "ncu --clock-control none --cache-control none --kernel-name {kernel} --launch-skip 10 --launch-count 3 \
             --csv --page raw --print-units base --metrics {} <the bench binary> --bench > {kernel}-ncu.csv",
            self.metrics_with_unpriced()
        )
    }

    /// The command that profiles one benchmark's `--test` run (three calls, every kernel of
    /// each: what `explain` prices as one call by default) for this model.
    pub fn ncu_test_command(&self, benchmark: &str) -> String {
        format!(
            "ncu --clock-control none --cache-control none --csv --page raw --print-units base --metrics {} \
             <the bench binary> --bench --test --exact {benchmark} > {}-ncu.csv",
            self.metrics_with_unpriced(),
            benchmark.split('/').next().unwrap_or(benchmark)
        )
    }
}

/// One line of an explanation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// Where a measured kernel lies between the model's two data regimes: the prediction on
/// constant data (operands that never switch) and on switching data (random operands).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperandBracket {
    /// Predicted dynamic energy on constant data, J, and its interval.
    pub constant_j: f64,
    /// Its interval (the terms' intervals added; a term without one at its figure).
    pub constant_ci_j: (f64, f64),
    /// Predicted dynamic energy on switching data, J (the explanation's prediction).
    pub switching_j: f64,
    /// Its interval.
    pub switching_ci_j: (f64, f64),
    /// (measured − constant) / (switching − constant) with the totals (`None` when the
    /// switching prediction is not above the constant one).
    pub activity: Option<f64>,
    /// `inside` (between the constant prediction's low end and the switching prediction's
    /// high end), `below`, `above`, or `no bracket` (switching not above constant).
    pub placement: String,
    /// The line printed: the operand activity, or where and how far outside the kernel lies
    /// and what that suggests.
    pub line: String,
    /// The classes whose constant-data cost exceeds the switching-data cost beyond both
    /// intervals (kept as fitted), among those the kernel uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant_above_switching: Vec<String>,
}

/// Places `measured` (J) in the bracket [constant, switching] of two predictions, each with
/// its interval: the operand activity when it lies inside (the constant prediction's low end
/// to the switching prediction's high end), else how far outside and what that suggests.
pub fn operand_bracket(
    measured: f64,
    (constant_j, constant_ci_j): (f64, (f64, f64)),
    (switching_j, switching_ci_j): (f64, (f64, f64)),
) -> OperandBracket {
    let span = switching_j - constant_j;
    let activity = (span > 0.0).then(|| (measured - constant_j) / span);
    let m = format_si(measured, "J", 4);
    let (placement, line) = if activity.is_none() {
        (
            "no bracket",
            format!(
                "no operand activity: the constant-data prediction ({}) is not below the switching-data prediction \
                 ({}); the two fits disagree on this kernel's terms",
                format_si(constant_j, "J", 4),
                format_si(switching_j, "J", 4)
            ),
        )
    } else if measured < constant_ci_j.0 {
        (
            "below",
            format!(
                "outside the bracket: the measured dynamic energy ({m}) is {:.1} % below the constant-data prediction \
                 (lowest {}): less than the model prices even with operands that never switch; likely causes: a lower \
                 SM clock than the model's, counted work that did not happen, or a term's constant-data cost fitted \
                 too high",
                (1.0 - measured / constant_ci_j.0) * 100.0,
                format_si(constant_ci_j.0, "J", 4)
            ),
        )
    } else if measured > switching_ci_j.1 {
        (
            "above",
            format!(
                "outside the bracket: the measured dynamic energy ({m}) is {:.1} % above the switching-data prediction \
                 (highest {}): more than the model prices with every operand switching; likely causes: a missing term \
                 (warpgroup MMA, TMA, atomics, texture, local memory), a term's cost fitted from a capped kernel \
                 (lower clock and voltage: priced too low), or a higher clock than the model's",
                (measured / switching_ci_j.1 - 1.0) * 100.0,
                format_si(switching_ci_j.1, "J", 4)
            ),
        )
    } else {
        // As computed: inside the bracket by the intervals, a measurement may lie a little
        // below the constant prediction or above the switching one (activity below 0 or
        // above 1), and the line says so rather than rounding it in.
        let a = activity.unwrap_or_default();
        let past = if a < 0.0 {
            ", below the constant-data prediction but inside its interval"
        } else if a > 1.0 {
            ", above the switching-data prediction but inside its interval"
        } else {
            ""
        };
        (
            "inside",
            format!(
                "operand activity ≈ {a:.2} (0: constant data, {}; 1: switching data, {}; measured {m}{past})",
                format_si(constant_j, "J", 4),
                format_si(switching_j, "J", 4)
            ),
        )
    };
    OperandBracket {
        constant_j,
        constant_ci_j,
        switching_j,
        switching_ci_j,
        activity,
        placement: placement.into(),
        line,
        constant_above_switching: Vec::new(),
    }
}

/// A predicted energy and its interval, J: `(figure, (low, high))`.
pub type Priced = (f64, (f64, f64));

/// Each data regime's total of `terms` with its interval, unbounded: (constant data,
/// switching data), each `(J, (low, high))` (a term without an interval at its figure; a term
/// without a constant-data cost at its switching-data one).
pub fn regime_totals(terms: &[ExplainedTerm]) -> (Priced, Priced) {
    let total = |priced: &mut dyn Iterator<Item = (f64, Option<(f64, f64)>)>| {
        priced.fold((0.0, (0.0, 0.0)), |(sum, (lo, hi)), (j, ci)| {
            let (a, b) = ci.unwrap_or((j, j));
            (sum + j, (lo + a.min(j), hi + b.max(j)))
        })
    };
    (
        total(&mut terms.iter().map(|t| (t.constant_j.unwrap_or(t.j), t.constant_ci_j))),
        total(&mut terms.iter().map(|t| (t.j, t.ci_j))),
    )
}

/// The largest power-controller tolerance a model may state (a fraction of the limit).
pub const MAX_POWER_LIMIT_TOLERANCE: f64 = 0.5;

/// The power limit's bound on a launch's dynamic energy: a board's mean power stays at or
/// below its enforced limit (within the controller's tolerance), so a launch of measured time
/// `t` draws at most `(limit − active idle) × t` above active idle. A prediction priced at the
/// model's clock above that bound is of a kernel the limit held back (lower clock and voltage:
/// every operation cheaper than the model's cost); the prediction is then the bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PowerBound {
    /// The board's enforced power limit during the run, W (the result's).
    pub limit_w: f64,
    /// The controller's tolerance, a fraction of the limit (the model's).
    pub tolerance: f64,
    /// Active idle power during the run, W (the result's).
    pub idle_w: f64,
    /// Measured time per launch, s (the result's).
    pub time_s: f64,
    /// `(limit − idle) × time`, J.
    pub bound_j: f64,
    /// The bound at `limit × (1 − tolerance)` and `limit × (1 + tolerance)`, J: what bounds
    /// the low and the high ends of an interval.
    pub range_j: (f64, f64),
    /// Whether the sum of the terms on switching data exceeded the bound (the prediction is
    /// then the bound; the constant-data figure is bounded alike where it exceeds it).
    pub applied: bool,
    /// The measured run's mean power, W (the result's): at or above `limit × (1 − tolerance)`
    /// the limit held the kernel; below, the bound applied because the kernel's data switch
    /// less than the switching-data costs assume, not because of the limit.
    #[serde(default)]
    pub measured_power_w: f64,
}

impl PowerBound {
    /// The bound for `result` under a model of tolerance `tolerance`, `None` when the result
    /// records no power limit.
    pub fn of(result: &ResultFile, tolerance: f64) -> Option<PowerBound> {
        let limit_w = result.device.power_limit_w?;
        let (idle_w, time_s) = (result.idle_w, result.time_s.mean);
        let at = |power_w: f64| (power_w - idle_w).max(0.0) * time_s;
        Some(PowerBound {
            limit_w,
            tolerance,
            idle_w,
            time_s,
            bound_j: at(limit_w),
            range_j: (at(limit_w * (1.0 - tolerance)), at(limit_w * (1.0 + tolerance))),
            applied: false,
            measured_power_w: result.power_w.mean,
        })
    }

    /// A prediction and its interval, bounded: the figure by the bound, the interval's low
    /// end by the range's low end and its high end by the range's high end.
    pub fn clamp(&self, (j, (low, high)): Priced) -> Priced {
        (j.min(self.bound_j), (low.min(self.range_j.0), high.min(self.range_j.1)))
    }

    /// Whether the measured run drew the limit's power (within the tolerance): the limit
    /// held it back.
    pub fn at_limit(&self) -> bool {
        self.measured_power_w >= self.limit_w * (1.0 - self.tolerance)
    }

    /// The line printed when the bound applies: why, as the measured run's power says.
    pub fn line(&self, terms_j: f64) -> String {
        let why = if self.at_limit() {
            format!(
                "the run drew {:.0} W, the limit held this kernel back (lower clock and voltage, each operation cheaper \
                 than the model's cost)",
                self.measured_power_w
            )
        } else {
            format!(
                "the run drew {:.0} W, below the limit: not the limit but the switching-data costs overstate this run \
                 (its operands switch less than random data, or its counts overstate its work)",
                self.measured_power_w
            )
        };
        format!(
            "the terms add up to {} per launch, more than the board draws at its {:.0} W power limit over the measured \
             {} above its {:.0} W active idle ({}, ±{:.0} % for the controller); {why}; the prediction is the bound",
            format_si(terms_j, "J", 4),
            self.limit_w,
            format_si(self.time_s, "s", 4),
            self.idle_w,
            format_si(self.bound_j, "J", 4),
            self.tolerance * 100.0
        )
    }
}

/// A kernel's energy, predicted by class and measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Work the kernel does that the model has no term for ([`UNPRICED_WORK`]), when its
    /// profile counted it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<UnpricedWork>,
    /// When the measured run's SM clock fell below the clock the model's costs are for (a
    /// power cap or a thermal throttle): the range, and what it does to the prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_note: Option<String>,
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

/// Work a model may have no term for, and the Nsight Compute metrics that count it (names as
/// ncu 2025.3 offers them for GH100; other GPUs may lack them). The model suite's protocols
/// list these as candidate terms (`tests/model_protocol.rs` holds each protocol's among
/// them, and every one in some protocol). When a profiled launch carries these metrics and
/// the model has no class for the work ([`PRICED_BY`]), `explain` reports the work it
/// counts: its energy is in the unexplained part, or above the bracket.
pub const UNPRICED_WORK: [(&str, &[&str]); 5] = [
    ("wgmma", &["smsp__inst_executed_pipe_tensor_op_gmma.sum"]),
    ("tma", &["l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"]),
    (
        "atomics",
        &[
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
            "lts__t_sectors_op_atom.sum",
            "lts__t_sectors_op_red.sum",
        ],
    ),
    ("fp64 tensor (DMMA)", &["smsp__inst_executed_pipe_tensor_op_dmma.sum"]),
    ("tf32 warpgroup MMA", &["sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum"]),
];

/// The work of [`UNPRICED_WORK`] that a model prices when one of its classes counts one of
/// these metrics (protocol v2's terms: warpgroup MMA by its FP16/BF16 ops, DMMA by its pipe's
/// cycles); such work is not reported unpriced.
pub const PRICED_BY: [(&str, &[&str]); 2] = [
    ("wgmma", &["sm__ops_path_tensor_op_hgmma_src_fp16.sum"]),
    ("fp64 tensor (DMMA)", &["sm__pipe_tensor_op_dmma_cycles_active.sum"]),
];

/// Work of a kernel that the model has no term for ([`UNPRICED_WORK`]), as counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnpricedWork {
    /// The candidate term's name.
    pub name: String,
    /// Its metrics' sum per launch (averaged over the profiled launches).
    pub count_per_launch: f64,
    /// The metrics summed.
    pub metrics: Vec<String>,
}

/// The work of [`UNPRICED_WORK`] that `launches` count (every metric of an entry present in
/// every launch and their sum above zero) and `model` has no class for ([`PRICED_BY`]);
/// entries not profiled are left out.
pub fn unpriced_work(model: &EnergyModel, launches: &[&NcuKernel]) -> Vec<UnpricedWork> {
    let priced = |name: &str| {
        PRICED_BY.iter().filter(|(n, _)| *n == name).any(|(_, metrics)| {
            model.classes.iter().any(|c| c.ncu_metrics.iter().any(|m| metrics.contains(&m.as_str())))
        })
    };
    UNPRICED_WORK
        .iter()
        .filter(|(name, _)| !priced(name))
        .filter_map(|(name, metrics)| {
            let mut sum = 0.0;
            for launch in launches {
                for metric in *metrics {
                    sum += launch.metric(metric).ok().filter(|v| v.is_finite() && *v >= 0.0)?;
                }
            }
            let count_per_launch = sum / launches.len().max(1) as f64;
            (count_per_launch > 0.0).then(|| UnpricedWork {
                name: name.to_string(),
                count_per_launch,
                metrics: metrics.iter().map(|m| m.to_string()).collect(),
            })
        })
        .collect()
}

/// The note on a run whose SM clock fell below the model's `model_mhz` (by more than one
/// 15 MHz step of the clock's range): `None` when it did not, or either clock is unknown.
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

/// The markdown line of `e`'s clock note, empty when it has none.
fn clock_markdown(e: &Explanation) -> String {
    e.clock_note.as_ref().map(|n| format!("\nClock: {}.\n", markdown_text(n))).unwrap_or_default()
}

/// The predicted-dynamic row's label suffix: said when the power limit bounded it.
fn bounded_label(e: &Explanation) -> &'static str {
    if e.is_bounded() {
        " (bounded by the power limit)"
    } else {
        ""
    }
}

/// The markdown line of `e`'s power bound: when it applied, or when `model` states a
/// tolerance but the result records no power limit; empty otherwise.
fn power_markdown(e: &Explanation, model: &EnergyModel) -> String {
    match &e.power_bound {
        Some(b) if b.applied => format!("\nPower limit: {}.\n", markdown_text(&b.line(e.predicted_dynamic_j))),
        Some(_) => String::new(),
        None if model.power_limit_tolerance.is_some() => "\nPower limit: the result records none (measured before \
            the harness recorded the board's limit): the prediction is not bounded by it.\n"
            .to_string(),
        None => String::new(),
    }
}

/// The markdown lines naming the unpriced work of `e`, empty when there is none.
fn unpriced_markdown(e: &Explanation) -> String {
    e.unpriced
        .iter()
        .map(|u| {
            format!(
                "\nWork the model has no term for: **{}**, {:.4e} per launch ({}): its energy is in the measured \
                 dynamic energy but in no term of the prediction.\n",
                markdown_text(&u.name),
                u.count_per_launch,
                u.metrics.iter().map(|m| markdown_code_span(m)).collect::<Vec<_>>().join(" + ")
            )
        })
        .collect()
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

/// A term's units per launch as printed: a time term in seconds (SI prefix), a count
/// rounded to a whole number when large, with three significant digits when small.
fn units_text(t: &ExplainedTerm) -> String {
    if t.kind == "time" {
        format_si(t.units, "s", 4)
    } else if t.units == 0.0 || t.units.abs() >= 100.0 {
        format!("{:.0}", t.units)
    } else {
        format!("{:.3}", t.units)
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
            let count = class.units(launch).map_err(|e| {
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

/// The start of an explanation in markdown, both renderings: the title, the warning when
/// there is one, then the kernel and the model, up to the model's source (no full stop).
fn markdown_heading(e: &Explanation, model: &EnergyModel) -> String {
    let warning = e.warning.as_ref().map(|w| format!("**{}**\n\n", markdown_text(w))).unwrap_or_default();
    format!(
        "# Where {} spends its energy\n\n{warning}{} ({}); kernel {}, {} profiled launch(es); model of the {} fitted on {} at \
         {:.0} MHz ({})",
        markdown_code_span(&e.id),
        markdown_text(&e.gpu),
        markdown_text(&e.uuid),
        markdown_code_span(&e.kernel),
        e.launches,
        markdown_text(&model.gpu),
        markdown_text(&model.fitted_on.join(", ")),
        model.sm_clock_mhz,
        markdown_text(&model.source)
    )
}

/// The explanation as markdown. Ids, names and notes from the result, the model and the
/// ncu export are escaped ([`crate::report::escape`]).
pub fn render_markdown(e: &Explanation, model: &EnergyModel) -> String {
    if let Some(b) = &e.bracket {
        return render_bracket_markdown(e, b, model);
    }
    let mut s = format!(
        "{}.\n\n| term | kind | units per launch | predicted, µJ | share of measured total |\n|---|---|---|---|---|\n",
        markdown_heading(e, model)
    );
    let share = |j: f64| format!("{:.1} %", j / e.measured_total_j * 100.0);
    for t in &e.terms {
        let ci = t.ci_j.map(|(lo, hi)| format!(" [{:.1}, {:.1}]", lo * 1e6, hi * 1e6)).unwrap_or_default();
        s.push_str(&format!(
            "| {} | {} | {} | {:.1}{ci} | {} |\n",
            markdown_text(&t.name),
            markdown_text(&t.kind),
            units_text(t),
            t.j * 1e6,
            share(t.j)
        ));
    }
    if e.is_bounded() {
        s.push_str(&format!(
            "| sum of the terms | | | {:.1} | {} |\n",
            e.predicted_dynamic_j * 1e6,
            share(e.predicted_dynamic_j)
        ));
    }
    s.push_str(&format!(
        "| **predicted dynamic**{} | | | {:.1}{} | {} |\n| measured dynamic [95 % CI] | | | {:.1} [{:.1}, {:.1}] | {} |\n\
         | unexplained (measured − {}) | | | {:.1} | {} |\n| static (active idle over the launch) | | | {:.1} | {} |\n\
         | **measured total** | | | {:.1} | 100 % |\n",
        bounded_label(e),
        e.prediction_j() * 1e6,
        e.prediction_ci_j().map(|(lo, hi)| format!(" [{:.1}, {:.1}]", lo * 1e6, hi * 1e6)).unwrap_or_default(),
        share(e.prediction_j()),
        e.measured_dynamic_j.0 * 1e6,
        e.measured_dynamic_j.1 * 1e6,
        e.measured_dynamic_j.2 * 1e6,
        share(e.measured_dynamic_j.0),
        if bounded_label(e).is_empty() { "predicted dynamic" } else { "sum of the terms" },
        e.unexplained_j * 1e6,
        share(e.unexplained_j),
        e.static_j * 1e6,
        share(e.static_j),
        e.measured_total_j * 1e6
    ));
    s.push_str(&clock_markdown(e));
    s.push_str(&power_markdown(e, model));
    s.push_str(&unpriced_markdown(e));
    for note in &model.notes {
        s.push_str(&format!("\nNote: {}\n", markdown_text(note)));
    }
    s
}

/// The explanation of a model fitted in both data regimes as markdown: each term and the
/// total as a bracket [constant data, switching data], then the operand activity (or where
/// outside the bracket the kernel lies).
fn render_bracket_markdown(e: &Explanation, b: &OperandBracket, model: &EnergyModel) -> String {
    let uj = |j: f64, ci: Option<(f64, f64)>| {
        format!(
            "{:.1}{}",
            j * 1e6,
            ci.map(|(lo, hi)| format!(" [{:.1}, {:.1}]", lo * 1e6, hi * 1e6)).unwrap_or_default()
        )
    };
    let mut s = format!(
        "{}, in two data regimes: each prediction is a bracket from constant data (operands that never switch) to \
         switching data (random operands).\n\n| term | kind | units per launch | constant data, µJ | switching data, µJ \
         | share of measured total (switching) |\n|---|---|---|---|---|---|\n",
        markdown_heading(e, model)
    );
    let share = |j: f64| format!("{:.1} %", j / e.measured_total_j * 100.0);
    for t in &e.terms {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            markdown_text(&t.name),
            markdown_text(&t.kind),
            units_text(t),
            uj(t.constant_j.unwrap_or(t.j), t.constant_ci_j),
            uj(t.j, t.ci_j),
            share(t.j)
        ));
    }
    // Where the power limit bounded the prediction, the terms' own sums come first.
    if e.is_bounded() {
        let constant: f64 = e.terms.iter().map(|t| t.constant_j.unwrap_or(t.j)).sum();
        s.push_str(&format!(
            "| sum of the terms | | | {:.1} | {:.1} | {} |\n",
            constant * 1e6,
            e.predicted_dynamic_j * 1e6,
            share(e.predicted_dynamic_j)
        ));
    }
    s.push_str(&format!(
        "| **predicted dynamic**{} | | | {} | {} | {} |\n| measured dynamic [95 % CI] | | | | {:.1} [{:.1}, {:.1}] | {} |\n\
         | unexplained (measured − switching-data prediction) | | | | {:.1} | {} |\n\
         | static (active idle over the launch) | | | | {:.1} | {} |\n| **measured total** | | | | {:.1} | 100 % |\n{}",
        bounded_label(e),
        uj(b.constant_j, Some(b.constant_ci_j)),
        uj(b.switching_j, Some(b.switching_ci_j)),
        share(b.switching_j),
        e.measured_dynamic_j.0 * 1e6,
        e.measured_dynamic_j.1 * 1e6,
        e.measured_dynamic_j.2 * 1e6,
        share(e.measured_dynamic_j.0),
        (e.measured_dynamic_j.0 - b.switching_j) * 1e6,
        share(e.measured_dynamic_j.0 - b.switching_j),
        e.static_j * 1e6,
        share(e.static_j),
        e.measured_total_j * 1e6,
        // Outside the bracket the line already opens the page as its warning.
        if e.warning.is_some() { String::new() } else { format!("\n{}.\n", capitalized(&markdown_text(&b.line))) }
    ));
    s.push_str(&clock_markdown(e));
    s.push_str(&power_markdown(e, model));
    s.push_str(&unpriced_markdown(e));
    for name in &b.constant_above_switching {
        s.push_str(&format!(
            "\nTerm `{}`: its constant-data cost exceeds its switching-data cost beyond both intervals (kept as fitted: \
             the two fits disagree on it; its training kernels deserve a look).\n",
            markdown_text(name)
        ));
    }
    for note in &model.notes {
        s.push_str(&format!("\nNote: {}\n", markdown_text(note)));
    }
    s
}

/// `s` with its first letter upper-case.
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The explanation as a horizontal bar chart (SVG): each term, the static part and the
/// unexplained rest, against the measured total. The id and the class names are escaped
/// ([`crate::report::escape::xml`]): a well-formed document whatever they hold.
pub fn render_svg(e: &Explanation) -> String {
    let mut bars: Vec<(String, f64, &str)> = e
        .terms
        .iter()
        .filter(|t| t.j > 0.0)
        .map(|t| {
            let color = match t.kind.as_str() {
                "compute" => "#1f77b4",
                "data movement" => "#ff7f0e",
                _ => "#2ca02c",
            };
            (xml(&t.name), t.j, color)
        })
        .collect();
    bars.push(("static".into(), e.static_j, "#7f7f7f"));
    bars.push(("unexplained".into(), e.unexplained_j, "#d62728"));
    let (w, row, left) = (760.0, 26.0, 190.0);
    let h = 60.0 + row * bars.len() as f64;
    let max = bars.iter().map(|b| b.1.abs()).fold(e.measured_total_j, f64::max).max(f64::MIN_POSITIVE);
    let x = |j: f64| left + (j / max) * (w - left - 120.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\">{}: energy per launch by term, µJ (measured total {:.1} µJ)</text>\n",
        xml(&e.id),
        e.measured_total_j * 1e6
    );
    for (i, (name, j, color)) in bars.iter().enumerate() {
        let y = 40.0 + row * i as f64;
        let (x0, x1) = if *j >= 0.0 { (x(0.0), x(*j)) } else { (x(*j).max(left - 60.0), x(0.0)) };
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.1}</text>\n",
            left - 8.0,
            y + row * 0.6,
            xml(name),
            (x1 - x0).max(0.5),
            row * 0.7,
            x1.max(x0) + 6.0,
            y + row * 0.6,
            j * 1e6
        ));
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of `n` compute classes, each with a constant-data cost where `constant` says.
    fn model(n: usize, constant: impl Fn(usize) -> bool) -> EnergyModel {
        EnergyModel {
            format: MODEL_SCHEMA.into(),
            gpu: "NVIDIA H100 80GB HBM3".into(),
            fitted_on: vec!["test".into()],
            sm_clock_mhz: 1980.0,
            source: "test".into(),
            classes: (0..n)
                .map(|i| ModelClass {
                    name: format!("c{i}"),
                    kind: "compute".into(),
                    unit: "warp-instruction".into(),
                    ncu_metrics: vec![format!("m{i}")],
                    subtract_metrics: Vec::new(),
                    scale: 1.0,
                    j_per_unit: 1e-9,
                    ci_j: Some((0.5e-9, 2e-9)),
                    constant: constant(i).then_some(RegimeCost { j_per_unit: 0.5e-9, ci_j: None }),
                })
                .collect(),
            active_idle_w: Some(70.0),
            notes: Vec::new(),
            protocol_hash: None,
            power_limit_tolerance: None,
        }
    }

    #[test]
    fn a_model_is_fitted_in_one_regime_or_in_both_for_every_class() {
        assert_eq!(model(10, |_| false).validate(), Ok(()));
        assert_eq!(model(10, |_| true).validate(), Ok(()));
        // The first class without one is named, whether the classes with one come before or after.
        let e = model(10, |i| i != 4 && i != 7).validate().unwrap_err();
        assert_eq!(
            e,
            "class 5 (`c4`): no constant-data cost, while other classes have one (a model is fitted in both data \
             regimes for every class, or in one)"
        );
        assert!(model(10, |i| i == 9).validate().unwrap_err().starts_with("class 1 (`c0`): no constant-data cost"));
        // A class's own figures are checked before the regimes are.
        let mut m = model(10, |i| i == 9);
        m.classes[0].scale = 0.0;
        assert!(m.validate().unwrap_err().starts_with("class 1 (`c0`): scale 0 is not a positive number"));
    }

    #[test]
    fn a_cost_beyond_any_gpu_is_refused_on_read_so_no_page_prints_inf() {
        // Finite but near the largest double: in µJ on the page it was `[0.0, inf]`.
        for (j, ci) in [(1e-9, Some((0.0, 1e308))), (2e9, None), (1e-9, Some((-1e300, 2e-9)))] {
            let mut m = model(3, |_| false);
            m.classes[1].j_per_unit = j;
            m.classes[1].ci_j = ci;
            let e = m.validate().unwrap_err();
            assert!(
                e.starts_with("class 2 (`c1`): j_per_unit or its interval reaches") && e.contains("beyond any GPU"),
                "{e}"
            );
        }
        let mut m = model(3, |_| true);
        m.classes[2].constant = Some(RegimeCost { j_per_unit: 0.5e-9, ci_j: Some((0.0, f64::MAX)) });
        assert!(m.validate().unwrap_err().contains("constant.j_per_unit or its interval reaches"));
    }

    #[test]
    fn the_model_check_is_linear_in_classes() {
        // Each class without a constant-data cost scanned every class for one (quadratic:
        // 100,000 classes took 27 s). Sixteen times the classes must take well under 256
        // times as long.
        let time = |n: usize| {
            let m = model(n, |_| false);
            (0..5)
                .map(|_| {
                    let start = std::time::Instant::now();
                    assert_eq!(m.validate(), Ok(()));
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let (small, large) = (time(2000), time(32_000));
        assert!(large < 48.0 * small, "2,000 classes: {small:.4} s; 32,000: {large:.4} s");
    }
}
