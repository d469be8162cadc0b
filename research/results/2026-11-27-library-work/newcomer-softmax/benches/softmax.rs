use candle_core::{DType, Device, Tensor};
use energy_harness::prelude::*; // Error, Result, CudaGpu, Stream, energy_bench, …

const ROWS: usize = 4096;
const COLS: usize = 8192; // 32 Mi floats: 128 MiB in, 128 MiB out, far beyond the L2

struct Softmax {
    device: Device,
    x: Tensor,
}

fn setup(gpu: &CudaGpu) -> Result<Softmax> {
    // The GPU the harness measures: open candle on the same CUDA ordinal.
    let device = Device::new_cuda(gpu.ordinal() as usize)
        .map_err(|e| Error::library("candle Device::new_cuda", e))?;
    let x = Tensor::randn(0f32, 1.0, (ROWS, COLS), &device)
        .map_err(|e| Error::library("candle randn", e))?;
    assert_eq!(x.dtype(), DType::F32);
    Ok(Softmax { device, x })
}

/// candle launches at once on its own stream: `any_stream`.
#[energy_bench(setup = setup, any_stream, bytes = 2 * 4 * ROWS * COLS)]
fn candle_softmax_last_dim(s: &mut Softmax, _stream: &Stream) -> Result<()> {
    candle_nn::ops::softmax_last_dim(&s.x).map_err(|e| Error::library("candle softmax_last_dim", e))?;
    Ok(())
}

/// The same with candle's own wait (`Device::synchronize`).
fn sync(s: &mut Softmax) -> Result<()> {
    s.device.synchronize().map_err(|e| Error::library("candle synchronize", e))
}

#[energy_bench(setup = setup, wait = sync, bytes = 2 * 4 * ROWS * COLS)]
fn candle_softmax_last_dim_wait(s: &mut Softmax, _stream: &Stream) -> Result<()> {
    candle_nn::ops::softmax_last_dim(&s.x).map_err(|e| Error::library("candle softmax_last_dim", e))?;
    Ok(())
}

energy_main!();
