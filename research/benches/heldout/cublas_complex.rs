//! cuBLAS's complex GEMMs (protocol v3): CGEMM and ZGEMM, one [`Complex`] element type
//! each.

use energy_harness::cudarc::cublas::sys::cublasOperation_t;
use energy_harness::cudarc::cublas::CudaBlas;
use energy_harness::cudarc::cufft::sys as cufft_sys;
use energy_harness::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use energy_harness::cudarc::driver::{DevicePtr, DevicePtrMut};
use energy_harness::prelude::*;

use super::common::{doubles, floats_v3, Data};
use super::cublas_gemm::cublas;

/// CGEMM and ZGEMM's side: 8 · 4096³ = 5.5·10¹¹ real flops each.
pub(crate) const CGEMM_N: usize = 4096;
pub(crate) const ZGEMM_N: usize = 4096;

/// A complex element cuBLAS multiplies: single (CGEMM) or double (ZGEMM) precision.
pub(crate) trait Complex: DeviceRepr + ValidAsZeroBits + Copy + Unpin + 'static {
    /// The real type of its parts.
    type Real: Copy;
    /// The matrices' side.
    const SIDE: usize;
    /// The element of parts `x + i·y`.
    fn of(x: Self::Real, y: Self::Real) -> Self;
    /// `n` real parts of protocol v3's data (`floats_v3`, `doubles`).
    fn parts(n: usize, data: Data, seed: u64) -> Vec<Self::Real>;
    /// `C = A·B` of `SIDE`² matrices (no transposes, column-major, leading dimension `SIDE`),
    /// alpha 1 and beta 0 on the host.
    ///
    /// # Safety
    /// `a`, `b` and `c` are device pointers to `SIDE`² elements each; the handle is in host
    /// pointer mode.
    unsafe fn gemm(
        handle: energy_harness::cudarc::cublas::sys::cublasHandle_t,
        a: *const Self,
        b: *const Self,
        c: *mut Self,
    ) -> energy_harness::cudarc::cublas::sys::cublasStatus_t;
}

impl Complex for cufft_sys::float2 {
    type Real = f32;
    const SIDE: usize = CGEMM_N;
    fn of(x: f32, y: f32) -> Self {
        cufft_sys::float2 { x, y }
    }
    fn parts(n: usize, data: Data, seed: u64) -> Vec<f32> {
        floats_v3(n, data, seed)
    }
    unsafe fn gemm(
        handle: energy_harness::cudarc::cublas::sys::cublasHandle_t,
        a: *const Self,
        b: *const Self,
        c: *mut Self,
    ) -> energy_harness::cudarc::cublas::sys::cublasStatus_t {
        use energy_harness::cudarc::cublas::sys;
        let (side, n) = (Self::SIDE as i32, cublasOperation_t::CUBLAS_OP_N);
        let (alpha, beta) = (sys::float2 { x: 1.0, y: 0.0 }, sys::float2 { x: 0.0, y: 0.0 });
        // SAFETY: as the trait's contract says; cuBLAS's float2 has this one's layout.
        unsafe {
            sys::cublasCgemm_v2(
                handle,
                n,
                n,
                side,
                side,
                side,
                &alpha,
                a.cast(),
                side,
                b.cast(),
                side,
                &beta,
                c.cast(),
                side,
            )
        }
    }
}

impl Complex for cufft_sys::double2 {
    type Real = f64;
    const SIDE: usize = ZGEMM_N;
    fn of(x: f64, y: f64) -> Self {
        cufft_sys::double2 { x, y }
    }
    fn parts(n: usize, data: Data, seed: u64) -> Vec<f64> {
        doubles(n, data, seed)
    }
    unsafe fn gemm(
        handle: energy_harness::cudarc::cublas::sys::cublasHandle_t,
        a: *const Self,
        b: *const Self,
        c: *mut Self,
    ) -> energy_harness::cudarc::cublas::sys::cublasStatus_t {
        use energy_harness::cudarc::cublas::sys;
        let (side, n) = (Self::SIDE as i32, cublasOperation_t::CUBLAS_OP_N);
        let (alpha, beta) = (sys::double2 { x: 1.0, y: 0.0 }, sys::double2 { x: 0.0, y: 0.0 });
        // SAFETY: as the trait's contract says; cuBLAS's double2 has this one's layout.
        unsafe {
            sys::cublasZgemm_v2(
                handle,
                n,
                n,
                side,
                side,
                side,
                &alpha,
                a.cast(),
                side,
                b.cast(),
                side,
                &beta,
                c.cast(),
                side,
            )
        }
    }
}

/// A complex GEMM (`C = A·B`, no transposes) through cuBLAS on the harness's stream.
pub(crate) struct ComplexMatmul<T> {
    blas: CudaBlas,
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
}

/// The matrices of a complex GEMM: A's parts drawn with seeds `seed` and `seed + 1`, B's with
/// `seed + 2` and `seed + 3`.
fn complex_matmul<T: Complex>(gpu: &CudaGpu, data: Data, seed: u64) -> Result<ComplexMatmul<T>> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let n = T::SIDE * T::SIDE;
    let matrix = |seed| -> Result<CudaSlice<T>> {
        let (re, im) = (T::parts(n, data, seed), T::parts(n, data, seed + 1));
        let values: Vec<T> = re.iter().zip(&im).map(|(&x, &y)| T::of(x, y)).collect();
        Ok(stream.clone_htod(&values)?)
    };
    let (a, b) = (matrix(seed)?, matrix(seed + 2)?);
    let c = stream.alloc_zeros::<T>(n)?;
    Ok(ComplexMatmul { blas, a, b, c })
}

pub(crate) fn cgemm(gpu: &CudaGpu, data: &Data) -> Result<ComplexMatmul<cufft_sys::float2>> {
    let data = *data;
    complex_matmul(gpu, data, 40)
}

pub(crate) fn zgemm(gpu: &CudaGpu, data: &Data) -> Result<ComplexMatmul<cufft_sys::double2>> {
    let data = *data;
    complex_matmul(gpu, data, 44)
}

pub(crate) fn complex_gemm<T: Complex>(m: &mut ComplexMatmul<T>, stream: &Stream) -> Result<()> {
    let cuda = stream.cuda()?;
    let (a, _a_done) = m.a.device_ptr(cuda);
    let (b, _b_done) = m.b.device_ptr(cuda);
    let (c, _c_done) = m.c.device_ptr_mut(cuda);
    // SAFETY: a, b and c hold SIDE² elements each; the handle is in its default (host)
    // pointer mode.
    let status = unsafe { T::gemm(*m.blas.handle(), a as *const T, b as *const T, c as *mut T) };
    status.result().map_err(cublas)
}
