//! Running a measurement: warm up, plan the windows, launch back to back inside marked
//! windows while the sensors are sampled, analyze.
//!
//! A window holds enough back-to-back launches to span several counter ticks (a 20 µs
//! kernel is repeated tens of thousands of times, a 1 s kernel runs alone); each
//! window's GPU time comes from CUDA events. Windows are separated by idle gaps long
//! enough to measure active idle on both sides of each. On a virtual clock (the
//! simulated GPU in tests) the kernels run first and the sensors are read afterwards
//! over the same span, deterministically.

use std::sync::Arc;

use super::analyze::{analyze_windows, AnalysisOptions, ModelChoice};
use super::calibrate::fit_calibration;
use super::calibration::Calibration;
use super::result::{CrossCheck, Measurement, WindowResult};
use super::stats::Estimate;
use super::warning::{Warning, WarningKind};
use crate::clock::VirtualClock;
use crate::device::Device;
use crate::error::{Error, ErrorKind, Result};
use crate::gpu::DeviceFacts;
use crate::sampling::{record_until, Sampler, SamplerConfig, WindowMarker};
use crate::sensors::{SensorModel, SourceKind};
use crate::sim::{SimGpu, SimKernel};
use crate::trace::{Trace, WindowEdge, AUXILIARY_WINDOW};
use crate::workload::Workload;

/// A kernel on the simulated GPU: a duration and a power.
pub struct SimWorkload {
    gpu: SimGpu,
    kernel: SimKernel,
    /// Relative standard deviation of a batch's kernel duration (the GPU clock wanders).
    time_jitter: f64,
    seed: u64,
    batches: i64,
}

impl SimWorkload {
    /// Launches `kernel` on `gpu`, every batch taking exactly its nominal time.
    pub fn new(gpu: SimGpu, kernel: SimKernel) -> Self {
        SimWorkload { gpu, kernel, time_jitter: 0.0, seed: 0, batches: 0 }
    }

    /// Lets each batch's kernel duration vary by `relative` (standard deviation), drawn
    /// from `seed`: a real GPU's clock wanders a little, and criterion's statistics
    /// expect samples that are not all identical.
    pub fn with_time_jitter(mut self, relative: f64, seed: u64) -> Self {
        self.time_jitter = relative;
        self.seed = seed;
        self
    }
}

impl Workload for SimWorkload {
    fn run_batch(&mut self, launches: u64) -> Result<f64> {
        let mut first_start = None;
        let mut last_end = 0.0;
        let scale = 1.0 + self.time_jitter * crate::sim::noise::gaussian(self.seed, 0x77, self.batches);
        self.batches += 1;
        let kernel = SimKernel { duration_s: self.kernel.duration_s * scale.max(0.5), ..self.kernel };
        for _ in 0..launches {
            let (start, end) = self.gpu.launch(kernel);
            first_start.get_or_insert(start);
            last_end = end;
        }
        self.gpu.synchronize();
        Ok(first_start.map_or(0.0, |s| last_end - s))
    }
}

/// How to measure.
#[derive(Clone, Debug)]
pub struct MeasureConfig {
    /// Benchmark id (goes into the result).
    pub id: String,
    /// Source to measure with; `None` picks the best the GPU has.
    pub source: Option<SourceKind>,
    /// Sensor model choice.
    pub model: ModelChoice,
    /// The GPU's calibration, if any.
    pub calibration: Option<Calibration>,
    /// Relative precision asked of the energy per launch (half-width of its 95 %
    /// interval over the mean); it sets the window length (below) and a warning
    /// when missed.
    pub precision: f64,
    /// Shortest window, s. The window is `max(min_window_s, 0.005 / precision)` long:
    /// 0.5 s for 1 %, about five counter ticks.
    pub min_window_s: f64,
    /// Number of windows.
    pub windows: usize,
    /// Warm-up before planning, s (the first launch also JIT-compiles and loads).
    pub warmup_s: f64,
    /// Idle between windows, s (at least two whole counter ticks, so the idle after each
    /// window is measured).
    pub idle_gap_s: f64,
    /// Upper bound on launches per window.
    pub max_launches_per_window: u64,
    /// Sources recorded besides the measured one (for comparisons; they cost sampler time only).
    pub record_also: Vec<SourceKind>,
    /// Wall time one measurement should fit in, s: fewer windows (never under 3) for
    /// long kernels.
    pub target_wall_s: f64,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            id: "kernel".into(),
            source: None,
            model: ModelChoice::Auto,
            calibration: None,
            precision: 0.01,
            min_window_s: 0.5,
            windows: 5,
            warmup_s: 0.2,
            idle_gap_s: 0.25,
            max_launches_per_window: 50_000_000,
            record_also: Vec::new(),
            target_wall_s: 5.0,
        }
    }
}

