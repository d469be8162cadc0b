//! The independent reference for short kernels (issue 63): the FMA loop launched back to
//! back, as a CUDA graph of `--graph N` launches replayed without a pause (or, with
//! `--graph 0`, launch by launch from the host), metered with NVML's energy counter at its
//! ticks. Nothing of the harness's measurement is used: its own CUDA context and graph
//! (cudarc), its own NVML handle, its own sampler thread, its own arithmetic.
//!
//! ```sh
//! cargo run --release --example graph_reference -- --iters 16 --graph 100 [--seconds 4] \
//!     [--tracking] [--out ref.json]
//! ```
//!
//! Method: 1 s at rest, 0.5 s of warm-up, then `--seconds` of back-to-back launches with
//! no synchronize: chunks of about 5 ms of launches, each followed by a CUDA event, at most
//! four chunks queued ahead; the host polls the oldest event and notes when it completed
//! (the launches done by then), so the GPU never waits for the host's checks. Then 1 s at
//! rest. A thread reads the counter every millisecond and keeps the times it changed (its
//! ticks). Energy per launch: the counter's difference between the first tick 1 s into the
//! launches and the last tick 0.5 s before their end, over the launches completed between
//! those ticks (interpolated between the chunks' completions). Time per launch likewise.
//! Active idle: the counter's power over the ticks of the last 0.8 s at rest before the
//! warm-up and of the second at rest after the launches (their mean), as the harness
//! subtracts the idle around its busy stretch; dynamic = energy − idle × time per launch.
//! Launches use cudarc's `launch_builder`; the context's event tracking (an event recorded
//! and waited on around each launch for the buffer it writes) is off unless `--tracking`.
//! Needs a GPU.

use std::collections::VecDeque;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use energy_harness::cudarc::driver::{sys, CudaContext, LaunchConfig, PushKernelArg};
use energy_harness::cudarc::nvrtc::Ptx;
use energy_harness::unstable::cuda::FMA_LOOP_PTX;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;
use serde::Serialize;

#[path = "support/nvml_counter.rs"]
mod nvml_counter;
use nvml_counter::{arg, calls_at, idle_power_w, sample_counter, ticks_between, warm_up};

const BLOCKS: u32 = 132 * 8;
const THREADS: u32 = 256;

