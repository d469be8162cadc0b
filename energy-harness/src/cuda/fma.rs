//! The calibration's busy kernel: an FMA loop over every SM.

use std::sync::Arc;

use super::{CudaGpu, CudaWorkload, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Stream};
use energy_results::error::Result;

/// The busy kernel of calibration: independent FMA chains on every thread, sized by
/// the iteration count (`ptx/busy` holds the source; it is embedded here).
pub const FMA_LOOP_PTX: &str = include_str!("fma_loop.ptx");

/// The FMA loop loaded on a GPU: 8 blocks of 256 threads per SM, 16 FMAs per thread
/// per iteration.
pub struct FmaLoop {
    gpu: Arc<CudaGpu>,
    kernel: Kernel,
    config: LaunchConfig,
    out: Arc<DeviceBuffer<f32>>,
}

impl FmaLoop {
    /// FMAs each thread does per loop iteration.
    pub const FMAS_PER_ITERATION: u64 = 16;

    /// JIT-compiles the loop (optimization level 4) and allocates its output.
    pub fn load(gpu: Arc<CudaGpu>) -> Result<Self> {
        let props = gpu.properties()?;
        let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
        let config = LaunchConfig::linear(props.sm_count * 8, 256);
        let out = Arc::new(gpu.alloc_zeros::<f32>((props.sm_count * 8 * 256) as usize)?);
        Ok(FmaLoop { gpu, kernel, config, out })
    }

    /// FMAs in one launch of `iterations`.
    pub fn fmas_per_launch(&self, iterations: u32) -> u64 {
        u64::from(self.config.grid.0)
            * u64::from(self.config.block.0)
            * Self::FMAS_PER_ITERATION
            * u64::from(iterations)
    }

    /// The iteration count that makes one launch last about `target_s` (timed on the GPU).
    /// Short launches carry a fixed cost besides the loop, so the estimate is refined by
    /// timing launches of the estimated size until it is within 2 %.
    pub fn iterations_for(&self, target_s: f64) -> Result<u32> {
        let mut iterations = 20_000u32;
        for _ in 0..6 {
            let launch_s = self.time_launch(iterations)?.max(1e-7);
            if (launch_s / target_s - 1.0).abs() < 0.02 {
                break;
            }
            let scaled = (f64::from(iterations) * target_s / launch_s).round();
            iterations = scaled.clamp(1.0, f64::from(u32::MAX)) as u32;
        }
        Ok(iterations)
    }

    /// GPU time of one launch of `iterations` (after one untimed launch), s.
    fn time_launch(&self, iterations: u32) -> Result<f64> {
        let stream = self.gpu.stream().clone();
        let args = KernelArgs::new().buffer(&self.out).u32(iterations);
        self.kernel.launch(&stream, self.config, &args)?;
        let timer = self.gpu.timer()?;
        timer.start(&stream)?;
        self.kernel.launch(&stream, self.config, &args)?;
        timer.stop(&stream)?;
        self.gpu.synchronize()?;
        timer.elapsed_s()
    }

    /// A workload launching the loop with `iterations`.
    pub fn workload(&self, iterations: u32) -> Result<CudaWorkload<impl FnMut(&Stream) -> Result<()>>> {
        let args = KernelArgs::new().buffer(&self.out).u32(iterations);
        let (kernel, config, out) = (self.kernel.clone(), self.config, self.out.clone());
        let launch = move |stream: &Stream| {
            let _keep_alive = &out;
            kernel.launch(stream, config, &args)
        };
        CudaWorkload::new(self.gpu.clone(), launch)
    }
}

/// An FMA loop over the whole GPU taking about `target_s` per launch.
pub fn fma_busy_workload(gpu: Arc<CudaGpu>, target_s: f64) -> Result<CudaWorkload<impl FnMut(&Stream) -> Result<()>>> {
    let fma = FmaLoop::load(gpu)?;
    let iterations = fma.iterations_for(target_s)?;
    fma.workload(iterations)
}
