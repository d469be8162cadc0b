use burn::backend::{cuda::CudaDevice, Cuda};
use burn::tensor::{backend::Backend, Distribution, Tensor};
use energy_harness::prelude::*;

const N: usize = 4096;

struct Matmul { device: CudaDevice, a: Tensor<Cuda, 2>, b: Tensor<Cuda, 2> }

fn setup(gpu: &CudaGpu) -> Result<Matmul> {
    let device = CudaDevice::new(gpu.ordinal() as usize);
    let a = Tensor::random([N, N], Distribution::Normal(0.0, 1.0), &device);
    let b = Tensor::random([N, N], Distribution::Normal(0.0, 1.0), &device);
    Ok(Matmul { device, a, b })
}
fn sync(s: &mut Matmul) -> Result<()> {
    <Cuda as Backend>::sync(&s.device).map_err(|e| Error::library("burn sync", format!("{e:?}")))
}
#[energy_bench(setup = setup, wait = sync, ops = 2 * N * N * N)]
fn burn_matmul(s: &mut Matmul, _stream: &Stream) -> Result<()> {
    let _product = s.a.clone().matmul(s.b.clone());
    Ok(())
}
energy_main!();
