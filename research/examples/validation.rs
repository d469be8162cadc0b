//! Validation: this harness against the methods in use today, on an FMA loop sized to
//! 20 µs, 1 ms, 10 ms, 100 ms and 1 s per launch.
//!
//! ```sh
//! cargo run --release --example validation -- [--repeats 5] [--reference-s 10] [--out DIR]
//! ```
//!
//! Per size: (e) the reference, steady counter power over ≥ 10 s of back-to-back launches
//! × the CUDA-event time per launch; then `--repeats` estimates by (a) this harness as a
//! user calls it (`measure`, calibrated models), and, on the very same windows of
//! back-to-back launches, (b) the counter read at the begin and end of the window,
//! (c) `nvmlDeviceGetPowerUsage` polled during the window × its event time, (d) the last
//! `nvmlDeviceGetPowerUsage` reading × the event time. Then the K20 paper's checks
//! (doubling the work doubles the energy; a window right after another costs what an
//! isolated one does) and the sampler's own cost (kernel time with and without it).
//! Prints a markdown report and writes all figures as JSON. Without a GPU it runs on the
//! simulated H100 and says so everywhere.

use std::path::PathBuf;
use std::process::ExitCode;

use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::unstable::device::{Sampler, SamplerConfig};
use energy_harness::unstable::engine::record;
use energy_harness::unstable::engine::sorted_finite;
use energy_harness::unstable::engine::{analyze_windows, AnalysisOptions, ModelChoice};
use energy_harness::unstable::engine::{busy_intervals, calibrate, StepPlan};
use energy_harness::unstable::engine::{measure, MeasureRequest};
use energy_harness::Estimate;
use energy_harness::MeasureOptions;
use energy_harness::{Result, SourceKind};
use energy_results::trace::Channel;
use energy_results::trace::Trace;
use serde::Serialize;

#[path = "support/output.rs"]
mod output;
#[path = "support/reference.rs"]
mod reference;
use reference::{reference, Kernels};

const SIZES_S: [f64; 5] = [20e-6, 1e-3, 10e-3, 0.1, 1.0];

#[derive(Serialize, Clone)]
struct MethodFigures {
    method: &'static str,
    values_j: Vec<f64>,
    mean_j: f64,
    bias_pct: f64,
    cv_pct: f64,
    wall_s_per_estimate: f64,
}

/// One repeat of the harness, with the state around it (to see drift).
#[derive(Serialize)]
struct Repeat {
    energy_j: f64,
    time_s: f64,
    power_w: f64,
    idle_w: f64,
    windows: usize,
    temperature_c: Option<u32>,
    sm_clock_mhz: Option<u32>,
    wall_s: f64,
}

#[derive(Serialize)]
struct SizeFigures {
    target_launch_s: f64,
    launch_s: f64,
    launches_per_window: u64,
    reference_j: f64,
    reference_power_w: f64,
    reference_wall_s: f64,
    methods: Vec<MethodFigures>,
    repeats: Vec<Repeat>,
}

