//! The example GPU crate's bench: saxpy (y = a·x + y) over 16 Mi floats, measured in
//! joules beside time. Copy this file, the PTX and the `[[bench]]` entry to start.

use energy_harness::prelude::*;

/// Elements per vector: 64 MiB each, far beyond the 50 MB L2.
const N: usize = 1 << 24;
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

/// What a launch needs, made once by `setup`.
struct Saxpy {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, _x: x, _y: y })
}

/// One saxpy launch: 2 flops and 12 bytes of DRAM traffic per element. On the simulated
/// H100 it is modelled as bandwidth-bound at 3 TB/s drawing 400 W (a model, not a measurement).
#[energy_bench(setup = setup, ops = 2 * N, bytes = 12 * N, sim(seconds = 12.0 * N as f64 / 3.0e12, watts = 400.0))]
fn saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