/// The plan of a measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Launches per window.
    pub launches_per_window: u64,
    /// Windows.
    pub windows: usize,
    /// Idle before the first window, s.
    pub lead_s: f64,
    /// Idle between windows and after the last, s.
    pub gap_s: f64,
    /// GPU time per launch from the warm-up, s.
    pub launch_s: f64,
}

/// Idle needed before the first window for a source's model to settle.
fn lead_in_s(model: &SensorModel) -> f64 {
    match *model {
        SensorModel::Boxcar { width_s } => width_s + 0.5,
        SensorModel::FirstOrder { tau_s } => (3.0 * tau_s).max(0.3),
        // Two whole counter ticks of idle, whatever the phase.
        _ => 0.3,
    }
}

/// Plans windows for a kernel taking `launch_s` per launch.
pub fn plan(config: &MeasureConfig, launch_s: f64, model: &SensorModel) -> Plan {
    let window_s = config.min_window_s.max(0.005 / config.precision.max(1e-4));
    // The launch count nearest the window length: 5 launches of 99.9 ms make a fine
    // "0.5 s" window; rounding up to 6 would cost a tenth of a second per window.
    let launches = (window_s / launch_s.max(1e-9)).round().clamp(1.0, config.max_launches_per_window as f64) as u64;
    let lead_s = lead_in_s(model);
    // As many windows as asked, but no more than fit the wall-time target (at least 3:
    // fewer give no useful interval). Long kernels get fewer, longer windows.
    let cycle = launches as f64 * launch_s + config.idle_gap_s;
    let fit = ((config.target_wall_s - lead_s - config.idle_gap_s.max(0.3)) / cycle).floor().max(0.0) as usize;
    Plan {
        launches_per_window: launches,
        windows: fit.clamp(3, config.windows.max(3)),
        lead_s,
        gap_s: config.idle_gap_s,
        launch_s,
    }
}

/// Runs `body` with the device's `sources` sampled around it (a sampler thread on a real
/// clock; afterwards, over the same span, on a virtual one); returns its value and the
/// trace with the marks `body` set.
pub fn record<R>(
    device: &Device,
    sources: &[SourceKind],
    body: impl FnOnce(&WindowMarker) -> Result<R>,
) -> Result<(R, Trace)> {
    let (opened, _) = device.open_sources(sources);
    if opened.is_empty() {
        return Err(Error::new(
            ErrorKind::NotSupported,
            format!("none of the sources {sources:?} works on {}", device.facts().name),
        ));
    }
    let clock = device.clock().clone();
    if clock.is_virtual() {
        let marker = WindowMarker::standalone(clock.clone());
        let begin = clock.now_s();
        let value = body(&marker)?;
        let end = clock.now_s();
        let replay = VirtualClock::starting_at(begin);
        let mut trace = record_until(opened, &replay, end, SamplerConfig::default())?;
        for mark in marker.marks() {
            trace.push_mark(mark);
        }
        return Ok((value, trace));
    }
    let sampler = Sampler::start(opened, clock, SamplerConfig::default())?;
    let marker = sampler.marker();
    let value = body(&marker);
    let trace = sampler.stop()?;
    Ok((value?, trace))
}

/// The sources to record: the chosen one (or all, to choose from) plus the sample
/// buffer as a cross-check when the counter is measured.
fn sources_to_record(device: &Device, chosen: Option<SourceKind>) -> Vec<SourceKind> {
    match chosen {
        Some(SourceKind::Counter) => vec![SourceKind::Counter, SourceKind::SampleBuffer],
        Some(kind) => vec![kind],
        None => {
            let available: Vec<SourceKind> =
                SourceKind::ALL.into_iter().filter(|&k| device.open_source(k).is_ok()).collect();
            if available.contains(&SourceKind::Counter) {
                available.into_iter().filter(|k| matches!(k, SourceKind::Counter | SourceKind::SampleBuffer)).collect()
            } else {
                available
            }
        }
    }
}

/// What [`prepare`] settles before any window runs.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The window plan.
    pub plan: Plan,
    /// The sources to record.
    pub sources: Vec<SourceKind>,
    /// How the trace will be analyzed.
    pub options: AnalysisOptions,
}

/// Warms the workload up (the first launch also loads and JIT-compiles; then batches
/// double until `config.warmup_s` of GPU time is spent), and plans the windows.
pub fn prepare(device: &Device, workload: &mut dyn Workload, config: &MeasureConfig) -> Result<Prepared> {
    let launch_s = warm_up(workload, config)?;
    let (sources, options, model) = choose(device, config);
    Ok(Prepared { plan: plan(config, launch_s, &model), sources, options })
}

