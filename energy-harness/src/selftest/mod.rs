//! `cargo energy selftest`: does this GPU's sensor deliver what the harness assumes?
//!
//! No ground truth is needed, only physics. On one GPU, in well under a minute:
//!
//! 1. **The harness's own figure** for a short FMA-loop launch (`measure`, default options).
//! 2. **Linearity in launch count**: isolated windows of N = 100 … 10 000 launches of
//!    ~100 µs (10 ms … 1 s; an isolated window is resolved to ~0.1 J, an idle-power
//!    uncertainty over a counter tick, so shorter ones carry too little energy), their start
//!    times spread over the counter's tick period; the dynamic energy must follow
//!    `E(N) = E₀ + e·N` with `e` the harness's dynamic energy per launch (±2 %), and the
//!    residuals must show no pattern against the start phase (an edge bias would).
//! 3. **Linearity in duty**: 1 s windows of busy/idle square waves (periods 5, 50, 500 ms;
//!    duty 0.1, 0.5, 0.9; two phases each); mean power must be linear in the duty (±1 %,
//!    or three times the source's window-to-window scatter where that is larger),
//!    or bend only as the other agreeing sources see it bend (then it is the GPU's power,
//!    not the sensor); the slope, busy − idle power, must match the harness's dynamic
//!    power (±5 %, periods ≥ 100 ms). A period near a source's own update period aliases
//!    with it; there the line is the source's resolution for such power, reported unjudged.
//! 4. **Independent paths**: every source the GPU offers (counter, sample buffer, the 1 s
//!    average fields, …) on the same long windows; a source must agree (±2 %) with most
//!    of the others.
//!
//! A source is trusted when every check it takes part in passes. The thresholds are in
//! [`checks`]. On the simulated GPU the checks must pass, and must fail on a simulated
//! sensor given a [`crate::sim::SensorFault`].

pub mod checks;
mod render;

use serde::{Deserialize, Serialize};

use crate::device::Device;
use crate::engine::analyze::{analyze_windows, AnalysisOptions, ModelChoice, TraceAnalysis};
use crate::engine::calibration::Calibration;
use crate::engine::clean::{median_change_interval_s, sorted_finite};
use crate::engine::run::record;
use crate::engine::{measure, MeasureOptions, MeasureRequest};
use crate::report::ResultDevice;
use crate::sensors::{Quantity, SensorModel, SourceKind};
use crate::workload::Workload;
use checks::{Agreement, CountWindow, DutyLine, DutyWindow, Linearity};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{Channel, Window, AUXILIARY_WINDOW};

pub use render::render;

/// Windows shorter than this are not judged for the power sources (their updates come
/// every 20-100 ms), s; the counter's are all judged.
pub const POWER_SOURCE_MIN_WINDOW_S: f64 = 0.09;

/// The selftest report's schema.
pub const SELFTEST_SCHEMA: &str = "energy-selftest/1";

/// What the selftest runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelftestPlan {
    /// Launch counts of the linearity windows.
    pub launch_counts: Vec<u64>,
    /// Rounds over the launch counts (each window at another start phase).
    pub count_rounds: usize,
    /// Periods of the duty square waves, s.
    pub duty_periods_s: Vec<f64>,
    /// Busy shares of the square waves.
    pub duties: Vec<f64>,
    /// Rounds over the square waves (each at another start phase).
    pub duty_rounds: usize,
    /// Length of a duty window, s.
    pub duty_window_s: f64,
    /// Idle between windows, s (plus a phase offset of up to a tenth of a second).
    pub gap_s: f64,
    /// Idle before the first window and after the last, s (a 1 s average needs 1 s).
    pub lead_s: f64,
    /// Windows at least this long take part in the comparison of sources, s.
    pub agreement_min_s: f64,
}

