use energy_harness::prelude::*;

const N: usize = 1 << 24; // 16 Mi floats: 64 MiB per vector, far beyond the L2
const STENCIL3_PTX: &str = include_str!("../ptx/stencil3.ptx");

struct Stencil3 { kernel: Kernel, config: LaunchConfig, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }

fn setup(gpu: &CudaGpu) -> Result<Stencil3> {
    let kernel = gpu.load_ptx(STENCIL3_PTX, "stencil3.ptx", JitOptLevel::O4)?.kernel("stencil3")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 1e-3).collect();
    let x = gpu.upload(&x)?;
    let y = gpu.alloc_zeros::<f32>(N)?;
    let args = KernelArgs::new().u32(N as u32).buffer(&x).buffer(&y);
    Ok(Stencil3 { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, _x: x, _y: y })
}

/// One launch: 4 flops per point (add, mul, fma), 8 bytes of DRAM traffic per point
/// (each x read once from DRAM, neighbours from cache; y written once).
#[energy_bench(setup = setup, ops = 4 * N, bytes = 8 * N, sim(seconds = 8.0 * N as f64 / 3.0e12, watts = 380.0))]
fn stencil3(s: &mut Stencil3, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
