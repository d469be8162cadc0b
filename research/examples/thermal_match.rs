//! Thermal match: the reference and the harness interleaved, with the temperature logged,
//! so that each one's drift with temperature (dE/dT) is measured and the harness is compared
//! with the reference at the same temperature, not across a warming GPU.
//!
//! ```sh
//! cargo run --release --example thermal_match -- [--cycles 6] [--reference-s 8] [--out DIR]
//! ```
//!
//! On the FMA loop at ~1 ms per launch, each cycle runs (A) the reference: steady counter
//! power over `--reference-s` of back-to-back launches × event time per launch; (B) the
//! harness as a benchmark calls it (default options); (C) the harness as the suites call it
//! (±0.5 % precision). The reference's busy seconds warm the GPU from cycle to cycle. Each
//! method's energy per launch is fitted against temperature; the harness's bias against the
//! reference is read at their common mean temperature. Without a GPU it runs on the
//! simulated H100 (no thermal model: dE/dT is zero there) and says so.

use std::path::PathBuf;
use std::process::ExitCode;

use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::unstable::engine::{default_calibration_dir, Calibration};
use energy_harness::unstable::engine::{measure, MeasureRequest};
use energy_harness::MeasureOptions;
use energy_harness::Result;
use energy_results::stats::linear_fit;
use serde::Serialize;

#[path = "support/output.rs"]
mod output;
#[path = "support/reference.rs"]
mod reference;
use reference::{reference, Kernels};

/// One measurement of the sequence.
#[derive(Clone, Debug, Serialize)]
struct Step {
    cycle: usize,
    method: &'static str,
    energy_j: f64,
    temperature_c: Option<u32>,
    sm_clock_mhz: Option<u32>,
}

/// One method's energy per launch against temperature.
#[derive(Clone, Debug, Serialize)]
struct Drift {
    method: &'static str,
    mean_j: f64,
    mean_temperature_c: f64,
    slope_pct_per_c: f64,
    slope_half_width_pct_per_c: f64,
    at_common_temperature_j: f64,
}

