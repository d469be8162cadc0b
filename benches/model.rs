//! The model suite (issue 20): `cargo bench --bench model`.
//!
//! Two groups of kernels, measured like any `#[energy_bench]`:
//! - `train_*`: the training kernels of `ptx/model/train.cu`, each one kind of work at
//!   throughput over the whole GPU (FP32, FP16, FP64, integer, special functions,
//!   conversions, shuffles, tensor cores, shared memory, L1, L2, DRAM, resident idle warps),
//!   and a few at low occupancy or mixed, so that time and work vary apart. The energy model
//!   (`cargo run --example fit_model`) is fitted on these alone.
//! - `app_*`: application kernels of `ptx/apps/apps.cu` and the saxpy example (a reduction,
//!   a tiled SGEMM and a tensor-core GEMM each with random and with zero operands, a
//!   stencil, a hash, a transpose): never in the fit; the model predicts them. Each one's
//!   output is checked against the host's before it is measured.
//!
//! The counts the fit and the predictions use come from Nsight Compute over the same
//! binary (`--test` runs each kernel's launches without measuring):
//! `ncu --clock-control none --csv --page raw --print-units base --metrics <the model's>
//! ./model --bench --test > model-ncu.csv` (the exact metrics: `energy_suites::model`).

use std::sync::Arc;

use energy_harness::prelude::*;
use energy_harness::unstable::bench::BenchSpec;
use energy_harness::{Error, ErrorKind, KernelCode, Launcher};
use energy_suites::common::{run_benchmarks, suite_measure_options};
use half::f16;

const TRAIN_PTX: &str = include_str!("../ptx/model/train.ptx");
const APPS_PTX: &str = include_str!("../ptx/apps/apps.ptx");
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

/// Threads per block of the training kernels.
const THREADS: u32 = 256;
/// float4s of the DRAM arrays (2 GiB each, 40 times the H100's L2).
const DRAM_N4: u32 = 1 << 27;
/// float4s of the L2-resident array (16 MiB).
const L2_N4: u32 = 1 << 20;

/// How many blocks a training kernel launches.
#[derive(Clone, Copy)]
enum Occupancy {
    /// Eight blocks of 256 threads per SM: 64 warps, a full H100 SM.
    Full,
    /// One block of 256 threads per SM: eight warps (the tensor cores below the power cap).
    Mid,
    /// One block of 64 threads per SM: two warps, the latency of every unit exposed.
    Low,
}

/// A training kernel: its entry, occupancy and arguments, and its loop count. The counts
/// are fixed (about 1 to 8 ms per launch on an H100), not sized by timing: Nsight Compute
/// must count the very launch that was measured, and timing under the profiler differs.
/// Kernels that stream a DRAM array once take 0 (their length is their data).
struct Train {
    name: &'static str,
    entry: &'static str,
    occupancy: Occupancy,
    args: fn(&Buffers, u32) -> KernelArgs,
    iters: u32,
}

/// The buffers a training kernel may use (only those it needs are allocated).
struct Buffers {
    out: DeviceBuffer<u8>,
    a: Option<DeviceBuffer<u8>>,
    b: Option<DeviceBuffer<u8>>,
}

impl Buffers {
    fn a(&self) -> &DeviceBuffer<u8> {
        self.a.as_ref().expect("allocated for this kernel")
    }
    fn b(&self) -> &DeviceBuffer<u8> {
        self.b.as_ref().expect("allocated for this kernel")
    }
}

/// Arguments that start with the output buffer.
fn out(b: &Buffers) -> KernelArgs {
    KernelArgs::new().buffer(&b.out)
}

/// The output buffer and the loop count: the compute kernels' arguments.
fn out_iters(b: &Buffers, iters: u32) -> KernelArgs {
    out(b).u32(iters)
}

