//! The calibration's FMA loop on a fixed grid, as the FMA benches launch it (`fma`,
//! `launch_sizes`, `short_kernels`): 8 blocks of 256 threads per SM of an H100 on every GPU,
//! so the work per launch is the same everywhere; 16 FMAs per thread per loop iteration.

use energy_harness::unstable::cuda::FMA_LOOP_PTX;
use energy_harness::{CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Result, Stream};

/// Blocks of the grid (8 per SM of an H100).
pub const BLOCKS: u32 = 132 * 8;
/// Threads per block.
pub const THREADS: u32 = 256;
/// FMAs per thread per loop iteration.
pub const FMA_PER_ITER: u64 = 16;

/// The loop loaded, with its arguments.
pub struct FmaLoop {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _out: DeviceBuffer<f32>,
}

/// The loop of `iterations`, JIT-compiled at `level`.
pub fn fma_loop(gpu: &CudaGpu, iterations: u32, level: JitOptLevel) -> Result<FmaLoop> {
    let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", level)?.kernel("fma_loop")?;
    let config = LaunchConfig::linear(BLOCKS, THREADS);
    let out = gpu.alloc_zeros::<f32>((BLOCKS * THREADS) as usize)?;
    let args = KernelArgs::new().buffer(&out).u32(iterations);
    Ok(FmaLoop { kernel, config, args, _out: out })
}

impl FmaLoop {
    /// One launch on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.kernel.launch(stream, self.config, &self.args)
    }
}
