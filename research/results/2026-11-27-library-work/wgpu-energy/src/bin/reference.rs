//! The independent reference for a wgpu compute shader (issue 43): the same dispatches as
//! the benchmark, timed with wgpu's own `device.poll(wait)` on the host clock and metered
//! with NVML's energy counter at its ticks; no harness code. Method as the harness
//! repository's `examples/library_reference.rs`: 1 s at rest, 0.5 s warm-up, `--seconds` of
//! calls with a synchronize every ~50 ms, 1 s at rest; energy and time per call between the
//! counter's ticks 1 s into the calls and 0.5 s before their end; idle: the mean of the rest
//! before the warm-up and after the calls.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::Nvml;

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

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// Counter ticks: (seconds since `t0`, energy in J) each time the counter changed.
fn ticks_between(ticks: &[(f64, f64)], from: f64, to: f64) -> Option<((f64, f64), (f64, f64), usize)> {
    let inside: Vec<&(f64, f64)> = ticks.iter().filter(|t| t.0 >= from && t.0 <= to).collect();
    match (inside.first(), inside.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => Some((**a, **b, inside.len())),
        _ => None,
    }
}

fn run() -> Result<(), String> {
    let ms = 0.0;
    let poll_us: u64 = arg("--poll-us").unwrap_or_else(|| "1000".into()).parse().map_err(|e| format!("--poll-us: {e}"))?;
    let seconds: f64 = arg("--seconds").unwrap_or_else(|| "8".into()).parse().map_err(|e| format!("--seconds: {e}"))?;
    let nvml = Nvml::init().map_err(|e| format!("NVML: {e}"))?;
    let device = nvml.device_by_index(0).map_err(|e| format!("NVML device 0: {e}"))?;
    let (name, uuid) = (device.name().unwrap_or_default(), device.uuid().unwrap_or_default());
    let fma = wgpu_energy::Fma::open(|info| info.name.contains("NVIDIA"), wgpu_energy::ITERATIONS)?;
    let mut launch = || -> Result<(), String> {
        fma.dispatch();
        Ok(())
    };
    struct Synced<'a>(&'a wgpu_energy::Fma);
    impl Synced<'_> {
        fn synchronize(&self) -> Result<(), String> {
            self.0.wait()
        }
    }
    let stream = Synced(&fma);
    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let (ticks, calls_at, warm_from) = std::thread::scope(|scope| -> Result<_, String> {
        let sampler = {
            let stop = stop.clone();
            let device = &device;
            scope.spawn(move || {
                let mut ticks: Vec<(f64, f64)> = Vec::new();
                let mut last = None;
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(mj) = device.total_energy_consumption() {
                        let t = t0.elapsed().as_secs_f64();
                        if last != Some(mj) {
                            ticks.push((t, mj as f64 * 1e-3));
                            last = Some(mj);
                        }
                    }
                    if poll_us > 0 {
                        std::thread::sleep(Duration::from_micros(poll_us));
                    }
                }
                ticks
            })
        };
        // A second at rest (the idle before), then half a second of warm-up calls (which also
        // sizes the batches between synchronizes to ~50 ms), then the calls measured.
        std::thread::sleep(Duration::from_secs(1));
        let warm_from = t0.elapsed().as_secs_f64();
        let warm = Instant::now();
        let mut warm_calls = 0u64;
        while warm.elapsed() < Duration::from_millis(500) {
            for _ in 0..16 {
                launch()?;
            }
            stream.synchronize().map_err(|e| format!("sync: {e}"))?;
            warm_calls += 16;
        }
        let per_call = warm.elapsed().as_secs_f64() / warm_calls as f64;
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
    let calls_interp = |t: f64| -> f64 {
        let i = calls_at.partition_point(|c| c.0 <= t).clamp(1, calls_at.len() - 1);
        let (a, b) = (calls_at[i - 1], calls_at[i]);
        a.1 as f64 + (b.1 - a.1) as f64 * ((t - a.0) / (b.0 - a.0)).clamp(0.0, 1.0)
    };
    let (a, b, used) =
        ticks_between(&ticks, busy_from + 1.0, busy_to - 0.5).ok_or("too few counter ticks during the calls")?;
    let calls = calls_interp(b.0) - calls_interp(a.0);
    let energy_per_call_j = (b.1 - a.1) / calls;
    let time_per_call_s = (b.0 - a.0) / calls;
    let idle = |from: f64, to: f64| -> Result<f64, String> {
        let (x, y, _) = ticks_between(&ticks, from, to).ok_or("too few counter ticks in an idle second")?;
        Ok((y.1 - x.1) / (y.0 - x.0))
    };
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
        temperature_after_c: device.temperature(TemperatureSensor::Gpu).unwrap_or(0),
        gpu: name,
        uuid,
    };
    let json = serde_json::json!({
        "ms_asked": reference.ms_asked, "calls": reference.calls, "seconds": reference.seconds,
        "energy_per_call_j": reference.energy_per_call_j, "dynamic_per_call_j": reference.dynamic_per_call_j,
        "time_per_call_s": reference.time_per_call_s, "busy_power_w": reference.busy_power_w,
        "idle_before_w": reference.idle_before_w, "idle_after_w": reference.idle_after_w,
        "ticks_used": reference.ticks_used, "temperature_after_c": reference.temperature_after_c,
        "gpu": reference.gpu, "uuid": reference.uuid,
    })
    .to_string();
    println!("{json}");
    if let Some(path) = arg("--out") {
        std::fs::write(&path, json).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}
