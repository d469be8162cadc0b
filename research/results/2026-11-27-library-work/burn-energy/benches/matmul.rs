use burn::backend::cuda::CudaDevice;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;
use burn_energy::{matmul, operands, B, N};
use energy_harness::prelude::*;

struct Matmul {
    device: CudaDevice,
    a: Tensor<B, 2>,
    b: Tensor<B, 2>,
}

fn setup(gpu: &CudaGpu) -> Result<Matmul> {
    let (device, a, b) = operands(gpu.ordinal() as usize);
    Ok(Matmul { device, a, b })
}

/// burn's own wait: every queued operation submitted (fusion) and finished.
fn sync(s: &mut Matmul) -> Result<()> {
    B::sync(&s.device).map_err(|e| Error::library("burn sync", format!("{e:?}")))
}

/// burn queues its work lazily (fusion) on cubecl's own streams: `wait = sync`.
#[energy_bench(setup = setup, wait = sync, ops = 2 * N * N * N)]
fn burn_matmul(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    matmul(&s.a, &s.b);
    Ok(())
}

/// The same with `any_stream` only (a context-wide synchronize, not burn's wait): burn's
/// fusion queue may hold work that CUDA has not seen yet.
#[energy_bench(setup = setup, any_stream, gpu_only, ops = 2 * N * N * N)]
fn burn_matmul_any_stream(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    matmul(&s.a, &s.b);
    Ok(())
}

/// The same call written without `any_stream` or `wait`: refused on a GPU (exit ≠ 0, the
/// message naming the fix). `gpu_only` only keeps it from running without a GPU.
#[energy_bench(setup = setup, gpu_only, ops = 2 * N * N * N)]
fn burn_matmul_unwaited(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    matmul(&s.a, &s.b);
    Ok(())
}

energy_main!();