fn training_kernels() -> Vec<Train> {
    use Occupancy::{Full, Low, Mid};
    vec![
        Train { name: "train_ffma", entry: "m_ffma", occupancy: Full, args: out_iters, iters: 15_000 },
        Train { name: "train_ffma_low", entry: "m_ffma", occupancy: Low, args: out_iters, iters: 200_000 },
        Train { name: "train_hfma2", entry: "m_hfma2", occupancy: Full, args: out_iters, iters: 15_000 },
        Train { name: "train_dfma", entry: "m_dfma", occupancy: Full, args: out_iters, iters: 7_500 },
        Train { name: "train_imad", entry: "m_imad", occupancy: Full, args: out_iters, iters: 8_000 },
        Train { name: "train_alu", entry: "m_alu", occupancy: Full, args: out_iters, iters: 2_500 },
        Train { name: "train_alu_low", entry: "m_alu", occupancy: Low, args: out_iters, iters: 50_000 },
        Train { name: "train_mufu", entry: "m_mufu", occupancy: Full, args: out_iters, iters: 8_000 },
        Train { name: "train_cvt", entry: "m_cvt", occupancy: Full, args: out_iters, iters: 2_000 },
        Train { name: "train_shfl", entry: "m_shfl", occupancy: Full, args: out_iters, iters: 8_000 },
        Train { name: "train_hmma", entry: "m_hmma", occupancy: Full, args: out_iters, iters: 5_000 },
        Train { name: "train_hmma_mid", entry: "m_hmma", occupancy: Mid, args: out_iters, iters: 30_000 },
        Train { name: "train_hmma_low", entry: "m_hmma", occupancy: Low, args: out_iters, iters: 62_500 },
        Train { name: "train_shared_ld", entry: "m_shared_ld", occupancy: Full, args: out_iters, iters: 4_000 },
        Train { name: "train_shared_st", entry: "m_shared_st", occupancy: Full, args: out_iters, iters: 1_000 },
        Train {
            name: "train_l1_ld",
            entry: "m_l1_ld",
            occupancy: Full,
            args: |b, i| out(b).buffer(b.a()).u32(i),
            iters: 15_000,
        },
        Train {
            name: "train_l1_scatter",
            entry: "m_l1_scatter",
            occupancy: Full,
            args: |b, i| out(b).buffer(b.a()).u32(i),
            iters: 1_000,
        },
        Train {
            name: "train_l2_ld",
            entry: "m_l2_ld",
            occupancy: Full,
            args: |b, i| out(b).buffer(b.a()).u32(L2_N4).u32(i),
            iters: 1_300,
        },
        Train {
            name: "train_l2_ld_low",
            entry: "m_l2_ld",
            occupancy: Low,
            args: |b, i| out(b).buffer(b.a()).u32(L2_N4).u32(i),
            iters: 100,
        },
        Train {
            name: "train_l2_st",
            entry: "m_l2_st",
            occupancy: Full,
            args: |b, i| KernelArgs::new().buffer(b.a()).u32(L2_N4).u32(i),
            iters: 1_300,
        },
        Train {
            name: "train_dram_ld",
            entry: "m_dram_ld",
            occupancy: Full,
            args: |b, _| out(b).buffer(b.a()).u32(DRAM_N4).u32(0),
            iters: 0,
        },
        Train {
            name: "train_dram_ld_low",
            entry: "m_dram_ld",
            occupancy: Low,
            args: |b, _| out(b).buffer(b.a()).u32(DRAM_N4).u32(0),
            iters: 0,
        },
        Train {
            name: "train_dram_ld_ffma",
            entry: "m_dram_ld",
            occupancy: Full,
            args: |b, _| out(b).buffer(b.a()).u32(DRAM_N4).u32(16),
            iters: 0,
        },
        Train {
            name: "train_dram_st",
            entry: "m_dram_st",
            occupancy: Full,
            args: |b, _| KernelArgs::new().buffer(b.a()).u32(DRAM_N4).u32(7),
            iters: 0,
        },
        Train {
            name: "train_dram_copy",
            entry: "m_dram_copy",
            occupancy: Full,
            args: |b, _| KernelArgs::new().buffer(b.b()).buffer(b.a()).u32(DRAM_N4),
            iters: 0,
        },
        Train { name: "train_sleep", entry: "m_sleep", occupancy: Full, args: out_iters, iters: 4_000 },
    ]
}

