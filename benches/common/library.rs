//! A library emulated with raw cudarc: its own `CudaContext` (the device's primary
//! context, retained again, as candle, cubecl and any cudarc user do), its own stream, the
//! FMA loop of `launch_sizes` launched there asynchronously. Shared by the library-work
//! benchmarks and their refused twin.

use std::sync::Arc;

use energy_harness::cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use energy_harness::cudarc::nvrtc::Ptx;
use energy_harness::unstable::cuda::FMA_LOOP_PTX;
use energy_harness::{CudaGpu, Error, ErrorKind, Result};

/// A fixed grid (8 blocks of 256 threads per SM of an H100), as `launch_sizes`.
pub const BLOCKS: u32 = 132 * 8;
/// Threads per block.
pub const THREADS: u32 = 256;
/// Loop iterations per millisecond on an H100 at 1980 MHz.
pub const ITERS_PER_MS: f64 = 7170.0;

/// The FMA loop, owned by the "library": its context, stream, function and buffer.
pub struct OwnStreamFma {
    stream: Arc<CudaStream>,
    function: CudaFunction,
    out: CudaSlice<f32>,
    iterations: u32,
}

fn cuda(call: &str) -> impl Fn(energy_harness::cudarc::driver::DriverError) -> Error + '_ {
    move |e| Error::new(ErrorKind::Cuda, format!("{call} failed: {e}"))
}

/// The loop of about `milliseconds` per launch on the harness's GPU, in the library's own
/// context and stream.
pub fn fma_loop_on_own_stream(gpu: &CudaGpu, milliseconds: f64) -> Result<OwnStreamFma> {
    let context = CudaContext::new(gpu.ordinal() as usize).map_err(cuda("CudaContext::new"))?;
    let stream = context.new_stream().map_err(cuda("new_stream"))?;
    let module = context.load_module(Ptx::from_src(FMA_LOOP_PTX)).map_err(cuda("load_module"))?;
    let function = module.load_function("fma_loop").map_err(cuda("load_function"))?;
    let out = stream.alloc_zeros::<f32>((BLOCKS * THREADS) as usize).map_err(cuda("alloc_zeros"))?;
    stream.synchronize().map_err(cuda("synchronize"))?;
    let iterations = (milliseconds * ITERS_PER_MS).round().max(1.0) as u32;
    Ok(OwnStreamFma { stream, function, out, iterations })
}

impl OwnStreamFma {
    /// One launch on the library's stream; returns at once.
    pub fn launch(&mut self) -> Result<()> {
        let config = LaunchConfig { grid_dim: (BLOCKS, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let mut builder = self.stream.launch_builder(&self.function);
        builder.arg(&mut self.out).arg(&self.iterations);
        // SAFETY: fma_loop(float* out, u32 iterations) writes one float per thread of the
        // grid, and `out` holds BLOCKS × THREADS floats.
        unsafe { builder.launch(config) }.map(|_| ()).map_err(cuda("cuLaunchKernel"))
    }

    /// The library's own wait: its stream's synchronize.
    // The refused twin (library_work_unwaited) never waits: its point.
    #[allow(dead_code)]
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(cuda("cuStreamSynchronize"))
    }
}
