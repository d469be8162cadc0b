//! The summary of a finished session: per-window energies with the SM clock and
//! temperature the sampler read in each, estimates with their intervals, the drift from the
//! first window to the last, the cross-check by a second source, the rails' energies, and
//! every warning; and the figures per unit of work: per op and per byte (from the counts the
//! options give) and net against a baseline kernel. These are computed here and nowhere else:
//! the bench glue, budgets and the suites' tables read them or call [`per_unit`],
//! [`difference`] and [`net_energy`].

use super::analyze::{analyze_windows, AnalysisOptions, ModelChoice};
use super::options::ResolvedOptions;
use super::result::{CrossCheck, Drift, Measurement, NetEnergy, PerUnit, RailEnergy, WindowResult};
use super::stats::{linear_fit, student_t_975, Estimate};
use super::warning::{Warning, WarningKind};
use crate::gpu::DeviceFacts;
use crate::sampling::{RAIL_FAILED, STATE_SM_CLOCK, STATE_TEMPERATURE};
use crate::sensors::SourceKind;
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::result::Figures;
use energy_results::trace::{is_auxiliary_window, Channel, Trace, Window};

/// Everything a finished session consists of.
pub(super) struct Summary<'a> {
    pub(super) id: &'a str,
    pub(super) options: &'a ResolvedOptions,
    pub(super) launches_per_window: u64,
    pub(super) analysis: &'a AnalysisOptions,
    pub(super) trace: &'a Trace,
    pub(super) gpu_times: &'a [f64],
    pub(super) facts_before: &'a DeviceFacts,
    pub(super) facts_after: &'a DeviceFacts,
    pub(super) timestamp: String,
    pub(super) wall_time_s: f64,
    pub(super) stop: &'static str,
    /// The interval's relative half-width on which the session decided the precision was
    /// reached (the windows the sensor covered then), when it stopped for that.
    pub(super) decided_half_width: Option<f64>,
    pub(super) thermal: Option<&'a super::thermal::ThermalCalibration>,
}

/// What the result says of why the session stopped: `stop`, except where the session
/// decided the precision was reached (on `decided`, the windows covered then) and the final
/// interval (`final_half_width` over `windows`) is wider than `precision`: then it stopped
/// short, with both figures.
fn stop_text(stop: &str, decided: Option<f64>, final_half_width: f64, precision: f64, windows: usize) -> String {
    match decided {
        Some(decided) if final_half_width > precision => format!(
            "stopped short: the windows covered during the run reached ±{:.2} %, all {windows} windows read afterwards give ±{:.2} % (±{:.2} % asked)",
            decided * 100.0,
            final_half_width * 100.0,
            precision * 100.0
        ),
        _ => stop.to_string(),
    }
}

/// The last reading of a state channel inside `[start, end]`, else the last one before `end`.
fn state_in(trace: &Trace, channel: &str, start_s: f64, end_s: f64) -> Option<u32> {
    let series = trace.series(&Channel::Other(channel.into()));
    let inside = series.iter().rev().find(|r| r.time_s >= start_s && r.time_s <= end_s);
    inside.or_else(|| series.iter().rev().find(|r| r.time_s <= end_s)).map(|r| r.value.round() as u32)
}

