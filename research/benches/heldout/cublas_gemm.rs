//! cuBLAS's matrix products: the square GEMMs in FP32, FP64, FP16 and BF16, the
//! strided-batched SGEMM, the mixed-precision GEMM (`cublasGemmEx`), DSYRK and STRMM; and
//! the cuBLAS status as the harness's error, which every cuBLAS call here uses.

use energy_harness::cudarc::cublas::sys::{cublasFillMode_t, cublasOperation_t};
use energy_harness::cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use energy_harness::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use energy_harness::cudarc::driver::{DevicePtr, DevicePtrMut};
use energy_harness::prelude::*;
use energy_harness::{Error, ErrorKind};
use half::{bf16, f16};

use super::common::{floats, floats_v3, Data};

/// SGEMM's side: 2 · 4096³ = 1.4·10¹¹ flops, about 2.5 ms at the H100's ~55 TFLOP/s of FP32
/// (cuBLAS's default math mode: no TF32).
pub(crate) const SGEMM_N: usize = 4096;
/// DGEMM's side: the same flops, about 2.5 ms at the H100's ~55 TFLOP/s of FP64 tensor MMA.
pub(crate) const DGEMM_N: usize = 4096;
/// HGEMM's side: 2 · 8192³ = 1.1·10¹² flops, about 1.5 ms at ~700 TFLOP/s of FP16 tensor MMA.
pub(crate) const HGEMM_N: usize = 8192;

/// A square GEMM through cuBLAS, `c = a · b` (column-major, no transposes, beta 0: `c` is
/// written, not read), on the harness's stream.
pub(crate) struct Matmul<T> {
    blas: CudaBlas,
    config: GemmConfig<T>,
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
}

/// `n`×`n` matrices of cuBLAS element type `T` (from f32 by `of`): own data uniform in
/// [-1, 1), constant data 0.7 everywhere (not zero: a multiplier may skip zeros).
fn matmul<T: DeviceRepr + ValidAsZeroBits + Copy>(
    gpu: &CudaGpu,
    data: Data,
    n: usize,
    of: fn(f32) -> T,
) -> Result<Matmul<T>> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let matrix = |seed| -> Result<CudaSlice<T>> {
        let values: Vec<T> = match data {
            Data::Own => floats(n * n, data, seed, -1.0, 1.0).into_iter().map(of).collect(),
            Data::Constant => vec![of(0.7); n * n],
        };
        Ok(stream.clone_htod(&values)?)
    };
    let (a, b) = (matrix(12)?, matrix(13)?);
    let c = stream.alloc_zeros::<T>(n * n)?;
    let side = n as i32;
    let config = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: side,
        n: side,
        k: side,
        alpha: of(1.0),
        lda: side,
        ldb: side,
        beta: of(0.0),
        ldc: side,
    };
    Ok(Matmul { blas, config, a, b, c })
}

/// A cuBLAS status as the harness's error.
pub(crate) fn cublas(e: energy_harness::cudarc::cublas::result::CublasError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuBLAS: {e}"))
}

/// One GEMM on the harness's stream (the handle was bound to it in setup).
pub(crate) fn gemm<T: Copy>(m: &mut Matmul<T>, stream: &Stream) -> Result<()>
where
    CudaBlas: Gemm<T>,
{
    stream.cuda()?;
    // SAFETY: a, b and c hold n·n elements each, as the config's m, n, k and leading
    // dimensions say.
    unsafe { m.blas.gemm(m.config, &m.a, &m.b, &mut m.c) }.map_err(cublas)
}

pub(crate) fn sgemm(gpu: &CudaGpu, data: &Data) -> Result<Matmul<f32>> {
    matmul(gpu, *data, SGEMM_N, |x| x)
}
pub(crate) fn dgemm(gpu: &CudaGpu, data: &Data) -> Result<Matmul<f64>> {
    matmul(gpu, *data, DGEMM_N, f64::from)
}
pub(crate) fn hgemm(gpu: &CudaGpu, data: &Data) -> Result<Matmul<f16>> {
    matmul(gpu, *data, HGEMM_N, f16::from_f32)
}

