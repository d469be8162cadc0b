//! Kernels shorter than their launch (issue 63): the FMA loop of the calibration at 1, 5, 16,
//! 27, 57 and 143 iterations (about 1.4, 2, 3.4, 5, 9 and 21 µs back to back on an H200). Below the host's time per
//! launch (3-4 µs with CUDA's driver API on a fast host) the GPU waits between launches and
//! the result carries a `launch-bound` warning with the share of each window it waited; the
//! launch-bound probe's time per launch back to back is in the result (`back_to_back_s`).
//! The `_graph` twins launch the same kernels through a CUDA graph of 100 (`graph = 100`),
//! measured back to back, never launch-bound.
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
fn setup_5(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 5)
}
fn setup_27(gpu: &CudaGpu) -> Result<FmaLoop> {
    fma_loop(gpu, 27)
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

#[energy_bench(setup = setup_5, ops = fmas(5), sim(seconds = 2.2e-6, watts = 336.0))]
fn fma_5_iterations(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_27, ops = fmas(27), sim(seconds = 5.2e-6, watts = 336.0))]
fn fma_27_iterations(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
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

// The same kernels launched through a CUDA graph of 100 launches (`graph = 100`): the host
// launches one graph per 100 kernels, so the GPU runs them back to back; every figure is
// still per launch of the kernel. Simulated: the same models, the graph replayed by a host
// that takes 3 µs per graph launch.
#[energy_bench(setup = setup_1, ops = fmas(1), graph = 100, sim(seconds = 1.6e-6, watts = 336.0))]
fn fma_1_iteration_graph(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_5, ops = fmas(5), graph = 100, sim(seconds = 2.2e-6, watts = 336.0))]
fn fma_5_iterations_graph(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_27, ops = fmas(27), graph = 100, sim(seconds = 5.2e-6, watts = 336.0))]
fn fma_27_iterations_graph(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_16, ops = fmas(16), graph = 100, sim(seconds = 3.7e-6, watts = 336.0))]
fn fma_16_iterations_graph(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_57, ops = fmas(57), graph = 100, sim(seconds = 9.4e-6, watts = 336.0))]
fn fma_57_iterations_graph(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

#[energy_bench(setup = setup_143, ops = fmas(143), graph = 100, sim(seconds = 21.5e-6, watts = 336.0))]
fn fma_143_iterations_graph(s: &mut FmaLoop, stream: &Stream) -> Result<()> {
    s.launch(stream)
}

/// The 16-iteration loop launched with raw cudarc (its `launch_builder`, which records and
/// waits on events around each launch unless the context's event tracking is off) and
/// captured into a graph: what a user of cudarc gets from `graph = 100`.
mod raw {
    use energy_harness::cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
    use energy_harness::cudarc::{self};
    use energy_harness::prelude::*;
    use energy_harness::unstable::cuda::FMA_LOOP_PTX;

    use super::fma::{BLOCKS, THREADS};

    pub struct RawLoop {
        f: CudaFunction,
        out: CudaSlice<f32>,
    }

    pub fn setup(gpu: &CudaGpu) -> Result<RawLoop> {
        let module = gpu.cuda_context()?.load_module(cudarc::nvrtc::Ptx::from_src(FMA_LOOP_PTX))?;
        let f = module.load_function("fma_loop")?;
        let out = gpu.stream().cuda()?.alloc_zeros::<f32>((BLOCKS * THREADS) as usize)?;
        Ok(RawLoop { f, out })
    }

    #[energy_bench(setup = setup, gpu_only, ops = super::fmas(16), graph = 100)]
    fn fma_16_iterations_cudarc_graph(s: &mut RawLoop, stream: &Stream) -> Result<()> {
        let cfg =
            cudarc::driver::LaunchConfig { grid_dim: (BLOCKS, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let iterations = 16u32;
        // SAFETY: fma_loop(float* out, u32 iterations) writes one float per thread; `out` holds them all.
        unsafe { stream.cuda()?.launch_builder(&s.f).arg(&mut s.out).arg(&iterations).launch(cfg)? };
        Ok(())
    }
}

energy_main!();