impl Default for SelftestPlan {
    fn default() -> Self {
        SelftestPlan {
            launch_counts: vec![100, 300, 1000, 3000, 10_000],
            count_rounds: 3,
            duty_periods_s: vec![0.005, 0.05, 0.5],
            duties: vec![0.1, 0.5, 0.9],
            duty_rounds: 2,
            duty_window_s: 1.0,
            gap_s: 0.3,
            lead_s: 1.5,
            agreement_min_s: 0.3,
        }
    }
}

/// The harness's own measurement of the test kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HarnessFigure {
    /// Its source.
    pub source: SourceKind,
    /// GPU time per launch, s.
    pub launch_s: f64,
    /// Energy per launch, J.
    pub energy_j: f64,
    /// Dynamic energy per launch (above active idle), J.
    pub dynamic_j: f64,
    /// Relative half-width of the dynamic energy's 95 % interval.
    pub dynamic_half_width: f64,
    /// Dynamic power, W.
    pub dynamic_w: f64,
    /// Active idle, W.
    pub idle_w: f64,
}

/// One source's checks and verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceVerdict {
    /// The source.
    pub source: SourceKind,
    /// The model inverted for it.
    pub model: Option<SensorModel>,
    /// Energy against launch count.
    pub linearity: Option<Linearity>,
    /// Mean power against duty, per period.
    pub duty: Vec<DutyLine>,
    /// Against the other sources.
    pub agreement: Option<Agreement>,
    /// Whether every check passed.
    pub trust: bool,
    /// Why not, one line each.
    pub reasons: Vec<String>,
}

/// One window of the run, as every source measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelftestWindow {
    /// Window index.
    pub index: u32,
    /// Start on the trace clock, s.
    pub start_s: f64,
    /// Length, s.
    pub length_s: f64,
    /// Launches (a launch-count window).
    pub launches: Option<u64>,
    /// Square-wave period, s (a duty window).
    pub period_s: Option<f64>,
    /// Busy GPU time / length (a duty window).
    pub duty: Option<f64>,
    /// Per source that measured it: (source, energy J, dynamic energy J).
    pub energies: Vec<(SourceKind, f64, f64)>,
}

/// What the selftest found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelftestReport {
    /// Always [`SELFTEST_SCHEMA`].
    pub schema: String,
    /// The device.
    pub device: ResultDevice,
    /// When it began (RFC 3339).
    pub timestamp: String,
    /// Wall time, s.
    pub wall_time_s: f64,
    /// SM clock before and after, MHz (read, never set).
    pub sm_clock_mhz: (Option<u32>, Option<u32>),
    /// Temperature before and after, °C.
    pub temperature_c: (Option<u32>, Option<u32>),
    /// The plan it ran.
    pub plan: SelftestPlan,
    /// The harness's figure for the test kernel.
    pub harness: HarnessFigure,
    /// Per source.
    pub sources: Vec<SourceVerdict>,
    /// Every window with every source's figures (for plots and second looks).
    pub windows: Vec<SelftestWindow>,
    /// What the harness measures with on this GPU, and how far that is trusted.
    pub summary: String,
}

impl SelftestReport {
    /// Whether the source the harness measures with is trusted.
    pub fn primary_trusted(&self) -> bool {
        self.sources.iter().any(|s| s.source == self.harness.source && s.trust)
    }
}

/// What one window of the run was.
#[derive(Clone, Copy, Debug)]
enum Planned {
    Count { launches: u64 },
    Duty { period_s: f64, busy_s: f64 },
}

