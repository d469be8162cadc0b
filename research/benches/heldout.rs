//! The held-out suite (issue 35): `cargo bench --bench heldout`.
//!
//! Kernels the energy model never sees in its fit, each an implementation of a published
//! GPU algorithm in CUDA C (`ptx/heldout/*.cu`, origin and license in each file's header),
//! compiled by NVRTC at run time, and each run on two data regimes: its own data (`_own`:
//! what the algorithm is normally fed, random keys, values or fields) and low-entropy data
//! (`_constant`: one value repeated). The protocol (`research/results/model-protocol.json`)
//! fixes this list before any of them is measured. Each pair is one `#[energy_bench]` over
//! both regimes (`args = REGIMES`, named `heldout_<kernel>_{}`).
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
//! (the data regimes and the inputs), `kernels.rs` (the CUDA C kernels),
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

use common::{Data, REGIMES};
use cublas_complex::*;
use cublas_gemm::*;
use cublas_streaming::*;
use cufft::*;
use curand::*;
use kernels::*;

// Each pair (own data, constant data) is one benchmark over the two regimes (`args = REGIMES`,
// ids `heldout_<kernel>_own` and `heldout_<kernel>_constant`, as the protocols name them) and
// one group: with a node's queue (`cargo energy run --gpus`) both run on one GPU, since the
// bracket compares the two.
#[energy_bench(name = "heldout_reduce_{}", args = REGIMES, group = "reduce", setup = reduce, sim(seconds = 1e-3, watts = 300.0))]
fn reduce_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_scan_{}", args = REGIMES, group = "scan", setup = scan, sim(seconds = 1e-3, watts = 300.0))]
fn scan_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_bitonic_{}", args = REGIMES, group = "bitonic", setup = bitonic, sim(seconds = 1e-3, watts = 300.0))]
fn bitonic_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_stencil5_{}", args = REGIMES, group = "stencil5", setup = stencil5, sim(seconds = 1e-3, watts = 300.0))]
fn stencil5_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_histogram_{}", args = REGIMES, group = "histogram", setup = histogram, sim(seconds = 1e-3, watts = 300.0))]
fn histogram_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_transpose_{}", args = REGIMES, group = "transpose", setup = transpose, sim(seconds = 1e-3, watts = 300.0))]
fn transpose_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_nbody_{}", args = REGIMES, group = "nbody", setup = nbody, sim(seconds = 1e-3, watts = 300.0))]
fn nbody_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_blackscholes_{}", args = REGIMES, group = "blackscholes", setup = blackscholes, sim(seconds = 1e-3, watts = 300.0))]
fn blackscholes_pair(h: &mut Heldout, stream: &Stream, _data: &Data) -> Result<()> {
    run(h, stream)
}

#[energy_bench(name = "heldout_cublas_sgemm_{}", args = REGIMES, group = "cublas_sgemm", setup = sgemm, gpu_only, ops = 2 * SGEMM_N * SGEMM_N * SGEMM_N)]
fn cublas_sgemm_pair(m: &mut Matmul<f32>, stream: &Stream, _data: &Data) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_dgemm_{}", args = REGIMES, group = "cublas_dgemm", setup = dgemm, gpu_only, ops = 2 * DGEMM_N * DGEMM_N * DGEMM_N)]
fn cublas_dgemm_pair(m: &mut Matmul<f64>, stream: &Stream, _data: &Data) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_hgemm_{}", args = REGIMES, group = "cublas_hgemm", setup = hgemm, gpu_only, ops = 2 * HGEMM_N * HGEMM_N * HGEMM_N)]
fn cublas_hgemm_pair(m: &mut Matmul<f16>, stream: &Stream, _data: &Data) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_sgemv_{}", args = REGIMES, group = "cublas_sgemv", setup = sgemv, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn cublas_sgemv_pair(m: &mut Matvec<f32>, stream: &Stream, _data: &Data) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(name = "heldout_cublas_sasum_{}", args = REGIMES, group = "cublas_sasum", setup = sasum, gpu_only, bytes = 4 * SASUM_N)]
fn cublas_sasum_pair(s: &mut AbsSum, stream: &Stream, _data: &Data) -> Result<()> {
    abs_sum(s, stream)
}

#[energy_bench(name = "heldout_cublas_sgeam_{}", args = REGIMES, group = "cublas_sgeam", setup = sgeam, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
fn cublas_sgeam_pair(t: &mut Transpose, stream: &Stream, _data: &Data) -> Result<()> {
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

#[energy_bench(name = "heldout_cufft_c2c_{}", args = REGIMES, group = "cufft_c2c", setup = fft, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn cufft_c2c_pair(f: &mut Fft, stream: &Stream, _data: &Data) -> Result<()> {
    forward_fft(f, stream)
}

// ---------------------------------------------------------------------------------------
// Protocol v2's held-out set (research/results/model-protocol-v2.json): library calls none of
// whose kernels was measured before that protocol was frozen. Each runs on its own data
// (random) and constant data (one value repeated) but the generator (own state only).

