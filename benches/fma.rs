//! An FMA loop over every SM (the calibration kernel), about 1 ms per launch: the
//! compute-bound counterpart of the saxpy bench.

use energy_harness::unstable::cuda::FMA_LOOP_PTX;
use energy_harness::{
    energy_bench, energy_main, CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Result, Stream,
};

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
const FMA_PER_ITER: u64 = 16;

struct FmaLoop {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _out: DeviceBuffer<f32>,
}

/// A fixed grid (8 blocks of 256 threads per SM of an H100), so the work per launch is
/// the same on every GPU.
const BLOCKS: u32 = 132 * 8;
const THREADS: u32 = 256;

fn setup(gpu: &CudaGpu) -> Result<FmaLoop> {
    setup_at(gpu, JitOptLevel::O4)
}

fn setup_o0(gpu: &CudaGpu) -> Result<FmaLoop> {
    setup_at(gpu, JitOptLevel::O0)
}

fn setup_at(gpu: &CudaGpu, level: JitOptLevel) -> Result<FmaLoop> {
    let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", level)?.kernel("fma_loop")?;
    let config = LaunchConfig::linear(BLOCKS, THREADS);
    let out = gpu.alloc_zeros::<f32>((BLOCKS * THREADS) as usize)?;
    let args = KernelArgs::new().buffer(&out).u32(ITERS);
    Ok(FmaLoop { kernel, config, args, _out: out })
}

/// FMAs per launch.
const FMAS: u64 = BLOCKS as u64 * THREADS as u64 * FMA_PER_ITER * ITERS as u64;

/// Simulated: ~1 ms at the 336 W this loop drew on an H100 during calibration
/// (research/results/2026-11-22-h100-calibrate).
#[energy_bench(setup = setup, ops = FMAS, sim(seconds = 1.0e-3, watts = 336.0))]
fn fma_loop(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// The same loop JIT-compiled without optimization. It has no simulated model, so on a
/// machine without a GPU it is skipped (with a line saying so).
#[energy_bench(setup = setup_o0, ops = FMAS)]
fn fma_loop_o0(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