/// Runs the selftest on `device` with `workload` (a short launch, ~100 µs: the FMA loop
/// on a GPU), using `calibration` where one is cached for the GPU.
pub fn run_selftest(
    device: &mut Device,
    workload: &mut dyn Workload,
    plan: &SelftestPlan,
    calibration: Option<Calibration>,
    progress: &mut dyn FnMut(&str),
) -> Result<SelftestReport> {
    check_plan(plan)?;
    let calibrated = calibration.is_some();
    let clock = device.clock().clone();
    let wall_start = clock.now_s();
    let timestamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let _ = device.refresh();
    let before = device.facts().clone();

    progress("the harness's figure for the test kernel (measure, default options)");
    let request = MeasureRequest::new("selftest", MeasureOptions::DEFAULT).calibration(calibration.clone());
    let (m, _) = measure(device, workload, request)?;
    let harness = HarnessFigure {
        source: m.source,
        launch_s: m.time_s.mean,
        energy_j: m.energy_j.mean,
        dynamic_j: m.dynamic_j.mean,
        dynamic_half_width: m.dynamic_j.relative_half_width(),
        dynamic_w: m.dynamic_j.mean / m.time_s.mean,
        idle_w: m.idle_w,
    };
    if !(harness.dynamic_j.is_finite() && harness.dynamic_j > 0.0 && harness.launch_s > 0.0) {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!(
                "the test kernel measured {:.4} J above idle in {:.3e} s: it must draw power above idle for the checks to mean anything",
                harness.dynamic_j, harness.launch_s
            ),
        ));
    }

    // The board's sources: each is judged against the others on the same windows (a rail
    // measures a part of the board and would disagree with all of them).
    let sources: Vec<SourceKind> = SourceKind::boards().filter(|&k| device.open_source(k).is_ok()).collect();
    progress(&format!(
        "launch-count and duty windows, recording {}",
        sources.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
    ));
    let (planned, trace) = record(device, &sources, |marker| {
        let mut planned: Vec<(u32, Planned)> = Vec::new();
        let mut k = 0u32;
        // A golden-ratio sequence spreads the start phases over a tenth of a second.
        let gap = |k: u32| plan.gap_s + 0.1 * ((f64::from(k) * 0.618_033_988_75) % 1.0);
        clock.sleep_s(plan.lead_s);
        for round in 0..plan.count_rounds {
            let mut counts = plan.launch_counts.clone();
            let turn = round % counts.len().max(1);
            counts.rotate_left(turn);
            for launches in counts {
                clock.sleep_s(gap(k));
                marker.start(k);
                workload.run_batch(launches)?;
                marker.end(k);
                planned.push((k, Planned::Count { launches }));
                k += 1;
            }
        }
        for _ in 0..plan.duty_rounds {
            for &period_s in &plan.duty_periods_s {
                for &duty in &plan.duties {
                    clock.sleep_s(gap(k));
                    let busy_launches = ((duty * period_s / harness.launch_s).round() as u64).max(1);
                    let cycles = ((plan.duty_window_s / period_s).round() as u64).max(1);
                    let t0 = marker.start(k);
                    let mut busy_s = 0.0;
                    for c in 0..cycles {
                        busy_s += workload.run_batch(busy_launches)?;
                        let next = t0 + (c + 1) as f64 * period_s;
                        let now = clock.now_s();
                        if next > now {
                            clock.sleep_s(next - now);
                        }
                    }
                    marker.end(k);
                    planned.push((k, Planned::Duty { period_s, busy_s }));
                    k += 1;
                }
            }
        }
        clock.sleep_s(plan.lead_s);
        Ok(planned)
    })?;
    let windows = trace.windows()?;

    progress("analysis");
    let analyses: Vec<(SourceKind, Result<TraceAnalysis>)> = sources
        .iter()
        .map(|&source| {
            // A power source cannot resolve windows shorter than its updates: they stay in
            // the analysis (their busy time is not idle) as auxiliary stretches, unjudged.
            let min_s = if source.quantity() == Quantity::Energy { 0.0 } else { POWER_SOURCE_MIN_WINDOW_S };
            let windows: Vec<Window> = windows
                .iter()
                .map(|w| if w.duration_s() < min_s { Window { index: AUXILIARY_WINDOW, ..*w } } else { *w })
                .collect();
            let options = AnalysisOptions {
                source: Some(source),
                model: ModelChoice::Auto,
                calibration: calibration.clone(),
                power_limit_w: before.power_limit_w,
                ..AnalysisOptions::default()
            };
            (source, analyze_windows(&trace, &windows, &options))
        })
        .collect();
    // The sources whose trace could be analyzed.
    let ok_analyses: Vec<(SourceKind, &TraceAnalysis)> =
        analyses.iter().filter_map(|(k, a)| a.as_ref().ok().map(|a| (*k, a))).collect();
    // The counter's tick grid gives each window's start phase.
    let tick = ok_analyses.iter().find_map(|(_, a)| a.tick_fit.clone());
    let phase = |start_s: f64| tick.as_ref().map(|t| ((start_s - t.phase_s) / t.period_s).rem_euclid(1.0));
    let long_energies: Vec<(SourceKind, Vec<(u32, f64)>)> = ok_analyses
        .iter()
        .map(|&(k, a)| {
            let long = a
                .windows
                .iter()
                .filter(|w| w.duration_s() >= plan.agreement_min_s)
                .map(|w| (w.index, w.energy_j))
                .collect();
            (k, long)
        })
        .collect();
    let agreements = checks::agreement(&long_energies);
    // Per window, what each source that agrees with the rest gives it.
    let agreeing: Vec<(SourceKind, &TraceAnalysis)> =
        ok_analyses.iter().copied().filter(|(k, _)| agreements.iter().any(|(j, a)| j == k && a.pass)).collect();
    let others_j = |source: SourceKind, index: u32| -> Option<f64> {
        let mut values: Vec<f64> = agreeing
            .iter()
            .filter(|(k, _)| *k != source)
            .filter_map(|(_, a)| a.windows.iter().find(|w| w.index == index).map(|w| w.energy_j))
            .collect();
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        Some(values[values.len() / 2])
    };

    let mut verdicts = Vec::new();
    for (source, analysis) in &analyses {
        let analysis = match analysis {
            Ok(a) => a,
            Err(e) => {
                verdicts.push(SourceVerdict {
                    source: *source,
                    model: None,
                    linearity: None,
                    duty: Vec::new(),
                    agreement: None,
                    trust: false,
                    reasons: vec![format!("its trace could not be analyzed: {}", e.message())],
                });
                continue;
            }
        };
        let mut counts = Vec::new();
        let mut duties = Vec::new();
        for w in &analysis.windows {
            let Some((_, what)) = planned.iter().find(|(i, _)| *i == w.index) else { continue };
            match *what {
                Planned::Count { launches } => counts.push(CountWindow {
                    launches,
                    dynamic_j: w.dynamic_j,
                    phase: if source.quantity() == Quantity::Energy { phase(w.start_s) } else { None },
                }),
                Planned::Duty { period_s, busy_s } => duties.push(DutyWindow {
                    period_s,
                    duty: busy_s / w.duration_s(),
                    length_s: w.duration_s(),
                    energy_j: w.energy_j,
                    others_j: others_j(*source, w.index),
                }),
            }
        }
        let linearity = checks::linearity(&counts, harness.dynamic_j);
        let update_s = match &analysis.tick_fit {
            Some(tick) => Some(tick.period_s),
            None => median_change_interval_s(&sorted_finite(trace.series(&Channel::Source(*source)))),
        };
        let duty =
            checks::duty_lines(&duties, harness.dynamic_w, update_s, linearity.as_ref().map(|l| l.rms_residual_j));
        let agreement = agreements.iter().find(|(k, _)| k == source).map(|(_, a)| a.clone());
        let reasons = reasons(linearity.as_ref(), &duty, agreement.as_ref());
        verdicts.push(SourceVerdict {
            source: *source,
            model: Some(analysis.sensor_model),
            trust: reasons.is_empty(),
            linearity,
            duty,
            agreement,
            reasons,
        });
    }
    let window_table: Vec<SelftestWindow> = windows
        .iter()
        .filter_map(|w| {
            let (_, what) = planned.iter().find(|(i, _)| *i == w.index)?;
            let (launches, period_s, duty) = match *what {
                Planned::Count { launches } => (Some(launches), None, None),
                Planned::Duty { period_s, busy_s } => (None, Some(period_s), Some(busy_s / w.duration_s())),
            };
            let energies = ok_analyses
                .iter()
                .filter_map(|(k, a)| {
                    a.windows.iter().find(|e| e.index == w.index).map(|e| (*k, e.energy_j, e.dynamic_j))
                })
                .collect();
            Some(SelftestWindow {
                index: w.index,
                start_s: w.start_s,
                length_s: w.duration_s(),
                launches,
                period_s,
                duty,
                energies,
            })
        })
        .collect();
    let _ = device.refresh();
    let after = device.facts().clone();
    let mut report = SelftestReport {
        schema: SELFTEST_SCHEMA.to_string(),
        device: ResultDevice {
            name: before.name.clone(),
            uuid: before.uuid.clone(),
            driver: before.driver_version.clone(),
            simulated: device.is_simulated(),
            power_limit_w: before.power_limit_w,
        },
        timestamp,
        wall_time_s: clock.now_s() - wall_start,
        sm_clock_mhz: (before.sm_clock_mhz, after.sm_clock_mhz),
        temperature_c: (before.temperature_c, after.temperature_c),
        plan: plan.clone(),
        harness,
        sources: verdicts,
        windows: window_table,
        summary: String::new(),
    };
    report.summary = summary(&report, &sources, calibrated);
    Ok(report)
}

