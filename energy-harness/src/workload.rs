//! The kernel under test as the measurement engine drives it, on the ground floor: the
//! CUDA layer ([`crate::cuda::CudaWorkload`]), the simulator
//! ([`crate::engine::run::SimWorkload`]) and test doubles implement it; the engine
//! ([`crate::engine`]) runs it.

use crate::error::Result;

/// The kernel under test, as the runner drives it.
pub trait Workload {
    /// Enqueues `launches` back-to-back launches, waits for them to finish and returns
    /// their GPU time in seconds (CUDA events; exact on the simulator).
    fn run_batch(&mut self, launches: u64) -> Result<f64>;
}
