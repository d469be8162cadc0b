use energy_harness::prelude::*; // energy_bench, CudaGpu, Stream, DeviceBuffer, Kernel, KernelArgs, …

const N: usize = 1 << 24; // 16 Mi floats: 64 MiB per vector, far beyond the L2
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

struct Saxpy { kernel: Kernel, config: LaunchConfig, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }

fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, _x: x, _y: y })
}

/// One launch: enqueue the kernel on the stream the harness hands in.
#[energy_bench(setup = setup, ops = 2 * N, bytes = 12 * N, sim(seconds = 12.0 * N as f64 / 3.0e12, watts = 400.0))]
fn saxpy_from_ptx(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
