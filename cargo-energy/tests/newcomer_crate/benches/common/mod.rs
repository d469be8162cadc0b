//! saxpy, and the setups of the mistakes a newcomer makes in kernel code.
#![allow(dead_code)]

use energy_harness::cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig as CudaLaunchConfig, PushKernelArg};
use energy_harness::cudarc::nvrtc::Ptx;
use energy_harness::prelude::*;
use std::sync::Arc;

/// 1 Mi floats.
pub const N: usize = 1 << 20;
pub const SAXPY_PTX: &str = include_str!("../../kernels/saxpy.ptx");
pub const SAXPY_CU: &str = include_str!("../../kernels/saxpy.cu");
/// The CUDA C without `extern "C"`.
pub const SAXPY_MANGLED_CU: &str = include_str!("../../kernels/saxpy_mangled.cu");

pub struct Saxpy {
    kernel: Kernel,
    args: KernelArgs,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

type Arguments = fn(&DeviceBuffer<f32>, &DeviceBuffer<f32>) -> KernelArgs;

fn all_four(x: &DeviceBuffer<f32>, y: &DeviceBuffer<f32>) -> KernelArgs {
    KernelArgs::new().u32(N as u32).f32(1e-3).buffer(x).buffer(y)
}

fn build(module: PtxModule, kernel_name: &str, args: Arguments, gpu: &CudaGpu) -> Result<Saxpy> {
    let kernel = module.kernel(kernel_name)?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = args(&x, &y);
    Ok(Saxpy { kernel, args, _x: x, _y: y })
}

/// The correct setup.
pub fn saxpy_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?, "saxpy", all_four, gpu)
}

/// Mistake: an opcode PTX does not have (`fma.rn.f32` typed `fmaa.rn.f32`).
pub fn invalid_opcode_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let ptx = SAXPY_PTX.replace("fma.rn.f32", "fmaa.rn.f32");
    build(gpu.load_ptx(&ptx, "saxpy.ptx", JitOptLevel::O4)?, "saxpy", all_four, gpu)
}

/// Mistake: CUDA C without `extern "C"`, looked up as `saxpy`.
pub fn missing_extern_c_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu.load_cuda_c(SAXPY_MANGLED_CU, "saxpy_mangled.cu", &[])?, "saxpy", all_four, gpu)
}

/// Mistake: `a` forgotten (three arguments for four parameters).
pub fn wrong_argument_count_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let module = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?;
    build(module, "saxpy", |x, y| KernelArgs::new().u32(N as u32).buffer(x).buffer(y), gpu)
}

/// Mistake: `.kernel("saxpi")`.
pub fn kernel_name_typo_setup(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?, "saxpi", all_four, gpu)
}

/// One launch through the harness, on the stream it hands in.
pub fn launch(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, LaunchConfig::linear(N.div_ceil(256) as u32, 256), &s.args)
}

/// Mistake: the crate's own cudarc stream, launched on instead of the harness's.
pub struct OwnStream {
    function: CudaFunction,
    stream: Arc<CudaStream>,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
}

pub fn own_stream_setup(gpu: &CudaGpu) -> Result<OwnStream> {
    let context = gpu.cuda_context()?;
    let function = context.load_module(Ptx::from_src(SAXPY_PTX))?.load_function("saxpy")?;
    let stream = context.new_stream()?;
    let x = stream.clone_htod(&vec![1.0f32; N])?;
    let y = stream.clone_htod(&vec![2.0f32; N])?;
    Ok(OwnStream { function, stream, x, y })
}

/// Launches on its own stream: the harness's stream is idle and its window would close
/// before the work ends.
pub fn own_stream_launch(s: &mut OwnStream, _stream: &Stream) -> Result<()> {
    let config =
        CudaLaunchConfig { grid_dim: (N.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (n, a) = (N as u32, 1e-3f32);
    let mut builder = s.stream.launch_builder(&s.function);
    builder.arg(&n).arg(&a).arg(&s.x).arg(&mut s.y);
    // SAFETY: saxpy(u32 n, f32 a, const float *x, float *y) with n elements in x and y.
    unsafe { builder.launch(config) }?;
    Ok(())
}
