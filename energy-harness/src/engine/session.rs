//! The session engine: one measurement protocol behind [`measure`], the criterion glue,
//! budgets and both suites.
//!
//! ```text
//!   idle (lead)   warm-up (auxiliary)   window 0 | window 1 | … | window n-1   idle (tail)
//!   ───────────┐┌──────────────────────────────────────────────────────────┐┌──────────
//!              └┘                         one busy stretch                  └┘
//! ```
//!
//! [`Session::prepare`] starts the recorder (the sampler thread on a real GPU), measures
//! active idle for the lead-in, then warms the kernel up: the first launch (which also
//! loads and JIT-compiles) and doubling batches until [`WARMUP_S`] of GPU time, marked as
//! an auxiliary window so the busy time before window 0 brings the clocks up (a burst
//! after idle reads low for its first ~25 ms, DESIGN.md §6) and is never taken for idle.
//! From the warm-up's time per launch it plans the windows.
//!
//! [`Session::window`] runs one window: as many back-to-back launches as fill the window
//! length, timed by CUDA events, marked from the host, right after the previous window
//! (no idle between them: their inner edges fall where power is steady, and a counter's
//! ticks interpolate them well). [`Session::enough`] says when to stop: the 95 % interval
//! of the energy per launch has reached the asked precision (over the windows the sensor
//! already covers), or the window limit is reached. [`Session::finish`] measures the idle
//! tail, stops the recorder and analyzes everything.
//!
//! Nothing waits without measuring: the lead and the tail are the active-idle
//! measurement, the warm-up is the kernel itself. The SM clock and temperature are read by
//! the sampler alongside the sensors and reported per window, with their drift.

use super::analyze::{analyze_windows, AnalysisOptions, ModelChoice};
use super::calibration::Calibration;
use super::options::{MeasureOptions, ResolvedOptions};
use super::result::Measurement;
use super::stats::Estimate;
use super::summary::{summarize, Summary};
use super::thermal::ThermalCalibration;
use crate::clock::SharedClock;
use crate::device::Device;
use crate::error::{Error, ErrorKind, Result};
use crate::gpu::DeviceFacts;
use crate::sampling::{Recorder, SamplerConfig, WindowMarker};
use crate::sensors::{SensorModel, SourceKind};
use crate::trace::{Channel, Trace, Window, AUXILIARY_WINDOW};
use crate::workload::{TimeBasis, Workload};

/// GPU time the warm-up spends before the first window, s.
pub const WARMUP_S: f64 = 0.2;

/// Most launches in one window.
const MAX_LAUNCHES_PER_WINDOW: u64 = 50_000_000;

/// The index of the not-yet-covered rest of the stretch in an early-stop check.
const PENDING_WINDOW: u32 = AUXILIARY_WINDOW - 1;

/// How far before the newest sensor update the pending rest of an early-stop check ends,
/// s: more than a reporting delay (3.8-12.2 ms measured on H100s) and the update's stamp.
const PENDING_MARGIN_S: f64 = 0.04;

/// How far before the pending rest's end a covered window ends, s: the curve interval
/// across its end (up to a counter period, 100 ms) lies within the two.
const COVER_MARGIN_S: f64 = 0.12;

/// What to measure and how: the options (resolved by the session) and what the caller
/// knows of the GPU.
#[derive(Clone, Debug)]
pub struct MeasureRequest {
    /// Benchmark id (goes into the result).
    pub id: String,
    /// The options asked for.
    pub options: MeasureOptions,
    /// The caller's floor on the window count (criterion needs 10 samples).
    pub min_windows: usize,
    /// Sensor model choice.
    pub model: ModelChoice,
    /// The GPU's calibration, if any.
    pub calibration: Option<Calibration>,
    /// Sources recorded besides the measured one (for comparisons).
    pub record_also: Vec<SourceKind>,
    /// The GPU's thermal calibration, if any: the result then carries its energy at the
    /// reference temperature too.
    pub thermal: Option<ThermalCalibration>,
}

