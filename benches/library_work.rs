//! Library work (issue 43): GPU work the harness does not launch, measured right. The
//! FMA loop of `launch_sizes` (20 µs and 2 ms per launch on an H100), enqueued as a library
//! would: on a stream of its own, from a `CudaContext` of its own (the device's primary
//! context, as candle, cubecl and any cudarc user retain it), asynchronously. Beside each,
//! the same loop on the harness's stream, in the same process.
//!
//! - `any_stream`: batches end with a context-wide synchronize (the library's stream included);
//! - `wait = sync`: the library's own wait (here its stream's synchronize), then the same.
//!
//! Raw cudarc runs only on a GPU: without one these are *not run*. The same code without
//! `any_stream` or `wait` is refused (`benches/library_work_unwaited.rs`).

use energy_harness::prelude::*;
use energy_harness::unstable::cuda::FMA_LOOP_PTX;

#[path = "common/library.rs"]
mod library;
use library::{fma_loop_on_own_stream, OwnStreamFma, BLOCKS, ITERS_PER_MS, THREADS};

fn own_20us(gpu: &CudaGpu) -> Result<OwnStreamFma> {
    fma_loop_on_own_stream(gpu, 0.02)
}
fn own_2ms(gpu: &CudaGpu) -> Result<OwnStreamFma> {
    fma_loop_on_own_stream(gpu, 2.0)
}

/// The library's own wait: its stream's synchronize.
fn sync(s: &mut OwnStreamFma) -> Result<()> {
    s.synchronize()
}

#[energy_bench(setup = own_20us, any_stream)]
fn own_stream_20us(s: &mut OwnStreamFma, _stream: &Stream) -> Result<()> {
    s.launch()
}

#[energy_bench(setup = own_20us, wait = sync)]
fn own_stream_20us_wait(s: &mut OwnStreamFma, _stream: &Stream) -> Result<()> {
    s.launch()
}

#[energy_bench(setup = own_2ms, any_stream)]
fn own_stream_2ms(s: &mut OwnStreamFma, _stream: &Stream) -> Result<()> {
    s.launch()
}

/// The same loop on the harness's stream, for comparison in the same process.
struct HarnessFma {
    kernel: Kernel,
    args: KernelArgs,
    _out: DeviceBuffer<f32>,
}

fn harness_loop(gpu: &CudaGpu, milliseconds: f64) -> Result<HarnessFma> {
    let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
    let out = gpu.alloc_zeros::<f32>((BLOCKS * THREADS) as usize)?;
    let iterations = (milliseconds * ITERS_PER_MS).round().max(1.0) as u32;
    Ok(HarnessFma { kernel, args: KernelArgs::new().buffer(&out).u32(iterations), _out: out })
}
fn harness_20us(gpu: &CudaGpu) -> Result<HarnessFma> {
    harness_loop(gpu, 0.02)
}
fn harness_2ms(gpu: &CudaGpu) -> Result<HarnessFma> {
    harness_loop(gpu, 2.0)
}

#[energy_bench(setup = harness_20us, sim(seconds = 20e-6, watts = 336.0))]
fn harness_stream_20us(s: &mut HarnessFma, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, LaunchConfig::linear(BLOCKS, THREADS), &s.args)
}

#[energy_bench(setup = harness_2ms, sim(seconds = 2e-3, watts = 336.0))]
fn harness_stream_2ms(s: &mut HarnessFma, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, LaunchConfig::linear(BLOCKS, THREADS), &s.args)
}

energy_main!();