fn check_plan(plan: &SelftestPlan) -> Result<()> {
    let distinct = {
        let mut c = plan.launch_counts.clone();
        c.sort_unstable();
        c.dedup();
        c.len()
    };
    let problem = if distinct < 2 || plan.launch_counts.contains(&0) || plan.count_rounds == 0 {
        Some("at least two distinct non-zero launch counts and one round")
    } else if plan.duties.len() < 3 || plan.duties.iter().any(|d| !(*d > 0.0 && *d < 1.0)) {
        Some("at least three duties, each between 0 and 1")
    } else if plan.duty_periods_s.is_empty()
        || plan.duty_periods_s.iter().any(|p| !(*p > 0.0 && *p <= plan.duty_window_s))
        || plan.duty_rounds == 0
    {
        Some("duty periods between 0 and the duty window, and one round")
    } else if !(plan.gap_s >= 0.0 && plan.lead_s >= 0.0 && plan.duty_window_s > 0.0) {
        Some("non-negative gaps and a positive duty window")
    } else {
        None
    };
    match problem {
        Some(p) => Err(Error::new(ErrorKind::InvalidInput, format!("selftest plan: needs {p}"))),
        None => Ok(()),
    }
}

fn reasons(linearity: Option<&Linearity>, duty: &[DutyLine], agreement: Option<&Agreement>) -> Vec<String> {
    let mut out = Vec::new();
    match linearity {
        None => out.push("too few launch-count windows to fit".to_string()),
        Some(l) if !l.pass => {
            if l.vs_harness_pct.abs() > checks::SLOPE_TOLERANCE_PCT {
                out.push(format!(
                    "energy per launch from the launch-count line is {:+.1} % off the harness's",
                    l.vs_harness_pct
                ));
            }
            if l.phase_pattern {
                out.push("window energies depend on where the window starts in the tick period".to_string());
            }
        }
        Some(_) => {}
    }
    if duty.is_empty() {
        out.push("too few duty windows to fit".to_string());
    }
    for d in duty.iter().filter(|d| !d.pass) {
        if d.max_residual_pct > d.tolerance_pct && !d.shared_with_others {
            out.push(format!(
                "mean power is not linear in duty at a {:.0} ms period (residual up to {:.1} %), and the other sources do not see it so",
                d.period_s * 1e3,
                d.max_residual_pct
            ));
        } else {
            out.push(format!(
                "busy − idle power from the duty line at a {:.0} ms period is {:+.1} % off the harness's",
                d.period_s * 1e3,
                d.vs_harness_pct
            ));
        }
    }
    if let Some(a) = agreement.filter(|a| !a.pass) {
        let pairs: Vec<String> = a.pairs.iter().map(|p| format!("{} {:+.1} %", p.other, p.median_pct)).collect();
        out.push(format!("disagrees with the other sources ({})", pairs.join(", ")));
    }
    out
}

