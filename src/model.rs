//! The energy model of a GPU (issue 20): dynamic energy per unit of work by instruction
//! class, by memory level and per second of kernel time, fitted by non-negative least
//! squares over the model suite's training kernels (`cargo bench --bench model`, the
//! `train_*` benchmarks) from their measured dynamic energy and their Nsight Compute counts,
//! and checked on application kernels outside the fit (the `app_*` benchmarks).
//!
//! Every count is an ncu metric (the same for the fit and for `cargo energy explain`):
//! [`CLASSES`] names them. The fit weighs each kernel by its measured energy (it minimizes
//! relative errors: a 1 ms kernel counts as much as a 10 ms one).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use energy_harness::unstable::explain::{
    explain, nnls, read_ncu_csv, EnergyModel, Explanation, ModelClass, NcuKernel, RegimeCost, MODEL_SCHEMA,
};
use energy_harness::unstable::report::ResultSet;
use energy_harness::{Error, ErrorKind, Result, ResultFile};
use serde::Serialize;

use crate::protocol::Protocol;

/// One term of the model: its name, kind, unit, the ncu metrics that count it (less those
/// subtracted) and the units per metric count.
#[derive(Clone, Copy, Debug)]
pub struct ClassDef {
    /// Name.
    pub name: &'static str,
    /// `compute`, `data movement` or `time`.
    pub kind: &'static str,
    /// What one unit is.
    pub unit: &'static str,
    /// Metrics summed.
    pub metrics: &'static [&'static str],
    /// Metrics subtracted.
    pub subtract: &'static [&'static str],
    /// Units per metric count.
    pub scale: f64,
}

