use energy_harness::prelude::*;

const N: usize = 1 << 16; // 64 Ki floats: a saxpy of about 2 µs, shorter than its launch
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

struct Saxpy { kernel: Kernel, config: LaunchConfig, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }

fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let (x, y) = (gpu.upload(&vec![1.0f32; N])?, gpu.upload(&vec![2.0f32; N])?);
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, _x: x, _y: y })
}

/// Launched by the host one by one: the GPU waits between launches (a `launch-bound` warning).
#[energy_bench(setup = setup, bytes = 12 * N, sim(seconds = 2e-6, watts = 250.0))]
fn small_saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// The same launch captured 100 times into a CUDA graph, replayed back to back.
#[energy_bench(setup = setup, bytes = 12 * N, graph = 100, sim(seconds = 2e-6, watts = 250.0))]
fn small_saxpy_graph(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
