// benches/matmul.rs: a candle matmul (CUDA backend), measured with the harness.
use candle_core::{Device, Tensor};
use energy_harness::prelude::*; // Error, Result, CudaGpu, Stream, energy_bench, …

const N: usize = 4096;

struct Matmul {
    device: Device,
    a: Tensor,
    b: Tensor,
}

fn setup(gpu: &CudaGpu) -> Result<Matmul> {
    // The GPU the harness measures: open candle on the same CUDA ordinal.
    let device = Device::new_cuda(gpu.ordinal() as usize).map_err(|e| Error::library("candle Device::new_cuda", e))?;
    let a = Tensor::randn(0f32, 1.0, (N, N), &device).map_err(|e| Error::library("candle randn", e))?;
    let b = Tensor::randn(0f32, 1.0, (N, N), &device).map_err(|e| Error::library("candle randn", e))?;
    Ok(Matmul { device, a, b })
}

/// candle launches at once on its own stream: `any_stream` is enough.
#[energy_bench(setup = setup, any_stream, ops = 2 * N * N * N)]
fn candle_matmul(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    s.a.matmul(&s.b).map_err(|e| Error::library("candle matmul", e))?;
    Ok(())
}

/// Or with the library's own wait, as burn (`B::sync(&device)`), cubecl (`block_on(client.sync())`) and
/// wgpu (`device.poll(…)`) need it.
fn sync(s: &mut Matmul) -> Result<()> {
    s.device.synchronize().map_err(|e| Error::library("candle synchronize", e))
}

#[energy_bench(setup = setup, wait = sync, ops = 2 * N * N * N)]
fn candle_matmul_wait(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    s.a.matmul(&s.b).map_err(|e| Error::library("candle matmul", e))?;
    Ok(())
}

energy_main!();