/// The model's terms. Thread-level instruction counts are divided by 32 (one unit: a full
/// warp's worth); the L1 has a cost per request (address and tag work) and per sector
/// (data); L2 and DRAM per 32-byte sector; `kernel time` is the power a running kernel
/// draws above active idle whatever it does (measured by resident, sleeping warps).
pub const CLASSES: [ClassDef; 17] = [
    ClassDef {
        name: "fp32 (FADD, FMUL, FFMA)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "fp16 (HFMA2, HADD2, HMUL2)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__inst_executed_pipe_fma_type_fp16.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "tensor MMA (HMMA)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__inst_executed_pipe_tensor_op_hmma.sum"],
        subtract: &["smsp__inst_executed_pipe_fma_type_fp16.sum"],
        scale: 1.0,
    },
    ClassDef {
        name: "fp64",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_fp64_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "integer and logic",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_integer_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "conversion",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_conversion_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "warp shuffle and vote",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_inter_thread_communication_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "special function (XU pipe)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__inst_executed_pipe_xu.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "shared loads",
        kind: "data movement",
        unit: "wavefront",
        metrics: &["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "shared stores",
        kind: "data movement",
        unit: "wavefront",
        metrics: &["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L1 global load sectors",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L1 global load requests",
        kind: "data movement",
        unit: "request",
        metrics: &["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L2 reads",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["lts__t_sectors_srcunit_tex_op_read.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L2 writes",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["lts__t_sectors_srcunit_tex_op_write.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "DRAM reads",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["dram__bytes_read.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "DRAM writes",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["dram__bytes_write.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "kernel time",
        kind: "time",
        unit: "second",
        metrics: &["gpu__time_duration.sum"],
        subtract: &[],
        scale: 1e-9,
    },
];

/// Kind and unit of the terms later protocols add to [`CLASSES`] (protocol v2: FP64 tensor MMA
/// and warpgroup MMA); a protocol's terms take their kind and unit from these two lists.
pub const LATER_TERMS: [(&str, &str, &str); 2] = [
    ("warpgroup MMA (HGMMA)", "compute", "4096 FP16/BF16 math ops (one m16n8k16's work)"),
    ("fp64 tensor (DMMA)", "compute", "DMMA pipe cycle (per SM sub-partition)"),
];

/// The model's classes of `protocol`, costs not yet fitted (zero): its terms in its order,
/// their metrics and scale as it states them, kind and unit from [`CLASSES`] and
/// [`LATER_TERMS`] by name (a term named in neither is refused).
pub fn classes_of(protocol: &Protocol) -> Result<Vec<ModelClass>> {
    protocol
        .terms
        .iter()
        .map(|t| {
            let known = CLASSES
                .iter()
                .map(|c| (c.name, c.kind, c.unit))
                .chain(LATER_TERMS)
                .find(|(name, _, _)| *name == t.name);
            let Some((_, kind, unit)) = known else {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("the protocol's term `{}` has no kind and unit in energy_suites::model", t.name),
                ));
            };
            Ok(unfitted(&t.name, kind, unit, t.metrics.clone(), t.subtract.clone(), t.scale))
        })
        .collect()
}

/// What a fit reads of a suite run: the model's classes and the training kernels of each
/// data regime.
#[derive(Clone, Debug, PartialEq)]
pub struct FitSelection {
    /// The classes, costs not fitted.
    pub classes: Vec<ModelClass>,
    /// The training kernels on switching and on constant data (`None`: every `train_*`
    /// benchmark of the run, by its name: [`in_current_fit`], [`in_constant_fit`]).
    pub training: Option<(BTreeSet<String>, BTreeSet<String>)>,
}

impl FitSelection {
    /// [`CLASSES`] and every training kernel of the run (the fits before the protocol).
    pub fn every_training_kernel() -> FitSelection {
        FitSelection { classes: model_classes(), training: None }
    }

    /// `protocol`'s terms and training lists.
    pub fn of(protocol: &Protocol) -> Result<FitSelection> {
        let listed = |regime: &str| -> BTreeSet<String> {
            protocol.training.iter().filter(|t| t.regime == regime).map(|t| t.benchmark.clone()).collect()
        };
        Ok(FitSelection { classes: classes_of(protocol)?, training: Some((listed("switching"), listed("constant"))) })
    }

    /// Whether `name` is a switching-data training kernel.
    pub fn is_switching(&self, name: &str) -> bool {
        self.training.as_ref().map_or_else(|| in_current_fit(name), |(s, _)| s.contains(name))
    }

    /// Whether `name` is a constant-data training kernel.
    pub fn is_constant(&self, name: &str) -> bool {
        self.training.as_ref().map_or_else(|| in_constant_fit(name), |(_, c)| c.contains(name))
    }
}

/// The application kernels that served to choose the model's terms (several term sets were
/// tried and compared on them): not in the fit, but not unseen either.
pub const SELECTION_APPS: [&str; 7] =
    ["app_saxpy", "app_reduce", "app_sgemm_random", "app_tgemm_random", "app_stencil", "app_hash", "app_transpose"];
/// The application kernels written after the terms were fixed: the model's test.
pub const HELD_OUT_APPS: [&str; 6] =
    ["app_sgemv", "app_stencil7", "app_softmax", "app_fir", "app_dgemm", "app_bitonic"];
/// The GEMMs again with zero operands: how far data moves the measured energy (the model
/// sees counts, not data).
pub const ZERO_OPERAND_APPS: [&str; 2] = ["app_sgemm_zero", "app_tgemm_zero"];

/// Prefix of the training benchmarks.
pub const TRAINING_PREFIX: &str = "train_";

/// Suffix of the training benchmarks run on constant data (issue 35's second regime): not
/// in the current fit, which prices switching data.
pub const CONSTANT_SUFFIX: &str = "_const";

/// Whether benchmark `name` is a training kernel of the current (switching-data) fit.
pub fn in_current_fit(name: &str) -> bool {
    name.starts_with(TRAINING_PREFIX) && !name.ends_with(CONSTANT_SUFFIX)
}

/// Whether benchmark `name` is a training kernel of the constant-data fit (`train_*_const`).
pub fn in_constant_fit(name: &str) -> bool {
    name.starts_with(TRAINING_PREFIX) && name.ends_with(CONSTANT_SUFFIX)
}

/// Writes the constant-data fit's costs into the switching-data model (each class's
/// `constant`), as fitted: a class whose constant cost exceeds its switching cost is kept
/// so (an explanation names it; [`ModelClass::constant_exceeds_switching`]).
pub fn with_constant_costs(mut switching: EnergyModel, constant: &EnergyModel) -> EnergyModel {
    for (class, k) in switching.classes.iter_mut().zip(&constant.classes) {
        class.constant = Some(RegimeCost { j_per_unit: k.j_per_unit, ci_j: k.ci_j });
    }
    switching
}

/// The two regimes' fits: [`fit`] on the switching-data kernels, and, when there are
/// constant-data ones, [`fit`] again on those, its costs written into the model
/// ([`with_constant_costs`]). Returns the switching fit (with the constant costs) and the
/// constant fit's in-sample figures.
pub fn fit_regimes(
    switching: &[Observation],
    constant: &[Observation],
    template: EnergyModel,
) -> Result<(ModelFit, Option<ModelFit>)> {
    let mut fitted = fit(switching, template.clone())?;
    if constant.is_empty() {
        return Ok((fitted, None));
    }
    let constant_fit = fit(constant, template).map_err(|e| e.context("the constant-data fit (train_*_const)"))?;
    fitted.model = with_constant_costs(fitted.model, &constant_fit.model);
    Ok((fitted, Some(constant_fit)))
}

/// The model's classes, costs not yet fitted (zero).
pub fn model_classes() -> Vec<ModelClass> {
    CLASSES
        .iter()
        .map(|c| {
            let strings = |list: &[&str]| list.iter().map(|m| m.to_string()).collect();
            unfitted(c.name, c.kind, c.unit, strings(c.metrics), strings(c.subtract), c.scale)
        })
        .collect()
}

/// A class with its costs not yet fitted (zero, no interval, no constant-data cost).
fn unfitted(
    name: &str,
    kind: &str,
    unit: &str,
    ncu_metrics: Vec<String>,
    subtract_metrics: Vec<String>,
    scale: f64,
) -> ModelClass {
    ModelClass {
        name: name.into(),
        kind: kind.into(),
        unit: unit.into(),
        ncu_metrics,
        subtract_metrics,
        scale,
        j_per_unit: 0.0,
        ci_j: None,
        constant: None,
    }
}

/// A benchmark's measurement beside its counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observation {
    /// The benchmark (`train_ffma`).
    pub name: String,
    /// The kernel as ncu names it.
    pub kernel: String,
    /// Measured dynamic energy per launch, J.
    pub dynamic_j: f64,
    /// Units of each class per launch (order of [`CLASSES`]).
    pub units: Vec<f64>,
}

impl Observation {
    /// Dynamic energy per launch predicted with `costs_j` (J per unit, order of [`CLASSES`]).
    pub fn predicted_j(&self, costs_j: impl IntoIterator<Item = f64>) -> f64 {
        self.units.iter().zip(costs_j).map(|(u, c)| u * c).sum()
    }
}

/// The profiled launches of a benchmark run under ncu with `--test` (setup launches, then the
/// benchmark's three): the last two, which must be launches of one kernel.
pub fn measured_launches(launches: &[NcuKernel], what: &str) -> Result<Vec<NcuKernel>> {
    let [.., a, b] = launches else {
        return Err(Error::new(
            ErrorKind::Format,
            format!(
                "{what}: {} profiled launch(es); the benchmark's --test run launches its kernel three times",
                launches.len()
            ),
        ));
    };
    if a.name != b.name {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{what}: the last two launches are of `{}` and `{}`, not of one kernel", a.name, b.name),
        ));
    }
    Ok(vec![a.clone(), b.clone()])
}

