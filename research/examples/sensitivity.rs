//! How small a change `cargo energy compare` catches between separate processes, and how
//! often it cries wolf: the FMA loop measured as a benchmark is (the default options), in
//! a fresh process each time, at 1.000 × and at +0.5, +1, +2 and +5 % of its work,
//! interleaved; then every (baseline, candidate) pair judged as `compare` judges it.
//!
//! ```sh
//! cargo run --release --example sensitivity -- [--repeats 6] [--out DIR]
//! ```
//!
//! False alarms: pairs of two 1.000 × runs that `compare` calls a regression at a given
//! threshold. Detection: pairs (1.000 ×, 1 + δ) it calls a regression. Without a GPU it
//! runs on the simulated H100 and says so (the simulated kernel's duration scales with
//! the work).

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;

use energy_harness::unstable::cuda::FmaLoop;
use energy_harness::unstable::device::{Device, DeviceRequest, SimKernel};
use energy_harness::unstable::engine::{default_calibration_dir, Calibration};
use energy_harness::unstable::engine::{measure, MeasureRequest};
use energy_harness::unstable::engine::{SimWorkload, Workload};
use energy_harness::CudaGpu;
use energy_harness::Estimate;
use energy_harness::MeasureOptions;
use energy_harness::{Error, ErrorKind, Result};
use energy_report::change as compare_change;
use energy_results::detect::Verdict as CompareVerdict;
use serde::{Deserialize, Serialize};

#[path = "support/output.rs"]
mod output;

/// Work scales measured (1.000 is the baseline).
const SCALES: [f64; 5] = [1.0, 1.005, 1.01, 1.02, 1.05];
/// Thresholds `compare` is judged at, percent.
const THRESHOLDS_PCT: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 5.0];
/// Launch length at 1.000 ×, s.
const LAUNCH_S: f64 = 1e-3;

/// One child process's measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Run {
    scale: f64,
    energy_j: Estimate,
    time_s: f64,
    temperature_c: Option<u32>,
    sm_clock_mhz: Option<u32>,
    wall_s: f64,
}

#[derive(Serialize)]
struct Rates {
    threshold_pct: f64,
    false_alarms: usize,
    baseline_pairs: usize,
    detected: Vec<(f64, usize, usize)>,
}

#[derive(Serialize)]
struct Report {
    device: String,
    uuid: String,
    simulated: bool,
    iterations: u32,
    runs: Vec<Run>,
    spread_pct: f64,
    rates: Vec<Rates>,
}

fn open() -> Result<(Device, Option<FmaLoop>)> {
    let device = Device::open(&DeviceRequest::from_env()?, None)?;
    if device.sim().is_some() {
        return Ok((device, None));
    }
    let ordinal = device
        .facts()
        .cuda_ordinal
        .ok_or_else(|| Error::new(ErrorKind::NoGpu, "no CUDA device matches the NVML device's UUID"))?;
    let fma = FmaLoop::load(Arc::new(CudaGpu::open(ordinal)?))?;
    Ok((device, Some(fma)))
}

/// The child: one measurement of `iterations × scale`, printed as JSON.
fn child(scale: f64, iterations: u32) -> Result<()> {
    let (mut device, fma) = open()?;
    let start = std::time::Instant::now();
    let mut workload: Box<dyn Workload> = match (&fma, device.sim()) {
        (Some(fma), _) => Box::new(fma.workload((f64::from(iterations) * scale).round() as u32)?),
        (None, Some(gpu)) => {
            Box::new(SimWorkload::new(gpu.clone(), SimKernel::new(LAUNCH_S * scale, 336.0)).with_time_jitter(0.001, 7))
        }
        (None, None) => unreachable!("a device is real or simulated"),
    };
    let calibration = Calibration::load_cached(&default_calibration_dir(), &device.facts().uuid).ok().flatten();
    let request = MeasureRequest::new("fma", MeasureOptions::DEFAULT).calibration(calibration);
    let (m, _) = measure(&mut device, workload.as_mut(), request)?;
    let run = Run {
        scale,
        energy_j: m.energy_j,
        time_s: m.time_s.mean,
        temperature_c: m.windows.last().and_then(|w| w.temperature_c),
        sm_clock_mhz: m.windows.last().and_then(|w| w.sm_clock_mhz),
        wall_s: start.elapsed().as_secs_f64(),
    };
    println!("{}", serde_json::to_string(&run).map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?);
    Ok(())
}