#[derive(Serialize)]
struct Reference {
    iterations: u32,
    /// Launches per graph (0: launched by the host one by one).
    graph: u32,
    event_tracking: bool,
    launches: u64,
    seconds: f64,
    energy_per_launch_j: f64,
    dynamic_per_launch_j: f64,
    time_per_launch_s: f64,
    busy_power_w: f64,
    idle_before_w: f64,
    idle_after_w: f64,
    ticks_used: usize,
    /// Energy per launch over each half second of the launches (its ticks), from their
    /// start: (seconds from the first completion to the half second's middle, J). Shows
    /// how the figure moves as the board warms.
    energy_per_launch_by_half_second: Vec<(f64, f64)>,
    /// The longest the host took to see a chunk complete after the one before, s (the
    /// polling's resolution, and whether the queue ever ran dry).
    longest_completion_gap_s: f64,
    sm_clock_mhz_after: u32,
    temperature_after_c: u32,
    gpu: String,
    uuid: String,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("graph_reference: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let parse = |name: &str, default: &str| arg(name).unwrap_or_else(|| default.into());
    let iterations: u32 = parse("--iters", "16").parse().map_err(|e| format!("--iters: {e}"))?;
    let graph: u32 = parse("--graph", "100").parse().map_err(|e| format!("--graph: {e}"))?;
    let seconds: f64 = parse("--seconds", "4").parse().map_err(|e| format!("--seconds: {e}"))?;
    let tracking = std::env::args().any(|a| a == "--tracking");
    let nvml = Nvml::init().map_err(|e| format!("NVML: {e}"))?;
    let device = nvml.device_by_index(0).map_err(|e| format!("NVML device 0: {e}"))?;
    let (name, uuid) = (device.name().unwrap_or_default(), device.uuid().unwrap_or_default());
    let ctx = CudaContext::new(0).map_err(|e| format!("CUDA: {e}"))?;
    if !tracking {
        // SAFETY: every launch and copy of this program is on the one stream below.
        unsafe { ctx.disable_event_tracking() };
    }
    let stream = ctx.new_stream().map_err(|e| format!("stream: {e}"))?;
    let module = ctx.load_module(Ptx::from_src(FMA_LOOP_PTX)).map_err(|e| format!("module: {e}"))?;
    let function = module.load_function("fma_loop").map_err(|e| format!("function: {e}"))?;
    let mut out = stream.alloc_zeros::<f32>((BLOCKS * THREADS) as usize).map_err(|e| format!("alloc: {e}"))?;
    let config = LaunchConfig { grid_dim: (BLOCKS, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut launch = || -> Result<(), String> {
        let mut b = stream.launch_builder(&function);
        b.arg(&mut out).arg(&iterations);
        // SAFETY: fma_loop(float* out, u32 iterations) writes one float per thread; `out` holds them all.
        unsafe { b.launch(config) }.map(|_| ()).map_err(|e| format!("launch: {e}"))
    };
    stream.synchronize().map_err(|e| format!("sync: {e}"))?;
    // The graph, captured once; a "call" below is one replay (graph launches) or one launch.
    let captured = if graph > 0 {
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| format!("begin capture: {e}"))?;
        for _ in 0..graph {
            launch()?;
        }
        let g = stream.end_capture(sys::CUgraphInstantiate_flags(0)).map_err(|e| format!("end capture: {e}"))?;
        Some(g.ok_or("the capture made no graph")?)
    } else {
        None
    };
    let per_call = u64::from(graph.max(1));
    let mut call = || -> Result<(), String> {
        match &captured {
            Some(g) => g.launch().map_err(|e| format!("graph launch: {e}")),
            None => launch(),
        }
    };
    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let (ticks, done_at, warm_from, gap) = std::thread::scope(|scope| -> Result<_, String> {
        let sampler = {
            let stop = stop.clone();
            let device = &device;
            scope.spawn(move || sample_counter(device, &stop, t0))
        };
        std::thread::sleep(Duration::from_secs(1));
        let warm_from = t0.elapsed().as_secs_f64();
        // Warm-up: half a second of calls, which also sizes a chunk to about 5 ms.
        let per_call_s = warm_up(8, &mut call, || stream.synchronize().map_err(|e| format!("sync: {e}")))?;
        let chunk = ((5e-3 / per_call_s).round() as u64).max(1);
        let timing = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let mut done_at: Vec<(f64, u64)> = vec![(t0.elapsed().as_secs_f64(), 0)];
        let mut pending: VecDeque<(energy_harness::cudarc::driver::CudaEvent, u64)> = VecDeque::new();
        let (mut enqueued, mut longest_gap) = (0u64, 0.0f64);
        let busy = Instant::now();
        loop {
            let enqueuing = busy.elapsed().as_secs_f64() < seconds;
            while enqueuing && pending.len() < 4 {
                for _ in 0..chunk {
                    call()?;
                }
                enqueued += chunk;
                pending.push_back((stream.record_event(timing).map_err(|e| format!("event: {e}"))?, enqueued));
            }
            let Some((event, calls)) = pending.front() else { break };
            if event.try_is_complete().map_err(|e| format!("event query: {e}"))? {
                let now = t0.elapsed().as_secs_f64();
                longest_gap = longest_gap.max(now - done_at.last().map_or(now, |d| d.0));
                done_at.push((now, *calls));
                pending.pop_front();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        stream.synchronize().map_err(|e| format!("sync: {e}"))?;
        std::thread::sleep(Duration::from_secs(1));
        stop.store(true, Ordering::Relaxed);
        let ticks = sampler.join().map_err(|_| "the sampler thread panicked".to_string())?;
        Ok((ticks, done_at, warm_from, longest_gap))
    })?;
    // The first entry is the start of the enqueuing, not a completion: the stretch is timed
    // from the first chunk's completion on.
    let done_at = &done_at[1..];
    let busy_from = done_at.first().map(|c| c.0).ok_or("no chunk completed")?;
    let busy_to = done_at.last().map(|c| c.0).unwrap_or(busy_from);
    let calls_at = |t: f64| calls_at(done_at, t);
    let (a, b, used) =
        ticks_between(&ticks, busy_from + 1.0, busy_to - 0.5).ok_or("too few counter ticks during the launches")?;
    let launches = (calls_at(b.0) - calls_at(a.0)) * per_call as f64;
    let energy_per_launch_j = (b.1 - a.1) / launches;
    let time_per_launch_s = (b.0 - a.0) / launches;
    let mut by_half_second = Vec::new();
    let mut from = busy_from;
    while from + 0.5 <= busy_to {
        if let Some((x, y, _)) = ticks_between(&ticks, from, from + 0.5) {
            let n = (calls_at(y.0) - calls_at(x.0)) * per_call as f64;
            by_half_second.push((0.5 * (x.0 + y.0) - busy_from, (y.1 - x.1) / n));
        }
        from += 0.5;
    }
    let idle = |from: f64, to: f64| idle_power_w(&ticks, from, to);
    let idle_before_w = idle(warm_from - 0.8, warm_from)?;
    let idle_after_w = idle(busy_to + 0.05, busy_to + 1.0)?;
    let idle_w = 0.5 * (idle_before_w + idle_after_w);
    let reference = Reference {
        iterations,
        graph,
        event_tracking: tracking,
        launches: done_at.last().map_or(0, |c| c.1) * per_call,
        seconds,
        energy_per_launch_j,
        dynamic_per_launch_j: energy_per_launch_j - idle_w * time_per_launch_s,
        time_per_launch_s,
        busy_power_w: (b.1 - a.1) / (b.0 - a.0),
        idle_before_w,
        idle_after_w,
        ticks_used: used,
        energy_per_launch_by_half_second: by_half_second,
        longest_completion_gap_s: gap,
        sm_clock_mhz_after: device.clock_info(Clock::SM).unwrap_or(0),
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