/// The BF16 GEMM's side: 2 · 8192³ = 1.1·10¹² flops (cuBLAS's BF16 GEMM through
/// `cublasGemmEx`: BF16 in and out, FP32 compute; warpgroup MMA on Hopper).
pub(crate) const BF16GEMM_N: usize = 8192;

pub(crate) fn bf16gemm(gpu: &CudaGpu, data: &Data) -> Result<Matmul<bf16>> {
    let data = *data;
    matmul(gpu, data, BF16GEMM_N, bf16::from_f32)
}

/// SGEMM strided-batched: `BATCH_GEMMS` products of 256² matrices (3.4·10¹⁰ flops).
pub(crate) const BATCH_SIDE: usize = 256;
pub(crate) const BATCH_GEMMS: usize = 1024;

/// Many small GEMMs in one cuBLAS call, on the harness's stream.
pub(crate) struct BatchedMatmul {
    blas: CudaBlas,
    config: StridedBatchedConfig<f32>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
}

pub(crate) fn sgemm_batched(gpu: &CudaGpu, data: &Data) -> Result<BatchedMatmul> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let (n, count) = (BATCH_SIDE, BATCH_GEMMS);
    let a = stream.clone_htod(&floats(n * n * count, data, 20, -1.0, 1.0))?;
    let b = stream.clone_htod(&floats(n * n * count, data, 21, -1.0, 1.0))?;
    let c = stream.alloc_zeros::<f32>(n * n * count)?;
    let side = n as i32;
    let gemm = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: side,
        n: side,
        k: side,
        alpha: 1.0,
        lda: side,
        ldb: side,
        beta: 0.0,
        ldc: side,
    };
    let stride = (n * n) as i64;
    let config =
        StridedBatchedConfig { gemm, batch_size: count as i32, stride_a: stride, stride_b: stride, stride_c: stride };
    Ok(BatchedMatmul { blas, config, a, b, c })
}

pub(crate) fn batched_gemm(m: &mut BatchedMatmul, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    // SAFETY: a, b and c hold batch · n² floats each, the strides n².
    unsafe { m.blas.gemm_strided_batched(m.config, &m.a, &m.b, &mut m.c) }.map_err(cublas)
}

/// DSYRK: `C = A·Aᵀ` (lower triangle) of a 4096 × 8192 double matrix (1.4·10¹¹ flops).
pub(crate) const DSYRK_N: usize = 4096;
pub(crate) const DSYRK_K: usize = 8192;

/// A symmetric rank-k update through cuBLAS, on the harness's stream.
pub(crate) struct RankK {
    blas: CudaBlas,
    a: CudaSlice<f64>,
    c: CudaSlice<f64>,
}

pub(crate) fn dsyrk(gpu: &CudaGpu, data: &Data) -> Result<RankK> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let values: Vec<f64> = floats(DSYRK_N * DSYRK_K, data, 22, -1.0, 1.0).into_iter().map(f64::from).collect();
    let a = stream.clone_htod(&values)?;
    let c = stream.alloc_zeros::<f64>(DSYRK_N * DSYRK_N)?;
    Ok(RankK { blas, a, c })
}

pub(crate) fn rank_k_update(r: &mut RankK, stream: &Stream) -> Result<()> {
    let cuda = stream.cuda()?;
    let (alpha, beta) = (1.0f64, 0.0f64);
    let (a, _a_done) = r.a.device_ptr(cuda);
    let (c, _c_done) = r.c.device_ptr_mut(cuda);
    // SAFETY: a is n × k (column-major, lda n), c n × n; host pointer mode for alpha and beta.
    let status = unsafe {
        energy_harness::cudarc::cublas::sys::cublasDsyrk_v2(
            *r.blas.handle(),
            cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
            cublasOperation_t::CUBLAS_OP_N,
            DSYRK_N as i32,
            DSYRK_K as i32,
            &alpha,
            a as *const f64,
            DSYRK_N as i32,
            &beta,
            c as *mut f64,
            DSYRK_N as i32,
        )
    };
    status.result().map_err(cublas)
}

/// The mixed-precision GEMM's side: 2 · 8192³ = 1.1·10¹² flops (FP16 in, FP32 out).
pub(crate) const GEMMEX_N: usize = 8192;

