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

use energy_harness::cudarc::cublas::sys::{cublasFillMode_t, cublasOperation_t, cublasPointerMode_t};
use energy_harness::cudarc::cublas::{CudaBlas, Gemm, GemmConfig, Gemv, GemvConfig, StridedBatchedConfig};
use energy_harness::cudarc::cufft::{sys as cufft_sys, CudaFft, FftDirection};
use energy_harness::cudarc::curand::CudaRng;
use energy_harness::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use energy_harness::cudarc::driver::{DevicePtr, DevicePtrMut};
use energy_harness::prelude::*;
use energy_harness::{Error, ErrorKind};
use half::{bf16, f16};

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

/// SGEMV's matrix side: 16384² floats (1 GiB), read once per call: a DRAM-bound
/// matrix-vector product (`y = A·x`, column-major, no transpose).
const SGEMV_N: usize = 16384;

/// A matrix-vector product through cuBLAS on the harness's stream.
struct Matvec<T> {
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

fn sgemv(gpu: &CudaGpu, data: Data) -> Result<Matvec<f32>> {
    gemv(gpu, data, SGEMV_N, |x| x)
}

setups! {
    sgemv_own, sgemv_constant => sgemv -> Matvec<f32>;
}

/// One GEMV on the harness's stream (the handle was bound to it in setup).
fn matvec<T: Copy>(m: &mut Matvec<T>, stream: &Stream) -> Result<()>
where
    CudaBlas: Gemv<T>,
{
    stream.cuda()?;
    // SAFETY: a holds n·n elements, x and y n each, as the config says.
    unsafe { m.blas.gemv(m.config, &m.a, &m.x, &mut m.y) }.map_err(cublas)
}

#[energy_bench(group = "cublas_sgemv", setup = sgemv_own, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn heldout_cublas_sgemv_own(m: &mut Matvec<f32>, stream: &Stream) -> Result<()> {
    matvec(m, stream)
}

#[energy_bench(group = "cublas_sgemv", setup = sgemv_constant, gpu_only, bytes = 4 * SGEMV_N * SGEMV_N)]
fn heldout_cublas_sgemv_constant(m: &mut Matvec<f32>, stream: &Stream) -> Result<()> {
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

#[energy_bench(group = "cublas_sasum", setup = sasum_own, gpu_only, bytes = 4 * SASUM_N)]
fn heldout_cublas_sasum_own(s: &mut AbsSum, stream: &Stream) -> Result<()> {
    abs_sum(s, stream)
}

#[energy_bench(group = "cublas_sasum", setup = sasum_constant, gpu_only, bytes = 4 * SASUM_N)]
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

#[energy_bench(group = "cublas_sgeam", setup = sgeam_own, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
fn heldout_cublas_sgeam_own(t: &mut Transpose, stream: &Stream) -> Result<()> {
    transpose_with_cublas(t, stream)
}

#[energy_bench(group = "cublas_sgeam", setup = sgeam_constant, gpu_only, bytes = 8 * SGEAM_N * SGEAM_N)]
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

#[energy_bench(group = "cufft_c2c", setup = fft_own, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn heldout_cufft_c2c_own(f: &mut Fft, stream: &Stream) -> Result<()> {
    forward_fft(f, stream)
}

#[energy_bench(group = "cufft_c2c", setup = fft_constant, gpu_only, bytes = 16 * FFT_LEN * FFT_BATCH)]
fn heldout_cufft_c2c_constant(f: &mut Fft, stream: &Stream) -> Result<()> {
    forward_fft(f, stream)
}

// ---------------------------------------------------------------------------------------
// Protocol v2's held-out set (docs/results/model-protocol-v2.json): library calls none of
// whose kernels was measured before that protocol was frozen. Each runs on its own data
// (random) and constant data (one value repeated) but the generator (own state only).

/// The BF16 GEMM's side: 2 · 8192³ = 1.1·10¹² flops (cuBLAS's BF16 GEMM through
/// `cublasGemmEx`: BF16 in and out, FP32 compute; warpgroup MMA on Hopper).
const BF16GEMM_N: usize = 8192;

fn bf16gemm(gpu: &CudaGpu, data: Data) -> Result<Matmul<bf16>> {
    matmul(gpu, data, BF16GEMM_N, bf16::from_f32)
}

