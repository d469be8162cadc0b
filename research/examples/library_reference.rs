//! The independent reference for library work (issue 43): the FMA loop on a stream of its
//! own (as `benches/library_work.rs` launches it), timed with the stream's own synchronize
//! on the host clock and metered with NVML's energy counter at its ticks. Nothing of the
//! harness's measurement is used: its own CUDA context (cudarc), its own NVML handle, its
//! own sampler thread, its own arithmetic.
//!
//! ```sh
//! cargo run --release --example library_reference -- --ms 0.02 [--seconds 8] [--out ref.json]
//! ```
//!
//! Method: 1 s at rest, 0.5 s of warm-up calls, then `--seconds` of back-to-back calls with a
//! stream synchronize every ~50 ms, then 1 s at rest; a thread reads the counter every millisecond and keeps
//! the times it changed (its ticks). Energy per call: the counter's difference between the
//! first tick 1 s into the calls and the last tick 0.5 s before their end, over the calls
//! completed between those ticks (interpolated from the synchronizes' times). Time per
//! call likewise. Active idle: the counter's power over the ticks of the second at rest
//! after the calls and of the last 0.8 s at rest before the warm-up (their mean), as the
//! harness subtracts the idle around its busy stretch (its warm-up included); dynamic per call = energy per call − idle × time per call.
//! Needs a GPU (ENERGY_REQUIRE_GPU is implied).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use energy_harness::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use energy_harness::cudarc::nvrtc::Ptx;
use energy_harness::unstable::cuda::FMA_LOOP_PTX;
use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::Nvml;
use serde::Serialize;

#[path = "support/nvml_counter.rs"]
mod nvml_counter;
use nvml_counter::{arg, idle_power_w, sample_counter, ticks_between, warm_up};

const BLOCKS: u32 = 132 * 8;
const THREADS: u32 = 256;
const ITERS_PER_MS: f64 = 7170.0;

