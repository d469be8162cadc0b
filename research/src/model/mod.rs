//! The energy model of a GPU (issue 20): dynamic energy per unit of work by instruction
//! class, by memory level and per second of kernel time, fitted by non-negative least
//! squares over the model suite's training kernels (`cargo bench --bench model`, the
//! `train_*` benchmarks) from their measured dynamic energy and their Nsight Compute counts,
//! and checked on application kernels outside the fit (the `app_*` benchmarks).
//!
//! Every count is an ncu metric (the same for the fit and for `cargo energy explain`):
//! [`CLASSES`] names them. The fit weighs each kernel by its measured energy (it minimizes
//! relative errors: a 1 ms kernel counts as much as a 10 ms one).
//!
//! The terms are in `terms.rs`, the selection of training kernels, their observations and
//! the fit in `fitting.rs`, and the reading of a suite run with its ncu exports in
//! `suite_run.rs`.

mod fitting;
mod suite_run;
mod terms;

pub use fitting::{
    clock_range, fit, fit_regimes, in_constant_fit, in_current_fit, mape_pct, measured_launches, observe, observe_with,
    with_constant_costs, FitSelection, ModelFit, Observation, CONSTANT_SUFFIX, HELD_OUT_APPS, SELECTION_APPS,
    TRAINING_PREFIX, ZERO_OPERAND_APPS,
};
pub use suite_run::{ncu_error, SuiteRun};
pub use terms::{classes_of, model_classes, ClassDef, CLASSES, LATER_TERMS};