/// DGEMV's side: 16384² doubles (2 GiB), read once per call.
const DGEMV_N: usize = 16384;

fn dgemv(gpu: &CudaGpu, data: Data) -> Result<Matvec<f64>> {
    gemv(gpu, data, DGEMV_N, f64::from)
}

/// SGEMM strided-batched: `BATCH_GEMMS` products of 256² matrices (3.4·10¹⁰ flops).
const BATCH_SIDE: usize = 256;
const BATCH_GEMMS: usize = 1024;

/// Many small GEMMs in one cuBLAS call, on the harness's stream.
struct BatchedMatmul {
    blas: CudaBlas,
    config: StridedBatchedConfig<f32>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
}

fn sgemm_batched(gpu: &CudaGpu, data: Data) -> Result<BatchedMatmul> {
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

fn batched_gemm(m: &mut BatchedMatmul, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    // SAFETY: a, b and c hold batch · n² floats each, the strides n².
    unsafe { m.blas.gemm_strided_batched(m.config, &m.a, &m.b, &mut m.c) }.map_err(cublas)
}

/// DSYRK: `C = A·Aᵀ` (lower triangle) of a 4096 × 8192 double matrix (1.4·10¹¹ flops).
const DSYRK_N: usize = 4096;
const DSYRK_K: usize = 8192;

/// A symmetric rank-k update through cuBLAS, on the harness's stream.
struct RankK {
    blas: CudaBlas,
    a: CudaSlice<f64>,
    c: CudaSlice<f64>,
}

fn dsyrk(gpu: &CudaGpu, data: Data) -> Result<RankK> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let values: Vec<f64> = floats(DSYRK_N * DSYRK_K, data, 22, -1.0, 1.0).into_iter().map(f64::from).collect();
    let a = stream.clone_htod(&values)?;
    let c = stream.alloc_zeros::<f64>(DSYRK_N * DSYRK_N)?;
    Ok(RankK { blas, a, c })
}

