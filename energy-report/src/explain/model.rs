//! The model file (`energy-model/1`): its classes and costs, reading it and checking every
//! figure it holds, and the Nsight Compute metrics and commands it needs.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{num, MAX_POWER_LIMIT_TOLERANCE, UNPRICED_WORK};
use crate::ncu::NcuKernel;
use energy_results::echo;
use energy_results::GENERIC_POWER_CEILING_W;
use energy_results::{Error, ErrorKind, Result};

/// The schema tag of a model file.
pub const MODEL_SCHEMA: &str = "energy-model/1";

/// The kinds of class a model may hold.
pub const CLASS_KINDS: [&str; 3] = ["compute", "data movement", "time"];

/// The highest SM clock a model may record, MHz (GPUs run below 3 GHz).
pub const MAX_SM_CLOCK_MHZ: f64 = 10_000.0;

/// One term of a model: a class of instructions or of memory accesses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    if largest > energy_results::MAX_ENERGY_PER_LAUNCH_J {
        return Err(format!(
            "{class}: {what}j_per_unit or its interval reaches {} J per unit, beyond any GPU (a unit cannot cost more \
             than the most a launch can draw, {} J)",
            num(largest),
            num(energy_results::MAX_ENERGY_PER_LAUNCH_J)
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

    /// The class's units in one profiled launch as its file defines them: `ncu_metrics`
    /// less `subtract_metrics`, times `scale` (what the model was fitted on; errors name the
    /// missing metric).
    pub fn units(&self, launch: &NcuKernel) -> Result<f64> {
        self.units_less(launch, self.subtract_metrics.iter().map(String::as_str))
    }

    /// The class's units as `explain` prices a user's kernel: as [`ModelClass::units`],
    /// except that tensor-pipe register moves are left out of a tensor-MMA term
    /// ([`ModelClass::counted_subtract`]) where the export counts them.
    pub fn priced_units(&self, launch: &NcuKernel) -> Result<f64> {
        if self.counts_tensor_moves(launch) || !self.tensor_less_fp16() {
            return self.units(launch);
        }
        self.units_less(launch, self.counted_subtract().into_iter())
    }

    fn units_less<'m>(&self, launch: &NcuKernel, subtract: impl Iterator<Item = &'m str>) -> Result<f64> {
        let mut count = 0.0;
        for metric in &self.ncu_metrics {
            count += launch.metric(metric)?;
        }
        for metric in subtract {
            count -= launch.metric(metric)?;
        }
        Ok(count * self.scale)
    }

    /// Whether this class counts `launch`'s tensor-pipe register moves as tensor MMAs: a
    /// tensor-MMA term of protocol v3's definition ([`ModelClass::counted_subtract`]) over an
    /// export without [`TENSOR_PIPE_HFMA2`] (one made before 2026-12-01) is counted as v3
    /// counted it, and the explanation says so.
    pub fn counts_tensor_moves(&self, launch: &NcuKernel) -> bool {
        self.tensor_less_fp16() && launch.metric(TENSOR_PIPE_HFMA2).is_err()
    }

    /// Whether the class counts the tensor pipe less the FMA pipe's fp16 count (protocol
    /// v3's tensor-MMA term), the one [`ModelClass::counted_subtract`] counts otherwise.
    fn tensor_less_fp16(&self) -> bool {
        self.ncu_metrics.iter().any(|m| m == TENSOR_PIPE) && self.subtract_metrics.iter().any(|m| m == FP16_PIPE)
    }

    /// The metrics subtracted when counting: `subtract_metrics`, except that a term counting
    /// the tensor pipe ([`TENSOR_PIPE`]) less the FMA pipe's fp16 count ([`FP16_PIPE`],
    /// protocol v3's tensor-MMA term) subtracts the tensor pipe's own HFMA2.MMA count
    /// ([`TENSOR_PIPE_HFMA2`]) instead. ptxas loads constants with `HFMA2.MMA R, -RZ, RZ,
    /// imm` on that pipe, which the fp16 count does not hold: the harness's FFMA loop has one
    /// per warp, 8,448 per launch, all of its tensor-pipe count, that v3's term priced as
    /// tensor MMAs (H200, research/results/2026-12-01-hmma-count). The tensor pipe's HFMA2.MMA
    /// count holds those moves and the fp16 math issued there alike (equal to the fp16 count
    /// on the fp16 training kernel), so the two definitions differ by the moves alone.
    pub fn counted_subtract(&self) -> Vec<&str> {
        let tensor_less_fp16 = self.tensor_less_fp16();
        self.subtract_metrics
            .iter()
            .map(|m| if tensor_less_fp16 && m == FP16_PIPE { TENSOR_PIPE_HFMA2 } else { m.as_str() })
            .collect()
    }
}

/// The tensor pipe's warp instructions (HMMA, HGMMA and the HFMA2.MMA issued there).
pub const TENSOR_PIPE: &str = "smsp__inst_executed_pipe_tensor_op_hmma.sum";
/// The tensor pipe's HFMA2.MMA warp instructions: fp16 math and register moves alike.
pub const TENSOR_PIPE_HFMA2: &str = "smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum";
/// The FMA pipe's fp16 warp instructions.
pub const FP16_PIPE: &str = "smsp__inst_executed_pipe_fma_type_fp16.sum";

/// A fitted model, one per GPU model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// launch's measured time ([`PowerBound`](super::PowerBound)); `None` (models fitted before protocol v3): no
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
            .flat_map(|c| {
                c.ncu_metrics.iter().chain(&c.subtract_metrics).map(String::as_str).chain(c.counted_subtract())
            })
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