fn summary(report: &SelftestReport, sources: &[SourceKind], calibrated: bool) -> String {
    let primary = report.harness.source;
    let trusted = report.primary_trusted();
    let simulated = if report.device.simulated { " [simulated]" } else { "" };
    let head = if sources.contains(&SourceKind::Counter) {
        format!("the harness measures with the energy counter on this GPU{simulated}")
    } else {
        format!("this GPU has no energy counter: the harness falls back to the {primary} source{simulated}")
    };
    let verdict = if trusted {
        format!("{primary} passed every check: trust its figures within the intervals the harness reports")
    } else if calibrated {
        format!("{primary} failed a check: do not trust its figures until the reasons above are explained")
    } else {
        format!(
            "{primary} failed a check: do not trust its figures; no calibration was cached for this GPU, so run `cargo energy calibrate` and the selftest again"
        )
    };
    format!("{head}; {verdict}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::run::{virtual_sim_device, SimWorkload};
    use crate::sim::{SensorFault, SimKernel, SimPreset};

    fn selftest(preset: SimPreset) -> SelftestReport {
        let (mut device, gpu) = virtual_sim_device(preset);
        let busy = gpu.preset().busy_kernel_w;
        let mut workload = SimWorkload::new(gpu, SimKernel::new(100e-6, busy));
        run_selftest(&mut device, &mut workload, &SelftestPlan::default(), None, &mut |_| {}).unwrap()
    }

    fn verdict(report: &SelftestReport, source: SourceKind) -> &SourceVerdict {
        report.sources.iter().find(|s| s.source == source).unwrap()
    }

    #[test]
    fn the_simulated_h100_passes() {
        let report = selftest(SimPreset::h100());
        let counter = verdict(&report, SourceKind::Counter);
        assert!(counter.trust, "{}", render(&report));
        assert!(verdict(&report, SourceKind::SampleBuffer).trust, "{}", render(&report));
        assert!(report.primary_trusted());
        assert!(report.wall_time_s < 60.0, "{} s", report.wall_time_s);
    }

    #[test]
    fn a_gpu_without_the_counter_says_what_the_harness_falls_back_to() {
        let report = selftest(SimPreset::k20());
        assert!(report.sources.iter().all(|s| s.source != SourceKind::Counter));
        assert!(report.summary.contains("no energy counter"), "{}", report.summary);
        assert!(report.summary.contains(&report.harness.source.to_string()), "{}", report.summary);
        assert!(!report.sources.is_empty(), "{}", render(&report));
    }

    #[test]
    fn a_counter_reading_five_percent_high_fails() {
        let report = selftest(SimPreset::h100().with_fault(SourceKind::Counter, SensorFault::Gain(1.05)));
        let counter = verdict(&report, SourceKind::Counter);
        assert!(!counter.trust, "{}", render(&report));
        assert!(counter.reasons.iter().any(|r| r.contains("disagrees")), "{:?}", counter.reasons);
        assert!(!report.primary_trusted());
    }

    #[test]
    fn a_counter_that_samples_instead_of_integrating_fails() {
        let report = selftest(SimPreset::h100().with_fault(SourceKind::Counter, SensorFault::SampledIntegral));
        let counter = verdict(&report, SourceKind::Counter);
        assert!(!counter.trust, "{}", render(&report));
        assert!(!report.primary_trusted());
    }
}