/// Analyzes a finished session: per-window energies, estimates with intervals, drift,
/// the cross-check by a second source, and warnings.
pub(super) fn summarize(done: Summary<'_>) -> Result<Measurement> {
    let Summary {
        id,
        options,
        launches_per_window,
        analysis: analysis_options,
        trace,
        gpu_times,
        facts_before,
        facts_after,
        timestamp,
        wall_time_s,
        stop,
        decided_half_width,
        thermal,
    } = done;
    let windows = trace.windows()?;
    let measured = windows.iter().filter(|w| !is_auxiliary_window(w.index)).count();
    if measured != gpu_times.len() {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("{measured} windows marked but {} GPU times recorded", gpu_times.len()),
        ));
    }
    let analysis = analyze_windows(trace, &windows, analysis_options)?;
    let n = launches_per_window as f64;
    let per_window: Vec<WindowResult> = analysis
        .windows
        .iter()
        .zip(gpu_times)
        .map(|(w, &gpu_s)| WindowResult {
            energy: w.clone(),
            launches: launches_per_window,
            gpu_time_s: gpu_s,
            sm_clock_mhz: state_in(trace, STATE_SM_CLOCK, w.start_s, w.end_s).or(facts_after.sm_clock_mhz),
            temperature_c: state_in(trace, STATE_TEMPERATURE, w.start_s, w.end_s).or(facts_after.temperature_c),
        })
        .collect();
    let estimate = |values: Vec<f64>, what: &str| {
        Estimate::from_values(&values)
            .ok_or_else(|| Error::new(ErrorKind::Analysis, format!("no finite {what} in the windows")))
    };
    let energy_j = estimate(per_window.iter().map(|w| w.energy.energy_j / n).collect(), "energy")?;
    let dynamic_j = estimate(per_window.iter().map(|w| w.energy.dynamic_j / n).collect(), "dynamic energy")?;
    let time_s = estimate(per_window.iter().map(|w| w.gpu_time_s / n).collect(), "GPU time")?;
    let power_w = estimate(per_window.iter().map(|w| w.energy.energy_j / w.energy.duration_s()).collect(), "power")?;
    let ticks_per_window =
        per_window.iter().map(|w| w.energy.points_inside as f64).sum::<f64>() / per_window.len() as f64;

    // The stop rule decided on the windows the sensor covered during the run; the final
    // analysis reads them all. Where the two disagree the result says it stopped short,
    // never "precision reached" beside a wider interval.
    let stop = stop_text(stop, decided_half_width, energy_j.relative_half_width(), options.precision, energy_j.n);
    let mut warnings = analysis.warnings.clone();
    if energy_j.relative_half_width() > options.precision {
        warnings.push(Warning::new(
            WarningKind::Imprecise,
            format!(
                "the 95 % interval of the energy per launch is ±{:.2} %, wider than the ±{:.2} % asked (CV {:.2} % over {} windows; {})",
                energy_j.relative_half_width() * 100.0,
                options.precision * 100.0,
                energy_j.cv() * 100.0,
                energy_j.n,
                stop
            ),
        ));
    }
    let drift = drift(&per_window, n);
    if let Some(d) = &drift {
        if d.energy_significant && d.energy_change_pct.abs() > 100.0 * options.precision {
            warnings.push(Warning::new(
                WarningKind::Drift,
                format!(
                    "the energy per launch moved {:+.2} % from the first window to the last (temperature {} → {} °C, SM clock {}–{} MHz): the kernel did not run in a steady state",
                    d.energy_change_pct,
                    d.temperature_first_c.map_or("?".into(), |v| v.to_string()),
                    d.temperature_last_c.map_or("?".into(), |v| v.to_string()),
                    d.sm_clock_min_mhz.map_or("?".into(), |v| v.to_string()),
                    d.sm_clock_max_mhz.map_or("?".into(), |v| v.to_string()),
                ),
            ));
        }
    }
    warnings.extend(state_warnings(facts_before, facts_after));

    // Cross-check with the source's check (the sample buffer for the counter) when it was recorded.
    let cross_check = match analysis.source.cross_check() {
        Some(check) if !trace.series(&Channel::Source(check)).is_empty() => {
            let check_options =
                AnalysisOptions { source: Some(check), model: ModelChoice::Auto, ..analysis_options.clone() };
            analyze_windows(trace, &windows, &check_options).ok().and_then(|checked| {
                let values: Vec<f64> = checked.windows.iter().map(|w| w.energy_j / n).collect();
                let e = Estimate::from_values(&values)?;
                let difference_pct = (e.mean / energy_j.mean - 1.0) * 100.0;
                if difference_pct.abs() > 5.0 {
                    warnings.push(Warning::new(
                        WarningKind::SourceDisagreement,
                        format!(
                            "the {check} source gives {difference_pct:+.1} % against the {} for the same windows",
                            analysis.source
                        ),
                    ));
                }
                Some(CrossCheck { source: check, sensor_model: checked.sensor_model, energy_j: e, difference_pct })
            })
        }
        _ => None,
    };
    let rails = rail_energies(trace, &windows, analysis_options, n, analysis.idle_w, &mut warnings);
    let thermal = thermal.and_then(|cal| super::thermal::normalize(&facts_before.uuid, &per_window, cal));

    Ok(Measurement {
        id: id.to_string(),
        simulated: facts_before.simulated,
        device: facts_before.clone(),
        figures: Figures {
            timestamp,
            source: analysis.source,
            sensor_model: analysis.sensor_model,
            model_origin: analysis.model_origin.clone(),
            launches_per_window,
            windows: per_window,
            energy_j,
            dynamic_j,
            time_s,
            power_w,
            idle_w: analysis.idle_w,
            ticks_per_window,
            per_op: options.ops.and_then(|ops| per_unit_figures("op", ops, &energy_j, &dynamic_j)),
            per_byte: options.bytes.and_then(|bytes| per_unit_figures("byte", bytes, &energy_j, &dynamic_j)),
            cross_check,
            rails,
            warnings,
            wall_time_s,
            options: Some(*options),
            stop: Some(stop.clone()),
            drift,
            time_basis: Default::default(),
            thermal,
            // The session's launch-bound probe fills it in.
            back_to_back_s: None,
            graph_launches: None,
        },
    })
}