#[derive(Serialize)]
struct Reference {
    ms_asked: f64,
    calls: u64,
    seconds: f64,
    energy_per_call_j: f64,
    dynamic_per_call_j: f64,
    time_per_call_s: f64,
    busy_power_w: f64,
    idle_before_w: f64,
    idle_after_w: f64,
    ticks_used: usize,
    /// Per window of ~150 ms of calls closed as the harness closes library work (the calls,
    /// then a context-wide synchronize, on the host clock): the host time not covered by the
    /// GPU's own span of the calls (CUDA events on the library's stream around them), s.
    boundary_uncovered_s: Vec<f64>,
    temperature_after_c: u32,
    gpu: String,
    uuid: String,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("library_reference: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let ms: f64 = arg("--ms").unwrap_or_else(|| "0.02".into()).parse().map_err(|e| format!("--ms: {e}"))?;
    let seconds: f64 = arg("--seconds").unwrap_or_else(|| "8".into()).parse().map_err(|e| format!("--seconds: {e}"))?;
    let nvml = Nvml::init().map_err(|e| format!("NVML: {e}"))?;
    let device = nvml.device_by_index(0).map_err(|e| format!("NVML device 0: {e}"))?;
    let (name, uuid) = (device.name().unwrap_or_default(), device.uuid().unwrap_or_default());
    let ctx = CudaContext::new(0).map_err(|e| format!("CUDA: {e}"))?;
    let stream = ctx.new_stream().map_err(|e| format!("stream: {e}"))?;
    let module = ctx.load_module(Ptx::from_src(FMA_LOOP_PTX)).map_err(|e| format!("module: {e}"))?;
    let function = module.load_function("fma_loop").map_err(|e| format!("function: {e}"))?;
    let mut out = stream.alloc_zeros::<f32>((BLOCKS * THREADS) as usize).map_err(|e| format!("alloc: {e}"))?;
    let iterations = (ms * ITERS_PER_MS).round().max(1.0) as u32;
    let config = LaunchConfig { grid_dim: (BLOCKS, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut launch = || -> Result<(), String> {
        let mut b = stream.launch_builder(&function);
        b.arg(&mut out).arg(&iterations);
        // SAFETY: fma_loop(float* out, u32 iterations) writes one float per thread; `out` holds them all.
        unsafe { b.launch(config) }.map(|_| ()).map_err(|e| format!("launch: {e}"))
    };
    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let (ticks, calls_at, warm_from) = std::thread::scope(|scope| -> Result<_, String> {
        let sampler = {
            let stop = stop.clone();
            let device = &device;
            scope.spawn(move || sample_counter(device, &stop, t0))
        };
        // A second at rest (the idle before), then half a second of warm-up calls (which also
        // sizes the batches between synchronizes to ~50 ms), then the calls measured.
        std::thread::sleep(Duration::from_secs(1));
        let warm_from = t0.elapsed().as_secs_f64();
        let per_call = warm_up(16, &mut launch, || stream.synchronize().map_err(|e| format!("sync: {e}")))?;
        let batch = ((0.05 / per_call).round() as u64).max(1);
        let mut calls_at: Vec<(f64, u64)> = vec![(t0.elapsed().as_secs_f64(), 0)];
        let mut calls = 0u64;
        let busy_start = Instant::now();
        while busy_start.elapsed().as_secs_f64() < seconds {
            for _ in 0..batch {
                launch()?;
            }
            stream.synchronize().map_err(|e| format!("sync: {e}"))?;
            calls += batch;
            calls_at.push((t0.elapsed().as_secs_f64(), calls));
        }
        std::thread::sleep(Duration::from_secs(1));
        stop.store(true, Ordering::Relaxed);
        let ticks = sampler.join().map_err(|_| "the sampler thread panicked".to_string())?;
        Ok((ticks, calls_at, warm_from))
    })?;
    let busy_from = calls_at[0].0;
    let busy_to = calls_at.last().map(|c| c.0).unwrap_or(busy_from);
    let calls_interp = |t: f64| nvml_counter::calls_at(&calls_at, t);
    let (a, b, used) =
        ticks_between(&ticks, busy_from + 1.0, busy_to - 0.5).ok_or("too few counter ticks during the calls")?;
    let calls = calls_interp(b.0) - calls_interp(a.0);
    let energy_per_call_j = (b.1 - a.1) / calls;
    let time_per_call_s = (b.0 - a.0) / calls;
    // The boundary: windows of ~150 ms of calls, each closed by a context-wide synchronize.
    let per_window = ((0.15 / time_per_call_s).round() as u64).max(1);
    let timing = Some(energy_harness::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut boundary_uncovered_s = Vec::new();
    for _ in 0..20 {
        let host = Instant::now();
        let first = stream.record_event(timing).map_err(|e| format!("event: {e}"))?;
        for _ in 0..per_window {
            launch()?;
        }
        let last = stream.record_event(timing).map_err(|e| format!("event: {e}"))?;
        ctx.synchronize().map_err(|e| format!("cuCtxSynchronize: {e}"))?;
        let host_s = host.elapsed().as_secs_f64();
        let gpu_s = f64::from(first.elapsed_ms(&last).map_err(|e| format!("elapsed: {e}"))?) * 1e-3;
        boundary_uncovered_s.push(host_s - gpu_s);
    }
    let idle = |from: f64, to: f64| idle_power_w(&ticks, from, to);
    let idle_before_w = idle(warm_from - 0.8, warm_from)?;
    let idle_after_w = idle(busy_to + 0.05, busy_to + 1.0)?;
    let idle_w = 0.5 * (idle_before_w + idle_after_w);
    let reference = Reference {
        ms_asked: ms,
        calls: calls_at.last().map_or(0, |c| c.1),
        seconds,
        energy_per_call_j,
        dynamic_per_call_j: energy_per_call_j - idle_w * time_per_call_s,
        time_per_call_s,
        busy_power_w: (b.1 - a.1) / (b.0 - a.0),
        idle_before_w,
        idle_after_w,
        ticks_used: used,
        boundary_uncovered_s,
        temperature_after_c: device.temperature(TemperatureSensor::Gpu).unwrap_or(0),
        gpu: name,
        uuid,
    };
    let json = serde_json::to_string_pretty(&reference).map_err(|e| e.to_string())?;
    println!("{json}");
    if let Some(path) = arg("--out") {
        std::fs::write(&path, json).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}