/// Warms the workload up and returns its GPU time per launch: the first launch also
/// loads and JIT-compiles; then batches double until `config.warmup_s` is spent. A first
/// launch that already lasts the warm-up (a 1 s kernel) is the estimate itself.
fn warm_up(workload: &mut dyn Workload, config: &MeasureConfig) -> Result<f64> {
    let first = workload.run_batch(1)?;
    warm_up_from(workload, config, first)
}

fn warm_up_from(workload: &mut dyn Workload, config: &MeasureConfig, first: f64) -> Result<f64> {
    let (mut batch, mut spent, mut gpu, mut launched) =
        if first >= config.warmup_s { (2u64, first, first, 1u64) } else { (1u64, 0.0, 0.0, 0u64) };
    while spent < config.warmup_s {
        let t = workload.run_batch(batch)?;
        spent += t.max(1e-6);
        gpu += t;
        launched += batch;
        batch = (batch * 2).min(config.max_launches_per_window);
    }
    Ok(gpu / launched as f64)
}

/// The sources to record, the analysis options and the primary source's model.
fn choose(device: &Device, config: &MeasureConfig) -> (Vec<SourceKind>, AnalysisOptions, SensorModel) {
    let mut sources = sources_to_record(device, config.source);
    for &extra in &config.record_also {
        if !sources.contains(&extra) && device.open_source(extra).is_ok() {
            sources.push(extra);
        }
    }
    let primary = config.source.unwrap_or(if sources.contains(&SourceKind::Counter) {
        SourceKind::Counter
    } else {
        sources.first().copied().unwrap_or(SourceKind::PowerUsage)
    });
    let options = AnalysisOptions {
        source: config.source,
        model: config.model.clone(),
        calibration: config.calibration.clone(),
        power_limit_w: device.facts().power_limit_w,
        ..AnalysisOptions::default()
    };
    let model = match &config.model {
        ModelChoice::Explicit(m) => *m,
        _ => config
            .calibration
            .as_ref()
            .and_then(|c| c.model_for(primary).map(|m| m.0))
            .unwrap_or_else(|| super::analyze::default_model(primary)),
    };
    (sources, options, model)
}

/// Everything a finished measurement consists of, for [`summarize`].
pub struct Finished<'a> {
    /// The configuration it ran with.
    pub config: &'a MeasureConfig,
    /// Its preparation.
    pub prepared: &'a Prepared,
    /// The recorded trace, window marks included.
    pub trace: &'a Trace,
    /// GPU time of each window, s, in window order.
    pub gpu_times: &'a [f64],
    /// Device facts before and after.
    pub facts_before: &'a DeviceFacts,
    /// Device facts after the last window.
    pub facts_after: &'a DeviceFacts,
    /// When it began (RFC 3339).
    pub timestamp: String,
    /// Wall time it took, s.
    pub wall_time_s: f64,
}