/// An estimate per launch divided among `units_per_launch` units of work (ops, bytes,
/// loop iterations, instructions); `None` unless the count is finite and positive.
pub fn per_unit(per_launch: &Estimate, units_per_launch: f64) -> Option<Estimate> {
    (units_per_launch > 0.0 && units_per_launch.is_finite()).then(|| per_launch.scaled(1.0 / units_per_launch))
}

/// Total and dynamic energy per `unit` ("op", "byte") for `units_per_launch` units in each
/// launch.
fn per_unit_figures(unit: &str, units_per_launch: f64, energy_j: &Estimate, dynamic_j: &Estimate) -> Option<PerUnit> {
    Some(PerUnit {
        unit: unit.to_string(),
        units_per_launch,
        energy_j: per_unit(energy_j, units_per_launch)?,
        dynamic_j: per_unit(dynamic_j, units_per_launch)?,
    })
}

/// `a − b` of two independent estimates: the means subtract, the intervals' half-widths
/// and the standard deviations add in quadrature, the count is the smaller one.
pub fn difference(a: &Estimate, b: &Estimate) -> Estimate {
    let half = |e: &Estimate| 0.5 * (e.ci_high - e.ci_low);
    let mean = a.mean - b.mean;
    let h = (half(a).powi(2) + half(b).powi(2)).sqrt();
    Estimate {
        mean,
        ci_low: mean - h,
        ci_high: mean + h,
        n: a.n.min(b.n),
        std_dev: (a.std_dev.powi(2) + b.std_dev.powi(2)).sqrt(),
    }
}

/// Net energy per operation from a kernel and its baseline (Arafa et al.: the same loop
/// without the instructions under test): (E_with − E_without) / ops, with an interval
/// combining both (the two measurements are independent).
pub fn net_per_op(with: &Estimate, without: &Estimate, ops_per_launch: f64) -> Option<Estimate> {
    per_unit(&difference(with, without), ops_per_launch)
}

/// The net energy of `with` against its baseline kernel `without`, per op of `with` (its
/// options' count, 1 when none was given: per launch).
pub fn net_energy(with: &Measurement, without: &Measurement) -> Option<NetEnergy> {
    let ops = with.options.and_then(|o| o.ops).unwrap_or(1.0);
    net_per_op(&with.energy_j, &without.energy_j, ops).map(|energy_j| NetEnergy {
        baseline_id: without.id.clone(),
        ops_per_launch: ops,
        energy_j,
    })
}