/// Bytes of the first data buffer a training kernel reads or writes (0: none).
fn data_bytes(entry: &str, sm_count: u32) -> (usize, usize) {
    match entry {
        "m_l1_ld" | "m_l1_scatter" => (sm_count as usize * 8 * 8192, 0),
        "m_l2_ld" | "m_l2_st" => (L2_N4 as usize * 16, 0),
        "m_dram_ld" | "m_dram_st" => (DRAM_N4 as usize * 16, 0),
        "m_dram_copy" => (DRAM_N4 as usize * 16, DRAM_N4 as usize * 16),
        _ => (0, 0),
    }
}

fn setup_training(gpu: &Arc<CudaGpu>, t: &Train) -> Result<Launcher> {
    let module = gpu.load_ptx(TRAIN_PTX, "train.ptx", JitOptLevel::O4)?;
    let kernel = module.kernel(t.entry)?;
    let sms = gpu.properties()?.sm_count;
    let config = match t.occupancy {
        Occupancy::Full => LaunchConfig::linear(sms * 8, THREADS),
        Occupancy::Mid => LaunchConfig::linear(sms, THREADS),
        Occupancy::Low => LaunchConfig::linear(sms, 64),
    };
    let out = gpu.alloc_zeros::<u8>((sms * 8 * THREADS) as usize * 8)?;
    let (a_bytes, b_bytes) = data_bytes(t.entry, sms);
    let a = if a_bytes > 0 { Some(gpu.alloc_zeros::<u8>(a_bytes)?) } else { None };
    let b = if b_bytes > 0 { Some(gpu.alloc_zeros::<u8>(b_bytes)?) } else { None };
    let buffers = Buffers { out, a, b };
    let stream = gpu.stream().clone();
    // The data the kernels read: random words (a stream of zeros would toggle nothing).
    if let Some(a) = &buffers.a {
        let fill = module.kernel("m_fill")?;
        let words = (a.size_bytes() / 4) as u32;
        fill.launch(
            &stream,
            LaunchConfig::linear(sms * 8, THREADS),
            &KernelArgs::new().buffer(a).u32(words).u32(0x5eed),
        )?;
    }
    gpu.synchronize()?;
    let args = (t.args)(&buffers, t.iters);
    Ok(Box::new(move |stream: &Stream| {
        let _ = &buffers;
        kernel.launch(stream, config, &args)
    }))
}

/// Deterministic pseudo-random numbers (splitmix64) for the applications' inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1) with every bit of the FP32 mantissa random (data of full entropy,
    /// as computed data is: the energy of a kernel depends on how its bits toggle).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / 8_388_608.0 - 1.0
    }
}

fn wrong(kernel: &str, what: String) -> Error {
    Error::new(ErrorKind::WrongResult, format!("{kernel}: {what}"))
}

/// Checks `got` against `want` within `tol` (absolute).
fn check_close(kernel: &str, at: &str, got: f64, want: f64, tol: f64) -> Result<()> {
    if (got - want).abs() <= tol {
        Ok(())
    } else {
        Err(wrong(kernel, format!("{at}: the GPU gave {got}, the host {want} (tolerance {tol:e})")))
    }
}

/// What an application launch needs.
struct App {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    /// The buffers the arguments point to, kept alive.
    _buffers: Vec<Box<dyn std::any::Any>>,
}

fn launch_app(app: &mut App, stream: &Stream) -> Result<()> {
    app.kernel.launch(stream, app.config, &app.args)
}

