//! The model suite's application kernels (`app_*`): each one's setup, its inputs, and the
//! host's check of its output before it is measured.

use energy_harness::prelude::*;
use energy_harness::unstable::bench::BenchSpec;
use energy_harness::{Error, ErrorKind, KernelCode};
use half::f16;
use kernel_energy::common::suite_measure_options;

const APPS_PTX: &str = include_str!("../../ptx/apps/apps.ptx");
const SAXPY_PTX: &str = include_str!("../../../ptx/examples/saxpy.ptx");

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

/// The application benchmarks, in the order they run.
pub fn specs() -> Vec<BenchSpec> {
    vec![
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
    ]
}
