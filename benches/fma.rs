//! An FMA loop over every SM (the calibration kernel), about 1 ms per launch: the
//! compute-bound counterpart of the saxpy bench.

use energy_harness::{energy_bench, energy_main, CudaGpu, JitOptLevel, Result, Stream};

#[path = "common/fma_loop.rs"]
mod fma;
use fma::{FmaLoop, BLOCKS, FMA_PER_ITER, THREADS};

/// Loop iterations per launch; each does 16 FMAs per thread. `FMA_ITERS=N cargo bench`
/// builds the kernel with another count: the before/after demonstration of
/// `cargo energy compare` uses it (research/results/2026-11-22-h100-compare).
const ITERS: u32 = match option_env!("FMA_ITERS") {
    Some(text) => parse_u32(text),
    None => 8192,
};

/// A compile-time decimal parse (a bad FMA_ITERS fails the build).
const fn parse_u32(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut value: u32 = 0;
    let mut i = 0;
    assert!(!bytes.is_empty(), "FMA_ITERS is empty");
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "FMA_ITERS must be a decimal number");
        value = value * 10 + (bytes[i] - b'0') as u32;
        i += 1;
    }
    value
}

fn setup(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma::fma_loop(gpu, ITERS, JitOptLevel::O4)
}

fn setup_o0(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma::fma_loop(gpu, ITERS, JitOptLevel::O0)
}

/// FMAs per launch.
const FMAS: u64 = BLOCKS as u64 * THREADS as u64 * FMA_PER_ITER * ITERS as u64;

/// Simulated: ~1 ms at the 336 W this loop drew on an H100 during calibration
/// (research/results/2026-11-22-h100-calibrate).
#[energy_bench(setup = setup, ops = FMAS, sim(seconds = 1.0e-3, watts = 336.0))]
fn fma_loop(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

/// The same loop JIT-compiled without optimization. It has no simulated model, so on a
/// machine without a GPU it is skipped (with a line saying so).
#[energy_bench(setup = setup_o0, ops = FMAS)]
fn fma_loop_o0(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

energy_main!();