fn floats_of(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Runs a first launch to completion; `true` when its output can be checked (a real GPU).
fn launch_once(gpu: &CudaGpu, kernel: &Kernel, config: LaunchConfig, args: &KernelArgs) -> Result<bool> {
    kernel.launch(gpu.stream(), config, args)?;
    gpu.synchronize()?;
    Ok(!gpu.is_checked())
}

/// Checks the sampled elements of C = A B (row-major n x n) within `relative` of the sum of
/// the products' magnitudes.
fn check_gemm(kernel: &str, c: &[f32], a: &[f32], b: &[f32], n: usize, relative: f64) -> Result<()> {
    for (row, col) in gemm_samples(n) {
        let (want, magnitude) = gemm_element(a, b, n, row, col);
        check_close(
            kernel,
            &format!("C[{row}][{col}]"),
            f64::from(c[row * n + col]),
            want,
            relative * magnitude + 1e-6,
        )?;
    }
    Ok(())
}

fn apps_kernel(gpu: &CudaGpu, entry: &str) -> Result<Kernel> {
    gpu.load_ptx(APPS_PTX, "apps.ptx", JitOptLevel::O4)?.kernel(entry)
}

/// Sum of 128 Mi floats (512 MiB).
fn setup_reduce(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 1 << 27;
    let kernel = apps_kernel(gpu, "reduce_sum")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let mut rng = Rng(1);
    let data: Vec<f32> = (0..N).map(|_| rng.unit()).collect();
    let want: f64 = data.iter().map(|&x| f64::from(x)).sum();
    let input = gpu.upload(&data)?;
    let partial = gpu.alloc_zeros::<u8>(blocks as usize * 4)?;
    let config = LaunchConfig::linear(blocks, 256);
    let args = KernelArgs::new().buffer(&partial).buffer(&input).u32((N / 4) as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let got: f64 = floats_of(&gpu.download(&partial)?).iter().map(|&x| f64::from(x)).sum();
        check_close("reduce_sum", "the sum", got, want, 1e-4 * N as f64 / 1e3)?;
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(input), Box::new(partial)] })
}

/// Host reference of one element of C = A B (row-major n x n), in f64.
fn gemm_element(a: &[f32], b: &[f32], n: usize, row: usize, col: usize) -> (f64, f64) {
    let (mut sum, mut magnitude) = (0.0, 0.0);
    for k in 0..n {
        let p = f64::from(a[row * n + k]) * f64::from(b[k * n + col]);
        sum += p;
        magnitude += p.abs();
    }
    (sum, magnitude)
}

/// Elements of C checked against the host: corners and a spread of others.
fn gemm_samples(n: usize) -> Vec<(usize, usize)> {
    vec![(0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1), (n / 2, n / 3), (n / 3 + 7, n / 2 + 5), (17, n - 33)]
}

fn gemm_inputs(n: usize, zero: bool, seed: u64) -> (Vec<f32>, Vec<f32>) {
    if zero {
        return (vec![0.0; n * n], vec![0.0; n * n]);
    }
    let mut rng = Rng(seed);
    ((0..n * n).map(|_| rng.unit()).collect(), (0..n * n).map(|_| rng.unit()).collect())
}

/// Tiled FP32 GEMM, n = 2048.
fn setup_sgemm(gpu: &CudaGpu, zero: bool) -> Result<App> {
    const N: usize = 2048;
    let kernel = apps_kernel(gpu, "sgemm")?;
    let (a, b) = gemm_inputs(N, zero, 2);
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let dc = gpu.alloc_zeros::<u8>(N * N * 4)?;
    let config = LaunchConfig { grid: ((N / 64) as u32, (N / 64) as u32, 1), block: (256, 1, 1), shared_mem_bytes: 0 };
    let args = KernelArgs::new().buffer(&dc).buffer(&da).buffer(&db).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        check_gemm("sgemm", &floats_of(&gpu.download(&dc)?), &a, &b, N, 1e-4)?;
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(dc), Box::new(da), Box::new(db)] })
}