fn spawn(args: &[String]) -> Result<String> {
    let exe = std::env::current_exe().map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
    let out = Command::new(exe).args(args).output().map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("child {args:?} failed: {}", String::from_utf8_lossy(&out.stderr)),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn parent(repeats: usize) -> Result<Report> {
    let (device, fma) = open()?;
    let iterations = match &fma {
        Some(fma) => fma.iterations_for(LAUNCH_S)?,
        None => 0,
    };
    let (name, uuid, simulated) = (device.facts().name.clone(), device.facts().uuid.clone(), device.is_simulated());
    drop(fma);
    if simulated {
        eprintln!("note: no GPU: every figure is SIMULATED");
    }
    let mut runs = Vec::new();
    for r in 0..repeats {
        for scale in SCALES {
            let line = spawn(&["--child".into(), scale.to_string(), iterations.to_string()])?;
            let run: Run = serde_json::from_str(&line)
                .map_err(|e| Error::new(ErrorKind::Format, format!("child output `{line}`: {e}")))?;
            eprintln!(
                "repeat {r} scale {scale}: {:.4} mJ ± {:.2} %",
                run.energy_j.mean * 1e3,
                run.energy_j.relative_half_width() * 100.0
            );
            runs.push(run);
        }
    }
    let base: Vec<&Run> = runs.iter().filter(|r| r.scale == 1.0).collect();
    let mean = base.iter().map(|r| r.energy_j.mean).sum::<f64>() / base.len() as f64;
    let sd = (base.iter().map(|r| (r.energy_j.mean - mean).powi(2)).sum::<f64>() / (base.len() as f64 - 1.0)).sqrt();
    let regression = |a: &Run, b: &Run, t: f64| {
        let c = compare_change("fma", &a.energy_j, &b.energy_j, t).expect("two measured energies have a finite change");
        c.verdict == CompareVerdict::Regression
    };
    let rates = THRESHOLDS_PCT
        .iter()
        .map(|&t| {
            let pairs: Vec<(&Run, &Run)> = base
                .iter()
                .flat_map(|a| base.iter().filter(move |b| !std::ptr::eq(*a, **b)).map(move |b| (*a, *b)))
                .collect();
            let false_alarms = pairs.iter().filter(|(a, b)| regression(a, b, t)).count();
            let detected = SCALES[1..]
                .iter()
                .map(|&s| {
                    let cands: Vec<&Run> = runs.iter().filter(|r| r.scale == s).collect();
                    let hits = base
                        .iter()
                        .flat_map(|a| cands.iter().map(move |b| (*a, *b)))
                        .filter(|(a, b)| regression(a, b, t))
                        .count();
                    (s, hits, base.len() * cands.len())
                })
                .collect();
            Rates { threshold_pct: t, false_alarms, baseline_pairs: pairs.len(), detected }
        })
        .collect();
    Ok(Report { device: name, uuid, simulated, iterations, runs, spread_pct: sd / mean * 100.0, rates })
}

fn markdown(r: &Report) -> String {
    let mut s = format!(
        "{}{} ({}), FMA loop {} iterations (~1 ms) at 1.000 ×; 1.000 × runs: spread (SD) {:.3} %\n\n| threshold | false alarms |",
        r.device,
        if r.simulated { " [SIMULATED]" } else { "" },
        r.uuid,
        r.iterations,
        r.spread_pct
    );
    for scale in &SCALES[1..] {
        s.push_str(&format!(" +{:.1} % work |", (scale - 1.0) * 100.0));
    }
    s.push_str("\n|---|---|");
    s.push_str(&"---|".repeat(SCALES.len() - 1));
    for rate in &r.rates {
        s.push_str(&format!("\n| {} % | {} / {} |", rate.threshold_pct, rate.false_alarms, rate.baseline_pairs));
        for (_, hits, of) in &rate.detected {
            s.push_str(&format!(" {hits} / {of} |"));
        }
    }
    s.push('\n');
    s
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned());
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let scale = args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(1.0);
        let iterations = args.get(i + 2).and_then(|v| v.parse().ok()).unwrap_or(0);
        return match child(scale, iterations) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let repeats: usize = value("--repeats").and_then(|v| v.parse().ok()).unwrap_or(6).max(2);
    let out = PathBuf::from(value("--out").unwrap_or_else(|| "target/energy/sensitivity".into()));
    output::finish(parent(repeats), markdown, &out, "sensitivity")
}