#[derive(Serialize)]
struct Report {
    device: energy_harness::unstable::device::DeviceFacts,
    simulated: bool,
    steps: Vec<Step>,
    drift: Vec<Drift>,
    common_temperature_c: f64,
    bias_pct: Vec<(&'static str, f64)>,
}

const METHODS: [&str; 3] = ["reference", "harness (bench options)", "harness (suite options)"];

fn run(cycles: usize, reference_s: f64) -> Result<Report> {
    let mut device = Device::open(&DeviceRequest::from_env()?, None)?;
    let simulated = device.is_simulated();
    if let Some(reason) = device.sim_reason() {
        eprintln!("note: {reason}: every figure below is SIMULATED");
    }
    let kernels = Kernels::open(&device)?;
    let mut workload = kernels.sized(1e-3, 1)?;
    let launch_s = workload.run_batch(1)?.max(1e-7);
    let calibration = Calibration::load_cached(&default_calibration_dir(), &device.facts().uuid).ok().flatten();
    let options = [MeasureOptions::DEFAULT, MeasureOptions { precision: Some(0.005), ..MeasureOptions::DEFAULT }];
    let mut steps = Vec::new();
    for cycle in 0..cycles {
        let r = reference(&device, workload.as_mut(), launch_s, reference_s)?;
        let _ = device.refresh();
        steps.push(Step {
            cycle,
            method: METHODS[0],
            energy_j: r.energy_j,
            // Under load, as the harness reads it in its windows.
            temperature_c: r.temperature_c.map(|t| t.round() as u32),
            sm_clock_mhz: device.facts().sm_clock_mhz,
        });
        for (k, opts) in options.iter().enumerate() {
            let request =
                MeasureRequest::new(format!("thermal_{cycle}_{k}"), opts.clone()).calibration(calibration.clone());
            let (m, _) = measure(&mut device, workload.as_mut(), request)?;
            let last = m.windows.last();
            steps.push(Step {
                cycle,
                method: METHODS[k + 1],
                energy_j: m.energy_j.mean,
                temperature_c: last.and_then(|w| w.temperature_c),
                sm_clock_mhz: last.and_then(|w| w.sm_clock_mhz),
            });
        }
        let line: Vec<String> = steps[steps.len() - 3..]
            .iter()
            .map(|s| format!("{} {:.4} mJ @ {:?} °C", s.method, s.energy_j * 1e3, s.temperature_c))
            .collect();
        eprintln!("cycle {cycle}: {}", line.join("; "));
    }
    let temperatures: Vec<f64> = steps.iter().filter_map(|s| s.temperature_c.map(f64::from)).collect();
    let common = temperatures.iter().sum::<f64>() / temperatures.len().max(1) as f64;
    let drift: Vec<Drift> = METHODS
        .iter()
        .map(|&method| {
            let points: Vec<(f64, f64)> = steps
                .iter()
                .filter(|s| s.method == method)
                .filter_map(|s| s.temperature_c.map(|t| (f64::from(t), s.energy_j)))
                .collect();
            let mean_j = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
            let mean_t = points.iter().map(|p| p.0).sum::<f64>() / points.len().max(1) as f64;
            let t = energy_results::stats::student_t_975(points.len().saturating_sub(2));
            let (slope, half, at) = match linear_fit(&points) {
                Some(f) => (f.slope, t * f.slope_std_err, f.intercept + f.slope * common),
                None => (0.0, f64::INFINITY, mean_j),
            };
            Drift {
                method,
                mean_j,
                mean_temperature_c: mean_t,
                slope_pct_per_c: slope / mean_j * 100.0,
                slope_half_width_pct_per_c: half / mean_j * 100.0,
                at_common_temperature_j: at,
            }
        })
        .collect();
    let reference_at = drift[0].at_common_temperature_j;
    let bias_pct =
        drift[1..].iter().map(|d| (d.method, (d.at_common_temperature_j / reference_at - 1.0) * 100.0)).collect();
    let _ = device.refresh();
    Ok(Report { device: device.facts().clone(), simulated, steps, drift, common_temperature_c: common, bias_pct })
}

fn markdown(r: &Report) -> String {
    let mut s = format!(
        "{}{} ({}), FMA loop ~1 ms per launch; common temperature {:.1} °C\n\n| method | mean | temperatures | dE/dT | at {:.1} °C | vs reference |\n|---|---|---|---|---|---|\n",
        r.device.name,
        if r.simulated { " [SIMULATED]" } else { "" },
        r.device.uuid,
        r.common_temperature_c,
        r.common_temperature_c
    );
    for d in &r.drift {
        let temps: Vec<u32> = r.steps.iter().filter(|s| s.method == d.method).filter_map(|s| s.temperature_c).collect();
        let range = match (temps.iter().min(), temps.iter().max()) {
            (Some(a), Some(b)) => format!("{a}-{b} °C"),
            _ => "?".to_string(),
        };
        let bias =
            r.bias_pct.iter().find(|(m, _)| *m == d.method).map_or("—".to_string(), |(_, b)| format!("{b:+.2} %"));
        let slope = if d.slope_half_width_pct_per_c.is_finite() {
            format!("{:+.3} ± {:.3} %/°C", d.slope_pct_per_c, d.slope_half_width_pct_per_c)
        } else {
            "not resolved (one temperature)".to_string()
        };
        s.push_str(&format!(
            "| {} | {:.4} mJ | {range} | {slope} | {:.4} mJ | {bias} |\n",
            d.method,
            d.mean_j * 1e3,
            d.at_common_temperature_j * 1e3
        ));
    }
    s
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned());
    let cycles: usize = value("--cycles").and_then(|v| v.parse().ok()).unwrap_or(6).max(3);
    let reference_s: f64 = value("--reference-s").and_then(|v| v.parse().ok()).unwrap_or(8.0);
    let out = PathBuf::from(value("--out").unwrap_or_else(|| "target/energy/thermal".into()));
    output::finish(run(cycles, reference_s), markdown, &out, "thermal")
}
