//! cuBLAS's memory-bound calls: the matrix-vector products (SGEMV, DGEMV), SASUM, the SGEAM
//! transpose, the level-1 vector calls (SDOT, SNRM2, SAXPY, ISAMAX, SROT) and the DGER
//! rank-1 update.

use energy_harness::cudarc::cublas::sys::{cublasOperation_t, cublasPointerMode_t};
use energy_harness::cudarc::cublas::{CudaBlas, Gemv, GemvConfig};
use energy_harness::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use energy_harness::cudarc::driver::{DevicePtr, DevicePtrMut};
use energy_harness::prelude::*;

use super::common::{doubles, floats, floats_v3, Data};
use super::cublas_gemm::cublas;

/// SGEMV's matrix side: 16384² floats (1 GiB), read once per call: a DRAM-bound
/// matrix-vector product (`y = A·x`, column-major, no transpose).
pub(crate) const SGEMV_N: usize = 16384;

/// A matrix-vector product through cuBLAS on the harness's stream.
pub(crate) struct Matvec<T> {
    blas: CudaBlas,
    config: GemvConfig<T>,
    a: CudaSlice<T>,
    x: CudaSlice<T>,
    y: CudaSlice<T>,
}

/// `y = A·x` of an `n`×`n` matrix of `T` (from f32 by `of`), column-major, no transpose.
fn gemv<T: DeviceRepr + ValidAsZeroBits + Copy>(
    gpu: &CudaGpu,
    data: Data,
    n: usize,
    of: fn(f32) -> T,
) -> Result<Matvec<T>> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let values = |count, seed| -> Vec<T> { floats(count, data, seed, -1.0, 1.0).into_iter().map(of).collect() };
    let a = stream.clone_htod(&values(n * n, 14))?;
    let x = stream.clone_htod(&values(n, 15))?;
    let y = stream.alloc_zeros::<T>(n)?;
    let side = n as i32;
    let config = GemvConfig {
        trans: cublasOperation_t::CUBLAS_OP_N,
        m: side,
        n: side,
        alpha: of(1.0),
        lda: side,
        incx: 1,
        beta: of(0.0),
        incy: 1,
    };
    Ok(Matvec { blas, config, a, x, y })
}

pub(crate) fn sgemv(gpu: &CudaGpu, data: &Data) -> Result<Matvec<f32>> {
    let data = *data;
    gemv(gpu, data, SGEMV_N, |x| x)
}

/// One GEMV on the harness's stream (the handle was bound to it in setup).
pub(crate) fn matvec<T: Copy>(m: &mut Matvec<T>, stream: &Stream) -> Result<()>
where
    CudaBlas: Gemv<T>,
{
    stream.cuda()?;
    // SAFETY: a holds n·n elements, x and y n each, as the config says.
    unsafe { m.blas.gemv(m.config, &m.a, &m.x, &mut m.y) }.map_err(cublas)
}

/// Floats summed by SASUM (256 MiB).
pub(crate) const SASUM_N: usize = 1 << 26;

/// A sum of absolute values through cuBLAS, its result left on the GPU (device pointer
/// mode: no copy back, no synchronization in the timed launches).
pub(crate) struct AbsSum {
    blas: CudaBlas,
    x: CudaSlice<f32>,
    sum: CudaSlice<f32>,
}

pub(crate) fn sasum(gpu: &CudaGpu, data: &Data) -> Result<AbsSum> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    blas.set_pointer_mode(cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE).map_err(cublas)?;
    let x = stream.clone_htod(&floats(SASUM_N, data, 16, -1.0, 1.0))?;
    let sum = stream.alloc_zeros::<f32>(1)?;
    Ok(AbsSum { blas, x, sum })
}

pub(crate) fn abs_sum(s: &mut AbsSum, stream: &Stream) -> Result<()> {
    let cuda = stream.cuda()?;
    let (x, _x_done) = s.x.device_ptr(cuda);
    let (sum, _sum_done) = s.sum.device_ptr_mut(cuda);
    // SAFETY: x holds SASUM_N floats; the handle is in device pointer mode and `sum` is one
    // float on the device.
    unsafe {
        energy_harness::cudarc::cublas::result::sasum(
            *s.blas.handle(),
            SASUM_N as i32,
            x as *const f32,
            1,
            sum as *mut f32,
        )
    }
    .map_err(cublas)
}

