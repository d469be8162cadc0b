//! The fit: which kernels it reads ([`FitSelection`], the application lists, the training
//! kernels' names), a benchmark's counts beside its measured energy ([`Observation`]), and
//! the non-negative least-squares fit in one or both data regimes.

use std::collections::BTreeSet;

use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_report::{nnls, EnergyModel, ModelClass, NcuKernel, RegimeCost, MODEL_SCHEMA};
use serde::Serialize;

#[cfg(doc)]
use super::terms::CLASSES;
use super::terms::{classes_of, model_classes};
use crate::protocol::Protocol;

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
