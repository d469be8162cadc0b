//! The held-out suite (issue 35): `cargo bench --bench heldout`.
//!
//! Kernels the energy model never sees in its fit, each an implementation of a published
//! GPU algorithm in CUDA C (`ptx/heldout/*.cu`, origin and license in each file's header),
//! compiled by NVRTC at run time, and each run on two data regimes: its own data (`_own`:
//! what the algorithm is normally fed, random keys, values or fields) and low-entropy data
//! (`_constant`: one value repeated). The protocol (`docs/results/model-protocol.json`)
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

use energy_harness::cudarc::cublas::sys::{cublasOperation_t, cublasPointerMode_t};
use energy_harness::cudarc::cublas::{CudaBlas, Gemm, GemmConfig, Gemv, GemvConfig};
use energy_harness::cudarc::cufft::{sys as cufft_sys, CudaFft, FftDirection};
use energy_harness::cudarc::curand::CudaRng;
use energy_harness::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use energy_harness::cudarc::driver::{DevicePtr, DevicePtrMut};
use energy_harness::prelude::*;
use energy_harness::{Error, ErrorKind};
use half::f16;

const REDUCE_CU: &str = include_str!("../ptx/heldout/reduce.cu");
const SCAN_CU: &str = include_str!("../ptx/heldout/scan.cu");
const BITONIC_CU: &str = include_str!("../ptx/heldout/bitonic.cu");
const STENCIL5_CU: &str = include_str!("../ptx/heldout/stencil5.cu");
const HISTOGRAM_CU: &str = include_str!("../ptx/heldout/histogram.cu");
const TRANSPOSE_CU: &str = include_str!("../ptx/heldout/transpose.cu");
const NBODY_CU: &str = include_str!("../ptx/heldout/nbody.cu");
const BLACKSCHOLES_CU: &str = include_str!("../ptx/heldout/blackscholes.cu");

