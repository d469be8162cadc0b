use candle_core::{Device, Tensor};
use candle_energy::{operands, N};
use energy_harness::prelude::*;

struct Matmul {
    device: Device,
    a: Tensor,
    b: Tensor,
}

fn setup(gpu: &CudaGpu) -> Result<Matmul> {
    let device = Device::new_cuda(gpu.ordinal() as usize).map_err(|e| Error::library("candle Device::new_cuda", e))?;
    let (a, b) = operands(&device).map_err(|e| Error::library("candle randn", e))?;
    Ok(Matmul { device, a, b })
}

fn sync(s: &mut Matmul) -> Result<()> {
    s.device.synchronize().map_err(|e| Error::library("candle synchronize", e))
}

/// candle launches on its own stream: `any_stream` closes each window with a context-wide
/// synchronize.
#[energy_bench(setup = setup, any_stream, ops = 2 * N * N * N)]
fn candle_matmul(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    s.a.matmul(&s.b).map_err(|e| Error::library("candle matmul", e))?;
    Ok(())
}

/// The same with candle's own wait.
#[energy_bench(setup = setup, wait = sync, ops = 2 * N * N * N)]
fn candle_matmul_wait(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    s.a.matmul(&s.b).map_err(|e| Error::library("candle matmul", e))?;
    Ok(())
}

/// The same call written without `any_stream` or `wait`: refused on a GPU (exit ≠ 0, the
/// message naming the fix). `gpu_only` only keeps it from running without a GPU.
#[energy_bench(setup = setup, gpu_only, ops = 2 * N * N * N)]
fn candle_matmul_unwaited(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    s.a.matmul(&s.b).map_err(|e| Error::library("candle matmul", e))?;
    Ok(())
}

energy_main!();