#[derive(Serialize)]
struct Report {
    simulated: bool,
    device: energy_harness::unstable::device::DeviceFacts,
    date: String,
    repeats: usize,
    sizes: Vec<SizeFigures>,
    doubling_ratio: f64,
    doubling_values: (f64, f64),
    back_to_back_ratio: f64,
    back_to_back_values: (f64, f64),
    sampler_overhead_pct: Vec<(f64, f64)>,
    calibration: energy_harness::unstable::engine::Calibration,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn cv_pct(v: &[f64]) -> f64 {
    Estimate::from_values(v).map_or(f64::NAN, |e| e.cv() * 100.0)
}

fn figures(method: &'static str, values: Vec<f64>, reference: f64, wall_s: f64) -> MethodFigures {
    let m = mean(&values);
    MethodFigures {
        method,
        bias_pct: (m / reference - 1.0) * 100.0,
        cv_pct: cv_pct(&values),
        mean_j: m,
        values_j: values,
        wall_s_per_estimate: wall_s,
    }
}

/// (b), (c), (d) on the windows of a harness trace: per window, joules per launch.
fn naive_methods(trace: &Trace, launches: u64) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    // The measured windows (not the auxiliary warm-up stretch), marked and GPU-timed.
    let measured = |w: &energy_results::trace::Window| !energy_results::trace::is_auxiliary_window(w.index);
    let windows: Vec<_> = busy_intervals(trace)?.into_iter().filter(measured).collect();
    let marks: Vec<_> = trace.windows()?.into_iter().filter(measured).collect();
    let counter = sorted_finite(trace.series(&Channel::CounterMj));
    let power = sorted_finite(trace.series(&Channel::PowerMw));
    let (mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for (w, gpu) in marks.iter().zip(&windows) {
        let gpu_s = gpu.duration_s();
        let n = launches as f64;
        // (b) the counter as read just before the window starts and just after it ends.
        let before = counter.iter().rev().find(|r| r.time_s <= w.start_s);
        let after = counter.iter().find(|r| r.time_s >= w.end_s);
        if let (Some(x), Some(y)) = (before, after) {
            b.push((y.value - x.value) * 1e-3 / n);
        }
        // (c) power usage polled during the window, averaged, × the event time.
        let inside: Vec<f64> =
            power.iter().filter(|r| r.time_s >= w.start_s && r.time_s <= w.end_s).map(|r| r.value * 1e-3).collect();
        if !inside.is_empty() {
            c.push(mean(&inside) * gpu_s / n);
        }
        // (d) the last power reading at the end × the event time.
        if let Some(last) = power.iter().rev().find(|r| r.time_s <= w.end_s) {
            d.push(last.value * 1e-3 * gpu_s / n);
        }
    }
    Ok((b, c, d))
}

fn run() -> Result<Report> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned());
    let repeats: usize = value("--repeats").and_then(|v| v.parse().ok()).unwrap_or(5);
    let reference_s: f64 = value("--reference-s").and_then(|v| v.parse().ok()).unwrap_or(10.0);
    let sizes: Vec<f64> = match value("--sizes") {
        Some(list) => list.split(',').filter_map(|s| s.parse().ok()).collect(),
        None => SIZES_S.to_vec(),
    };
    let mut device = Device::open(&DeviceRequest::from_env()?, None)?;
    let simulated = device.is_simulated();
    if let Some(reason) = device.sim_reason() {
        eprintln!("note: {reason}: every figure below is SIMULATED");
    }
    let kernels = Kernels::open(&device)?;
    eprintln!("calibrating {} …", device.facts().name);
    let (calibration, _) = calibrate(&device, kernels.sized(0.005, 1)?.as_mut(), StepPlan::default())?;
    // As a benchmark asks: the default options, at least criterion's 10 windows.
    let request = |id: String| {
        MeasureRequest::new(id, MeasureOptions::DEFAULT)
            .min_windows(10)
            .calibration(Some(calibration.clone()))
            .record_also(vec![SourceKind::PowerUsage])
    };
    let mut size_figures = Vec::new();
    for &size in &sizes {
        let mut workload = kernels.sized(size, 1)?;
        let launch_s = workload.run_batch(1)?.max(1e-7);
        eprintln!("size {size} s: launch {launch_s:.3e} s; reference over {reference_s} s …");
        let r = reference(&device, workload.as_mut(), launch_s, reference_s)?;
        let (ref_j, ref_w, ref_wall) = (r.energy_j, r.power_w, r.wall_s);
        let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut walls = Vec::new();
        let mut launches = 0;
        let mut repeat_figures = Vec::new();
        for r in 0..repeats {
            let (m, trace) = measure(&mut device, workload.as_mut(), request(format!("fma_{size}_{r}")))?;
            launches = m.launches_per_window;
            let state = m.windows.last();
            repeat_figures.push(Repeat {
                energy_j: m.energy_j.mean,
                time_s: m.time_s.mean,
                power_w: m.power_w.mean,
                idle_w: m.idle_w,
                windows: m.windows.len(),
                temperature_c: state.and_then(|w| w.temperature_c),
                sm_clock_mhz: state.and_then(|w| w.sm_clock_mhz),
                wall_s: m.wall_time_s,
            });
            a.push(m.energy_j.mean);
            walls.push(m.wall_time_s);
            let (bb, cc, dd) = naive_methods(&trace, m.launches_per_window)?;
            b.extend(bb);
            c.extend(cc);
            d.extend(dd);
            eprintln!(
                "  repeat {r}: harness {:.4e} J ({:+.2} %)",
                m.energy_j.mean,
                (m.energy_j.mean / ref_j - 1.0) * 100.0
            );
        }
        let wall = mean(&walls);
        let windows_per_estimate = mean(&repeat_figures.iter().map(|r| r.windows as f64).collect::<Vec<_>>());
        let window_wall = wall / windows_per_estimate;
        size_figures.push(SizeFigures {
            target_launch_s: size,
            launch_s,
            launches_per_window: launches,
            reference_j: ref_j,
            reference_power_w: ref_w,
            reference_wall_s: ref_wall,
            methods: vec![
                figures("(a) this harness", a, ref_j, wall),
                figures("(b) counter at window begin/end", b, ref_j, window_wall),
                figures("(c) polled power usage × time", c, ref_j, window_wall),
                figures("(d) last power reading × time", d, ref_j, window_wall),
            ],
            repeats: repeat_figures,
        });
    }

    // Doubling: the 10 ms kernel and the same kernel with twice the iterations.
    eprintln!("doubling …");
    let single = measure(&mut device, kernels.sized(10e-3, 1)?.as_mut(), request("double_1x".into()))?.0;
    let double = measure(&mut device, kernels.sized(10e-3, 2)?.as_mut(), request("double_2x".into()))?.0;
    let doubling_ratio = double.energy_j.mean / single.energy_j.mean;

    // Back to back: windows of 10 ms launches, each right after an equal unmeasured-but-marked
    // busy stretch (odd indices) versus isolated (even indices, after idle).
    eprintln!("back to back …");
    let mut workload = kernels.sized(10e-3, 1)?;
    let n = (0.5 / 10e-3) as u64;
    let clock = device.clock().clone();
    let (_, trace) = record(&device, &[SourceKind::Counter], |marker| {
        clock.sleep_s(0.3);
        for pair in 0..5u32 {
            marker.start(2 * pair);
            workload.run_batch(n)?;
            marker.end(2 * pair);
            marker.start(2 * pair + 1);
            workload.run_batch(n)?;
            marker.end(2 * pair + 1);
            clock.sleep_s(0.4);
        }
        Ok(())
    })?;
    let options = AnalysisOptions {
        calibration: Some(calibration.clone()),
        model: ModelChoice::Auto,
        ..AnalysisOptions::default()
    };
    let analysis = analyze_windows(&trace, &trace.windows()?, &options)?;
    let isolated: Vec<f64> = analysis.windows.iter().filter(|w| w.index % 2 == 0).map(|w| w.energy_j).collect();
    let after: Vec<f64> = analysis.windows.iter().filter(|w| w.index % 2 == 1).map(|w| w.energy_j).collect();
    let back_to_back_ratio = mean(&after) / mean(&isolated);

    // Sampler overhead: batches of launches with and without the sampler, alternated.
    eprintln!("sampler overhead …");
    let mut overhead = Vec::new();
    for size in [20e-6, 1e-3] {
        let mut workload = kernels.sized(size, 1)?;
        let per_batch = (0.3 / size) as u64;
        workload.run_batch(per_batch)?;
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..8 {
            without.push(workload.run_batch(per_batch)?);
            let (sources, _) = device.open_sources(&SourceKind::ALL);
            let sampler = Sampler::start(sources, device.clock().clone(), SamplerConfig::default())?;
            with.push(workload.run_batch(per_batch)?);
            sampler.stop()?;
        }
        overhead.push((size, (mean(&with) / mean(&without) - 1.0) * 100.0));
    }

    let _ = device.refresh();
    Ok(Report {
        simulated,
        device: device.facts().clone(),
        date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        repeats,
        sizes: size_figures,
        doubling_ratio,
        doubling_values: (single.energy_j.mean, double.energy_j.mean),
        back_to_back_ratio,
        back_to_back_values: (mean(&isolated), mean(&after)),
        sampler_overhead_pct: overhead,
        calibration,
    })
}