/// The data a held-out kernel runs on.
#[derive(Clone, Copy)]
enum Data {
    /// Its own data: random, of full entropy.
    Own,
    /// One value repeated.
    Constant,
}

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` words: random, or one word repeated.
fn words(n: usize, data: Data, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    match data {
        Data::Own => (0..n).map(|_| rng.next() as u32).collect(),
        Data::Constant => vec![0x3f9e_3779; n],
    }
}

/// `n` floats uniform in [lo, hi), or all at the range's middle.
fn floats(n: usize, data: Data, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = Rng(seed);
    match data {
        Data::Own => (0..n).map(|_| lo + (hi - lo) * ((rng.next() >> 40) as f32 / 16_777_216.0)).collect(),
        Data::Constant => vec![0.5 * (lo + hi); n],
    }
}

/// A held-out workload: the launches of one iteration, and the buffers they use.
struct Heldout {
    launches: Vec<(Kernel, LaunchConfig, KernelArgs)>,
    _buffers: Vec<Box<dyn std::any::Any>>,
}

fn run(h: &mut Heldout, stream: &Stream) -> Result<()> {
    for (kernel, config, args) in &h.launches {
        kernel.launch(stream, *config, args)?;
    }
    Ok(())
}

/// A 2-D launch.
fn grid2(blocks: (u32, u32), threads: (u32, u32)) -> LaunchConfig {
    LaunchConfig { grid: (blocks.0, blocks.1, 1), block: (threads.0, threads.1, 1), shared_mem_bytes: 0 }
}

/// Floats reduced: 256 MiB, far beyond the L2.
const REDUCE_N: usize = 1 << 26;

fn reduce(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(REDUCE_CU, "reduce.cu", &[])?.kernel("hx_reduce")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let input = gpu.upload(&floats(REDUCE_N, data, 1, -1.0, 1.0))?;
    let partial = gpu.alloc_zeros::<f32>(blocks as usize)?;
    let args = KernelArgs::new().buffer(&input).buffer(&partial).u32(REDUCE_N as u32);
    let launches = vec![(kernel, LaunchConfig::linear(blocks, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(input), Box::new(partial)] })
}

/// Words scanned (64 MiB), in blocks of 512.
const SCAN_N: usize = 1 << 24;

fn scan(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(SCAN_CU, "scan.cu", &[])?.kernel("hx_scan")?;
    // Small values (below 2^8) as a scan's counts are; constant: all equal.
    let input: Vec<u32> = words(SCAN_N, data, 2).into_iter().map(|w| w & 0xff).collect();
    let input = gpu.upload(&input)?;
    let output = gpu.alloc_zeros::<u32>(SCAN_N)?;
    let args = KernelArgs::new().buffer(&input).buffer(&output);
    let launches = vec![(kernel, LaunchConfig::linear((SCAN_N / 512) as u32, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(input), Box::new(output)] })
}

/// log2 of the keys sorted (4 MiB of keys: an L2-resident sort of 210 steps).
const BITONIC_LOG2: u32 = 20;

fn bitonic(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let module = gpu.load_cuda_c(BITONIC_CU, "bitonic.cu", &[])?;
    let n = 1usize << BITONIC_LOG2;
    let original = gpu.upload(&words(n, data, 3))?;
    let keys = gpu.alloc_zeros::<u32>(n)?;
    let config = LaunchConfig::linear((n / 256) as u32, 256);
    // Each iteration sorts the original keys again: copy, then every step.
    let mut launches =
        vec![(module.kernel("hx_copy")?, config, KernelArgs::new().buffer(&keys).buffer(&original).u32(n as u32))];
    let step = module.kernel("hx_bitonic_step")?;
    let mut k = 2u32;
    while k as usize <= n {
        let mut j = k / 2;
        while j > 0 {
            launches.push((step.clone(), config, KernelArgs::new().buffer(&keys).u32(j).u32(k)));
            j /= 2;
        }
        k *= 2;
    }
    Ok(Heldout { launches, _buffers: vec![Box::new(original), Box::new(keys)] })
}

/// The stencil's grid side (64 MiB per field).
const STENCIL_SIDE: u32 = 4096;

fn stencil5(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(STENCIL5_CU, "stencil5.cu", &[])?.kernel("hx_stencil5")?;
    let cells = (STENCIL_SIDE * STENCIL_SIDE) as usize;
    let input = gpu.upload(&floats(cells, data, 4, 0.0, 100.0))?;
    let output = gpu.alloc_zeros::<f32>(cells)?;
    let args = KernelArgs::new().buffer(&input).buffer(&output).u32(STENCIL_SIDE).u32(STENCIL_SIDE);
    let config = grid2((STENCIL_SIDE / 32, STENCIL_SIDE / 8), (32, 8));
    Ok(Heldout { launches: vec![(kernel, config, args)], _buffers: vec![Box::new(input), Box::new(output)] })
}

/// Words of bytes counted (64 MiB).
const HISTOGRAM_WORDS: usize = 1 << 24;

fn histogram(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(HISTOGRAM_CU, "histogram.cu", &[])?.kernel("hx_histogram")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let input = gpu.upload(&words(HISTOGRAM_WORDS, data, 5))?;
    let hist = gpu.alloc_zeros::<u32>(256)?;
    let args = KernelArgs::new().buffer(&input).u32(HISTOGRAM_WORDS as u32).buffer(&hist);
    let launches = vec![(kernel, LaunchConfig::linear(blocks, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(input), Box::new(hist)] })
}

/// The transposed matrix's side (256 MiB).
const TRANSPOSE_SIDE: u32 = 8192;

fn transpose(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(TRANSPOSE_CU, "transpose.cu", &[])?.kernel("hx_transpose")?;
    let cells = (TRANSPOSE_SIDE * TRANSPOSE_SIDE) as usize;
    let input = gpu.upload(&floats(cells, data, 6, -1.0, 1.0))?;
    let output = gpu.alloc_zeros::<f32>(cells)?;
    let args = KernelArgs::new().buffer(&output).buffer(&input).u32(TRANSPOSE_SIDE).u32(TRANSPOSE_SIDE);
    let config = grid2((TRANSPOSE_SIDE / 32, TRANSPOSE_SIDE / 32), (32, 8));
    Ok(Heldout { launches: vec![(kernel, config, args)], _buffers: vec![Box::new(input), Box::new(output)] })
}

/// Bodies (all pairs: 2^32 interactions).
const NBODY_N: usize = 1 << 16;

fn nbody(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(NBODY_CU, "nbody.cu", &[])?.kernel("hx_nbody")?;
    // x, y, z in [-1, 1), mass in [0.5, 1.5): interleaved as float4s.
    let xyz = floats(NBODY_N * 3, data, 7, -1.0, 1.0);
    let mass = floats(NBODY_N, data, 8, 0.5, 1.5);
    let bodies: Vec<f32> = (0..NBODY_N).flat_map(|i| [xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], mass[i]]).collect();
    let pos = gpu.upload(&bodies)?;
    let acc = gpu.alloc_zeros::<f32>(NBODY_N * 4)?;
    let args = KernelArgs::new().buffer(&pos).buffer(&acc).u32(NBODY_N as u32).f32(1e-4);
    let launches = vec![(kernel, LaunchConfig::linear((NBODY_N / 256) as u32, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(pos), Box::new(acc)] })
}

/// Options priced (64 MiB per array).
const OPTIONS: usize = 1 << 24;

fn blackscholes(gpu: &CudaGpu, data: Data) -> Result<Heldout> {
    let kernel = gpu.load_cuda_c(BLACKSCHOLES_CU, "blackscholes.cu", &[])?.kernel("hx_black_scholes")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let spot = gpu.upload(&floats(OPTIONS, data, 9, 5.0, 30.0))?;
    let strike = gpu.upload(&floats(OPTIONS, data, 10, 1.0, 100.0))?;
    let years = gpu.upload(&floats(OPTIONS, data, 11, 0.25, 10.0))?;
    let call = gpu.alloc_zeros::<f32>(OPTIONS)?;
    let put = gpu.alloc_zeros::<f32>(OPTIONS)?;
    let args = KernelArgs::new()
        .buffer(&call)
        .buffer(&put)
        .buffer(&spot)
        .buffer(&strike)
        .buffer(&years)
        .f32(0.02)
        .f32(0.30)
        .u32(OPTIONS as u32);
    let launches = vec![(kernel, LaunchConfig::linear(blocks, 256), args)];
    let buffers: Vec<Box<dyn std::any::Any>> =
        vec![Box::new(spot), Box::new(strike), Box::new(years), Box::new(call), Box::new(put)];
    Ok(Heldout { launches, _buffers: buffers })
}

/// Each held-out kernel on both regimes: a setup per benchmark, and the benchmark, whose
/// `sim(…)` is a placeholder for the simulated GPU (neither measured nor estimated).
macro_rules! setups {
    ($($own:ident, $constant:ident => $setup:ident -> $workload:ty;)*) => {
        $(
            fn $own(gpu: &CudaGpu) -> Result<$workload> {
                $setup(gpu, Data::Own)
            }
            fn $constant(gpu: &CudaGpu) -> Result<$workload> {
                $setup(gpu, Data::Constant)
            }
        )*
    };
}

setups! {
    reduce_own, reduce_constant => reduce -> Heldout;
    scan_own, scan_constant => scan -> Heldout;
    bitonic_own, bitonic_constant => bitonic -> Heldout;
    stencil5_own, stencil5_constant => stencil5 -> Heldout;
    histogram_own, histogram_constant => histogram -> Heldout;
    transpose_own, transpose_constant => transpose -> Heldout;
    nbody_own, nbody_constant => nbody -> Heldout;
    blackscholes_own, blackscholes_constant => blackscholes -> Heldout;
}

#[energy_bench(setup = reduce_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_reduce_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = reduce_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_reduce_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = scan_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_scan_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = scan_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_scan_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = bitonic_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_bitonic_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = bitonic_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_bitonic_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = stencil5_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_stencil5_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = stencil5_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_stencil5_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = histogram_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_histogram_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = histogram_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_histogram_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = transpose_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_transpose_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = transpose_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_transpose_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = nbody_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_nbody_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = nbody_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_nbody_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = blackscholes_own, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_blackscholes_own(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

#[energy_bench(setup = blackscholes_constant, sim(seconds = 1e-3, watts = 300.0))]
fn heldout_blackscholes_constant(h: &mut Heldout, stream: &Stream) -> Result<()> {
    run(h, stream)
}

/// SGEMM's side: 2 · 4096³ = 1.4·10¹¹ flops, about 2.5 ms at the H100's ~55 TFLOP/s of FP32
/// (cuBLAS's default math mode: no TF32).
const SGEMM_N: usize = 4096;
/// DGEMM's side: the same flops, about 2.5 ms at the H100's ~55 TFLOP/s of FP64 tensor MMA.
const DGEMM_N: usize = 4096;
/// HGEMM's side: 2 · 8192³ = 1.1·10¹² flops, about 1.5 ms at ~700 TFLOP/s of FP16 tensor MMA.
const HGEMM_N: usize = 8192;

/// A square GEMM through cuBLAS, `c = a · b` (column-major, no transposes, beta 0: `c` is
/// written, not read), on the harness's stream.
struct Matmul<T> {
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
fn cublas(e: energy_harness::cudarc::cublas::result::CublasError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuBLAS: {e}"))
}

/// One GEMM on the harness's stream (the handle was bound to it in setup).
fn gemm<T: Copy>(m: &mut Matmul<T>, stream: &Stream) -> Result<()>
where
    CudaBlas: Gemm<T>,
{
    stream.cuda()?;
    // SAFETY: a, b and c hold n·n elements each, as the config's m, n, k and leading
    // dimensions say.
    unsafe { m.blas.gemm(m.config, &m.a, &m.b, &mut m.c) }.map_err(cublas)
}

fn sgemm_own(gpu: &CudaGpu) -> Result<Matmul<f32>> {
    matmul(gpu, Data::Own, SGEMM_N, |x| x)
}
fn sgemm_constant(gpu: &CudaGpu) -> Result<Matmul<f32>> {
    matmul(gpu, Data::Constant, SGEMM_N, |x| x)
}
fn dgemm_own(gpu: &CudaGpu) -> Result<Matmul<f64>> {
    matmul(gpu, Data::Own, DGEMM_N, f64::from)
}
fn dgemm_constant(gpu: &CudaGpu) -> Result<Matmul<f64>> {
    matmul(gpu, Data::Constant, DGEMM_N, f64::from)
}
fn hgemm_own(gpu: &CudaGpu) -> Result<Matmul<f16>> {
    matmul(gpu, Data::Own, HGEMM_N, f16::from_f32)
}
fn hgemm_constant(gpu: &CudaGpu) -> Result<Matmul<f16>> {
    matmul(gpu, Data::Constant, HGEMM_N, f16::from_f32)
}

#[energy_bench(setup = sgemm_own, gpu_only, ops = 2 * SGEMM_N * SGEMM_N * SGEMM_N)]
fn heldout_cublas_sgemm_own(m: &mut Matmul<f32>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(setup = sgemm_constant, gpu_only, ops = 2 * SGEMM_N * SGEMM_N * SGEMM_N)]
fn heldout_cublas_sgemm_constant(m: &mut Matmul<f32>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(setup = dgemm_own, gpu_only, ops = 2 * DGEMM_N * DGEMM_N * DGEMM_N)]
fn heldout_cublas_dgemm_own(m: &mut Matmul<f64>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(setup = dgemm_constant, gpu_only, ops = 2 * DGEMM_N * DGEMM_N * DGEMM_N)]
fn heldout_cublas_dgemm_constant(m: &mut Matmul<f64>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(setup = hgemm_own, gpu_only, ops = 2 * HGEMM_N * HGEMM_N * HGEMM_N)]
fn heldout_cublas_hgemm_own(m: &mut Matmul<f16>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

#[energy_bench(setup = hgemm_constant, gpu_only, ops = 2 * HGEMM_N * HGEMM_N * HGEMM_N)]
fn heldout_cublas_hgemm_constant(m: &mut Matmul<f16>, stream: &Stream) -> Result<()> {
    gemm(m, stream)
}

/// SGEMV's matrix side: 16384² floats (1 GiB), read once per call: a DRAM-bound
/// matrix-vector product (`y = A·x`, column-major, no transpose).
const SGEMV_N: usize = 16384;

/// A matrix-vector product through cuBLAS on the harness's stream.
struct Matvec {
    blas: CudaBlas,
    config: GemvConfig<f32>,
    a: CudaSlice<f32>,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
}

fn sgemv(gpu: &CudaGpu, data: Data) -> Result<Matvec> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let n = SGEMV_N;
    let a = stream.clone_htod(&floats(n * n, data, 14, -1.0, 1.0))?;
    let x = stream.clone_htod(&floats(n, data, 15, -1.0, 1.0))?;
    let y = stream.alloc_zeros::<f32>(n)?;
    let side = n as i32;
    let config = GemvConfig {
        trans: cublasOperation_t::CUBLAS_OP_N,
        m: side,
        n: side,
        alpha: 1.0,
        lda: side,
        incx: 1,
        beta: 0.0,
        incy: 1,
    };
    Ok(Matvec { blas, config, a, x, y })
}

setups! {
    sgemv_own, sgemv_constant => sgemv -> Matvec;
}

/// One SGEMV on the harness's stream (the handle was bound to it in setup).
fn matvec(m: &mut Matvec, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    // SAFETY: a holds n·n floats, x and y n each, as the config says.
    unsafe { m.blas.gemv(m.config, &m.a, &m.x, &mut m.y) }.map_err(cublas)
}

#[energy_bench(setup = sgemv_own, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn heldout_cublas_sgemv_own(m: &mut Matvec, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(setup = sgemv_constant, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn heldout_cublas_sgemv_constant(m: &mut Matvec, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

/// Floats summed by SASUM (256 MiB).
const SASUM_N: usize = 1 << 26;

/// A sum of absolute values through cuBLAS, its result left on the GPU (device pointer
/// mode: no copy back, no synchronization in the timed launches).
struct AbsSum {
    blas: CudaBlas,
    x: CudaSlice<f32>,
    sum: CudaSlice<f32>,
}

fn sasum(gpu: &CudaGpu, data: Data) -> Result<AbsSum> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    blas.set_pointer_mode(cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE).map_err(cublas)?;
    let x = stream.clone_htod(&floats(SASUM_N, data, 16, -1.0, 1.0))?;
    let sum = stream.alloc_zeros::<f32>(1)?;
    Ok(AbsSum { blas, x, sum })
}

setups! {
    sasum_own, sasum_constant => sasum -> AbsSum;
}

fn abs_sum(s: &mut AbsSum, stream: &Stream) -> Result<()> {
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

#[energy_bench(setup = sasum_own, gpu_only, bytes = 4 * SASUM_N)]
fn heldout_cublas_sasum_own(s: &mut AbsSum, stream: &Stream) -> Result<()> {
    abs_sum(s, stream)
}

#[energy_bench(setup = sasum_constant, gpu_only, bytes = 4 * SASUM_N)]
fn heldout_cublas_sasum_constant(s: &mut AbsSum, stream: &Stream) -> Result<()> {
    abs_sum(s, stream)
}

/// SGEAM's matrix side: `C = Aᵀ` of 8192² floats (256 MiB each way).
const SGEAM_N: usize = 8192;

/// A transpose through cuBLAS's SGEAM (`C = 1·Aᵀ + 0·B`).
struct Transpose {
    blas: CudaBlas,
    a: CudaSlice<f32>,
    c: CudaSlice<f32>,
}

fn sgeam(gpu: &CudaGpu, data: Data) -> Result<Transpose> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let a = stream.clone_htod(&floats(SGEAM_N * SGEAM_N, data, 17, -1.0, 1.0))?;
    let c = stream.alloc_zeros::<f32>(SGEAM_N * SGEAM_N)?;
    Ok(Transpose { blas, a, c })
}

setups! {
    sgeam_own, sgeam_constant => sgeam -> Transpose;
}

fn transpose_with_cublas(t: &mut Transpose, stream: &Stream) -> Result<()> {
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

#[energy_bench(setup = sgeam_own, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
fn heldout_cublas_sgeam_own(t: &mut Transpose, stream: &Stream) -> Result<()> {
    transpose_with_cublas(t, stream)
}

#[energy_bench(setup = sgeam_constant, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
fn heldout_cublas_sgeam_constant(t: &mut Transpose, stream: &Stream) -> Result<()> {
    transpose_with_cublas(t, stream)
}

/// Floats drawn by cuRAND per call (256 MiB).
const CURAND_N: usize = 1 << 26;

/// cuRAND's default pseudo-random generator (XORWOW) on the harness's stream, and the buffer
/// it fills. A generator reads no input: its own data is its own state, so it runs in one
/// regime only.
struct Generator {
    rng: CudaRng,
    out: CudaSlice<f32>,
}

fn curand(gpu: &CudaGpu) -> Result<Generator> {
    let stream = gpu.stream().cuda()?;
    let rng = CudaRng::new(35, stream.clone()).map_err(curand_error)?;
    let out = stream.alloc_zeros::<f32>(CURAND_N)?;
    Ok(Generator { rng, out })
}

/// A cuRAND status as the harness's error.
fn curand_error(e: energy_harness::cudarc::curand::result::CurandError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuRAND: {e:?}"))
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

/// cuFFT's transform length and batch: 4096 transforms of 4096 complex floats (128 MiB).
const FFT_LEN: usize = 4096;
const FFT_BATCH: usize = 4096;

/// Batched forward C2C FFTs through cuFFT, out of place, on the harness's stream.
struct Fft {
    plan: CudaFft,
    input: CudaSlice<cufft_sys::float2>,
    output: CudaSlice<cufft_sys::float2>,
}

/// A cuFFT status as the harness's error.
fn cufft_error(e: energy_harness::cudarc::cufft::result::CufftError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuFFT: {e:?}"))
}

fn fft(gpu: &CudaGpu, data: Data) -> Result<Fft> {
    let stream = gpu.stream().cuda()?;
    let n = FFT_LEN * FFT_BATCH;
    let plan = CudaFft::plan_1d(FFT_LEN as i32, cufft_sys::cufftType::CUFFT_C2C, FFT_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let re = floats(n, data, 18, -1.0, 1.0);
    let im = floats(n, data, 19, -1.0, 1.0);
    let values: Vec<cufft_sys::float2> = re.iter().zip(&im).map(|(&x, &y)| cufft_sys::float2 { x, y }).collect();
    let input = stream.clone_htod(&values)?;
    let output = stream.alloc_zeros::<cufft_sys::float2>(n)?;
    Ok(Fft { plan, input, output })
}

setups! {
    fft_own, fft_constant => fft -> Fft;
}

fn forward_fft(f: &mut Fft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_c2c(&mut f.input, &mut f.output, FftDirection::Forward).map_err(cufft_error)
}

#[energy_bench(setup = fft_own, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn heldout_cufft_c2c_own(f: &mut Fft, stream: &Stream) -> Result<()> {
    forward_fft(f, stream)
}

#[energy_bench(setup = fft_constant, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn heldout_cufft_c2c_constant(f: &mut Fft, stream: &Stream) -> Result<()> {
    forward_fft(f, stream)
}

energy_main!();
