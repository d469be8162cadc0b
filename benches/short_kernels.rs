//! Kernels shorter than their launch (issue 63): the FMA loop of the calibration at 1, 16, 57
//! and 143 iterations (about 2 µs to 20 µs on an H100 or H200). Below the host's time per
//! launch (3-4 µs with CUDA's driver API on a fast host) the GPU waits between launches and
//! the result carries a `launch-bound` warning with the share of each window it waited; the
//! launch-bound probe's time per launch back to back is in the result (`back_to_back_s`).
//! Outside a plain `cargo bench`: `cargo bench --bench short_kernels`.

use energy_harness::prelude::*;

#[path = "common/fma_loop.rs"]
mod fma;
use fma::{FmaLoop, BLOCKS, FMA_PER_ITER, THREADS};

fn fma_loop(gpu: &CudaGpu, iterations: u32) -> Result<FmaLoop> {
    fma::fma_loop(gpu, iterations, JitOptLevel::O4)
}

/// FMAs per launch of `iterations`.
const fn fmas(iterations: u64) -> u64 {
    BLOCKS as u64 * THREADS as u64 * FMA_PER_ITER * iterations
}

fn setup_1(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 1)
}
fn setup_16(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 16)
}
fn setup_57(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 57)
}
fn setup_143(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 143)
}

// Simulated: the loop's ~336 W (research/results/2026-11-22-h100-calibrate) for its length
// on an H100 at 1980 MHz (about 7170 iterations per ms) plus ~1.5 µs of launch latency; the
// simulated host launches one kernel every 3 µs.
#[energy_bench(setup = setup_1, ops = fmas(1), sim(seconds = 1.6e-6, watts = 336.0))]
fn fma_1_iteration(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_16, ops = fmas(16), sim(seconds = 3.7e-6, watts = 336.0))]
fn fma_16_iterations(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_57, ops = fmas(57), sim(seconds = 9.4e-6, watts = 336.0))]
fn fma_57_iterations(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_143, ops = fmas(143), sim(seconds = 21.5e-6, watts = 336.0))]
fn fma_143_iterations(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

energy_main!();
