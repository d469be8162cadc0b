//! The FMA loop of the calibration at five launch lengths, about 20 µs, 1 ms, 10 ms,
//! 100 ms and 1 s on an H100 at 1980 MHz: what one benchmark costs in wall time across
//! the range the engine plans for (docs/VALIDATION.md, "wall time per benchmark").

use energy_harness::prelude::*;

#[path = "common/fma_loop.rs"]
mod fma;
use fma::{FmaLoop, BLOCKS, FMA_PER_ITER, THREADS};

/// Loop iterations per millisecond on an H100 at 1980 MHz (8192 took 1.14 ms).
const ITERS_PER_MS: f64 = 7170.0;

fn fma_loop(gpu: &CudaGpu, milliseconds: f64) -> Result<FmaLoop> {
    let iterations = (milliseconds * ITERS_PER_MS).round().max(1.0) as u32;
    fma::fma_loop(gpu, iterations, JitOptLevel::O4)
}

/// FMAs per launch of a loop of `milliseconds`.
const fn fmas(milliseconds: f64) -> f64 {
    BLOCKS as f64 * THREADS as f64 * FMA_PER_ITER as f64 * (milliseconds * ITERS_PER_MS)
}

fn setup_20us(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 0.02)
}
fn setup_1ms(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 1.0)
}
fn setup_10ms(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 10.0)
}
fn setup_100ms(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 100.0)
}
fn setup_1s(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 1000.0)
}

// Simulated: the loop drew about 336 W on an H100 (research/results/2026-11-22-h100-calibrate).
#[energy_bench(setup = setup_20us, ops = fmas(0.02), sim(seconds = 20e-6, watts = 336.0))]
fn fma_20us(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_1ms, ops = fmas(1.0), sim(seconds = 1e-3, watts = 336.0))]
fn fma_1ms(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_10ms, ops = fmas(10.0), sim(seconds = 10e-3, watts = 336.0))]
fn fma_10ms(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_100ms, ops = fmas(100.0), sim(seconds = 0.1, watts = 336.0))]
fn fma_100ms(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_1s, ops = fmas(1000.0), sim(seconds = 1.0, watts = 336.0))]
fn fma_1s(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

energy_main!();
