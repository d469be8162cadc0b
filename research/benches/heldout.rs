//! The held-out suite (issue 35): `cargo bench --bench heldout`.
//!
//! Kernels the energy model never sees in its fit, each an implementation of a published
//! GPU algorithm in CUDA C (`ptx/heldout/*.cu`, origin and license in each file's header),
//! compiled by NVRTC at run time, and each run on two data regimes: its own data (`_own`:
//! what the algorithm is normally fed, random keys, values or fields) and low-entropy data
//! (`_constant`: one value repeated). The protocol (`research/results/model-protocol.json`)
//! fixes this list before any of them is measured.
//!
//! The set's third-party kernels come from NVIDIA's libraries, which the model's authors did
//! not write and have not read, loaded at run time through cudarc: cuBLAS (SGEMM, DGEMM and
//! HGEMM, which pick their own kernels for the GPU: on Hopper warpgroup MMA for half
//! precision and FP64 tensor MMA for DGEMM; SGEMV, SASUM and SGEAM, streaming kernels),
//! cuRAND (normal and uniform floats from its default XORWOW generator) and cuFFT (batched
//! single-precision complex FFTs). They run raw cudarc on the harness's stream, so they are
//! `gpu_only`.
//!
//! The `sim(…)` figures are placeholders so that the suite runs on the simulated GPU (CI,
//! `cargo bench -- --test`): they are neither measurements nor estimates.
//!
//! The benchmarks are declared here, in the suite's order (the harness runs them in the order
//! of their declaration); their setups and the calls they time are in `heldout/`: `common.rs`
//! (the data regimes, the inputs, the `setups!` macro), `kernels.rs` (the CUDA C kernels),
//! `cublas_gemm.rs`, `cublas_complex.rs` and `cublas_streaming.rs` (cuBLAS), `cufft.rs` and
//! `curand.rs`.

use energy_harness::cudarc::cufft::sys as cufft_sys;
use energy_harness::cudarc::driver::DevicePtrMut;
use energy_harness::prelude::*;
use half::{bf16, f16};

#[path = "heldout/common.rs"]
mod common;
#[path = "heldout/cublas_complex.rs"]
mod cublas_complex;
#[path = "heldout/cublas_gemm.rs"]
mod cublas_gemm;
#[path = "heldout/cublas_streaming.rs"]
mod cublas_streaming;
#[path = "heldout/cufft.rs"]
mod cufft;
#[path = "heldout/curand.rs"]
mod curand;
#[path = "heldout/kernels.rs"]
mod kernels;

use cublas_complex::*;
use cublas_gemm::*;
use cublas_streaming::*;
use cufft::*;
use curand::*;
use kernels::*;