/// `C = A·B`, A and B in FP16, C in FP32, FP32 compute, through `cublasGemmEx`.
pub(crate) struct MixedMatmul {
    blas: CudaBlas,
    a: CudaSlice<f16>,
    b: CudaSlice<f16>,
    c: CudaSlice<f32>,
}

pub(crate) fn gemmex_f16_f32(gpu: &CudaGpu, data: &Data) -> Result<MixedMatmul> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let n = GEMMEX_N * GEMMEX_N;
    let matrix = |seed| -> Result<CudaSlice<f16>> {
        let values: Vec<f16> = floats_v3(n, data, seed).into_iter().map(f16::from_f32).collect();
        Ok(stream.clone_htod(&values)?)
    };
    let (a, b) = (matrix(48)?, matrix(49)?);
    let c = stream.alloc_zeros::<f32>(n)?;
    Ok(MixedMatmul { blas, a, b, c })
}

pub(crate) fn mixed_gemm(m: &mut MixedMatmul, stream: &Stream) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let side = GEMMEX_N as i32;
    let (alpha, beta) = (1.0f32, 0.0f32);
    let (a, _a_done) = m.a.device_ptr(cuda);
    let (b, _b_done) = m.b.device_ptr(cuda);
    let (c, _c_done) = m.c.device_ptr_mut(cuda);
    // SAFETY: a and b hold side² halves, c side² floats (column-major, leading dimension
    // side); alpha and beta are floats on the host, as FP32 compute takes them.
    let status = unsafe {
        sys::cublasGemmEx(
            *m.blas.handle(),
            cublasOperation_t::CUBLAS_OP_N,
            cublasOperation_t::CUBLAS_OP_N,
            side,
            side,
            side,
            (&alpha as *const f32).cast(),
            a as *const std::ffi::c_void,
            sys::cudaDataType::CUDA_R_16F,
            side,
            b as *const std::ffi::c_void,
            sys::cudaDataType::CUDA_R_16F,
            side,
            (&beta as *const f32).cast(),
            c as *mut std::ffi::c_void,
            sys::cudaDataType::CUDA_R_32F,
            side,
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    };
    status.result().map_err(cublas)
}

/// STRMM: an `M`×`M` lower triangle times an `M`×`N` matrix (M² N = 2.7·10¹¹ multiply-adds).
pub(crate) const TRMM_M: usize = 8192;
pub(crate) const TRMM_N: usize = 4096;

/// A triangular matrix product (`C = L·B`, out of place) through cuBLAS.
pub(crate) struct TriangularMatmul {
    blas: CudaBlas,
    l: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
}

pub(crate) fn strmm(gpu: &CudaGpu, data: &Data) -> Result<TriangularMatmul> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let l = stream.clone_htod(&floats_v3(TRMM_M * TRMM_M, data, 50))?;
    let b = stream.clone_htod(&floats_v3(TRMM_M * TRMM_N, data, 51))?;
    let c = stream.alloc_zeros::<f32>(TRMM_M * TRMM_N)?;
    Ok(TriangularMatmul { blas, l, b, c })
}

pub(crate) fn triangular_matmul(t: &mut TriangularMatmul, stream: &Stream) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let alpha = 1.0f32;
    let (l, _l_done) = t.l.device_ptr(cuda);
    let (b, _b_done) = t.b.device_ptr(cuda);
    let (c, _c_done) = t.c.device_ptr_mut(cuda);
    let (m, n) = (TRMM_M as i32, TRMM_N as i32);
    // SAFETY: l is m × m (its lower triangle read), b and c m × n, column-major with leading
    // dimension m; alpha on the host.
    let status = unsafe {
        sys::cublasStrmm_v2(
            *t.blas.handle(),
            sys::cublasSideMode_t::CUBLAS_SIDE_LEFT,
            cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
            cublasOperation_t::CUBLAS_OP_N,
            sys::cublasDiagType_t::CUBLAS_DIAG_NON_UNIT,
            m,
            n,
            &alpha,
            l as *const f32,
            m,
            b as *const f32,
            m,
            c as *mut f32,
            m,
        )
    };
    status.result().map_err(cublas)
}
