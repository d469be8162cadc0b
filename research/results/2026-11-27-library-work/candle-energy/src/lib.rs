//! The work under test: a candle f32 matmul of two 4096 × 4096 matrices on the GPU.
use candle_core::{Device, Tensor};

/// Matrix side.
pub const N: usize = 4096;

/// Two random matrices on `device`.
pub fn operands(device: &Device) -> candle_core::Result<(Tensor, Tensor)> {
    Ok((Tensor::randn(0f32, 1.0, (N, N), device)?, Tensor::randn(0f32, 1.0, (N, N), device)?))
}
