//! The energy of a burn matmul and an elementwise op on burn's CUDA backend.
use burn::backend::{cuda::CudaDevice, Cuda};
use burn::tensor::{backend::Backend, Distribution, Tensor};
use energy_harness::prelude::*;

const N: usize = 4096;

struct Matmul {
    device: CudaDevice,
    a: Tensor<Cuda, 2>,
    b: Tensor<Cuda, 2>,
}

fn setup(gpu: &CudaGpu) -> Result<Matmul> {
    let device = CudaDevice::new(gpu.ordinal() as usize);
    let a = Tensor::random([N, N], Distribution::Normal(0.0, 1.0), &device);
    let b = Tensor::random([N, N], Distribution::Normal(0.0, 1.0), &device);
    Ok(Matmul { device, a, b })
}

/// burn's wait: `B::sync` (its fusion queue holds calls on the host until it flushes).
fn sync(s: &mut Matmul) -> Result<()> {
    <Cuda as Backend>::sync(&s.device).map_err(|e| Error::library("burn sync", format!("{e:?}")))
}

#[energy_bench(setup = setup, wait = sync, ops = 2 * N * N * N)]
fn burn_matmul(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    let _product = s.a.clone().matmul(s.b.clone());
    Ok(())
}

/// Elementwise: a * b + a, N*N elements (fusion may fuse it into one kernel).
#[energy_bench(setup = setup, wait = sync, ops = 2 * N * N, bytes = 12 * N * N)]
fn burn_fma_elementwise(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    let _out = s.a.clone() * s.b.clone() + s.a.clone();
    Ok(())
}

energy_main!();