/// Tensor-core GEMM (FP16 in, FP32 accumulate), n = 4096.
fn setup_tgemm(gpu: &CudaGpu, zero: bool) -> Result<App> {
    const N: usize = 4096;
    let kernel = apps_kernel(gpu, "tgemm")?;
    let (a, b) = gemm_inputs(N, zero, 3);
    // The operands as the GPU sees them: rounded to FP16.
    let round = |v: Vec<f32>| -> Vec<f32> { v.into_iter().map(|x| f16::from_f32(x).to_f32()).collect() };
    let (a, b) = (round(a), round(b));
    // Bt[c][k] = B[k][c]: both operands run along k.
    let mut bt = vec![0.0f32; N * N];
    for k in 0..N {
        for c in 0..N {
            bt[c * N + k] = b[k * N + c];
        }
    }
    let to_f16 = |v: &[f32]| -> Vec<u16> { v.iter().map(|&x| f16::from_f32(x).to_bits()).collect() };
    let (da, db) = (gpu.upload(&to_f16(&a))?, gpu.upload(&to_f16(&bt))?);
    let dc = gpu.alloc_zeros::<u8>(N * N * 4)?;
    let config = LaunchConfig { grid: ((N / 64) as u32, (N / 64) as u32, 1), block: (128, 1, 1), shared_mem_bytes: 0 };
    let args = KernelArgs::new().buffer(&dc).buffer(&da).buffer(&db).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        check_gemm("tgemm", &floats_of(&gpu.download(&dc)?), &a, &b, N, 1e-3)?;
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(dc), Box::new(da), Box::new(db)] })
}

/// One 5-point Jacobi sweep, 8192 x 8192.
fn setup_stencil(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 8192;
    let kernel = apps_kernel(gpu, "stencil5")?;
    let mut rng = Rng(4);
    let grid: Vec<f32> = (0..N * N).map(|_| rng.unit()).collect();
    let input = gpu.upload(&grid)?;
    let output = gpu.alloc_zeros::<u8>(N * N * 4)?;
    let config = LaunchConfig { grid: ((N / 32) as u32, (N / 8) as u32, 1), block: (32, 8, 1), shared_mem_bytes: 0 };
    let args = KernelArgs::new().buffer(&output).buffer(&input).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let out = floats_of(&gpu.download(&output)?);
        for (x, y) in [(0, 0), (1, 1), (N / 2, N / 3), (N - 2, N - 2), (N - 1, 5), (77, N - 1)] {
            let i = y * N + x;
            let want = if x == 0 || y == 0 || x == N - 1 || y == N - 1 {
                grid[i]
            } else {
                0.25 * ((grid[i - 1] + grid[i + 1]) + (grid[i - N] + grid[i + N]))
            };
            check_close("stencil5", &format!("({x}, {y})"), f64::from(out[i]), f64::from(want), 1e-6)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(output), Box::new(input)] })
}

/// MurmurHash3's finalizer, `rounds` times, as the kernel runs it.
fn hash_host(key: u32, rounds: u32, seed: u32) -> u32 {
    let mut h = key ^ seed;
    for r in 0..rounds {
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^= h >> 16;
        h = h.wrapping_add(r);
    }
    h
}

/// 64 Mi keys, 8 rounds each.
fn setup_hash(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 1 << 26;
    const ROUNDS: u32 = 8;
    const SEED: u32 = 0x1234_5678;
    let kernel = apps_kernel(gpu, "hash_keys")?;
    let mut rng = Rng(5);
    let keys: Vec<u32> = (0..N).map(|_| rng.next() as u32).collect();
    let input = gpu.upload(&keys)?;
    let output = gpu.alloc_zeros::<u8>(N * 4)?;
    let config = LaunchConfig::linear(gpu.properties()?.sm_count * 8, 256);
    let args = KernelArgs::new().buffer(&output).buffer(&input).u32(N as u32).u32(ROUNDS).u32(SEED);
    if launch_once(gpu, &kernel, config, &args)? {
        let out = gpu.download(&output)?;
        for i in [0, 1, N / 2, N - 1, 12_345] {
            let got = u32::from_le_bytes([out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]]);
            let want = hash_host(keys[i], ROUNDS, SEED);
            if got != want {
                return Err(wrong("hash_keys", format!("key {i}: the GPU gave {got:#x}, the host {want:#x}")));
            }
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(output), Box::new(input)] })
}