fn markdown(r: &Report) -> String {
    let tag = if r.simulated { " (SIMULATED)" } else { "" };
    let mut out = format!("## Validation{tag}: {} ({}), {}\n\n", r.device.name, r.device.uuid, r.date);
    out.push_str("| launch | method | energy per launch | bias vs reference | CV | wall time per estimate |\n|---|---|---|---|---|---|\n");
    for s in &r.sizes {
        out.push_str(&format!(
            "| {} | (e) reference: {:.1} W steady × event time | {} | — | — | {:.1} s |\n",
            energy_harness::units::format_si(s.launch_s, "s", 3),
            s.reference_power_w,
            energy_harness::units::format_si(s.reference_j, "J", 4),
            s.reference_wall_s
        ));
        for m in &s.methods {
            out.push_str(&format!(
                "| | {} | {} | {:+.2} % | {:.2} % | {:.2} s |\n",
                m.method,
                energy_harness::units::format_si(m.mean_j, "J", 4),
                m.bias_pct,
                m.cv_pct,
                m.wall_s_per_estimate
            ));
        }
    }
    out.push_str(&format!(
        "\nDoubling the work (10 ms → 20 ms launches): energy ×{:.4} ({} → {}).\n",
        r.doubling_ratio,
        energy_harness::units::format_si(r.doubling_values.0, "J", 4),
        energy_harness::units::format_si(r.doubling_values.1, "J", 4)
    ));
    out.push_str(&format!(
        "A window right after another costs ×{:.4} an isolated one ({} → {} per window).\n",
        r.back_to_back_ratio,
        energy_harness::units::format_si(r.back_to_back_values.0, "J", 4),
        energy_harness::units::format_si(r.back_to_back_values.1, "J", 4)
    ));
    for (size, pct) in &r.sampler_overhead_pct {
        out.push_str(&format!(
            "Sampler overhead on {} launches: kernel time {:+.3} % with the sampler running.\n",
            energy_harness::units::format_si(*size, "s", 3),
            pct
        ));
    }
    out
}

fn main() -> ExitCode {
    let out_dir = std::env::args()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[0] == "--out")
        .map(|w| PathBuf::from(&w[1]))
        .unwrap_or_else(|| PathBuf::from("target/energy/validation"));
    output::finish(run(), markdown, &out_dir, "validation")
}