/// The energy per launch of every rail the trace holds, over the same windows as the
/// board's, each with its own model (its calibration, else its default; never the model
/// given for the board's source). A rail that failed while recorded, or whose readings
/// cannot be analyzed, gives a warning instead of a figure; the board's figures stand. A
/// rail's active idle above the board's own (`board_idle_w`: a rail is a part of the board)
/// or below nothing, and a dynamic figure below nothing, are left out: a rail whose sensor
/// averages over longer than the idle measured around the stretch (the memory rail's 1 s
/// boxcar after a paired run's one-interval tail read 459 W against a board idle of 121 W)
/// gives its energy only.
fn rail_energies(
    trace: &Trace,
    windows: &[Window],
    board: &AnalysisOptions,
    launches: f64,
    board_idle_w: f64,
    warnings: &mut Vec<Warning>,
) -> Vec<RailEnergy> {
    if let Some(why) = trace.metadata(RAIL_FAILED) {
        warnings.push(Warning::new(
            WarningKind::RailUnavailable,
            format!("a rail stopped being read during the measurement ({why}); the board's figures stand"),
        ));
    }
    let mut rails = Vec::new();
    for rail in SourceKind::rails().filter(|&k| !trace.series(&Channel::Source(k)).is_empty()) {
        let options = AnalysisOptions { source: Some(rail), model: ModelChoice::Auto, ..board.clone() };
        let figures = analyze_windows(trace, windows, &options).and_then(|a| {
            let per_launch = |values: Vec<f64>| Estimate::from_values(&values);
            let energy_j = per_launch(a.windows.iter().map(|w| w.energy_j / launches).collect());
            let dynamic_j = per_launch(a.windows.iter().map(|w| w.dynamic_j / launches).collect());
            let energy_j = energy_j.filter(|e| e.validate(true).is_ok()).ok_or_else(|| {
                Error::new(ErrorKind::Analysis, "no positive, finite energy per launch in the windows")
            })?;
            let (idle_w, dynamic_j) = rail_idle_and_dynamic(a.idle_w, dynamic_j, energy_j.mean, board_idle_w);
            Ok(RailEnergy { source: rail, sensor_model: a.sensor_model, energy_j, dynamic_j, idle_w })
        });
        match figures {
            Ok(figures) => rails.push(figures),
            Err(e) => warnings.push(Warning::new(
                WarningKind::RailUnavailable,
                format!("the {rail} rail was recorded but gives no figure: {}", e.message()),
            )),
        }
    }
    rails
}

/// A rail's active idle and dynamic energy per launch as a result may hold them: the idle
/// only where finite, not below nothing and not above the board's own (`board_idle_w`); the
/// dynamic figure only with that idle, not below nothing and not above the rail's energy per
/// launch (`energy_j`), and one a result file would accept.
fn rail_idle_and_dynamic(
    idle_w: f64,
    dynamic_j: Option<Estimate>,
    energy_j: f64,
    board_idle_w: f64,
) -> (Option<f64>, Option<Estimate>) {
    let idle_w = Some(idle_w).filter(|w| w.is_finite() && *w >= 0.0 && (board_idle_w.is_nan() || *w <= board_idle_w));
    let dynamic_j = dynamic_j
        .filter(|d| d.validate(false).is_ok() && d.mean >= 0.0 && d.mean <= energy_j)
        .filter(|_| idle_w.is_some());
    (idle_w, dynamic_j)
}

/// How the windows moved from the first to the last: the energy per launch (least-squares
/// trend over the windows, significant when its 95 % interval excludes zero), the
/// temperature and the SM clock.
fn drift(windows: &[WindowResult], launches: f64) -> Option<Drift> {
    if windows.len() < 3 {
        return None;
    }
    let points: Vec<(f64, f64)> =
        windows.iter().enumerate().map(|(i, w)| (i as f64, w.energy.energy_j / launches)).collect();
    let fit = linear_fit(&points)?;
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let span = (windows.len() - 1) as f64;
    let change = fit.slope * span / mean * 100.0;
    let half = student_t_975(windows.len() - 2) * fit.slope_std_err * span / mean * 100.0;
    let clocks: Vec<u32> = windows.iter().filter_map(|w| w.sm_clock_mhz).collect();
    Some(Drift {
        energy_change_pct: change,
        energy_change_half_width_pct: half,
        energy_significant: change.abs() > half,
        temperature_first_c: windows.first().and_then(|w| w.temperature_c),
        temperature_last_c: windows.last().and_then(|w| w.temperature_c),
        sm_clock_min_mhz: clocks.iter().min().copied(),
        sm_clock_max_mhz: clocks.iter().max().copied(),
    })
}