// Each pair (own data, constant data) is one group: with a node's queue (`cargo energy run
// --gpus`) both run on one GPU, since the bracket compares the two.
#[energy_bench(group = "reduce", setup = reduce_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_reduce_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "reduce", setup = reduce_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_reduce_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "scan", setup = scan_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_scan_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "scan", setup = scan_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_scan_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "bitonic", setup = bitonic_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_bitonic_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "bitonic", setup = bitonic_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_bitonic_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "stencil5", setup = stencil5_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_stencil5_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "stencil5", setup = stencil5_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_stencil5_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "histogram", setup = histogram_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_histogram_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "histogram", setup = histogram_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_histogram_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "transpose", setup = transpose_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_transpose_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "transpose", setup = transpose_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_transpose_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "nbody", setup = nbody_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_nbody_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "nbody", setup = nbody_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_nbody_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "blackscholes", setup = blackscholes_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_blackscholes_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "blackscholes", setup = blackscholes_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_blackscholes_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(group = "cublas_sgemm", setup = sgemm_own, gpu_only, ops = 2 * SGEMM_N * SGEMM_N * SGEMM_N)]
fn heldout_cublas_sgemm_own(m: &mut Matmul<f32>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_sgemm", setup = sgemm_constant, gpu_only, ops = 2 * SGEMM_N * SGEMM_N * SGEMM_N)]
fn heldout_cublas_sgemm_constant(m: &mut Matmul<f32>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_dgemm", setup = dgemm_own, gpu_only, ops = 2 * DGEMM_N * DGEMM_N * DGEMM_N)]
fn heldout_cublas_dgemm_own(m: &mut Matmul<f64>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_dgemm", setup = dgemm_constant, gpu_only, ops = 2 * DGEMM_N * DGEMM_N * DGEMM_N)]
fn heldout_cublas_dgemm_constant(m: &mut Matmul<f64>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_hgemm", setup = hgemm_own, gpu_only, ops = 2 * HGEMM_N * HGEMM_N * HGEMM_N)]
fn heldout_cublas_hgemm_own(m: &mut Matmul<f16>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_hgemm", setup = hgemm_constant, gpu_only, ops = 2 * HGEMM_N * HGEMM_N * HGEMM_N)]
fn heldout_cublas_hgemm_constant(m: &mut Matmul<f16>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_sgemv", setup = sgemv_own, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn heldout_cublas_sgemv_own(m: &mut Matvec<f32>, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(group = "cublas_sgemv", setup = sgemv_constant, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn heldout_cublas_sgemv_constant(m: &mut Matvec<f32>, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(group = "cublas_sasum", setup = sasum_own, gpu_only, bytes = 4 * SASUM_N)]
fn heldout_cublas_sasum_own(s: &mut AbsSum, stream: &Stream) -> Result<()> {
    abs_sum(s, stream)
}

#[energy_bench(group = "cublas_sasum", setup = sasum_constant, gpu_only, bytes = 4 * SASUM_N)]
fn heldout_cublas_sasum_constant(s: &mut AbsSum, stream: &Stream) -> Result<()> {
    abs_sum(s, stream)
}

#[energy_bench(group = "cublas_sgeam", setup = sgeam_own, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
fn heldout_cublas_sgeam_own(t: &mut Transpose, stream: &Stream) -> Result<()> {
    transpose_with_cublas(t, stream)
}

#[energy_bench(group = "cublas_sgeam", setup = sgeam_constant, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
fn heldout_cublas_sgeam_constant(t: &mut Transpose, stream: &Stream) -> Result<()> {
    transpose_with_cublas(t, stream)
}

#[energy_bench(setup = curand, gpu_only, bytes = 4 * CURAND_N)]
fn heldout_curand_normal_own(g: &mut Generator, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    g.rng.fill_with_normal(&mut g.out, 0.0, 1.0).map_err(curand_error)
}

#[energy_bench(setup = curand, gpu_only, bytes = 4 * CURAND_N)]
fn heldout_curand_uniform_own(g: &mut Generator, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    g.rng.fill_with_uniform(&mut g.out).map_err(curand_error)
}

#[energy_bench(group = "cufft_c2c", setup = fft_own, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn heldout_cufft_c2c_own(f: &mut Fft, stream: &Stream) -> Result<()> {
    forward_fft(f, stream)
}

#[energy_bench(group = "cufft_c2c", setup = fft_constant, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn heldout_cufft_c2c_constant(f: &mut Fft, stream: &Stream) -> Result<()> {
    forward_fft(f, stream)
}

// ---------------------------------------------------------------------------------------
// Protocol v2's held-out set (research/results/model-protocol-v2.json): library calls none of
// whose kernels was measured before that protocol was frozen. Each runs on its own data
// (random) and constant data (one value repeated) but the generator (own state only).

#[energy_bench(group = "cublas_bf16gemm", setup = bf16gemm_own, gpu_only, ops = 2 * BF16GEMM_N * BF16GEMM_N * BF16GEMM_N)]
fn heldout_cublas_bf16gemm_own(m: &mut Matmul<bf16>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_bf16gemm", setup = bf16gemm_constant, gpu_only, ops = 2 * BF16GEMM_N * BF16GEMM_N * BF16GEMM_N)]
fn heldout_cublas_bf16gemm_constant(m: &mut Matmul<bf16>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(group = "cublas_dgemv", setup = dgemv_own, gpu_only, bytes = 8 * DGEMV_N * DGEMV_N)]
fn heldout_cublas_dgemv_own(m: &mut Matvec<f64>, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(group = "cublas_dgemv", setup = dgemv_constant, gpu_only, bytes = 8 * DGEMV_N * DGEMV_N)]
fn heldout_cublas_dgemv_constant(m: &mut Matvec<f64>, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(group = "cublas_sgemm_batched", setup = sgemm_batched_own, gpu_only, ops = 2 * BATCH_SIDE * BATCH_SIDE * BATCH_SIDE * BATCH_GEMMS)]
fn heldout_cublas_sgemm_batched_own(m: &mut BatchedMatmul, stream: &Stream) -> Result<()> {
    batched_gemm(m, stream)
}

#[energy_bench(group = "cublas_sgemm_batched", setup = sgemm_batched_constant, gpu_only, ops = 2 * BATCH_SIDE * BATCH_SIDE * BATCH_SIDE * BATCH_GEMMS)]
fn heldout_cublas_sgemm_batched_constant(m: &mut BatchedMatmul, stream: &Stream) -> Result<()> {
    batched_gemm(m, stream)
}

#[energy_bench(group = "cublas_dsyrk", setup = dsyrk_own, gpu_only, ops = DSYRK_N * (DSYRK_N + 1) * DSYRK_K)]
fn heldout_cublas_dsyrk_own(r: &mut RankK, stream: &Stream) -> Result<()> {
    rank_k_update(r, stream)
}

#[energy_bench(group = "cublas_dsyrk", setup = dsyrk_constant, gpu_only, ops = DSYRK_N * (DSYRK_N + 1) * DSYRK_K)]
fn heldout_cublas_dsyrk_constant(r: &mut RankK, stream: &Stream) -> Result<()> {
    rank_k_update(r, stream)
}

#[energy_bench(group = "cublas_sdot", setup = vectors_own, gpu_only, bytes = 8 * LEVEL1_N)]
fn heldout_cublas_sdot_own(v: &mut Vectors, stream: &Stream) -> Result<()> {
    level1(v, stream, Level1::Dot)
}

#[energy_bench(group = "cublas_sdot", setup = vectors_constant, gpu_only, bytes = 8 * LEVEL1_N)]
fn heldout_cublas_sdot_constant(v: &mut Vectors, stream: &Stream) -> Result<()> {
    level1(v, stream, Level1::Dot)
}

#[energy_bench(group = "cublas_snrm2", setup = vectors_own, gpu_only, bytes = 4 * LEVEL1_N)]
fn heldout_cublas_snrm2_own(v: &mut Vectors, stream: &Stream) -> Result<()> {
    level1(v, stream, Level1::Nrm2)
}

#[energy_bench(group = "cublas_snrm2", setup = vectors_constant, gpu_only, bytes = 4 * LEVEL1_N)]
fn heldout_cublas_snrm2_constant(v: &mut Vectors, stream: &Stream) -> Result<()> {
    level1(v, stream, Level1::Nrm2)
}

#[energy_bench(group = "cublas_saxpy", setup = vectors_own, gpu_only, bytes = 12 * LEVEL1_N)]
fn heldout_cublas_saxpy_own(v: &mut Vectors, stream: &Stream) -> Result<()> {
    level1(v, stream, Level1::Axpy)
}

#[energy_bench(group = "cublas_saxpy", setup = vectors_constant, gpu_only, bytes = 12 * LEVEL1_N)]
fn heldout_cublas_saxpy_constant(v: &mut Vectors, stream: &Stream) -> Result<()> {
    level1(v, stream, Level1::Axpy)
}

#[energy_bench(group = "cufft_r2c", setup = fft_r2c_own, gpu_only, bytes = 8 * R2C_LEN * R2C_BATCH)]
fn heldout_cufft_r2c_own(f: &mut RealFft, stream: &Stream) -> Result<()> {
    real_fft(f, stream)
}

#[energy_bench(group = "cufft_r2c", setup = fft_r2c_constant, gpu_only, bytes = 8 * R2C_LEN * R2C_BATCH)]
fn heldout_cufft_r2c_constant(f: &mut RealFft, stream: &Stream) -> Result<()> {
    real_fft(f, stream)
}

#[energy_bench(group = "cufft_z2z", setup = fft_z2z_own, gpu_only, bytes = 32 * Z2Z_LEN * Z2Z_BATCH)]
fn heldout_cufft_z2z_own(f: &mut DoubleFft, stream: &Stream) -> Result<()> {
    double_fft(f, stream)
}

#[energy_bench(group = "cufft_z2z", setup = fft_z2z_constant, gpu_only, bytes = 32 * Z2Z_LEN * Z2Z_BATCH)]
fn heldout_cufft_z2z_constant(f: &mut DoubleFft, stream: &Stream) -> Result<()> {
    double_fft(f, stream)
}

#[energy_bench(setup = curand_double, gpu_only, bytes = 8 * CURAND_DOUBLES)]
fn heldout_curand_uniform_double_own(g: &mut DoubleGenerator, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    g.rng.fill_with_uniform(&mut g.out).map_err(curand_error)
}

// ---------------------------------------------------------------------------------------
// Protocol v3's held-out set (research/results/model-protocol-v3.json): library calls none of
// whose kernels was measured before that protocol was frozen. Own data are random of full
// entropy in the call's type (doubles with 53 random mantissa bits, unlike v2's widened
// floats); constant data one nonzero value (0.7) repeated; generators run on their own state.

#[energy_bench(group = "cublas_cgemm", setup = cgemm_own, gpu_only, ops = 8 * CGEMM_N * CGEMM_N * CGEMM_N)]
fn heldout_cublas_cgemm_own(m: &mut ComplexMatmul<cufft_sys::float2>, stream: &Stream) -> Result<()> {
    complex_gemm(m, stream)
}

#[energy_bench(group = "cublas_cgemm", setup = cgemm_constant, gpu_only, ops = 8 * CGEMM_N * CGEMM_N * CGEMM_N)]
fn heldout_cublas_cgemm_constant(m: &mut ComplexMatmul<cufft_sys::float2>, stream: &Stream) -> Result<()> {
    complex_gemm(m, stream)
}

#[energy_bench(group = "cublas_zgemm", setup = zgemm_own, gpu_only, ops = 8 * ZGEMM_N * ZGEMM_N * ZGEMM_N)]
fn heldout_cublas_zgemm_own(m: &mut ComplexMatmul<cufft_sys::double2>, stream: &Stream) -> Result<()> {
    complex_gemm(m, stream)
}

#[energy_bench(group = "cublas_zgemm", setup = zgemm_constant, gpu_only, ops = 8 * ZGEMM_N * ZGEMM_N * ZGEMM_N)]
fn heldout_cublas_zgemm_constant(m: &mut ComplexMatmul<cufft_sys::double2>, stream: &Stream) -> Result<()> {
    complex_gemm(m, stream)
}

#[energy_bench(group = "cublas_gemmex_f16_f32", setup = gemmex_own, gpu_only, ops = 2 * GEMMEX_N * GEMMEX_N * GEMMEX_N)]
fn heldout_cublas_gemmex_f16_f32_own(m: &mut MixedMatmul, stream: &Stream) -> Result<()> {
    mixed_gemm(m, stream)
}

#[energy_bench(group = "cublas_gemmex_f16_f32", setup = gemmex_constant, gpu_only, ops = 2 * GEMMEX_N * GEMMEX_N * GEMMEX_N)]
fn heldout_cublas_gemmex_f16_f32_constant(m: &mut MixedMatmul, stream: &Stream) -> Result<()> {
    mixed_gemm(m, stream)
}

#[energy_bench(group = "cublas_strmm", setup = strmm_own, gpu_only, ops = TRMM_M * TRMM_M * TRMM_N)]
fn heldout_cublas_strmm_own(t: &mut TriangularMatmul, stream: &Stream) -> Result<()> {
    triangular_matmul(t, stream)
}

#[energy_bench(group = "cublas_strmm", setup = strmm_constant, gpu_only, ops = TRMM_M * TRMM_M * TRMM_N)]
fn heldout_cublas_strmm_constant(t: &mut TriangularMatmul, stream: &Stream) -> Result<()> {
    triangular_matmul(t, stream)
}

#[energy_bench(group = "cublas_dger", setup = dger_own, gpu_only, bytes = 16 * DGER_N * DGER_N)]
fn heldout_cublas_dger_own(r: &mut RankOne, stream: &Stream) -> Result<()> {
    rank_one_update(r, stream)
}

#[energy_bench(group = "cublas_dger", setup = dger_constant, gpu_only, bytes = 16 * DGER_N * DGER_N)]
fn heldout_cublas_dger_constant(r: &mut RankOne, stream: &Stream) -> Result<()> {
    rank_one_update(r, stream)
}

#[energy_bench(group = "cublas_isamax", setup = isamax_own, gpu_only, bytes = 4 * ISAMAX_N)]
fn heldout_cublas_isamax_own(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    index_of_max(v, stream)
}

#[energy_bench(group = "cublas_isamax", setup = isamax_constant, gpu_only, bytes = 4 * ISAMAX_N)]
fn heldout_cublas_isamax_constant(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    index_of_max(v, stream)
}

#[energy_bench(group = "cublas_srot", setup = srot_own, gpu_only, bytes = 16 * SROT_N)]
fn heldout_cublas_srot_own(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    plane_rotation(v, stream)
}

#[energy_bench(group = "cublas_srot", setup = srot_constant, gpu_only, bytes = 16 * SROT_N)]
fn heldout_cublas_srot_constant(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    plane_rotation(v, stream)
}

#[energy_bench(group = "cufft_d2z", setup = fft_d2z_own, gpu_only, bytes = 8 * D2Z_LEN * D2Z_BATCH)]
fn heldout_cufft_d2z_own(f: &mut DoubleRealFft, stream: &Stream) -> Result<()> {
    double_real_fft(f, stream)
}

#[energy_bench(group = "cufft_d2z", setup = fft_d2z_constant, gpu_only, bytes = 8 * D2Z_LEN * D2Z_BATCH)]
fn heldout_cufft_d2z_constant(f: &mut DoubleRealFft, stream: &Stream) -> Result<()> {
    double_real_fft(f, stream)
}

#[energy_bench(setup = curand_philox, gpu_only, bytes = 4 * CURAND_V3_N)]
fn heldout_curand_philox_normal_own(g: &mut KindGenerator, stream: &Stream) -> Result<()> {
    let (out, _done) = g.out.device_ptr_mut(stream.cuda()?);
    // SAFETY: out holds CURAND_V3_N floats (an even count, as normal draws need).
    unsafe {
        energy_harness::cudarc::curand::result::generate::normal_f32(
            g.generator,
            out as *mut f32,
            CURAND_V3_N,
            0.0,
            1.0,
        )
    }
    .map_err(curand_error)
}

#[energy_bench(setup = curand_mrg32k3a, gpu_only, bytes = 4 * CURAND_V3_N)]
fn heldout_curand_mrg32k3a_uniform_own(g: &mut KindGenerator, stream: &Stream) -> Result<()> {
    let (out, _done) = g.out.device_ptr_mut(stream.cuda()?);
    // SAFETY: out holds CURAND_V3_N floats.
    unsafe { energy_harness::cudarc::curand::result::generate::uniform_f32(g.generator, out as *mut f32, CURAND_V3_N) }
        .map_err(curand_error)
}

energy_main!();
