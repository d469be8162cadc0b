// benches/saxpy.rs: the energy of one CUDA C kernel, compiled at run time (NVRTC).
use energy_harness::prelude::*;

const N: usize = 1 << 24; // 16 Mi floats: 64 MiB per vector, far beyond the L2

const SAXPY_CU: &str = r#"
extern "C" __global__ void saxpy(unsigned n, float a, const float *x, float *y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

struct Saxpy {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let kernel = gpu.load_cuda_c(SAXPY_CU, "saxpy.cu", &[])?.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, _x: x, _y: y })
}

/// One launch on the stream the harness hands in. `ops` and `bytes` give energy per flop
/// and per byte; `sim` is the kernel's model on the simulated GPU (no GPU here: 67 µs at
/// 400 W).
#[energy_bench(setup = setup, ops = 2 * N, bytes = 12 * N, sim(seconds = 12.0 * N as f64 / 3.0e12, watts = 400.0))]
fn saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