/// Transpose of an 8192 x 8192 float matrix.
fn setup_transpose(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 8192;
    let kernel = apps_kernel(gpu, "transpose")?;
    let mut rng = Rng(6);
    let m: Vec<f32> = (0..N * N).map(|_| rng.unit()).collect();
    let input = gpu.upload(&m)?;
    let output = gpu.alloc_zeros::<u8>(N * N * 4)?;
    let config = LaunchConfig { grid: ((N / 32) as u32, (N / 32) as u32, 1), block: (32, 8, 1), shared_mem_bytes: 0 };
    let args = KernelArgs::new().buffer(&output).buffer(&input).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let out = floats_of(&gpu.download(&output)?);
        for (r, c) in [(0, 0), (0, N - 1), (N - 1, 3), (N / 2, N / 3), (4097, 31)] {
            check_close("transpose", &format!("({r}, {c})"), f64::from(out[c * N + r]), f64::from(m[r * N + c]), 0.0)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(output), Box::new(input)] })
}

/// saxpy over 16 Mi floats (the example bench's kernel).
fn setup_saxpy(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 1 << 24;
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let mut rng = Rng(7);
    let x: Vec<f32> = (0..N).map(|_| rng.unit()).collect();
    let y: Vec<f32> = (0..N).map(|_| rng.unit()).collect();
    let (dx, dy) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let config = LaunchConfig::linear(N.div_ceil(256) as u32, 256);
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&dx).buffer(&dy);
    if launch_once(gpu, &kernel, config, &args)? {
        let got = gpu.download(&dy)?;
        for i in [0, N / 2, N - 1] {
            check_close("saxpy", &format!("y[{i}]"), f64::from(got[i]), f64::from(1e-3f32.mul_add(x[i], y[i])), 1e-6)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(dx), Box::new(dy)] })
}

/// y = A x, 16 Ki x 16 Ki floats (1 GiB): a warp per row.
fn setup_sgemv(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 1 << 14;
    let kernel = apps_kernel(gpu, "sgemv")?;
    let mut rng = Rng(8);
    let a: Vec<f32> = (0..N * N).map(|_| rng.unit()).collect();
    let x: Vec<f32> = (0..N).map(|_| rng.unit()).collect();
    let (da, dx) = (gpu.upload(&a)?, gpu.upload(&x)?);
    let dy = gpu.alloc_zeros::<u8>(N * 4)?;
    let config = LaunchConfig::linear((N * 32 / 256) as u32, 256);
    let args = KernelArgs::new().buffer(&dy).buffer(&da).buffer(&dx).u32(N as u32).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let y = floats_of(&gpu.download(&dy)?);
        for r in [0, 1, N / 2, N - 1] {
            let terms = (0..N).map(|k| f64::from(a[r * N + k]) * f64::from(x[k]));
            let (want, magnitude) = terms.fold((0.0, 0.0), |(s, m), p| (s + p, m + p.abs()));
            check_close("sgemv", &format!("y[{r}]"), f64::from(y[r]), want, 1e-5 * magnitude + 1e-6)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(dy), Box::new(da), Box::new(dx)] })
}

/// One 7-point Jacobi sweep, 512^3.
fn setup_stencil7(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 512;
    let kernel = apps_kernel(gpu, "stencil7")?;
    let mut rng = Rng(9);
    let grid: Vec<f32> = (0..N * N * N).map(|_| rng.unit()).collect();
    let input = gpu.upload(&grid)?;
    let output = gpu.alloc_zeros::<u8>(N * N * N * 4)?;
    let config =
        LaunchConfig { grid: ((N / 32) as u32, (N / 8) as u32, N as u32), block: (32, 8, 1), shared_mem_bytes: 0 };
    let args = KernelArgs::new().buffer(&output).buffer(&input).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let out = floats_of(&gpu.download(&output)?);
        let (n, plane) = (N, N * N);
        for (x, y, z) in [(0, 0, 0), (1, 1, 1), (N / 2, N / 3, N / 4), (N - 2, N - 2, N - 2), (5, N - 1, 7)] {
            let i = (z * N + y) * N + x;
            let face = x == 0 || y == 0 || z == 0 || x == N - 1 || y == N - 1 || z == N - 1;
            let want = if face {
                grid[i]
            } else {
                (1.0f32 / 6.0)
                    * (((grid[i - 1] + grid[i + 1]) + (grid[i - n] + grid[i + n]))
                        + (grid[i - plane] + grid[i + plane]))
            };
            check_close("stencil7", &format!("({x}, {y}, {z})"), f64::from(out[i]), f64::from(want), 1e-6)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(output), Box::new(input)] })
}

