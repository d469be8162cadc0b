use energy_harness::cudarc::{self, driver::{CudaFunction, CudaSlice, PushKernelArg}};
use energy_harness::prelude::*;

const N: usize = 1 << 24;
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

struct Saxpy { f: CudaFunction, x: CudaSlice<f32>, y: CudaSlice<f32> }

fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let ctx = gpu.cuda_context()?;
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(SAXPY_PTX))?;
    let f = module.load_function("saxpy")?;
    let stream = gpu.stream().cuda()?;
    let x = stream.clone_htod(&vec![1.0f32; N])?;
    let y = stream.alloc_zeros::<f32>(N)?;
    Ok(Saxpy { f, x, y })
}

#[energy_bench(setup = setup, gpu_only, ops = 2 * N, bytes = 12 * N)]
fn saxpy_cudarc(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    let cfg = cudarc::driver::LaunchConfig { grid_dim: (N.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (n, a) = (N as u32, 1e-3f32);
    unsafe { stream.cuda()?.launch_builder(&s.f).arg(&n).arg(&a).arg(&s.x).arg(&mut s.y).launch(cfg)? };
    Ok(())
}

energy_main!();
