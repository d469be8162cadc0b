//! A kernel under test, in one room: what benchmarks, budgets and the suites put under
//! test, and what becomes of it on a device before anything is measured.
//!
//! - [`KernelUnderTest`]: a kernel's name, its code ([`KernelCode`]: setup and launch) and
//!   its model on the simulated GPU;
//! - [`Subject`]: the kernel under test with the kernel measured beside it (a benchmark's
//!   baseline, a budget's reference) and whether their code needs a GPU (`gpu_only`);
//! - [`Subject::check`]: on the simulated GPU, the code runs on the checked device first
//!   ([`CodeCheck`]); the outcome ([`Readiness`]) is *measure it*, *checked, not measured*
//!   (no simulated model) or *not run: needs a GPU*;
//! - [`open_device`] and [`Rig`]: the GPU it runs on (the ordinal
//!   [`MeasureOptions::cuda_device`](crate::MeasureOptions::cuda_device) gives, or the
//!   simulated one), CUDA on it and the checked device, and the workload a kernel becomes
//!   there.
//!
//! A benchmark (`bench`) and a budget (`budget`) each hold a [`Subject`] and the one
//! [`MeasureOptions`](crate::MeasureOptions); the suites build benchmarks.

mod check;
mod code;
mod rig;
mod subject;

pub use check::{note_missing_ptxas, note_unchecked, strict_mode, Checks, Readiness, STRICT_ENV};
pub use code::{CodeCheck, KernelCode, Launcher, CHECK_LAUNCHES};
pub use rig::{open_device, options_on, Rig};
pub use subject::{Companion, KernelUnderTest, Part, Role, Subject};
