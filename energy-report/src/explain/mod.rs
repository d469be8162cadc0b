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

mod bracket;
mod model;
pub mod nnls;
mod power;
mod price;
mod render;
mod shipped;
mod unpriced;

pub use bracket::{operand_bracket, regime_totals, OperandBracket, Priced};
pub use model::{
    EnergyModel, ModelClass, RegimeCost, CLASS_KINDS, FP16_PIPE, MAX_SM_CLOCK_MHZ, MODEL_SCHEMA, TENSOR_PIPE,
    TENSOR_PIPE_HFMA2,
};
pub use power::{PowerBound, MAX_POWER_LIMIT_TOLERANCE};
pub use price::{explain, explain_as_fitted, outside_prediction, ExplainedTerm, Explanation};
pub use render::{render_markdown, render_svg};
pub use shipped::{shipped_model_for, ShippedModel, SHIPPED_MODELS};
pub use unpriced::{unpriced_work, UnpricedWork, PRICED_BY, UNPRICED_WORK};

/// `v` as a message quotes it: plain between 10⁻³ and 10⁷, else with an exponent (a
/// corrupt 1e300 is not 301 digits).
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-3..1e7).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests;
