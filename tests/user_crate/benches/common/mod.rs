//! saxpy three ways: PTX through the harness, CUDA C through the harness, and the crate's
//! own cudarc code (module, buffers, launch) on the harness's stream.
#![allow(dead_code)]

use energy_harness::cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig as CudaLaunchConfig, PushKernelArg};
use energy_harness::cudarc::nvrtc::Ptx;
use energy_harness::prelude::*;

/// 16 Mi floats: 64 MiB per vector, far beyond the L2.
pub const N: usize = 1 << 24;
/// Bytes each launch moves: read x and y, write y.
pub const BYTES: usize = 12 * N;
pub const SAXPY_PTX: &str = include_str!("../../kernels/saxpy.ptx");
pub const SAXPY_CU: &str = include_str!("../../kernels/saxpy.cu");

pub struct Saxpy {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

fn with_module(gpu: &CudaGpu, module: PtxModule) -> Result<Saxpy> {
    let kernel = module.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, _x: x, _y: y })
}

/// The PTX module, through the harness.
pub fn ptx_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    with_module(gpu, gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?)
}

/// The CUDA C source, compiled by NVRTC through the harness.
pub fn cuda_c_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    with_module(gpu, gpu.load_cuda_c(SAXPY_CU, "saxpy.cu", &[])?)
}

/// One launch through the harness.
pub fn launch(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// The crate's own cudarc objects.
pub struct RawSaxpy {
    function: CudaFunction,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
}

/// Its own module and buffers, on the harness's context and stream.
pub fn raw_setup(gpu: &CudaGpu) -> Result<RawSaxpy> {
    let module = gpu.cuda_context()?.load_module(Ptx::from_src(SAXPY_PTX))?;
    let function = module.load_function("saxpy")?;
    let stream = gpu.stream().cuda()?;
    let x = stream.clone_htod(&vec![1.0f32; N])?;
    let y = stream.clone_htod(&vec![2.0f32; N])?;
    Ok(RawSaxpy { function, x, y })
}

/// One launch with cudarc's launch builder, on the stream the harness hands in.
pub fn raw_launch(s: &mut RawSaxpy, stream: &Stream) -> Result<()> {
    let config =
        CudaLaunchConfig { grid_dim: (N.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (n, a) = (N as u32, 1e-3f32);
    let stream = stream.cuda()?;
    let mut builder = stream.launch_builder(&s.function);
    builder.arg(&n).arg(&a).arg(&s.x).arg(&mut s.y);
    // SAFETY: saxpy(u32 n, f32 a, const float *x, float *y) with n elements in x and y.
    unsafe { builder.launch(config) }?;
    Ok(())
}
