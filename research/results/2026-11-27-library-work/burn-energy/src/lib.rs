//! The work under test: a burn matmul of two 4096 × 4096 f32 matrices on burn's CUDA backend
//! (cubecl-cuda, fusion and autotune on: burn's defaults).
use burn::backend::cuda::CudaDevice;
use burn::backend::Cuda;
use burn::tensor::{Distribution, Tensor};

/// The backend under test.
pub type B = Cuda;

/// Matrix side.
pub const N: usize = 4096;

/// Two random matrices on the CUDA device of the given ordinal.
pub fn operands(ordinal: usize) -> (CudaDevice, Tensor<B, 2>, Tensor<B, 2>) {
    let device = CudaDevice::new(ordinal);
    let a = Tensor::<B, 2>::random([N, N], Distribution::Normal(0.0, 1.0), &device);
    let b = Tensor::<B, 2>::random([N, N], Distribution::Normal(0.0, 1.0), &device);
    (device, a, b)
}

/// One call: the product, dropped (burn frees its buffer back to its pool).
pub fn matmul(a: &Tensor<B, 2>, b: &Tensor<B, 2>) {
    let _product = a.clone().matmul(b.clone());
}