impl MeasureRequest {
    /// A request for `id` with `options`, the default model and no calibration.
    pub fn new(id: impl Into<String>, options: MeasureOptions) -> Self {
        MeasureRequest {
            id: id.into(),
            options,
            min_windows: MeasureOptions::MIN_WINDOWS,
            model: ModelChoice::Auto,
            calibration: None,
            record_also: Vec::new(),
            thermal: None,
        }
    }

    /// The GPU's thermal calibration.
    pub fn thermal(mut self, thermal: Option<ThermalCalibration>) -> Self {
        self.thermal = thermal;
        self
    }

    /// At least `windows` windows (unless the kernel is too long for them, see the plan).
    pub fn min_windows(mut self, windows: usize) -> Self {
        self.min_windows = windows;
        self
    }

    /// The GPU's calibration.
    pub fn calibration(mut self, calibration: Option<Calibration>) -> Self {
        self.calibration = calibration;
        self
    }

    /// The sensor model.
    pub fn model(mut self, model: ModelChoice) -> Self {
        self.model = model;
        self
    }

    /// Sources recorded besides the measured one.
    pub fn record_also(mut self, sources: Vec<SourceKind>) -> Self {
        self.record_also = sources;
        self
    }
}

/// The plan of a measurement, made from the warm-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Launches per window.
    pub launches_per_window: u64,
    /// Fewest windows.
    pub min_windows: usize,
    /// Most windows.
    pub max_windows: usize,
    /// Idle before the stretch and after it, s.
    pub idle_s: f64,
    /// GPU time per launch from the warm-up, s.
    pub launch_s: f64,
}

impl Plan {
    /// The window length, s.
    pub fn window_s(&self) -> f64 {
        self.launches_per_window as f64 * self.launch_s
    }
}

/// Idle needed before the stretch (and after it) for a source's model: two whole counter
/// ticks whatever the phase; a boxcar's width and more; three time constants of a lag.
pub fn idle_s(model: &SensorModel) -> f64 {
    match *model {
        SensorModel::Boxcar { width_s } => width_s + 0.5,
        SensorModel::FirstOrder { tau_s } => (3.0 * tau_s).max(0.3),
        _ => 0.3,
    }
}

/// Plans windows for a kernel taking `launch_s` per launch: launches per window are the
/// most that fit the window length (at least one); the window count lies between the
/// options' minimum and maximum, the maximum capped so the busy stretch stays within
/// [`MeasureOptions::MAX_BUSY_S`] (never under [`MeasureOptions::MIN_WINDOWS`]): a 1 s
/// kernel gets 4 windows of one launch, after its warm-up launch. A window count given
/// in the options is kept whatever it costs.
pub fn plan(options: &ResolvedOptions, launch_s: f64, model: &SensorModel) -> Plan {
    let launch_s = launch_s.max(1e-9);
    let window_s = options.window_s(model);
    let launches = ((window_s / launch_s) * (1.0 + 1e-9)).floor().clamp(1.0, MAX_LAUNCHES_PER_WINDOW as f64) as u64;
    let (min_windows, max_windows) = if options.fixed_windows {
        (options.min_windows, options.max_windows)
    } else {
        // (A few percent of slack, so that four launches of "1 s" fit four seconds.)
        let fit = ((MeasureOptions::MAX_BUSY_S / (launches as f64 * launch_s) * 1.03).floor() as usize)
            .max(MeasureOptions::MIN_WINDOWS);
        let max = options.max_windows.min(fit);
        (options.min_windows.min(max), max)
    };
    Plan { launches_per_window: launches, min_windows, max_windows, idle_s: idle_s(model), launch_s }
}

/// Why a session stopped adding windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The interval reached the asked precision.
    PrecisionReached,
    /// The window count was given.
    FixedWindows,
    /// The most windows (or busy time) allowed.
    WindowLimit,
}

impl StopReason {
    /// A few words for the result and the summary.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::PrecisionReached => "precision reached",
            StopReason::FixedWindows => "window count given",
            StopReason::WindowLimit => "window limit",
        }
    }
}

/// One measurement in progress.
pub struct Session {
    request: MeasureRequest,
    options: ResolvedOptions,
    plan: Plan,
    analysis: AnalysisOptions,
    primary: SourceKind,
    recorder: Recorder,
    marker: WindowMarker,
    clock: SharedClock,
    gpu_times: Vec<f64>,
    facts_before: DeviceFacts,
    timestamp: String,
    wall_start: f64,
    stop: Option<StopReason>,
    check_margin_s: f64,
    checked_windows: usize,
    time_basis: TimeBasis,
}

