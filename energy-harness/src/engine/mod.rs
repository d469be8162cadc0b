//! The measurement engine. The protocol: one options type ([`options`]), the session that
//! runs idle, warm-up, back-to-back windows and idle ([`session`], recording helpers in
//! [`run`]), and what it produces ([`result`], [`warning`]). From a trace and its kernel
//! windows to energy figures: cleaning ([`clean`], [`counter`]), the energy curve of each
//! source with its sensor model inverted ([`curve`]), the split over windows with idle
//! subtracted ([`windows`]), whole-trace analysis ([`analyze`]), statistics ([`stats`]).
//! A GPU's calibration (the cached models, the step response and its fit) is
//! [`calibration`].

pub mod analyze;
pub mod calibration;
pub mod clean;
pub mod counter;
pub mod curve;
pub mod options;
pub mod result;
pub mod run;
pub mod session;
pub use energy_results::stats;
mod summary;
pub use energy_results::sweep;
pub mod thermal;
pub use energy_results::warning;
pub mod windows;

pub use analyze::{analyze_trace, AnalysisOptions, ModelChoice, TraceAnalysis};
pub use options::MeasureOptions;
pub use result::{Measurement, WindowResult};
pub use run::{SimLibraryWait, SimLibraryWorkload, SimWorkload};
pub use session::{measure, MeasureRequest, Session};
pub use stats::Estimate;
pub use summary::{difference, net_energy, net_per_op, per_unit};
