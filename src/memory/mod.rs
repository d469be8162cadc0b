//! The memory suite (Delestrac et al. 2024 on today's GPUs): energy per access at each
//! level of the memory hierarchy.
//!
//! - [`ptx`]: the one kernel template the PTX of `ptx/memory/` is generated from;
//! - [`host`]: the host's evaluation of each kernel, to check the GPU's stored results;
//! - [`model`]: the regression, the level check by latency and the lower-bound breakdown
//!   of an application's accesses;
//! - [`suite`]: `cargo bench --bench memory`, the measurement and the table.

pub mod host;
pub mod model;
pub mod ptx;
pub mod suite;

pub use model::{breakdown, fit_line, level_check, AccessCounts, Breakdown, Latencies, Level, LineFit, SectorEnergies};
pub use ptx::{generate, MemoryKernel};
