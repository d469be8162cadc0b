//! Stands in for `energy-harness` in the macro-error snapshots (`tests/ui`).
//!
//! Every case there must fail inside the macro, which keeps the function and adds its
//! error; the function's signature then only needs these names to resolve. Building the
//! real harness (CUDA, NVML, criterion) for that cost a minute of every `cargo test`.
//! A case that stopped failing in the macro would reach for `__private`, which is not
//! here, and its snapshot would no longer match.

pub use energy_macros::{energy_bench, energy_test};

/// The CUDA stream a kernel is launched on (a name only).
pub struct Stream;

/// The GPU a `setup` function prepares state on (a name only).
pub struct CudaGpu;

/// The harness's result type (its error is a name only).
pub type Result<T> = std::result::Result<T, Error>;

/// The harness's error (a name only).
#[derive(Debug)]
pub struct Error;

/// What `#[energy_bench]` emits under `cfg(test)` (nothing here: the cases never run).
#[macro_export]
macro_rules! __refuse_libtest {
    () => {};
}