/// Analyzes a finished measurement: per-window energies, estimates with intervals,
/// the sample-buffer cross-check, and warnings.
pub fn summarize(done: Finished<'_>) -> Result<Measurement> {
    let Finished { config, prepared, trace, gpu_times, facts_before, facts_after, timestamp, wall_time_s } = done;
    let plan = &prepared.plan;
    let windows = trace.windows()?;
    let measured = windows.iter().filter(|w| w.index != AUXILIARY_WINDOW).count();
    if measured != gpu_times.len() {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("{measured} windows marked but {} GPU times recorded", gpu_times.len()),
        ));
    }
    let analysis = analyze_windows(trace, &windows, &prepared.options)?;
    let n = plan.launches_per_window as f64;
    let per_window: Vec<WindowResult> = analysis
        .windows
        .iter()
        .zip(gpu_times)
        .map(|(w, &gpu_s)| WindowResult {
            energy: w.clone(),
            launches: plan.launches_per_window,
            gpu_time_s: gpu_s,
            sm_clock_mhz: facts_after.sm_clock_mhz,
            temperature_c: facts_after.temperature_c,
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

    let mut warnings = analysis.warnings.clone();
    if energy_j.relative_half_width() > config.precision {
        warnings.push(Warning::new(
            WarningKind::Imprecise,
            format!(
                "the 95 % interval of the energy per launch is ±{:.2} %, wider than the ±{:.2} % asked (CV {:.2} % over {} windows)",
                energy_j.relative_half_width() * 100.0,
                config.precision * 100.0,
                energy_j.cv() * 100.0,
                energy_j.n
            ),
        ));
    }
    warnings.extend(state_warnings(facts_before, facts_after));

    // Cross-check with the sample buffer when the counter was the source.
    let cross_check = if analysis.source == SourceKind::Counter
        && !trace.series(&SourceKind::SampleBuffer.channel()).is_empty()
    {
        let check_options = AnalysisOptions {
            source: Some(SourceKind::SampleBuffer),
            model: ModelChoice::Auto,
            ..prepared.options.clone()
        };
        analyze_windows(trace, &windows, &check_options).ok().and_then(|check| {
            let values: Vec<f64> = check.windows.iter().map(|w| w.energy_j / n).collect();
            let e = Estimate::from_values(&values)?;
            let difference_pct = (e.mean / energy_j.mean - 1.0) * 100.0;
            if difference_pct.abs() > 5.0 {
                warnings.push(Warning::new(
                    WarningKind::SourceDisagreement,
                    format!("the sample buffer gives {difference_pct:+.1} % against the counter for the same windows"),
                ));
            }
            Some(CrossCheck {
                source: SourceKind::SampleBuffer,
                sensor_model: check.sensor_model,
                energy_j: e,
                difference_pct,
            })
        })
    } else {
        None
    };

    Ok(Measurement {
        id: config.id.clone(),
        simulated: facts_before.simulated,
        device: facts_before.clone(),
        timestamp,
        source: analysis.source,
        sensor_model: analysis.sensor_model,
        model_origin: analysis.model_origin.clone(),
        launches_per_window: plan.launches_per_window,
        windows: per_window,
        energy_j,
        dynamic_j,
        time_s,
        power_w,
        idle_w: analysis.idle_w,
        ticks_per_window,
        per_op: None,
        per_byte: None,
        cross_check,
        warnings,
        wall_time_s,
    })
}

/// Adds the metadata every measurement trace carries.
pub fn annotate_trace(
    trace: &mut Trace,
    id: &str,
    facts_before: &DeviceFacts,
    facts_after: &DeviceFacts,
    plan: &Plan,
    gpu_times: &[f64],
) {
    trace.set_metadata("benchmark", id);
    facts_before.annotate(trace, "start");
    facts_after.annotate(trace, "end");
    trace.set_metadata("launches per window", plan.launches_per_window);
    for (i, g) in gpu_times.iter().enumerate() {
        trace.set_metadata(&format!("window {i} gpu_time_s"), format!("{g:.9}"));
    }
}

/// Measures the energy of one launch of `workload`: warm-up, planned windows of
/// back-to-back launches with idle between them, analysis.
pub fn measure(
    device: &mut Device,
    workload: &mut dyn Workload,
    config: &MeasureConfig,
) -> Result<(Measurement, Trace)> {
    let clock = device.clock().clone();
    let wall_start = clock.now_s();
    let timestamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let facts_before = device.facts().clone();
    let (sources, options, model) = choose(device, config);
    // The warm-up runs inside the recording, after the lead-in idle: when its first launch
    // is already a whole window (a 1 s kernel), it is measured as window 0 instead of
    // being thrown away.
    let ((plan, gpu_times), mut trace) = record(device, &sources, |marker| {
        clock.sleep_s(lead_in_s(&model));
        let t0 = clock.now_s();
        let first = workload.run_batch(1)?;
        let t1 = clock.now_s();
        let launch_s = warm_up_from(workload, config, first)?;
        let plan = plan(config, launch_s, &model);
        let mut gpu_times = Vec::with_capacity(plan.windows);
        if plan.launches_per_window == 1 && first >= launch_s * 0.98 {
            marker.at(0, WindowEdge::Start, t0);
            marker.at(0, WindowEdge::End, t1);
            gpu_times.push(first);
        } else {
            // Marked so that its busy power is not taken for idle around window 0.
            marker.at(AUXILIARY_WINDOW, WindowEdge::Start, t0);
            marker.at(AUXILIARY_WINDOW, WindowEdge::End, clock.now_s());
        }
        clock.sleep_s(plan.gap_s);
        while gpu_times.len() < plan.windows {
            let i = gpu_times.len() as u32;
            marker.start(i);
            let gpu_s = workload.run_batch(plan.launches_per_window)?;
            marker.end(i);
            gpu_times.push(gpu_s);
            clock.sleep_s(plan.gap_s);
        }
        clock.sleep_s((0.3 - plan.gap_s).max(0.0));
        Ok((plan, gpu_times))
    })?;
    let _ = device.refresh();
    let facts_after = device.facts().clone();
    annotate_trace(&mut trace, &config.id, &facts_before, &facts_after, &plan, &gpu_times);
    let prepared = Prepared { plan, sources, options };
    let measurement = summarize(Finished {
        config,
        prepared: &prepared,
        trace: &trace,
        gpu_times: &gpu_times,
        facts_before: &facts_before,
        facts_after: &facts_after,
        timestamp,
        wall_time_s: clock.now_s() - wall_start,
    })?;
    Ok((measurement, trace))
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

/// The shape of a calibration step response.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepPlan {
    /// Idle before the step, s.
    pub idle_before_s: f64,
    /// Busy time, s.
    pub busy_s: f64,
    /// Idle after the step, s.
    pub idle_after_s: f64,
    /// Short pulses after the step (windows 1..): their edges fall at many phases of the
    /// 100 ms field updates, which is what reveals a gate's width. Run only on GPUs with
    /// an energy counter, whose profile is the reference.
    pub pulses: usize,
    /// Length of each pulse, s.
    pub pulse_s: f64,
    /// Idle between pulses, s (not a multiple of the update period).
    pub pulse_gap_s: f64,
}

impl Default for StepPlan {
    fn default() -> Self {
        StepPlan { idle_before_s: 2.0, busy_s: 3.0, idle_after_s: 3.0, pulses: 12, pulse_s: 0.04, pulse_gap_s: 0.173 }
    }
}

/// Runs a step response with every source sampled, and fits each source's model.
///
/// The recording begins before the warm-up launches (so the counter's profile, the
/// reference the other sources are fitted against, includes them), then idles for
/// `plan.idle_before_s`, runs `workload` for `plan.busy_s` in window 0, idles for
/// `plan.idle_after_s`, then runs the pulses (windows 1..) on GPUs with a counter.
pub fn calibrate(device: &Device, workload: &mut dyn Workload, plan: StepPlan) -> Result<(Calibration, Trace)> {
    let clock = device.clock().clone();
    let pulses = if device.open_source(SourceKind::Counter).is_ok() { plan.pulses } else { 0 };
    let ((gpu_times, launches, warmup_end_s), mut trace) = record(device, &SourceKind::ALL, |marker| {
        clock.sleep_s(0.3);
        workload.run_batch(1)?;
        let probe = workload.run_batch(4)?;
        let warmup_end_s = clock.now_s();
        let launch_s = (probe / 4.0).max(1e-7);
        let launches = (plan.busy_s / launch_s).round().max(1.0) as u64;
        clock.sleep_s(plan.idle_before_s);
        marker.start(0);
        let mut gpu_times = vec![workload.run_batch(launches)?];
        marker.end(0);
        clock.sleep_s(plan.idle_after_s);
        if pulses > 0 {
            let per_pulse = (plan.pulse_s / launch_s).round().max(1.0) as u64;
            for i in 1..=pulses {
                marker.start(i as u32);
                gpu_times.push(workload.run_batch(per_pulse)?);
                marker.end(i as u32);
                clock.sleep_s(plan.pulse_gap_s);
            }
            clock.sleep_s(1.0);
        }
        Ok((gpu_times, launches, warmup_end_s))
    })?;
    for (i, gpu_s) in gpu_times.iter().enumerate() {
        trace.set_metadata(&format!("window {i} gpu_time_s"), format!("{gpu_s:.9}"));
    }
    trace.set_metadata("warmup_end_s", format!("{warmup_end_s:.9}"));
    trace.set_metadata("launches", launches);
    device.facts().annotate(&mut trace, "start");
    let calibration = fit_calibration(&trace, device.facts())?;
    Ok((calibration, trace))
}

/// A simulated device on a virtual clock: measurements on it run in milliseconds.
pub fn virtual_sim_device(preset: crate::sim::SimPreset) -> (Device, SimGpu) {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(preset, clock);
    (Device::simulated(gpu.clone(), "virtual simulated GPU (tests)"), gpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuProcess;

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
    fn plans_fill_the_window_with_back_to_back_launches() {
        let config = MeasureConfig::default();
        let counter = SensorModel::Counter { period_s: 0.1 };
        assert_eq!(plan(&config, 20e-6, &counter).launches_per_window, 25_000);
        assert_eq!(plan(&config, 1.0, &counter).launches_per_window, 1);
        let tighter = MeasureConfig { precision: 0.002, ..MeasureConfig::default() };
        assert_eq!(plan(&tighter, 1e-3, &counter).launches_per_window, 2_500);
        assert!(plan(&config, 1e-3, &SensorModel::Boxcar { width_s: 1.0 }).lead_s >= 1.5);
    }
}