/// The observation of benchmark `name`: its result and its profiled launches, counted in
/// [`CLASSES`].
pub fn observe(name: &str, result: &ResultFile, launches: &[NcuKernel]) -> Result<Observation> {
    observe_with(&model_classes(), name, result, launches)
}

/// The observation of benchmark `name` counted in `classes`.
pub fn observe_with(
    classes: &[ModelClass],
    name: &str,
    result: &ResultFile,
    launches: &[NcuKernel],
) -> Result<Observation> {
    let chosen = measured_launches(launches, name)?;
    let mut units = Vec::with_capacity(classes.len());
    for class in classes {
        let mut sum = 0.0;
        for launch in &chosen {
            sum += class.units(launch).map_err(|e| e.context(name))?;
        }
        units.push(sum / chosen.len() as f64);
    }
    Ok(Observation { name: name.into(), kernel: chosen[0].name.clone(), dynamic_j: result.dynamic_j.mean, units })
}

/// The lowest and highest SM clock of a result's windows, MHz (`None`: not recorded).
pub fn clock_range(result: &ResultFile) -> Option<(u32, u32)> {
    let drift = result.drift.as_ref()?;
    Some((drift.sm_clock_min_mhz?, drift.sm_clock_max_mhz?))
}

/// A fitted model and how it fits its own kernels.
#[derive(Clone, Debug, Serialize)]
pub struct ModelFit {
    /// The model.
    pub model: EnergyModel,
    /// Each training kernel: measured and predicted dynamic energy, J.
    pub in_sample: Vec<(String, f64, f64)>,
    /// Mean absolute percentage error over the training kernels, %.
    pub in_sample_mape_pct: f64,
}