/// SGEAM's matrix side: `C = Aᵀ` of 8192² floats (256 MiB each way).
pub(crate) const SGEAM_N: usize = 8192;

/// A transpose through cuBLAS's SGEAM (`C = 1·Aᵀ + 0·B`).
pub(crate) struct Transpose {
    blas: CudaBlas,
    a: CudaSlice<f32>,
    c: CudaSlice<f32>,
}

pub(crate) fn sgeam(gpu: &CudaGpu, data: &Data) -> Result<Transpose> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let a = stream.clone_htod(&floats(SGEAM_N * SGEAM_N, data, 17, -1.0, 1.0))?;
    let c = stream.alloc_zeros::<f32>(SGEAM_N * SGEAM_N)?;
    Ok(Transpose { blas, a, c })
}

pub(crate) fn transpose_with_cublas(t: &mut Transpose, stream: &Stream) -> Result<()> {
    let cuda = stream.cuda()?;
    let side = SGEAM_N as i32;
    let (alpha, beta) = (1.0f32, 0.0f32);
    let (a, _a_done) = t.a.device_ptr(cuda);
    let (c, _c_done) = t.c.device_ptr_mut(cuda);
    // SAFETY: a and c hold side² floats; host pointer mode (the default) for alpha and beta;
    // with beta 0 cuBLAS does not read B, given as A (a valid matrix of the same shape).
    let status = unsafe {
        energy_harness::cudarc::cublas::sys::cublasSgeam(
            *t.blas.handle(),
            cublasOperation_t::CUBLAS_OP_T,
            cublasOperation_t::CUBLAS_OP_N,
            side,
            side,
            &alpha,
            a as *const f32,
            side,
            &beta,
            a as *const f32,
            side,
            c as *mut f32,
            side,
        )
    };
    status.result().map_err(cublas)
}

/// DGEMV's side: 16384² doubles (2 GiB), read once per call.
pub(crate) const DGEMV_N: usize = 16384;

pub(crate) fn dgemv(gpu: &CudaGpu, data: &Data) -> Result<Matvec<f64>> {
    let data = *data;
    gemv(gpu, data, DGEMV_N, f64::from)
}

/// The level-1 calls' vector length (2^27 floats: 512 MiB).
pub(crate) const LEVEL1_N: usize = 1 << 27;

/// Two vectors and a device-side scalar for cuBLAS's level-1 calls (device pointer mode:
/// results stay on the GPU, nothing synchronizes in the timed launches).
pub(crate) struct Vectors {
    blas: CudaBlas,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    scalar: CudaSlice<f32>,
}

pub(crate) fn vectors(gpu: &CudaGpu, data: &Data) -> Result<Vectors> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    blas.set_pointer_mode(cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE).map_err(cublas)?;
    let x = stream.clone_htod(&floats(LEVEL1_N, data, 23, -1.0, 1.0))?;
    let y = stream.clone_htod(&floats(LEVEL1_N, data, 24, -1.0, 1.0))?;
    // SAXPY's alpha (the dot product and the norm overwrite it: their result).
    let scalar = stream.clone_htod(&[0.5f32])?;
    Ok(Vectors { blas, x, y, scalar })
}

/// Which level-1 call.
#[derive(Clone, Copy)]
pub(crate) enum Level1 {
    /// `s = x · y`.
    Dot,
    /// `s = ‖x‖₂`.
    Nrm2,
    /// `y = a·x + y`, `a` on the device.
    Axpy,
}

pub(crate) fn level1(v: &mut Vectors, stream: &Stream, call: Level1) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let handle = *v.blas.handle();
    let n = LEVEL1_N as i32;
    let (x, _x_done) = v.x.device_ptr(cuda);
    let (y, _y_done) = v.y.device_ptr_mut(cuda);
    let (s, _s_done) = v.scalar.device_ptr_mut(cuda);
    let (x, y, s) = (x as *const f32, y as *mut f32, s as *mut f32);
    // SAFETY: x and y hold n floats, s one float on the device; the handle is in device
    // pointer mode. Axpy's alpha is s: its value after a dot or a norm does not matter.
    let status = unsafe {
        match call {
            Level1::Dot => sys::cublasSdot_v2(handle, n, x, 1, y, 1, s),
            Level1::Nrm2 => sys::cublasSnrm2_v2(handle, n, x, 1, s),
            // y grows by x/2 a call: after 10⁵ calls |y| < 10⁵, far from overflow.
            Level1::Axpy => sys::cublasSaxpy_v2(handle, n, s, x, 1, y, 1),
        }
    };
    status.result().map_err(cublas)
}