impl Session {
    /// Resolves the options, starts the recorder, measures the idle lead-in, warms the
    /// workload up (inside the recording, as an auxiliary window) and plans the windows.
    pub fn prepare(device: &Device, workload: &mut dyn Workload, request: MeasureRequest) -> Result<Session> {
        let options = request.options.resolve(request.min_windows)?;
        if let Some(rail) = options.source.filter(|k| !k.measures_board()) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "measurement option `source`: {rail} is a rail (a part of the board): it is recorded and reported beside the board's energy whenever the GPU has it, never the source of that energy"
                ),
            ));
        }
        let clock = device.clock().clone();
        let wall_start = clock.now_s();
        let timestamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let (sources, analysis, primary, model) = choose(device, &request, &options);
        let (opened, _) = device.open_sources(&sources);
        if opened.is_empty() {
            return Err(Error::new(
                ErrorKind::NotSupported,
                format!("none of the sources {sources:?} works on {}", device.facts().name),
            ));
        }
        let recorder = Recorder::start(opened, device.state_probe(), clock.clone(), SamplerConfig::default())?;
        let marker = recorder.marker();
        let idle = idle_s(&model);
        clock.sleep_s(idle);
        marker.start(AUXILIARY_WINDOW);
        let launch_s = warm_up(workload)?;
        marker.end(AUXILIARY_WINDOW);
        let plan = plan(&options, launch_s, &model);
        Ok(Session {
            request,
            options,
            plan,
            analysis,
            primary,
            recorder,
            marker,
            clock,
            gpu_times: Vec::new(),
            facts_before: device.facts().clone(),
            timestamp,
            wall_start,
            stop: None,
            // A counter's curve ends at its newest tick; a lagging or averaging sensor's
            // inversion needs its memory's worth of readings after a window.
            check_margin_s: match model {
                SensorModel::Counter { .. } | SensorModel::Identity => 0.0,
                _ => (idle - 0.05).max(PENDING_MARGIN_S + COVER_MARGIN_S),
            },
            checked_windows: 0,
            time_basis: workload.time_basis(),
        })
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How the trace will be analyzed (for plots of it afterwards).
    pub fn analysis_options(&self) -> &AnalysisOptions {
        &self.analysis
    }

    /// Runs the next window, right after the previous one.
    pub fn window(&mut self, workload: &mut dyn Workload) -> Result<()> {
        let index = self.gpu_times.len() as u32;
        self.marker.start(index);
        let gpu_s = workload.run_batch(self.plan.launches_per_window)?;
        self.marker.end(index);
        self.gpu_times.push(gpu_s);
        Ok(())
    }

    /// Whether the session has enough windows: the given count, the window limit, or (past
    /// the minimum) an interval of the energy per launch within the asked precision over
    /// the windows the sensor already covers. A sampler failure is an error.
    pub fn enough(&mut self) -> Result<bool> {
        let n = self.gpu_times.len();
        if n >= self.plan.max_windows {
            self.stop =
                Some(if self.options.fixed_windows { StopReason::FixedWindows } else { StopReason::WindowLimit });
            return Ok(true);
        }
        if n < self.plan.min_windows {
            return Ok(false);
        }
        let trace = self.recorder.snapshot()?;
        if let Some(half_width) = self.interval_so_far(&trace) {
            if half_width <= self.options.precision {
                self.stop = Some(StopReason::PrecisionReached);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The relative half-width of the energy-per-launch interval over the windows the
    /// sensor covers now (`None` when fewer than the minimum are covered). The part of the
    /// stretch not yet covered joins the split as one pending window, so that the interval
    /// across the last covered edge is shared, not taken for idle.
    fn interval_so_far(&mut self, trace: &Trace) -> Option<f64> {
        // The newest update: the last reading that differs from the one before it (a counter
        // repeats its value between ticks).
        let series = trace.series(&Channel::Source(self.primary));
        let latest = series.last().map_or(f64::NEG_INFINITY, |r| r.time_s);
        let newest_update = series.windows(2).rev().find(|p| p[1].value != p[0].value).map_or(latest, |p| p[1].time_s);
        let pending_end = (newest_update - PENDING_MARGIN_S).min(latest - self.check_margin_s + COVER_MARGIN_S);
        let cutoff = pending_end - COVER_MARGIN_S;
        let marks = trace.windows().ok()?;
        let mut windows: Vec<Window> = marks.iter().copied().filter(|w| w.end_s <= cutoff).collect();
        let covered = windows.iter().filter(|w| w.index != AUXILIARY_WINDOW).count();
        // The sensor covers a window a quarter second after it ends: judge the precision
        // on the covered ones once the minimum has run (all of them are in the result).
        let enough_covered = self.plan.min_windows.saturating_sub(2).max(MeasureOptions::MIN_WINDOWS);
        if covered < enough_covered || covered <= self.checked_windows {
            return None;
        }
        // The pending rest reaches as far as the readings do (less a reporting delay), past
        // the tick after the last covered edge.
        let rest = marks.iter().filter(|w| w.end_s > cutoff).map(|w| w.start_s).fold(f64::INFINITY, f64::min);
        if rest < pending_end {
            windows.push(Window { index: PENDING_WINDOW, start_s: rest, end_s: pending_end });
        }
        let analysis = analyze_windows(trace, &windows, &self.analysis).ok()?;
        let n = self.plan.launches_per_window as f64;
        let values: Vec<f64> =
            analysis.windows.iter().filter(|w| w.index != PENDING_WINDOW).map(|w| w.energy_j / n).collect();
        self.checked_windows = covered;
        Estimate::from_values(&values).map(|e| e.relative_half_width())
    }

    /// Runs windows until [`Session::enough`], then [`Session::finish`].
    pub fn run(mut self, device: &mut Device, workload: &mut dyn Workload) -> Result<(Measurement, Trace)> {
        loop {
            self.window(workload)?;
            if self.enough()? {
                break;
            }
        }
        self.finish(device)
    }

    /// Measures the idle tail, stops the recorder, and analyzes the windows.
    pub fn finish(self, device: &mut Device) -> Result<(Measurement, Trace)> {
        if self.gpu_times.is_empty() {
            return Err(Error::new(ErrorKind::Analysis, format!("{}: no window was measured", self.request.id)));
        }
        self.clock.sleep_s(self.plan.idle_s);
        let mut trace = self.recorder.stop()?;
        check_windows_agree(&self.request.id, &self.gpu_times, self.time_basis)?;
        let _ = device.refresh();
        let facts_after = device.facts().clone();
        annotate_trace(&mut trace, &self.request.id, &self.facts_before, &facts_after, &self.plan, &self.gpu_times);
        let stop = self.stop.unwrap_or(StopReason::WindowLimit);
        let mut measurement = summarize(Summary {
            id: &self.request.id,
            options: &self.options,
            launches_per_window: self.plan.launches_per_window,
            analysis: &self.analysis,
            trace: &trace,
            gpu_times: &self.gpu_times,
            facts_before: &self.facts_before,
            facts_after: &facts_after,
            timestamp: self.timestamp.clone(),
            wall_time_s: self.clock.now_s() - self.wall_start,
            stop: stop.describe(),
            thermal: self.request.thermal.as_ref(),
        })?;
        measurement.time_basis = self.time_basis;
        check_work_ended(&measurement)?;
        Ok((measurement, trace))
    }
}

/// A window whose time lies beyond this factor of the mean window's (either
/// way) did not hold its own work (host-clock windows only).
pub const WINDOW_AGREEMENT_FACTOR: f64 = 2.0;

/// More than this share of the windows beyond [`WINDOW_AGREEMENT_FACTOR`] (and at least two)
/// refuses the measurement: one late window is a host hiccup, many are a queue.
pub const WINDOW_DISAGREEMENT_SHARE: f64 = 0.1;

/// Refuses library work (host-clock windows) whose windows disagree on the time of the same
/// number of calls: the windows' wait did not end their work. A library that keeps a queue
/// of its own on the host (burn's fusion, a command encoder not yet submitted) hands CUDA
/// nothing until it flushes, so a context-wide synchronize (`any_stream`) returns at once in
/// most windows and one window in many pays for the work of all the others: each window's
/// figure is wrong and their spread is no measure of anything. Measured: burn 0.21's matmul
/// with `any_stream` on an H100 gave windows of 2 calls from near nothing to many times the
/// call's time (CV 340 %); with `wait = B::sync`, CV 2-5 %.
pub fn check_windows_agree(id: &str, window_times_s: &[f64], basis: TimeBasis) -> Result<()> {
    if basis != TimeBasis::HostClock || window_times_s.len() < 3 {
        return Ok(());
    }
    // The mean, not the median: when most windows are empty (the queue flushed in a few),
    // the median is their nothing while the mean is still the work's share of a window.
    let mean = window_times_s.iter().sum::<f64>() / window_times_s.len() as f64;
    if mean.is_nan() || mean <= 0.0 {
        return Ok(());
    }
    let outside = window_times_s
        .iter()
        .filter(|&&t| t < mean / WINDOW_AGREEMENT_FACTOR || t > mean * WINDOW_AGREEMENT_FACTOR)
        .count();
    if outside < 2 || (outside as f64) <= WINDOW_DISAGREEMENT_SHARE * window_times_s.len() as f64 {
        return Ok(());
    }
    let shortest = window_times_s.iter().copied().fold(f64::INFINITY, f64::min);
    let longest = window_times_s.iter().copied().fold(0.0, f64::max);
    Err(Error::new(
        ErrorKind::UnawaitedWork,
        format!(
            "{id}: {outside} of {} windows took less than half or more than twice the mean window's {} for the same \
             calls (from {} to {}): the windows' wait does not end the work of their calls, so each window's energy \
             belongs partly to other windows and no figure is made. A library with a queue of its own (burn's fusion, \
             cubecl, wgpu) submits work when it flushes, not when it is called, and a context-wide synchronize \
             (`any_stream`) does not flush it: declare the library's own wait, `wait = your_sync_fn` (burn's \
             `B::sync(&device)`, cubecl's `client.sync()`, wgpu's `device.poll`); see the README's \"Library work\"",
            window_times_s.len(),
            energy_units::format_si(mean, "s", 3),
            energy_units::format_si(shortest, "s", 3),
            energy_units::format_si(longest, "s", 3),
        ),
    ))
}

/// Above this share of the windows' power above idle, the power after the last window is
/// work that outlived it, not idle: over 1,374 real H100 and H200 measurements of this
/// project (docs/results, 2026-11-22 to 2026-11-26) the idle after the last window stood
/// at most 0.21 of the way from the idle before it to the windows' power.
pub const TAIL_WORK_SHARE: f64 = 0.5;

/// Below this the rise of the idle after the last window is not judged, W (real runs rose
/// by up to 31 W after 700 W stretches, at 0.05 of the way).
pub const TAIL_WORK_MIN_W: f64 = 10.0;

/// Refuses a measurement on the energy counter whose GPU kept working after its last
/// window: the idle measured after it stands more than [`TAIL_WORK_SHARE`] of the way from the idle before the
/// windows to their power (and [`TAIL_WORK_MIN_W`] above it). That is work nothing waited
/// for (a library's queue outside CUDA, another CUDA context), whose energy the windows
/// did not get and whose power was taken for idle.
pub fn check_work_ended(measurement: &Measurement) -> Result<()> {
    // Judged where it was calibrated: on the energy counter, whose idle after the windows is
    // read from its own ticks (a lagging or averaging sensor's is an inversion).
    if measurement.source != SourceKind::Counter {
        return Ok(());
    }
    let Some(last) = measurement.windows.iter().max_by(|a, b| a.energy.end_s.total_cmp(&b.energy.end_s)) else {
        return Ok(());
    };
    let (Some(before), Some(after)) = (last.energy.idle_before_w, last.energy.idle_after_w) else {
        return Ok(());
    };
    let busy = measurement.power_w.mean;
    let rise = after - before;
    let span = busy - before;
    if span.is_nan() || span <= 0.0 || rise < TAIL_WORK_MIN_W || rise < TAIL_WORK_SHARE * span {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::UnawaitedWork,
        format!(
            "{}: the GPU kept drawing {after:.1} W after the last window ({before:.1} W before the first, {busy:.1} W \
             in the windows): work outlived the windows that launched it, so their energy and the idle level would \
             both be wrong, and no figure is made. The launches' work was not waited for: launch on the stream the \
             harness hands in, or declare how to wait for it (`wait = your_sync_fn` for a library with a queue of \
             its own or outside CUDA, such as wgpu's `device.poll`, burn's `B::sync`; `any_stream` for CUDA work on \
             any stream); see the README's \"Library work\". If another program used the GPU meanwhile, measure again",
            measurement.id
        ),
    ))
}

/// Measures the energy of one launch of `workload`: [`Session::prepare`], then
/// [`Session::run`].
pub fn measure(
    device: &mut Device,
    workload: &mut dyn Workload,
    request: MeasureRequest,
) -> Result<(Measurement, Trace)> {
    Session::prepare(device, workload, request)?.run(device, workload)
}

/// Warms the workload up and returns its GPU time per launch: the first launch (which
/// also loads and JIT-compiles), then batches doubling until [`WARMUP_S`] is spent. A
/// first launch that lasts the warm-up is followed by a second one: the first may carry
/// one-time work (a library's lazy initialization: cuRAND seeds its generator's state on
/// the first call, a third of a second on an H100), which must not size the windows. A
/// second launch that is as long (a 1 s kernel) is the estimate itself; a short one goes on
/// to the doubling batches.
fn warm_up(workload: &mut dyn Workload) -> Result<f64> {
    let first = workload.run_batch(1)?;
    if first >= WARMUP_S {
        let second = workload.run_batch(1)?;
        if second >= WARMUP_S / 2.0 {
            return Ok(second);
        }
    }
    let (mut batch, mut spent, mut gpu, mut launched) = (1u64, 0.0, 0.0, 0u64);
    while spent < WARMUP_S {
        let t = workload.run_batch(batch)?;
        spent += t.max(1e-6);
        gpu += t;
        launched += batch;
        batch = (batch * 2).min(MAX_LAUNCHES_PER_WINDOW);
    }
    Ok(gpu / launched as f64)
}

/// The sources to record, the analysis options, the primary source and its model.
fn choose(
    device: &Device,
    request: &MeasureRequest,
    options: &ResolvedOptions,
) -> (Vec<SourceKind>, AnalysisOptions, SourceKind, SensorModel) {
    // The source asked for with its check; else the best board source the GPU has with its
    // check, or (when that one has none) every board source it has, for analysis to choose.
    let with_check = |kind: SourceKind| [Some(kind), kind.cross_check()].into_iter().flatten().collect::<Vec<_>>();
    let mut sources = match options.source {
        Some(kind) => with_check(kind),
        None => {
            let available: Vec<SourceKind> = SourceKind::boards().filter(|&k| device.open_source(k).is_ok()).collect();
            match SourceKind::preferred(&available) {
                Some(best) if best.cross_check().is_some() => {
                    with_check(best).into_iter().filter(|k| available.contains(k)).collect()
                }
                _ => available,
            }
        }
    };
    // Every rail the GPU offers is recorded beside them, to be reported with its own energy.
    for extra in request.record_also.iter().copied().chain(SourceKind::rails()) {
        if !sources.contains(&extra) && device.open_source(extra).is_ok() {
            sources.push(extra);
        }
    }
    // The source analysis will read the trace with (the same one preference order), so the
    // windows are planned for the source that measures them.
    let primary = options.source.or_else(|| SourceKind::preferred(&sources)).unwrap_or(SourceKind::PowerUsage);
    let analysis = AnalysisOptions {
        source: options.source,
        model: request.model.clone(),
        calibration: request.calibration.clone(),
        power_limit_w: device.facts().power_limit_w,
        ..AnalysisOptions::default()
    };
    let model = match &request.model {
        ModelChoice::Explicit(m) => *m,
        _ => request
            .calibration
            .as_ref()
            .and_then(|c| c.model_for(primary).map(|m| m.0))
            .unwrap_or_else(|| primary.default_model()),
    };
    (sources, analysis, primary, model)
}

/// Adds the metadata every measurement trace carries.
fn annotate_trace(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Batch;

    /// A workload whose first launch takes `first_s` and every later one `launch_s`.
    struct LazyInit {
        first_s: f64,
        launch_s: f64,
        launched: u64,
    }

    impl Workload for LazyInit {
        fn run(&mut self, launches: u64) -> Result<Batch> {
            let first = if self.launched == 0 { self.first_s - self.launch_s } else { 0.0 };
            self.launched += launches;
            Ok(Batch::timed(first + launches as f64 * self.launch_s))
        }
    }

    #[test]
    fn a_long_first_launch_does_not_size_the_windows() {
        // cuRAND on an H100: 323 ms for the first call (the generator's state), 1 ms after.
        let mut lazy = LazyInit { first_s: 0.323, launch_s: 1e-3, launched: 0 };
        let estimate = warm_up(&mut lazy).unwrap();
        assert!((estimate - 1e-3).abs() < 1e-12, "{estimate}");
        // A kernel of 1 s: two launches, and its own time.
        let mut long = LazyInit { first_s: 1.0, launch_s: 1.0, launched: 0 };
        assert_eq!(warm_up(&mut long).unwrap(), 1.0);
        assert_eq!(long.launched, 2);
        // A short first launch (module load) is left out of the estimate as before.
        let mut jit = LazyInit { first_s: 0.05, launch_s: 20e-6, launched: 0 };
        assert!((warm_up(&mut jit).unwrap() - 20e-6).abs() < 1e-15);
    }

    #[test]
    fn host_clock_windows_must_agree_on_the_same_calls() {
        let host = TimeBasis::HostClock;
        // Windows within a few per cent (candle, wgpu, a waited burn): measured.
        let steady: Vec<f64> = (0..27).map(|i| 0.15 * (1.0 + 0.03 * ((i % 5) as f64 - 2.0))).collect();
        assert!(check_windows_agree("a", &steady, host).is_ok());
        // One late window (a host hiccup) among 27: not a queue.
        let mut hiccup = steady.clone();
        hiccup[7] = 0.6;
        assert!(check_windows_agree("a", &hiccup, host).is_ok());
        // A queue flushed in one window of ten: refused, the fix named.
        let flushed: Vec<f64> = (0..30).map(|i| if i % 10 == 9 { 0.3 } else { 20e-6 }).collect();
        let err = check_windows_agree("burn", &flushed, host).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnawaitedWork);
        assert!(err.message().contains("30 of 30 windows") && err.message().contains("wait = "), "{err}");
        // Windows timed by CUDA events on the harness's stream are not judged here.
        assert!(check_windows_agree("stream", &flushed, TimeBasis::CudaEvents).is_ok());
    }

    #[test]
    fn plans_fill_the_window_and_cap_long_kernels() {
        let options = MeasureOptions::DEFAULT.resolve(10).unwrap();
        let counter = SensorModel::Counter { period_s: 0.1 };
        let p = plan(&options, 20e-6, &counter);
        assert_eq!(p.launches_per_window, 7_500);
        assert_eq!((p.min_windows, p.max_windows), (10, 27));
        // 100 ms launches: one per window, ten windows, a second of busy time.
        let p = plan(&options, 0.1, &counter);
        assert_eq!((p.launches_per_window, p.min_windows), (1, 10));
        // 1 s launches: four windows of one launch (six launches with the warm-up's two).
        let p = plan(&options, 1.0, &counter);
        assert_eq!((p.launches_per_window, p.min_windows, p.max_windows), (1, 4, 4));
        let fixed = MeasureOptions { windows: Some(12), ..MeasureOptions::DEFAULT }.resolve(10).unwrap();
        assert_eq!(plan(&fixed, 1.0, &counter).max_windows, 12);
        let long = MeasureOptions { window_s: Some(0.5), ..MeasureOptions::DEFAULT }.resolve(3).unwrap();
        assert_eq!(plan(&long, 1e-3, &counter).launches_per_window, 500);
        assert!(plan(&options, 1e-3, &SensorModel::Boxcar { width_s: 1.0 }).idle_s >= 1.5);
    }
}
