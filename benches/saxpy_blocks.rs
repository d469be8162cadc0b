//! A parameterized benchmark: the README's saxpy at five block sizes, one `#[energy_bench]`
//! with `args`. Each block size is its own benchmark (`saxpy_blocks/64` … `saxpy_blocks/1024`,
//! its own result file); after the last, the run prints the sweep's table and verdict: the
//! block size with the least energy per call, the fastest, and whether they differ beyond
//! the intervals.

use energy_harness::prelude::*;

/// Elements per vector: 64 MiB each, far beyond the 50 MB L2.
const N: usize = 1 << 24;
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

struct Saxpy {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

/// The setup gets the argument last, as the launch does.
fn setup(gpu: &CudaGpu, block: &u32) -> Result<Saxpy> {
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(*block as usize) as u32, *block), args, _x: x, _y: y })
}

/// Simulated seconds per call at `block` threads per block: a model, not a measurement
/// (bandwidth-bound at 3 TB/s, small blocks slowed by scheduling: 1 + 32/block).
fn sim_seconds(block: u32) -> f64 {
    12.0 * N as f64 / 3.0e12 * (1.0 + 32.0 / block as f64)
}

/// Simulated board power at `block` threads per block: a model (380 W, rising with block size).
fn sim_watts(block: u32) -> f64 {
    380.0 + 0.04 * block as f64
}

/// One saxpy launch per block size; `ops`, `bytes` and the sim model may use the argument
/// (`block`, the launch function's parameter, holds its value there).
#[energy_bench(
    args = [64, 128, 256, 512, 1024],
    setup = setup,
    ops = 2 * N,
    bytes = 12 * N,
    sim(seconds = sim_seconds(block), watts = sim_watts(block))
)]
fn saxpy_blocks(s: &mut Saxpy, stream: &Stream, block: &u32) -> Result<()> {
    let _ = block;
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