/// Fits the costs to `training` (each row weighed by 1 / its measured energy), one per class
/// of `template` (whose order the observations' units follow), or of [`CLASSES`] when the
/// template has none.
pub fn fit(training: &[Observation], template: EnergyModel) -> Result<ModelFit> {
    let classes = if template.classes.is_empty() { model_classes() } else { template.classes.clone() };
    if let Some(o) = training.iter().find(|o| o.units.len() != classes.len()) {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("{}: counted in {} classes, the model has {}", o.name, o.units.len(), classes.len()),
        ));
    }
    if training.len() <= classes.len() {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("{} training kernels for {} classes: too few to fit", training.len(), classes.len()),
        ));
    }
    if let Some(bad) = training.iter().find(|o| !(o.dynamic_j > 0.0 && o.dynamic_j.is_finite())) {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("{}: dynamic energy {} J cannot be fitted (it must be positive)", bad.name, bad.dynamic_j),
        ));
    }
    let a: Vec<Vec<f64>> = training.iter().map(|o| o.units.iter().map(|u| u / o.dynamic_j).collect()).collect();
    let b = vec![1.0; training.len()];
    let solved = nnls(&a, &b)?;
    let mut model = template;
    model.format = MODEL_SCHEMA.into();
    model.classes = classes
        .into_iter()
        .zip(solved.x.iter().zip(&solved.ci))
        .map(|(c, (&j, &ci))| ModelClass { j_per_unit: j, ci_j: ci, ..c })
        .collect();
    let in_sample: Vec<(String, f64, f64)> =
        training.iter().map(|o| (o.name.clone(), o.dynamic_j, o.predicted_j(solved.x.iter().copied()))).collect();
    // Never empty: the fit refused fewer kernels than classes above.
    let in_sample_mape_pct = mape_pct(in_sample.iter().map(|(_, m, p)| (*m, *p))).unwrap_or_default();
    Ok(ModelFit { model, in_sample, in_sample_mape_pct })
}