fn rank_k_update(r: &mut RankK, stream: &Stream) -> Result<()> {
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

/// The level-1 calls' vector length (2^27 floats: 512 MiB).
const LEVEL1_N: usize = 1 << 27;

/// Two vectors and a device-side scalar for cuBLAS's level-1 calls (device pointer mode:
/// results stay on the GPU, nothing synchronizes in the timed launches).
struct Vectors {
    blas: CudaBlas,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    scalar: CudaSlice<f32>,
}

fn vectors(gpu: &CudaGpu, data: Data) -> Result<Vectors> {
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
enum Level1 {
    /// `s = x · y`.
    Dot,
    /// `s = ‖x‖₂`.
    Nrm2,
    /// `y = a·x + y`, `a` on the device.
    Axpy,
}

fn level1(v: &mut Vectors, stream: &Stream, call: Level1) -> Result<()> {
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

/// cuFFT R2C: 4096 transforms of 8192 reals (128 MiB in).
const R2C_LEN: usize = 8192;
const R2C_BATCH: usize = 4096;
/// cuFFT Z2Z: 2048 transforms of 4096 double complexes (128 MiB each way).
const Z2Z_LEN: usize = 4096;
const Z2Z_BATCH: usize = 2048;

/// Batched real-to-complex FFTs.
struct RealFft {
    plan: CudaFft,
    input: CudaSlice<f32>,
    output: CudaSlice<cufft_sys::float2>,
}

fn fft_r2c(gpu: &CudaGpu, data: Data) -> Result<RealFft> {
    let stream = gpu.stream().cuda()?;
    let plan = CudaFft::plan_1d(R2C_LEN as i32, cufft_sys::cufftType::CUFFT_R2C, R2C_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let input = stream.clone_htod(&floats(R2C_LEN * R2C_BATCH, data, 25, -1.0, 1.0))?;
    let output = stream.alloc_zeros::<cufft_sys::float2>((R2C_LEN / 2 + 1) * R2C_BATCH)?;
    Ok(RealFft { plan, input, output })
}

fn real_fft(f: &mut RealFft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_r2c(&f.input, &mut f.output).map_err(cufft_error)
}

/// Batched double-precision complex FFTs.
struct DoubleFft {
    plan: CudaFft,
    input: CudaSlice<cufft_sys::double2>,
    output: CudaSlice<cufft_sys::double2>,
}

fn fft_z2z(gpu: &CudaGpu, data: Data) -> Result<DoubleFft> {
    let stream = gpu.stream().cuda()?;
    let n = Z2Z_LEN * Z2Z_BATCH;
    let plan = CudaFft::plan_1d(Z2Z_LEN as i32, cufft_sys::cufftType::CUFFT_Z2Z, Z2Z_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let re = floats(n, data, 26, -1.0, 1.0);
    let im = floats(n, data, 27, -1.0, 1.0);
    let values: Vec<cufft_sys::double2> =
        re.iter().zip(&im).map(|(&x, &y)| cufft_sys::double2 { x: x.into(), y: y.into() }).collect();
    let input = stream.clone_htod(&values)?;
    let output = stream.alloc_zeros::<cufft_sys::double2>(n)?;
    Ok(DoubleFft { plan, input, output })
}

fn double_fft(f: &mut DoubleFft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_z2z(&mut f.input, &mut f.output, FftDirection::Forward).map_err(cufft_error)
}

setups! {
    bf16gemm_own, bf16gemm_constant => bf16gemm -> Matmul<bf16>;
    dgemv_own, dgemv_constant => dgemv -> Matvec<f64>;
    sgemm_batched_own, sgemm_batched_constant => sgemm_batched -> BatchedMatmul;
    dsyrk_own, dsyrk_constant => dsyrk -> RankK;
    vectors_own, vectors_constant => vectors -> Vectors;
    fft_r2c_own, fft_r2c_constant => fft_r2c -> RealFft;
    fft_z2z_own, fft_z2z_constant => fft_z2z -> DoubleFft;
}

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

/// Doubles drawn by cuRAND per call (512 MiB).
const CURAND_DOUBLES: usize = 1 << 26;

/// cuRAND's default generator filling doubles (its own state only: one regime).
struct DoubleGenerator {
    rng: CudaRng,
    out: CudaSlice<f64>,
}

fn curand_double(gpu: &CudaGpu) -> Result<DoubleGenerator> {
    let stream = gpu.stream().cuda()?;
    let rng = CudaRng::new(36, stream.clone()).map_err(curand_error)?;
    let out = stream.alloc_zeros::<f64>(CURAND_DOUBLES)?;
    Ok(DoubleGenerator { rng, out })
}

#[energy_bench(setup = curand_double, gpu_only, bytes = 8 * CURAND_DOUBLES)]
fn heldout_curand_uniform_double_own(g: &mut DoubleGenerator, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    g.rng.fill_with_uniform(&mut g.out).map_err(curand_error)
}

// ---------------------------------------------------------------------------------------
// Protocol v3's held-out set (docs/results/model-protocol-v3.json): library calls none of
// whose kernels was measured before that protocol was frozen. Own data are random of full
// entropy in the call's type (doubles with 53 random mantissa bits, unlike v2's widened
// floats); constant data one nonzero value (0.7) repeated; generators run on their own state.

/// The constant-data value of protocol v3's kernels (nonzero: a zero may take a shortcut).
const V3_CONSTANT: f32 = 0.7;

/// `n` doubles uniform in [-1, 1) with 53 random mantissa bits, or [`V3_CONSTANT`] repeated.
fn doubles(n: usize, data: Data, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    match data {
        Data::Own => (0..n).map(|_| -1.0 + 2.0 * ((rng.next() >> 11) as f64 / 9_007_199_254_740_992.0)).collect(),
        Data::Constant => vec![f64::from(V3_CONSTANT); n],
    }
}

/// `n` floats uniform in [-1, 1), or [`V3_CONSTANT`] repeated.
fn floats_v3(n: usize, data: Data, seed: u64) -> Vec<f32> {
    match data {
        Data::Own => floats(n, data, seed, -1.0, 1.0),
        Data::Constant => vec![V3_CONSTANT; n],
    }
}

/// CGEMM and ZGEMM's side: 8 · 4096³ = 5.5·10¹¹ real flops each.
const CGEMM_N: usize = 4096;
const ZGEMM_N: usize = 4096;

/// A complex element cuBLAS multiplies: single (CGEMM) or double (ZGEMM) precision.
trait Complex: DeviceRepr + ValidAsZeroBits + Copy + Unpin + 'static {
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
struct ComplexMatmul<T> {
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

fn cgemm(gpu: &CudaGpu, data: Data) -> Result<ComplexMatmul<cufft_sys::float2>> {
    complex_matmul(gpu, data, 40)
}

fn zgemm(gpu: &CudaGpu, data: Data) -> Result<ComplexMatmul<cufft_sys::double2>> {
    complex_matmul(gpu, data, 44)
}

fn complex_gemm<T: Complex>(m: &mut ComplexMatmul<T>, stream: &Stream) -> Result<()> {
    let cuda = stream.cuda()?;
    let (a, _a_done) = m.a.device_ptr(cuda);
    let (b, _b_done) = m.b.device_ptr(cuda);
    let (c, _c_done) = m.c.device_ptr_mut(cuda);
    // SAFETY: a, b and c hold SIDE² elements each; the handle is in its default (host)
    // pointer mode.
    let status = unsafe { T::gemm(*m.blas.handle(), a as *const T, b as *const T, c as *mut T) };
    status.result().map_err(cublas)
}

/// The mixed-precision GEMM's side: 2 · 8192³ = 1.1·10¹² flops (FP16 in, FP32 out).
const GEMMEX_N: usize = 8192;

/// `C = A·B`, A and B in FP16, C in FP32, FP32 compute, through `cublasGemmEx`.
struct MixedMatmul {
    blas: CudaBlas,
    a: CudaSlice<f16>,
    b: CudaSlice<f16>,
    c: CudaSlice<f32>,
}

fn gemmex_f16_f32(gpu: &CudaGpu, data: Data) -> Result<MixedMatmul> {
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

fn mixed_gemm(m: &mut MixedMatmul, stream: &Stream) -> Result<()> {
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
const TRMM_M: usize = 8192;
const TRMM_N: usize = 4096;

/// A triangular matrix product (`C = L·B`, out of place) through cuBLAS.
struct TriangularMatmul {
    blas: CudaBlas,
    l: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
}

fn strmm(gpu: &CudaGpu, data: Data) -> Result<TriangularMatmul> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let l = stream.clone_htod(&floats_v3(TRMM_M * TRMM_M, data, 50))?;
    let b = stream.clone_htod(&floats_v3(TRMM_M * TRMM_N, data, 51))?;
    let c = stream.alloc_zeros::<f32>(TRMM_M * TRMM_N)?;
    Ok(TriangularMatmul { blas, l, b, c })
}

fn triangular_matmul(t: &mut TriangularMatmul, stream: &Stream) -> Result<()> {
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

/// DGER's side: 16384² doubles (2 GiB), read and written once per call.
const DGER_N: usize = 16384;

/// A rank-1 update `A += x·yᵀ` through cuBLAS (A grows by at most 1 an element a call: far
/// from overflow in any run).
struct RankOne {
    blas: CudaBlas,
    a: CudaSlice<f64>,
    x: CudaSlice<f64>,
    y: CudaSlice<f64>,
}

fn dger(gpu: &CudaGpu, data: Data) -> Result<RankOne> {
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let a = stream.clone_htod(&doubles(DGER_N * DGER_N, data, 52))?;
    let x = stream.clone_htod(&doubles(DGER_N, data, 53))?;
    let y = stream.clone_htod(&doubles(DGER_N, data, 54))?;
    Ok(RankOne { blas, a, x, y })
}

fn rank_one_update(r: &mut RankOne, stream: &Stream) -> Result<()> {
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
const ISAMAX_N: usize = 1 << 27;
const SROT_N: usize = 1 << 26;

/// Vectors for ISAMAX and SROT, with their device-side scalars (device pointer mode: nothing
/// synchronizes in the timed launches).
struct Level1V3 {
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

fn isamax(gpu: &CudaGpu, data: Data) -> Result<Level1V3> {
    level1_v3(gpu, data, ISAMAX_N)
}

fn srot(gpu: &CudaGpu, data: Data) -> Result<Level1V3> {
    level1_v3(gpu, data, SROT_N)
}

fn index_of_max(v: &mut Level1V3, stream: &Stream) -> Result<()> {
    use energy_harness::cudarc::cublas::sys;
    let cuda = stream.cuda()?;
    let (x, _x_done) = v.x.device_ptr(cuda);
    let (i, _i_done) = v.index.device_ptr_mut(cuda);
    // SAFETY: x holds ISAMAX_N floats, i one int on the device (device pointer mode).
    let status = unsafe { sys::cublasIsamax_v2(*v.blas.handle(), ISAMAX_N as i32, x as *const f32, 1, i as *mut i32) };
    status.result().map_err(cublas)
}

fn plane_rotation(v: &mut Level1V3, stream: &Stream) -> Result<()> {
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

/// cuFFT D2Z: 2048 transforms of 8192 doubles (128 MiB in).
const D2Z_LEN: usize = 8192;
const D2Z_BATCH: usize = 2048;

/// Batched double real-to-complex FFTs, out of place.
struct DoubleRealFft {
    plan: CudaFft,
    input: CudaSlice<f64>,
    output: CudaSlice<cufft_sys::double2>,
}

fn fft_d2z(gpu: &CudaGpu, data: Data) -> Result<DoubleRealFft> {
    let stream = gpu.stream().cuda()?;
    let plan = CudaFft::plan_1d(D2Z_LEN as i32, cufft_sys::cufftType::CUFFT_D2Z, D2Z_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let input = stream.clone_htod(&doubles(D2Z_LEN * D2Z_BATCH, data, 57))?;
    let output = stream.alloc_zeros::<cufft_sys::double2>((D2Z_LEN / 2 + 1) * D2Z_BATCH)?;
    Ok(DoubleRealFft { plan, input, output })
}

fn double_real_fft(f: &mut DoubleRealFft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_d2z(&f.input, &mut f.output).map_err(cufft_error)
}

/// Floats drawn per call by protocol v3's generators (256 MiB).
const CURAND_V3_N: usize = 1 << 26;

/// A cuRAND generator of a chosen kind on the harness's stream, and the buffer it fills.
struct KindGenerator {
    generator: energy_harness::cudarc::curand::sys::curandGenerator_t,
    out: CudaSlice<f32>,
}

impl Drop for KindGenerator {
    fn drop(&mut self) {
        // SAFETY: created in `kind_generator`, destroyed once here.
        let _ = unsafe { energy_harness::cudarc::curand::result::destroy_generator(self.generator) };
    }
}

fn kind_generator(gpu: &CudaGpu, kind: energy_harness::cudarc::curand::sys::curandRngType_t) -> Result<KindGenerator> {
    use energy_harness::cudarc::curand::result;
    let stream = gpu.stream().cuda()?;
    let out = stream.alloc_zeros::<f32>(CURAND_V3_N)?;
    let generator = result::create_generator_kind(kind).map_err(curand_error)?;
    let g = KindGenerator { generator, out };
    // SAFETY: the generator was just created; the stream outlives it (the harness's).
    unsafe {
        result::set_stream(g.generator, stream.cu_stream() as _).map_err(curand_error)?;
        result::set_seed(g.generator, 37).map_err(curand_error)?;
    }
    Ok(g)
}

fn curand_philox(gpu: &CudaGpu) -> Result<KindGenerator> {
    kind_generator(gpu, energy_harness::cudarc::curand::sys::curandRngType_t::CURAND_RNG_PSEUDO_PHILOX4_32_10)
}

fn curand_mrg32k3a(gpu: &CudaGpu) -> Result<KindGenerator> {
    kind_generator(gpu, energy_harness::cudarc::curand::sys::curandRngType_t::CURAND_RNG_PSEUDO_MRG32K3A)
}

setups! {
    cgemm_own, cgemm_constant => cgemm -> ComplexMatmul<cufft_sys::float2>;
    zgemm_own, zgemm_constant => zgemm -> ComplexMatmul<cufft_sys::double2>;
    gemmex_own, gemmex_constant => gemmex_f16_f32 -> MixedMatmul;
    strmm_own, strmm_constant => strmm -> TriangularMatmul;
    dger_own, dger_constant => dger -> RankOne;
    isamax_own, isamax_constant => isamax -> Level1V3;
    srot_own, srot_constant => srot -> Level1V3;
    fft_d2z_own, fft_d2z_constant => fft_d2z -> DoubleRealFft;
}

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
