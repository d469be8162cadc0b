//! Sum reduction of f32 (one partial sum per block, dynamic shared memory of block * 4
//! bytes) over block sizes 64 … 1024, at N = 2^24 and N = 2^26, plus every
//! point as a plain benchmark (block 256 first, the others added after the first GPU run)
//! for the 1 % agreement check between a sweep point and the same configuration written
//! without `args`.

use energy_harness::prelude::*;

const N24: usize = 1 << 24; // 16 Mi floats: 64 MiB
const N26: usize = 1 << 26; // 64 Mi floats: 256 MiB
const REDUCE_PTX: &str = include_str!("../ptx/reduce.ptx");

struct Reduce {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _input: DeviceBuffer<f32>,
    _partial: DeviceBuffer<f32>,
}

fn make(gpu: &CudaGpu, n: usize, block: u32) -> Result<Reduce> {
    let kernel = gpu.load_ptx(REDUCE_PTX, "reduce.ptx", JitOptLevel::O4)?.kernel("reduce_sum")?;
    let blocks = n.div_ceil(block as usize);
    let input = gpu.upload(&vec![1.0f32; n])?;
    let partial = gpu.upload(&vec![0.0f32; blocks])?; // one float per block
    let args = KernelArgs::new().u32(n as u32).buffer(&input).buffer(&partial);
    let config = LaunchConfig { shared_mem_bytes: block * 4, ..LaunchConfig::linear(blocks as u32, block) };
    Ok(Reduce { kernel, config, args, _input: input, _partial: partial })
}

fn setup_n24(gpu: &CudaGpu, block: &u32) -> Result<Reduce> {
    make(gpu, N24, *block)
}
fn setup_n26(gpu: &CudaGpu, block: &u32) -> Result<Reduce> {
    make(gpu, N26, *block)
}
fn setup_n24_b256(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N24, 256)
}
fn setup_n26_b256(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N26, 256)
}

// The simulated GPU's model. MADE UP, NOT A MEASUREMENT: a plausible shape for a
// memory-bound reduction on an H100-class part (small blocks reach less of the ~3.35 TB/s,
// 1024-thread blocks lose some to the long barrier tree), 3 µs of launch and tail per
// launch, and a power that rises with the bandwidth reached. Only there so that the whole
// harness runs without a GPU; on a GPU these numbers are not used.
fn sim_efficiency(block: u32) -> f64 {
    match block {
        64 => 0.62,
        128 => 0.80,
        256 => 0.90,
        512 => 0.91,
        _ => 0.86,
    }
}
fn sim_seconds(n: usize, block: u32) -> f64 {
    3.0e-6 + (4 * n) as f64 / (3.35e12 * sim_efficiency(block))
}
fn sim_watts(block: u32) -> f64 {
    250.0 + 220.0 * sim_efficiency(block)
}

/// N = 2^24, one benchmark per block size: `reduce_n24/64` … `reduce_n24/1024`.
#[energy_bench(args = [64, 128, 256, 512, 1024], setup = setup_n24, ops = N24, bytes = 4 * N24,
               sim(seconds = sim_seconds(N24, block), watts = sim_watts(block)))]
fn reduce_n24(s: &mut Reduce, stream: &Stream, block: &u32) -> Result<()> {
    debug_assert_eq!(s.config.block.0, *block);
    s.kernel.launch(stream, s.config, &s.args)
}

/// N = 2^26, one benchmark per block size: `reduce_n26/64` … `reduce_n26/1024`.
#[energy_bench(args = [64, 128, 256, 512, 1024], setup = setup_n26, ops = N26, bytes = 4 * N26,
               sim(seconds = sim_seconds(N26, block), watts = sim_watts(block)))]
fn reduce_n26(s: &mut Reduce, stream: &Stream, block: &u32) -> Result<()> {
    debug_assert_eq!(s.config.block.0, *block);
    s.kernel.launch(stream, s.config, &s.args)
}

/// The same configuration as `reduce_n24/256`, written without `args`.
#[energy_bench(setup = setup_n24_b256, ops = N24, bytes = 4 * N24,
               sim(seconds = sim_seconds(N24, 256), watts = sim_watts(256)))]
fn reduce_n24_b256_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// The same configuration as `reduce_n26/256`, written without `args`.
#[energy_bench(setup = setup_n26_b256, ops = N26, bytes = 4 * N26,
               sim(seconds = sim_seconds(N26, 256), watts = sim_watts(256)))]
fn reduce_n26_b256_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

// The other eight configurations as plain benchmarks too (added on 2026-11-29 after the first
// GPU run, which had the block-256 twins only), so that every point of each sweep has its twin.

fn setup_n24_b64(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N24, 64)
}

/// The same configuration as `reduce_n24/64`, written without `args`.
#[energy_bench(setup = setup_n24_b64, ops = N24, bytes = 4 * N24,
               sim(seconds = sim_seconds(N24, 64), watts = sim_watts(64)))]
fn reduce_n24_b64_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n24_b128(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N24, 128)
}

/// The same configuration as `reduce_n24/128`, written without `args`.
#[energy_bench(setup = setup_n24_b128, ops = N24, bytes = 4 * N24,
               sim(seconds = sim_seconds(N24, 128), watts = sim_watts(128)))]
fn reduce_n24_b128_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n24_b512(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N24, 512)
}

/// The same configuration as `reduce_n24/512`, written without `args`.
#[energy_bench(setup = setup_n24_b512, ops = N24, bytes = 4 * N24,
               sim(seconds = sim_seconds(N24, 512), watts = sim_watts(512)))]
fn reduce_n24_b512_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n24_b1024(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N24, 1024)
}

/// The same configuration as `reduce_n24/1024`, written without `args`.
#[energy_bench(setup = setup_n24_b1024, ops = N24, bytes = 4 * N24,
               sim(seconds = sim_seconds(N24, 1024), watts = sim_watts(1024)))]
fn reduce_n24_b1024_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n26_b64(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N26, 64)
}

/// The same configuration as `reduce_n26/64`, written without `args`.
#[energy_bench(setup = setup_n26_b64, ops = N26, bytes = 4 * N26,
               sim(seconds = sim_seconds(N26, 64), watts = sim_watts(64)))]
fn reduce_n26_b64_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n26_b128(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N26, 128)
}

/// The same configuration as `reduce_n26/128`, written without `args`.
#[energy_bench(setup = setup_n26_b128, ops = N26, bytes = 4 * N26,
               sim(seconds = sim_seconds(N26, 128), watts = sim_watts(128)))]
fn reduce_n26_b128_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n26_b512(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N26, 512)
}

/// The same configuration as `reduce_n26/512`, written without `args`.
#[energy_bench(setup = setup_n26_b512, ops = N26, bytes = 4 * N26,
               sim(seconds = sim_seconds(N26, 512), watts = sim_watts(512)))]
fn reduce_n26_b512_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

fn setup_n26_b1024(gpu: &CudaGpu) -> Result<Reduce> {
    make(gpu, N26, 1024)
}

/// The same configuration as `reduce_n26/1024`, written without `args`.
#[energy_bench(setup = setup_n26_b1024, ops = N26, bytes = 4 * N26,
               sim(seconds = sim_seconds(N26, 1024), watts = sim_watts(1024)))]
fn reduce_n26_b1024_plain(s: &mut Reduce, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

energy_main!();