/// Softmax of each row of a 64 Ki x 1024 matrix.
fn setup_softmax(gpu: &CudaGpu) -> Result<App> {
    const ROWS: usize = 1 << 16;
    const COLS: usize = 1024;
    let kernel = apps_kernel(gpu, "softmax")?;
    let mut rng = Rng(10);
    let m: Vec<f32> = (0..ROWS * COLS).map(|_| 4.0 * rng.unit()).collect();
    let input = gpu.upload(&m)?;
    let output = gpu.alloc_zeros::<u8>(ROWS * COLS * 4)?;
    let config = LaunchConfig::linear(ROWS as u32, 256);
    let args = KernelArgs::new().buffer(&output).buffer(&input);
    if launch_once(gpu, &kernel, config, &args)? {
        let out = floats_of(&gpu.download(&output)?);
        for r in [0, ROWS / 2, ROWS - 1] {
            let row = &m[r * COLS..(r + 1) * COLS];
            let max = row.iter().fold(f64::MIN, |a, &b| a.max(f64::from(b)));
            let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
            for c in [0, 1, COLS / 2, COLS - 1] {
                let want = (f64::from(row[c]) - max).exp() / sum;
                check_close("softmax", &format!("({r}, {c})"), f64::from(out[r * COLS + c]), want, 1e-5 * want + 1e-9)?;
            }
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(output), Box::new(input)] })
}

/// A 32-tap FIR filter over 64 Mi samples.
fn setup_fir(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 1 << 26;
    const TAPS: usize = 32;
    let kernel = apps_kernel(gpu, "fir32")?;
    let mut rng = Rng(11);
    let x: Vec<f32> = (0..N + TAPS).map(|_| rng.unit()).collect();
    let h: Vec<f32> = (0..TAPS).map(|_| rng.unit() / TAPS as f32).collect();
    let (dx, dh) = (gpu.upload(&x)?, gpu.upload(&h)?);
    let dy = gpu.alloc_zeros::<u8>(N * 4)?;
    let config = LaunchConfig::linear((N / 256) as u32, 256);
    let args = KernelArgs::new().buffer(&dy).buffer(&dx).buffer(&dh).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let y = floats_of(&gpu.download(&dy)?);
        for i in [0, 255, 256, N / 2 + 17, N - 1] {
            let terms = (0..TAPS).map(|k| f64::from(h[k]) * f64::from(x[i + k]));
            let (want, magnitude) = terms.fold((0.0, 0.0), |(s, m), p| (s + p, m + p.abs()));
            check_close("fir32", &format!("y[{i}]"), f64::from(y[i]), want, 1e-6 * magnitude + 1e-9)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(dy), Box::new(dx), Box::new(dh)] })
}