/// DGER's side: 16384² doubles (2 GiB), read and written once per call.
pub(crate) const DGER_N: usize = 16384;

/// A rank-1 update `A += x·yᵀ` through cuBLAS (A grows by at most 1 an element a call: far
/// from overflow in any run).
pub(crate) struct RankOne {
    blas: CudaBlas,
    a: CudaSlice<f64>,
    x: CudaSlice<f64>,
    y: CudaSlice<f64>,
}

pub(crate) fn dger(gpu: &CudaGpu, data: &Data) -> Result<RankOne> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let a = stream.clone_htod(&doubles(DGER_N * DGER_N, data, 52))?;
    let x = stream.clone_htod(&doubles(DGER_N, data, 53))?;
    let y = stream.clone_htod(&doubles(DGER_N, data, 54))?;
    Ok(RankOne { blas, a, x, y })
}

pub(crate) fn rank_one_update(r: &mut RankOne, stream: &Stream) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let alpha = 1.0f64;
    let (x, _x_done) = r.x.device_ptr(cuda);
    let (y, _y_done) = r.y.device_ptr(cuda);
    let (a, _a_done) = r.a.device_ptr_mut(cuda);
    let n = DGER_N as i32;
    // SAFETY: a is n × n (leading dimension n), x and y n doubles; alpha on the host.
    let status = unsafe {
        sys::cublasDger_v2(*r.blas.handle(), n, n, &alpha, x as *const f64, 1, y as *const f64, 1, a as *mut f64, n)
    };
    status.result().map_err(cublas)
}

/// ISAMAX's vector: 2^27 floats (512 MiB); SROT's two vectors: 2^26 floats each.
pub(crate) const ISAMAX_N: usize = 1 << 27;
pub(crate) const SROT_N: usize = 1 << 26;

/// Vectors for ISAMAX and SROT, with their device-side scalars (device pointer mode: nothing
/// synchronizes in the timed launches).
pub(crate) struct Level1V3 {
    blas: CudaBlas,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    /// SROT's cosine and sine.
    cos_sin: CudaSlice<f32>,
    /// ISAMAX's index.
    index: CudaSlice<i32>,
}

fn level1_v3(gpu: &CudaGpu, data: Data, n: usize) -> Result<Level1V3> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    blas.set_pointer_mode(cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE).map_err(cublas)?;
    let x = stream.clone_htod(&floats_v3(n, data, 55))?;
    let y = stream.clone_htod(&floats_v3(n, data, 56))?;
    // A rotation by 0.3 rad: norms kept, so nothing grows over the calls.
    let cos_sin = stream.clone_htod(&[0.3f32.cos(), 0.3f32.sin()])?;
    let index = stream.alloc_zeros::<i32>(1)?;
    Ok(Level1V3 { blas, x, y, cos_sin, index })
}

pub(crate) fn isamax(gpu: &CudaGpu, data: &Data) -> Result<Level1V3> {
    let data = *data;
    level1_v3(gpu, data, ISAMAX_N)
}

pub(crate) fn srot(gpu: &CudaGpu, data: &Data) -> Result<Level1V3> {
    let data = *data;
    level1_v3(gpu, data, SROT_N)
}

pub(crate) fn index_of_max(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let (x, _x_done) = v.x.device_ptr(cuda);
    let (i, _i_done) = v.index.device_ptr_mut(cuda);
    // SAFETY: x holds ISAMAX_N floats, i one int on the device (device pointer mode).
    let status = unsafe { sys::cublasIsamax_v2(*v.blas.handle(), ISAMAX_N as i32, x as *const f32, 1, i as *mut i32) };
    status.result().map_err(cublas)
}

pub(crate) fn plane_rotation(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let (x, _x_done) = v.x.device_ptr_mut(cuda);
    let (y, _y_done) = v.y.device_ptr_mut(cuda);
    let (cs, _cs_done) = v.cos_sin.device_ptr(cuda);
    let (c, s) = (cs as *const f32, (cs as *const f32).wrapping_add(1));
    // SAFETY: x and y hold SROT_N floats, c and s one float each on the device (device
    // pointer mode).
    let status =
        unsafe { sys::cublasSrot_v2(*v.blas.handle(), SROT_N as i32, x as *mut f32, 1, y as *mut f32, 1, c, s) };
    status.result().map_err(cublas)
}