/// Warnings from the device state before and after.
fn state_warnings(before: &DeviceFacts, after: &DeviceFacts) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if let (Some(t0), Some(t1)) = (before.temperature_c, after.temperature_c) {
        if t1 >= t0 + 5 {
            warnings.push(Warning::new(
                WarningKind::ThermalDrift,
                format!(
                    "the GPU warmed from {t0} °C to {t1} °C during the measurement; power creeps up with temperature"
                ),
            ));
        }
    }
    if let (Some(m0), Some(m1)) = (before.mem_clock_mhz, after.mem_clock_mhz) {
        if m0 != m1 {
            warnings.push(Warning::new(
                WarningKind::ClockChange,
                format!("the memory clock moved from {m0} MHz to {m1} MHz"),
            ));
        }
    }
    let limiting = after.limiting_throttle_reasons();
    if !limiting.is_empty() {
        warnings.push(Warning::new(
            WarningKind::Throttling,
            format!("the GPU reported throttle reasons: {}", limiting.join(", ")),
        ));
    }
    let others: Vec<String> = after.other_processes().iter().map(|p| p.pid.to_string()).collect();
    if !others.is_empty() {
        warnings.push(Warning::new(
            WarningKind::OtherProcesses,
            format!("other processes used the GPU during the measurement (pids {})", others.join(", ")),
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuProcess;

    #[test]
    fn a_rail_keeps_no_idle_above_the_boards_and_no_dynamic_below_nothing() {
        let dynamic = |values: &[f64]| Estimate::from_values(values);
        // A sound rail: both kept.
        let (idle, dyn_j) = rail_idle_and_dynamic(23.1, dynamic(&[0.017, 0.018, 0.019]), 0.064, 129.2);
        assert_eq!(idle, Some(23.1));
        assert!(dyn_j.is_some_and(|d| (d.mean - 0.018).abs() < 1e-12));
        // The memory rail's 1 s boxcar after a paired run's short tail (a simulated H100,
        // 2026-12-02): 458.6 W of "idle" against a board idle of 121.2 W, dynamic −3.38 mJ.
        let (idle, dyn_j) = rail_idle_and_dynamic(458.6, dynamic(&[-3.3e-3, -3.4e-3, -3.44e-3]), 1.752e-3, 121.2);
        assert_eq!((idle, dyn_j.is_some()), (None, false));
        // A plausible idle with a dynamic figure below nothing: the idle stays, the dynamic goes.
        let (idle, dyn_j) = rail_idle_and_dynamic(60.0, dynamic(&[-2.0e-4, -2.1e-4, -2.2e-4]), 0.05, 121.2);
        assert_eq!((idle, dyn_j.is_some()), (Some(60.0), false));
        // Nothing finite, nothing kept.
        assert_eq!(rail_idle_and_dynamic(f64::NAN, None, 0.05, 121.2), (None, None));
    }

    #[test]
    fn net_energy_subtracts_the_baseline_and_widens_the_interval() {
        let with = Estimate::from_values(&[10.0, 10.2, 9.8]).unwrap();
        let without = Estimate::from_values(&[4.0, 4.1, 3.9]).unwrap();
        let net = net_per_op(&with, &without, 2.0).unwrap();
        assert!((net.mean - 3.0).abs() < 1e-12);
        let half = 0.5 * (net.ci_high - net.ci_low);
        let half_with = 0.5 * (with.ci_high - with.ci_low) / 2.0;
        assert!(half > half_with);
        assert!(net_per_op(&with, &without, 0.0).is_none());
    }

    #[test]
    fn device_state_changes_become_warnings() {
        let before = DeviceFacts { temperature_c: Some(40), mem_clock_mhz: Some(2619), ..DeviceFacts::default() };
        let after = DeviceFacts {
            temperature_c: Some(47),
            mem_clock_mhz: Some(1593),
            throttle_reasons: vec!["GPU_IDLE".into(), "HW_POWER_BRAKE_SLOWDOWN".into()],
            processes: vec![
                GpuProcess { pid: std::process::id(), used_memory_bytes: None },
                GpuProcess { pid: 1, used_memory_bytes: Some(1 << 30) },
            ],
            ..DeviceFacts::default()
        };
        let kinds: Vec<WarningKind> = state_warnings(&before, &after).iter().map(|w| w.kind).collect();
        assert_eq!(
            kinds,
            vec![
                WarningKind::ThermalDrift,
                WarningKind::ClockChange,
                WarningKind::Throttling,
                WarningKind::OtherProcesses
            ]
        );
        assert!(state_warnings(&before, &before).is_empty());
    }

    #[test]
    fn precision_reached_is_said_only_when_the_final_interval_holds_it() {
        // Issue 60: "precision reached" beside a final ±9.62 % against ±1 % asked.
        let text = stop_text("precision reached", Some(0.0098), 0.0962, 0.01, 12);
        assert_eq!(
            text,
            "stopped short: the windows covered during the run reached ±0.98 %, all 12 windows read afterwards give ±9.62 % (±1.00 % asked)"
        );
        assert_eq!(stop_text("precision reached", Some(0.0098), 0.0099, 0.01, 12), "precision reached");
        assert_eq!(stop_text("window limit", None, 0.0962, 0.01, 40), "window limit");
    }
}