/// Tiled FP64 GEMM, n = 2048.
fn setup_dgemm(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 2048;
    let kernel = apps_kernel(gpu, "dgemm")?;
    let mut rng = Rng(12);
    let a: Vec<f64> = (0..N * N).map(|_| f64::from(rng.unit())).collect();
    let b: Vec<f64> = (0..N * N).map(|_| f64::from(rng.unit())).collect();
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let dc = gpu.alloc_zeros::<u8>(N * N * 8)?;
    let config = LaunchConfig { grid: ((N / 32) as u32, (N / 32) as u32, 1), block: (16, 16, 1), shared_mem_bytes: 0 };
    let args = KernelArgs::new().buffer(&dc).buffer(&da).buffer(&db).u32(N as u32);
    if launch_once(gpu, &kernel, config, &args)? {
        let bytes = gpu.download(&dc)?;
        let c: Vec<f64> = bytes.chunks_exact(8).map(|w| f64::from_le_bytes(w.try_into().unwrap_or([0; 8]))).collect();
        for (row, col) in gemm_samples(N) {
            let terms = (0..N).map(|k| a[row * N + k] * b[k * N + col]);
            let (want, magnitude) = terms.fold((0.0, 0.0), |(s, m), p: f64| (s + p, m + p.abs()));
            check_close("dgemm", &format!("C[{row}][{col}]"), c[row * N + col], want, 1e-12 * magnitude)?;
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(dc), Box::new(da), Box::new(db)] })
}

/// Bitonic sort of each 1024-key chunk of 64 Mi random keys.
fn setup_bitonic(gpu: &CudaGpu) -> Result<App> {
    const N: usize = 1 << 26;
    const CHUNK: usize = 1024;
    let kernel = apps_kernel(gpu, "bitonic1024")?;
    let mut rng = Rng(13);
    let keys: Vec<u32> = (0..N).map(|_| rng.next() as u32).collect();
    let input = gpu.upload(&keys)?;
    let output = gpu.alloc_zeros::<u8>(N * 4)?;
    let config = LaunchConfig::linear((N / CHUNK) as u32, 512);
    let args = KernelArgs::new().buffer(&output).buffer(&input);
    if launch_once(gpu, &kernel, config, &args)? {
        let out = gpu.download(&output)?;
        for chunk in [0, N / CHUNK / 2, N / CHUNK - 1] {
            let got: Vec<u32> = out[chunk * CHUNK * 4..(chunk + 1) * CHUNK * 4]
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect();
            let mut want = keys[chunk * CHUNK..(chunk + 1) * CHUNK].to_vec();
            want.sort_unstable();
            if got != want {
                return Err(wrong("bitonic1024", format!("chunk {chunk} is not its keys sorted")));
            }
        }
    }
    Ok(App { kernel, config, args, _buffers: vec![Box::new(output), Box::new(input)] })
}

fn app(name: &str, setup: fn(&CudaGpu) -> Result<App>) -> BenchSpec {
    BenchSpec::new(name, file!(), line!())
        .code(KernelCode::with_setup(setup, launch_app))
        .options(suite_measure_options())
        .without_time_bench()
}

fn main() -> std::process::ExitCode {
    let mut specs: Vec<BenchSpec> = training_kernels()
        .into_iter()
        .map(|t| {
            let name = t.name;
            let t = Arc::new(t);
            let code = KernelCode::from_fn(move |gpu: &Arc<CudaGpu>| {
                setup_training(gpu, &t).map_err(|e| e.context(format!("{} ({})", t.name, t.entry)))
            });
            BenchSpec::new(name, file!(), line!()).code(code).options(suite_measure_options()).without_time_bench()
        })
        .collect();
    specs.extend([
        app("app_saxpy", setup_saxpy),
        app("app_reduce", setup_reduce),
        app("app_sgemm_random", |g| setup_sgemm(g, false)),
        app("app_sgemm_zero", |g| setup_sgemm(g, true)),
        app("app_tgemm_random", |g| setup_tgemm(g, false)),
        app("app_tgemm_zero", |g| setup_tgemm(g, true)),
        app("app_stencil", setup_stencil),
        app("app_hash", setup_hash),
        app("app_transpose", setup_transpose),
        app("app_sgemv", setup_sgemv),
        app("app_stencil7", setup_stencil7),
        app("app_softmax", setup_softmax),
        app("app_fir", setup_fir),
        app("app_dgemm", setup_dgemm),
        app("app_bitonic", setup_bitonic),
    ]);
    // Without a GPU: one line for the kernels checked (`--verbose` lists each).
    let outcome = run_benchmarks(specs, |_| Ok(false));
    outcome.say_checked("model", "kernel", &[]);
    outcome.exit_code()
}