#[energy_bench(name = "heldout_cublas_bf16gemm_{}", args = REGIMES, group = "cublas_bf16gemm", setup = bf16gemm, gpu_only, ops = 2 * BF16GEMM_N * BF16GEMM_N * BF16GEMM_N)]
fn cublas_bf16gemm_pair(m: &mut Matmul<bf16>, stream: &Stream, _data: &Data) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_dgemv_{}", args = REGIMES, group = "cublas_dgemv", setup = dgemv, gpu_only, bytes = 8 * DGEMV_N * DGEMV_N)]
fn cublas_dgemv_pair(m: &mut Matvec<f64>, stream: &Stream, _data: &Data) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(name = "heldout_cublas_sgemm_batched_{}", args = REGIMES, group = "cublas_sgemm_batched", setup = sgemm_batched, gpu_only, ops = 2 * BATCH_SIDE * BATCH_SIDE * BATCH_SIDE * BATCH_GEMMS)]
fn cublas_sgemm_batched_pair(m: &mut BatchedMatmul, stream: &Stream, _data: &Data) -> Result<()> {
    batched_gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_dsyrk_{}", args = REGIMES, group = "cublas_dsyrk", setup = dsyrk, gpu_only, ops = DSYRK_N * (DSYRK_N + 1) * DSYRK_K)]
fn cublas_dsyrk_pair(r: &mut RankK, stream: &Stream, _data: &Data) -> Result<()> {
    rank_k_update(r, stream)
}

#[energy_bench(name = "heldout_cublas_sdot_{}", args = REGIMES, group = "cublas_sdot", setup = vectors, gpu_only, bytes = 8 * LEVEL1_N)]
fn cublas_sdot_pair(v: &mut Vectors, stream: &Stream, _data: &Data) -> Result<()> {
    level1(v, stream, Level1::Dot)
}

#[energy_bench(name = "heldout_cublas_snrm2_{}", args = REGIMES, group = "cublas_snrm2", setup = vectors, gpu_only, bytes = 4 * LEVEL1_N)]
fn cublas_snrm2_pair(v: &mut Vectors, stream: &Stream, _data: &Data) -> Result<()> {
    level1(v, stream, Level1::Nrm2)
}

#[energy_bench(name = "heldout_cublas_saxpy_{}", args = REGIMES, group = "cublas_saxpy", setup = vectors, gpu_only, bytes = 12 * LEVEL1_N)]
fn cublas_saxpy_pair(v: &mut Vectors, stream: &Stream, _data: &Data) -> Result<()> {
    level1(v, stream, Level1::Axpy)
}

#[energy_bench(name = "heldout_cufft_r2c_{}", args = REGIMES, group = "cufft_r2c", setup = fft_r2c, gpu_only, bytes = 8 * R2C_LEN * R2C_BATCH)]
fn cufft_r2c_pair(f: &mut RealFft, stream: &Stream, _data: &Data) -> Result<()> {
    real_fft(f, stream)
}

#[energy_bench(name = "heldout_cufft_z2z_{}", args = REGIMES, group = "cufft_z2z", setup = fft_z2z, gpu_only, bytes = 32 * Z2Z_LEN * Z2Z_BATCH)]
fn cufft_z2z_pair(f: &mut DoubleFft, stream: &Stream, _data: &Data) -> Result<()> {
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

#[energy_bench(name = "heldout_cublas_cgemm_{}", args = REGIMES, group = "cublas_cgemm", setup = cgemm, gpu_only, ops = 8 * CGEMM_N * CGEMM_N * CGEMM_N)]
fn cublas_cgemm_pair(m: &mut ComplexMatmul<cufft_sys::float2>, stream: &Stream, _data: &Data) -> Result<()> {
    complex_gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_zgemm_{}", args = REGIMES, group = "cublas_zgemm", setup = zgemm, gpu_only, ops = 8 * ZGEMM_N * ZGEMM_N * ZGEMM_N)]
fn cublas_zgemm_pair(m: &mut ComplexMatmul<cufft_sys::double2>, stream: &Stream, _data: &Data) -> Result<()> {
    complex_gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_gemmex_f16_f32_{}", args = REGIMES, group = "cublas_gemmex_f16_f32", setup = gemmex_f16_f32, gpu_only, ops = 2 * GEMMEX_N * GEMMEX_N * GEMMEX_N)]
fn cublas_gemmex_f16_f32_pair(m: &mut MixedMatmul, stream: &Stream, _data: &Data) -> Result<()> {
    mixed_gemm(m, stream)
}

#[energy_bench(name = "heldout_cublas_strmm_{}", args = REGIMES, group = "cublas_strmm", setup = strmm, gpu_only, ops = TRMM_M * TRMM_M * TRMM_N)]
fn cublas_strmm_pair(t: &mut TriangularMatmul, stream: &Stream, _data: &Data) -> Result<()> {
    triangular_matmul(t, stream)
}

#[energy_bench(name = "heldout_cublas_dger_{}", args = REGIMES, group = "cublas_dger", setup = dger, gpu_only, bytes = 16 * DGER_N * DGER_N)]
fn cublas_dger_pair(r: &mut RankOne, stream: &Stream, _data: &Data) -> Result<()> {
    rank_one_update(r, stream)
}

#[energy_bench(name = "heldout_cublas_isamax_{}", args = REGIMES, group = "cublas_isamax", setup = isamax, gpu_only, bytes = 4 * ISAMAX_N)]
fn cublas_isamax_pair(v: &mut Level1V3, stream: &Stream, _data: &Data) -> Result<()> {
    index_of_max(v, stream)
}

#[energy_bench(name = "heldout_cublas_srot_{}", args = REGIMES, group = "cublas_srot", setup = srot, gpu_only, bytes = 16 * SROT_N)]
fn cublas_srot_pair(v: &mut Level1V3, stream: &Stream, _data: &Data) -> Result<()> {
    plane_rotation(v, stream)
}

#[energy_bench(name = "heldout_cufft_d2z_{}", args = REGIMES, group = "cufft_d2z", setup = fft_d2z, gpu_only, bytes = 8 * D2Z_LEN * D2Z_BATCH)]
fn cufft_d2z_pair(f: &mut DoubleRealFft, stream: &Stream, _data: &Data) -> Result<()> {
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