/// Mean absolute percentage error of (measured, predicted) pairs, % (`None` for no pairs).
pub fn mape_pct(pairs: impl IntoIterator<Item = (f64, f64)>) -> Option<f64> {
    let errors: Vec<f64> = pairs.into_iter().map(|(m, p)| ((p - m) / m).abs() * 100.0).collect();
    (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
}

/// The first error line (`==ERROR==`) in the standard error that ncu's run left beside an
/// export (`None` when it holds none, or does not exist); an error line in the export itself
/// is refused by the export's reader.
pub fn ncu_error(stderr: &Path) -> Option<String> {
    let text = std::fs::read_to_string(stderr).ok()?;
    text.lines().find(|l| l.starts_with("==ERROR==")).map(|l| l.trim().to_string())
}

/// The model suite's run read back: results by benchmark and each one's ncu launches
/// (`ncu_dir/<benchmark>.csv`).
pub struct SuiteRun {
    /// Results by benchmark name (`train_ffma`).
    pub results: BTreeMap<String, ResultFile>,
    /// ncu launches by benchmark name.
    pub launches: BTreeMap<String, Vec<NcuKernel>>,
    /// Benchmarks measured but without a readable ncu export, with why (a profile cut by
    /// its time limit, or not taken): any use of one is an error naming the reason.
    pub unprofiled: BTreeMap<String, String>,
    /// The classes observations are counted in and the training kernels of each regime
    /// ([`FitSelection::every_training_kernel`] as read; [`SuiteRun::under`] sets a protocol's).
    pub selection: FitSelection,
}

impl SuiteRun {
    /// Reads the run directory (a `cargo bench --bench model` run) and the ncu exports. A
    /// benchmark whose export is missing, unreadable or partial (an `==ERROR==` line in the
    /// export, or in `<benchmark>.err` beside it) is listed in [`SuiteRun::unprofiled`]: the
    /// fit refuses it if it is a training kernel.
    pub fn read_run_and_ncu(run_dir: &Path, ncu_dir: &Path) -> Result<SuiteRun> {
        let set = ResultSet::read_run(run_dir)?;
        // The profiling script's summary (`summary.txt`): `<benchmark> not profiled: <why>`.
        let summary = std::fs::read_to_string(ncu_dir.join("summary.txt")).unwrap_or_default();
        let skipped = |name: &str| {
            summary.lines().find_map(|l| {
                l.strip_prefix(&format!("{name} not profiled: "))
                    .map(|why| format!("not profiled: {why} (the profiling script's summary, ncu-*/summary.txt)"))
            })
        };
        let mut results = BTreeMap::new();
        let mut launches = BTreeMap::new();
        let mut unprofiled = BTreeMap::new();
        for (id, result) in set.results {
            let name = id.split('/').next().unwrap_or(&id).to_string();
            let path = ncu_dir.join(format!("{name}.csv"));
            // ncu writes what it profiled before an error (a launch it failed to profile, a
            // run cut by a time limit): such an export is partial, whatever it holds. The
            // reader refuses an error in the export; one on ncu's stderr is checked here.
            if let Some(error) = ncu_error(&ncu_dir.join(format!("{name}.err"))) {
                unprofiled.insert(
                    name.clone(),
                    format!("the ncu export of `{name}` is partial: its ncu run printed `{}`", error.trim()),
                );
                results.insert(name, result);
                continue;
            }
            match read_ncu_csv(&path) {
                Ok(read) => {
                    launches.insert(name.clone(), read);
                }
                // Skipped by the profiling script, which says why in its summary; else the
                // reader's error.
                Err(e) => {
                    let why =
                        skipped(&name).unwrap_or_else(|| e.context(format!("the ncu export of `{name}`")).to_string());
                    unprofiled.insert(name.clone(), why);
                }
            }
            results.insert(name, result);
        }
        Ok(SuiteRun { results, launches, unprofiled, selection: FitSelection::every_training_kernel() })
    }

    /// The run read under `protocol`: its terms, its training lists (each of which must have
    /// a result in the run).
    pub fn under(mut self, protocol: &Protocol) -> Result<SuiteRun> {
        let selection = FitSelection::of(protocol)?;
        if let Some((switching, constant)) = &selection.training {
            if let Some(absent) = switching.iter().chain(constant).find(|n| !self.results.contains_key(*n)) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!("the protocol's training kernel `{absent}` has no result in the run"),
                ));
            }
        }
        self.selection = selection;
        Ok(self)
    }

    /// Benchmark `name`'s result and all its profiled launches (setup launches included).
    pub fn profiled(&self, name: &str) -> Result<(&ResultFile, &[NcuKernel])> {
        if let Some(why) = self.unprofiled.get(name) {
            return Err(Error::new(ErrorKind::InvalidInput, why.clone()));
        }
        match (self.results.get(name), self.launches.get(name)) {
            (Some(result), Some(launches)) => Ok((result, launches)),
            _ => Err(Error::new(ErrorKind::InvalidInput, format!("no result or ncu export of `{name}` in the run"))),
        }
    }

    /// The observation of benchmark `name`.
    pub fn observation(&self, name: &str) -> Result<Observation> {
        let (result, launches) = self.profiled(name)?;
        observe_with(&self.selection.classes, name, result, launches)
    }

    /// The highest SM clock any training kernel's windows saw, MHz: the clock the model is
    /// fitted at (read, never set).
    pub fn reference_clock_mhz(&self) -> Option<u32> {
        self.results
            .iter()
            .filter(|(n, _)| self.selection.is_switching(n))
            .filter_map(|(_, r)| clock_range(r))
            .map(|c| c.1)
            .max()
    }

    /// The training kernels' observations, less those whose windows ran below the reference
    /// clock (a kernel at the power cap runs at a lower clock and voltage, and so at a lower
    /// energy per instruction: its costs are not the model's), each left out with its reason.
    pub fn training(&self) -> Result<(Vec<Observation>, Vec<String>)> {
        self.training_where(|s, n| s.is_switching(n))
    }

    /// The constant-data training kernels' observations (`train_*_const`), left out below
    /// the switching fit's reference clock as [`SuiteRun::training`] leaves them (none when
    /// the run has no constant-data kernel).
    pub fn constant_training(&self) -> Result<(Vec<Observation>, Vec<String>)> {
        self.training_where(|s, n| s.is_constant(n))
    }

    fn training_where(&self, regime: fn(&FitSelection, &str) -> bool) -> Result<(Vec<Observation>, Vec<String>)> {
        let reference = self.reference_clock_mhz();
        let mut kept = Vec::new();
        let mut left_out = Vec::new();
        for (name, result) in self.results.iter().filter(|(n, _)| regime(&self.selection, n)) {
            match (clock_range(result), reference) {
                (Some((low, high)), Some(reference)) if low < reference => {
                    let throttle: Vec<&str> = result
                        .warnings
                        .iter()
                        .filter(|w| w.message.contains("throttle"))
                        .map(|w| w.message.as_str())
                        .collect();
                    left_out.push(format!(
                        "{name}: SM clock {low}–{high} MHz, below the {reference} MHz of the fit{}",
                        if throttle.is_empty() { String::new() } else { format!(" ({})", throttle.join("; ")) }
                    ));
                }
                _ => kept.push(self.observation(name)?),
            }
        }
        Ok((kept, left_out))
    }

    /// `cargo energy explain`'s explanation of benchmark `name` with `model`.
    pub fn explain(&self, name: &str, model: &EnergyModel) -> Result<Explanation> {
        let (result, launches) = self.profiled(name)?;
        let chosen = measured_launches(launches, name)?;
        let refs: Vec<&NcuKernel> = chosen.iter().collect();
        explain(model, result, &refs)
    }
}
