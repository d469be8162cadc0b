//! The session engine: one measurement protocol behind [`measure`], the criterion glue,
//! budgets and both suites.
//!
//! ```text
//!   idle (lead)   warm-up (auxiliary)  guard | window 0 | … | window n-1 | guard   idle (tail)
//!   ───────────┐┌─────────────────────────────────────────────────────────────┐┌──────────
//!              └┘                         one busy stretch                     └┘
//! ```
//!
//! [`Session::prepare`] starts the recorder (the sampler thread on a real GPU), measures
//! active idle for the lead-in, then warms the kernel up: the first launch (which also
//! loads and JIT-compiles) and doubling batches, marked as an auxiliary window so the busy
//! time before window 0 brings the clocks up (a burst after idle reads low for its first
//! ~25 ms, DESIGN.md §6) and is never taken for idle; [`WARMUP_S`] of GPU time in all, the
//! guard before window 0 its last part where there is one ([`warmup_batches_s`]). From the
//! warm-up's time per launch it plans the windows, and from the guard's where one ran. On
//! an energy counter, a guard of the kernel's own back-to-back launches (one counter
//! period's worth, at most a window's) runs before window 0 and another after the last window
//! ([`GUARD_BEFORE_WINDOW`], [`GUARD_AFTER_WINDOW`]): auxiliary, never measured, they put
//! every measured window's edges where the power is the kernel's steady power (in a run of a
//! paired sequence the guard after stops once the counter's tick after the last window is
//! read, [`Session::guard_after`]: half a period on average). Without
//! them the first and last windows take the split of the tick intervals holding the
//! stretch's outer edges (the warm-up's waits and the benchmark's setup on one side, the
//! step down to idle on the other): in 151 real H100/H200 measurements of at least 10
//! windows their residuals were 1.9-2.1 times the inner windows' (median), 3.8-4.9 times
//! in rms (`research/results/2026-12-01-ci-gate/edge-windows.md`), and they made most of a
//! short run's noise ([`guard_launches`]).
//!
//! [`Session::window`] runs one window: as many back-to-back launches as fill the window
//! length, timed by CUDA events, marked from the host, right after the previous window
//! (no idle between them: their inner edges fall where power is steady, and a counter's
//! ticks interpolate them well). [`Session::enough`] says when to stop: the 95 % interval
//! of the energy per launch has reached the asked precision (over the windows the sensor
//! already covers), or the window limit is reached. [`Session::finish`] measures the idle
//! tail (on an energy counter until its third update after the stretch: two whole tick
//! intervals), stops the recorder and analyzes everything.
//!
//! Consecutive measurements on one GPU (the benchmarks of one bench process) share the idle
//! between them: [`Session::finish_handing_over`] leaves the recorder running and hands it,
//! with the idle tail, to [`Session::prepare_continuing`], which takes that tail as its
//! lead-in ([`IdleHandover`]). What ran between them (the next benchmark's setup) belongs to
//! the next warm-up's auxiliary window, never to the idle.
//!
//! Nothing waits without measuring: the lead and the tail are the active-idle
//! measurement, the warm-up is the kernel itself. The SM clock and temperature are read by
//! the sampler alongside the sensors and reported per window, with their drift.

use super::analyze::{self, analyze_windows, AnalysisOptions, CarriedIdle};
use super::options::{MeasureOptions, ResolvedOptions};
use super::result::Measurement;
use super::stats::Estimate;
use super::summary::{summarize, Summary};
use crate::clock::SharedClock;
use crate::device::Device;
use crate::gpu::DeviceFacts;
use crate::sampling::{Recorder, SamplerConfig, WindowMarker};
use crate::sensors::{SensorModel, SourceKind};
use crate::workload::{whole_quanta, TimeBasis, Workload, PROBE_MAX_LAUNCHES};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{
    is_auxiliary_window, Channel, Trace, Window, WindowEdge, AUXILIARY_WINDOW, GUARD_AFTER_WINDOW, GUARD_BEFORE_WINDOW,
};
use energy_results::{Warning, WarningKind};

mod checks;
mod plan;
mod request;
pub use checks::{check_windows_agree, check_work_ended};
use plan::launches_filling;
pub use plan::{idle_s, plan, Plan};
use request::choose;
pub use request::MeasureRequest;

/// GPU time the warm-up spends before the first window, s.
pub const WARMUP_S: f64 = 0.2;

/// GPU time the warm-up spends when the session continues the recording of the one before
/// it on the device ([`IdleHandover`]), s: the GPU was busy a second or so before, a burst
/// reads low for its first ~25 ms only (DESIGN.md §6), and 0.1 s of launches still sizes the
/// windows.
pub const WARMUP_CONTINUING_S: f64 = 0.1;

/// Least GPU time the warm-up's own batches spend before a guard takes over the rest of the
/// warm-up ([`warmup_batches_s`]), s: enough to size the guard (the guard's launches size
/// the windows).
pub const WARMUP_BATCHES_MIN_S: f64 = 0.025;

/// GPU time the warm-up's batches spend when the warm-up may take `warmup_s` in all, s. On an
/// energy counter, for work timed by CUDA events, the guard before window 0 (one counter
/// period of the kernel's own launches back to back) is the warm-up's last part: the batches
/// spend the rest, at least [`WARMUP_BATCHES_MIN_S`]. Before the guards came the warm-up ran
/// whole and the guard after it: on an H200 (`research/results/2026-12-01-ci-gate`, calls
/// 13-15) a benchmark of a paired run spent about 0.25 s busy before its first window where
/// 0.1 s of launches already brings the clocks up and sizes the windows. Work timed on the
/// host clock (library calls that may autotune or compile in their first calls) keeps the
/// whole warm-up and its window-length check ([`confirm_launch_time`]) before the guard; so
/// do other sensors (no guard). Measured (calls 16-18 of that study, two more H200s): a paired
/// run's fixed cost 0.31 s and 1.01 s a benchmark at 4 windows, against 0.78 s and 1.29 s at
/// 6 before; the cuBLAS GEMMs' first window read 0.6-0.8 % below the mean of four (0.1-0.2 %
/// before), the die still warming, the same in both runs of a pair.
pub fn warmup_batches_s(warmup_s: f64, model: &SensorModel, time_basis: TimeBasis) -> f64 {
    match (model, time_basis) {
        (SensorModel::Counter { period_s }, TimeBasis::CudaEvents) => (warmup_s - period_s).max(WARMUP_BATCHES_MIN_S),
        _ => warmup_s,
    }
}

/// Longest the next session may start after the idle a session handed over ended and still
/// take that idle as its own lead-in, s ([`IdleHandover`]). What ran in between (the next
/// benchmark's setup) is kept out of the idle, but a setup that long may have run work of
/// its own on the GPU (a library's initialization, data made on the device), after which
/// the board's idle need not be the one measured before it: the next session then measures
/// its own. (On an H200, 11 of 69 held-out benchmarks, all cuBLAS ones, set up for longer.)
pub const HANDOVER_MAX_GAP_S: f64 = 1.0;

/// Most launches in one window.
const MAX_LAUNCHES_PER_WINDOW: u64 = 50_000_000;

/// Fewest seconds of idle after a busy stretch on an energy counter, per whole counter
/// interval the tail measures ([`Session`]'s tail; [`MeasureRequest::tail_intervals`]).
const TAIL_MIN_PER_INTERVAL_S: f64 = 0.1;

/// Counter updates read after a busy stretch before its idle tail ends: the first closes the
/// interval holding the stretch's end, each next one bounds a whole interval of idle.
fn tail_updates(tail_intervals: usize) -> usize {
    tail_intervals + 1
}

/// How much later than its reporting delay a counter update may be read and still be taken
/// for one made after the busy stretch's end, s: the analysis locates update instants to
/// within a read (a few ms). Without it, one measurement in five of the H200 gate study's
/// paired runs (one interval of tail) had no whole idle interval after its stretch and, with
/// none in its short lead-in either, reported an active idle of 0 W.
const TAIL_TICK_MARGIN_S: f64 = 0.005;

/// How often the idle tail looks for the counter's updates, s.
const TAIL_POLL_S: f64 = 0.005;

/// Slices of the guard after the windows, each a [`GUARD_SLICES`]th of a counter period's
/// launches ([`Session::guard_after`]): it stops within about one slice of the tick it waits for.
const GUARD_SLICES: u64 = 16;

/// Periods' worth of launches the guard after the windows runs at most while the counter's
/// curve does not reach past the last window ([`Session::guard_after`]).
const GUARD_AFTER_MOST_PERIODS: u64 = 3;

/// How far past the last window's end the counter's curve must reach before the guard after
/// it stops, s: a later refit of the tick grid moves a tick by a fraction of a read spacing.
const GUARD_REACH_MARGIN_S: f64 = 0.003;

/// The index of the not-yet-covered rest of the stretch in an early-stop check.
const PENDING_WINDOW: u32 = AUXILIARY_WINDOW - 1;

/// How far before the newest sensor update the pending rest of an early-stop check ends,
/// s: more than a reporting delay (3.8-12.2 ms measured on H100s) and the update's stamp.
const PENDING_MARGIN_S: f64 = 0.04;

/// How far before the pending rest's end a covered window ends, s: the curve interval
/// across its end (up to a counter period, 100 ms) lies within the two.
const COVER_MARGIN_S: f64 = 0.12;

/// How long after a window ends the sensor's curve reaches past it, at most, s: the pending
/// margin and the cover margin of an early-stop check, and one counter tick.
const COVER_LAG_S: f64 = PENDING_MARGIN_S + COVER_MARGIN_S + 0.1;

/// How many of the last windows an early-stop check may find not yet covered once the
/// minimum has run: those ending within [`COVER_LAG_S`] (two of 0.15 s, three of one tick of
/// 0.1 s), and never fewer than two.
fn uncovered_allowance(window_s: f64) -> usize {
    if window_s.is_nan() || window_s <= 0.0 {
        return 2;
    }
    ((COVER_LAG_S / window_s).ceil() as usize).clamp(2, 8)
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

/// What a finished session hands the next one on the same device: its recorder, still
/// reading, and the idle after its busy stretch, which the next one takes as its own
/// lead-in instead of measuring another ([`Session::prepare_continuing`]). Between the end
/// of that idle and the next warm-up the GPU may be used (the next benchmark's setup: its
/// module, buffers and data): that stretch is part of the next session's auxiliary window,
/// so it is never taken for idle; the idle itself lay between the two busy stretches with
/// nothing else on the GPU. The figures are those of a session that measured its own
/// lead-in right after the one before it: the same idle, read once.
pub struct IdleHandover {
    recorder: Recorder,
    sources: Vec<SourceKind>,
    model: SensorModel,
    /// The end of the busy stretch before the idle (its last window's end), s.
    idle_from_s: f64,
    /// The end of the idle (of the trace the session before took), s.
    idle_until_s: f64,
    /// The benchmark that measured before.
    previous_id: String,
    /// The active idle the recording measured last (this stretch's, or carried to it), for a
    /// next session whose trace holds none of its own (a lean paired run).
    carried_idle: Option<CarriedIdle>,
}

impl IdleHandover {
    /// The benchmark whose idle after is handed over.
    pub fn previous_id(&self) -> &str {
        &self.previous_id
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
    sources: Vec<SourceKind>,
    model: SensorModel,
    check_margin_s: f64,
    checked_windows: usize,
    /// The half-width on which [`Session::enough`] found the precision reached (set with
    /// [`StopReason::PrecisionReached`], never otherwise).
    decided_half_width: Option<f64>,
    time_basis: TimeBasis,
    /// The benchmark whose idle after was taken as this one's lead-in.
    continued_from: Option<String>,
    /// Launches of each guard around the windows ([`guard_launches`]); none without guards.
    guard_launches: Option<u64>,
    /// The launch-bound probe's time per launch back to back, s.
    back_to_back_s: Option<f64>,
    /// The launches of each replay of the workload's CUDA graph, if it has one.
    graph_launches: Option<u64>,
}

impl Session {
    /// Resolves the options, starts the recorder, measures the idle lead-in, warms the
    /// workload up (inside the recording, as an auxiliary window) and plans the windows.
    pub fn prepare(device: &Device, workload: &mut dyn Workload, request: MeasureRequest) -> Result<Session> {
        Self::prepare_continuing(device, workload, request, None)
    }

    /// [`Session::prepare`], taking the idle the session before handed over as the lead-in
    /// when it fits: measured on an energy counter, recorded by the same sources with the
    /// same model, its recorder sound, and it ended at most a second ago. Otherwise the handover is dropped
    /// (its recorder stopped) and the lead-in measured as usual.
    pub fn prepare_continuing(
        device: &Device,
        workload: &mut dyn Workload,
        request: MeasureRequest,
        handover: Option<IdleHandover>,
    ) -> Result<Session> {
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
        let (sources, mut analysis, primary, model) = choose(device, &request, &options);
        let idle = idle_s(&model);
        // On an energy counter only: its readings after the stretch hold nothing of it once
        // the first tick after its end is read; a lagging or averaging sensor's would.
        let handover = handover.filter(|h| {
            matches!(model, SensorModel::Counter { .. })
                && h.sources == sources
                && h.model == model
                && h.recorder.healthy()
                && clock.now_s() - h.idle_until_s <= HANDOVER_MAX_GAP_S
        });
        let (recorder, marker, continued_from, warmup_s) = match handover {
            Some(mut h) => {
                // The idle after the stretch before is this one's lead-in; what came after it
                // (this benchmark's setup) joins the warm-up's auxiliary window.
                h.recorder.forget_before(h.idle_from_s)?;
                // A lean paired run measured no idle after the stretch before: the idle the
                // recording measured last stands in, and the analysis says so.
                analysis.carried_idle = h.carried_idle.take();
                let marker = h.recorder.marker();
                marker.at(AUXILIARY_WINDOW, WindowEdge::Start, h.idle_until_s);
                (h.recorder, marker, Some(h.previous_id), WARMUP_CONTINUING_S)
            }
            None => {
                let (opened, _) = device.open_sources(&sources);
                if opened.is_empty() {
                    return Err(Error::new(
                        ErrorKind::NotSupported,
                        format!("none of the sources {sources:?} works on {}", device.facts().name),
                    ));
                }
                let mut recorder =
                    Recorder::start(opened, device.state_probe(), clock.clone(), SamplerConfig::default())?;
                let marker = recorder.marker();
                if request.is_lean() && matches!(model, SensorModel::Counter { .. }) {
                    // A lean paired run measures its idle here only, for the dynamic figures
                    // (the total energy does not use it): one whole counter interval, made
                    // after the recording started, instead of the plan's idle.
                    let made_after_s =
                        clock.now_s() + analyze::reporting_delay_s(primary, &analysis) + TAIL_TICK_MARGIN_S;
                    wait_for_updates(
                        &mut recorder,
                        &clock,
                        primary,
                        made_after_s,
                        tail_updates(1),
                        clock.now_s() + idle,
                    )?;
                } else {
                    clock.sleep_s(idle);
                }
                marker.start(AUXILIARY_WINDOW);
                (recorder, marker, None, WARMUP_S)
            }
        };
        let batches_s = warmup_batches_s(warmup_s, &model, workload.time_basis());
        let mut launch_s = warm_up(workload, batches_s)?;
        if workload.time_basis() == TimeBasis::HostClock {
            launch_s = confirm_launch_time(workload, launch_s, options.window_s(&model))?;
        }
        let back_to_back_s = probe_back_to_back(workload, launch_s)?;
        marker.end(AUXILIARY_WINDOW);
        let quantum = workload.launch_quantum();
        let plan_at = |launch_s: f64| plan(&options, launch_s, &model).in_quanta_of(quantum);
        let mut planned = plan_at(launch_s);
        let guard_launches = guard_launches(&planned, &model).map(|launches| whole_quanta(launches, quantum));
        if let Some(launches) = guard_launches {
            let guard_s = marked_batch(&marker, workload, GUARD_BEFORE_WINDOW, launches)?;
            // The guard's launches ran back to back right before window 0, after the whole
            // warm-up: their time per launch sizes the windows.
            let guard_launch_s = guard_s / launches as f64;
            if guard_launch_s.is_finite() && guard_launch_s > 0.0 {
                planned = plan_at(guard_launch_s);
            }
        }
        Ok(Session {
            request,
            options,
            plan: planned,
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
            sources,
            model,
            // A counter's curve ends at its newest tick; a lagging or averaging sensor's
            // inversion needs its memory's worth of readings after a window.
            check_margin_s: match model {
                SensorModel::Counter { .. } | SensorModel::Identity => 0.0,
                _ => (idle - 0.05).max(PENDING_MARGIN_S + COVER_MARGIN_S),
            },
            checked_windows: 0,
            decided_half_width: None,
            time_basis: workload.time_basis(),
            continued_from,
            guard_launches,
            back_to_back_s,
            graph_launches: workload.graph_launches(),
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
        let gpu_s = marked_batch(&self.marker, workload, index, self.plan.launches_per_window)?;
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
                self.decided_half_width = Some(half_width);
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
        let covered = windows.iter().filter(|w| !is_auxiliary_window(w.index)).count();
        // The sensor covers a window a quarter second after it ends: judge the precision
        // on the covered ones once the minimum has run (all of them are in the result).
        let enough_covered = self
            .plan
            .min_windows
            .saturating_sub(uncovered_allowance(self.plan.window_s()))
            .max(MeasureOptions::MIN_WINDOWS);
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
        self.run_windows(workload)?;
        self.finish(device)
    }

    /// Runs windows until [`Session::enough`], then [`Session::finish_handing_over`].
    pub fn run_handing_over(
        mut self,
        device: &mut Device,
        workload: &mut dyn Workload,
    ) -> Result<(Measurement, Trace, IdleHandover)> {
        self.run_windows(workload)?;
        self.finish_handing_over(device)
    }

    /// Runs windows until [`Session::enough`], then the guard after them.
    fn run_windows(&mut self, workload: &mut dyn Workload) -> Result<()> {
        loop {
            self.window(workload)?;
            if self.enough()? {
                break;
            }
        }
        match self.guard_launches {
            Some(launches) if self.request.is_paired() => self.guard_after(workload, launches)?,
            Some(launches) => {
                // A measurement of its own keeps a whole period: its rails' tails (a 1 s boxcar
                // on the memory rail) need the readings a fixed guard and the idle after it give.
                marked_batch(&self.marker, workload, GUARD_AFTER_WINDOW, launches)?;
            }
            None => {}
        }
        Ok(())
    }

    /// Runs the guard after the windows of a paired run (which records no rail): the kernel's
    /// own launches, in slices of a
    /// [`GUARD_SLICES`]th of `launches` (one counter period's worth), until the counter's
    /// curve as the analysis places it reaches [`GUARD_REACH_MARGIN_S`] past the last window's
    /// end, at most [`GUARD_AFTER_MOST_PERIODS`] periods' worth. Its interval, the one holding
    /// that edge, then lies in launches on both sides whatever the tick's phase (half a period
    /// on average, where a fixed guard of one period ran a whole one), and a tick read late
    /// (placed on its grid before the edge: twice in an H200's gates, the window refused as
    /// uncovered) keeps the guard running to the next one instead of leaving the edge bare.
    /// Marked as one auxiliary window from its first launch to its last.
    fn guard_after(&mut self, workload: &mut dyn Workload, launches: u64) -> Result<()> {
        let windows_end_s = self.last_end_s(|index| !is_auxiliary_window(index));
        let quantum = workload.launch_quantum();
        let slice = whole_quanta((launches / GUARD_SLICES).max(1), quantum);
        let most = launches.saturating_mul(GUARD_AFTER_MOST_PERIODS);
        let host_start_s = self.marker.clock().now_s();
        let mut device_start_s = None;
        let (mut ran, mut updates_seen) = (0, 0);
        loop {
            workload.run_batch(slice)?;
            ran += slice;
            if device_start_s.is_none() {
                device_start_s = workload.device_span_s().map(|(start_s, _)| start_s);
            }
            if ran >= most {
                break;
            }
            // The curve's end moves only with a counter update read since the last look: the
            // curve is rebuilt (the trace copied, the tick grid fitted) only then.
            let updates = self.recorder.updates_after(self.primary, windows_end_s)?;
            if updates > updates_seen {
                updates_seen = updates;
                if self.curve_reaches(windows_end_s + GUARD_REACH_MARGIN_S)? {
                    break;
                }
            }
        }
        let host_end_s = self.marker.clock().now_s();
        let end_s = workload.device_span_s().map_or(host_end_s, |(_, end_s)| end_s);
        self.marker.at(GUARD_AFTER_WINDOW, WindowEdge::Start, device_start_s.unwrap_or(host_start_s));
        self.marker.at(GUARD_AFTER_WINDOW, WindowEdge::End, end_s);
        Ok(())
    }

    /// The latest end mark of the windows whose index `counts`, s (on the marker's clock).
    fn last_end_s(&self, counts: impl Fn(u32) -> bool) -> f64 {
        self.marker
            .marks()
            .iter()
            .filter(|m| counts(m.index) && m.edge == WindowEdge::End)
            .map(|m| m.time_s)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Whether the primary source's curve, as the analysis builds it from the readings so far,
    /// reaches `t_s` (a counter's; other sources have no guards).
    fn curve_reaches(&mut self, t_s: f64) -> Result<bool> {
        let trace = self.recorder.snapshot()?;
        Ok(analyze::counter_curve_end_s(&trace, self.primary, &self.analysis).is_some_and(|end_s| end_s >= t_s))
    }

    /// Measures the idle tail, stops the recorder, and analyzes the windows.
    pub fn finish(self, device: &mut Device) -> Result<(Measurement, Trace)> {
        self.finish_with(device, false).map(|(measurement, trace, _)| (measurement, trace))
    }

    /// [`Session::finish`], the recorder left running and handed over with the idle tail, for
    /// the next session on the device to take as its lead-in
    /// ([`Session::prepare_continuing`]). A measurement that fails hands nothing over.
    pub fn finish_handing_over(self, device: &mut Device) -> Result<(Measurement, Trace, IdleHandover)> {
        let (measurement, trace, handover) = self.finish_with(device, true)?;
        let handover = handover.ok_or_else(|| Error::new(ErrorKind::Sampler, "the recorder was not kept"))?;
        Ok((measurement, trace, handover))
    }

    /// Waits out the idle after the busy stretch that ended at `stretch_end_s`. On an energy
    /// counter, until its update after that end that bounds the request's whole tick
    /// intervals of idle has been read (the third update for two intervals, whatever the
    /// ticks' phase and the reporting delay), at least [`TAIL_MIN_PER_INTERVAL_S`] per
    /// interval and at most the plan's idle and a tick more; with no interval asked (a lean
    /// paired run), until the counter's curve as the analysis places it reaches past the last
    /// window's end (`windows_end_s`): the interval holding that edge is closed (the guard
    /// after it ran until then). On other sensors, the plan's idle.
    fn idle_tail(&mut self, stretch_end_s: f64, windows_end_s: f64) -> Result<()> {
        let SensorModel::Counter { period_s } = self.model else {
            self.clock.sleep_s(self.plan.idle_s);
            return Ok(());
        };
        let intervals = self.request.tail_intervals;
        if intervals == 0 {
            let cap =
                windows_end_s + analyze::reporting_delay_s(self.primary, &self.analysis) + self.plan.idle_s + period_s;
            while self.clock.now_s() < cap && !self.curve_reaches(windows_end_s + GUARD_REACH_MARGIN_S)? {
                self.clock.sleep_s(TAIL_POLL_S.min(cap - self.clock.now_s()).max(0.0));
            }
            return Ok(());
        }
        let floor = stretch_end_s + TAIL_MIN_PER_INTERVAL_S * intervals as f64;
        // The analysis places each update at its reading less the reporting delay: an update
        // read just after the stretch's end was made before it, and closes no idle interval.
        let made_after_s =
            stretch_end_s + analyze::reporting_delay_s(self.primary, &self.analysis) + TAIL_TICK_MARGIN_S;
        let cap = made_after_s + self.plan.idle_s + period_s;
        let now = self.clock.now_s();
        self.clock.sleep_s((floor - now).min(cap - now).max(0.0));
        wait_for_updates(&mut self.recorder, &self.clock, self.primary, made_after_s, tail_updates(intervals), cap)
    }

    fn finish_with(mut self, device: &mut Device, keep: bool) -> Result<(Measurement, Trace, Option<IdleHandover>)> {
        if self.gpu_times.is_empty() {
            return Err(Error::new(ErrorKind::Analysis, format!("{}: no window was measured", self.request.id)));
        }
        // The busy stretch ends with its last mark: the guard after the windows, or the last
        // window (the warm-up ends before them).
        let idle_from_s = self.last_end_s(|index| index != AUXILIARY_WINDOW);
        // The measured windows' end: the guard after them is auxiliary.
        let windows_end_s = self.last_end_s(|index| !is_auxiliary_window(index));
        self.idle_tail(idle_from_s, windows_end_s)?;
        let idle_until_s = self.clock.now_s();
        let (mut trace, kept) = if keep {
            let mut recorder = self.recorder;
            (recorder.recorded()?, Some(recorder))
        } else {
            (self.recorder.stop()?, None)
        };
        check_windows_agree(&self.request.id, &self.gpu_times, self.time_basis)?;
        let _ = device.refresh();
        let facts_after = device.facts().clone();
        annotate_trace(
            &mut trace,
            &self.request.id,
            &self.facts_before,
            &facts_after,
            &self.plan,
            self.guard_launches,
            &self.gpu_times,
        );
        if let Some(previous) = &self.continued_from {
            trace.set_metadata("lead-in", format!("the idle after {previous}, one recording"));
        }
        if self.request.tail_intervals != request::DEFAULT_TAIL_INTERVALS
            && matches!(self.model, SensorModel::Counter { .. })
        {
            let tail = match self.request.tail_intervals {
                0 => "none: the counter's update after the last window only (a lean run of a paired sequence: its \
                      verdict rests on the total energy; the active idle is the one measured before the process's \
                      first benchmark)"
                    .to_string(),
                n => format!(
                    "{n} counter interval(s) of idle after the stretch (a run of a paired sequence: its verdict rests on the total energy)"
                ),
            };
            trace.set_metadata("idle tail", tail);
        }
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
            decided_half_width: self.decided_half_width,
            thermal: self.request.thermal.as_ref(),
        })?;
        measurement.time_basis = self.time_basis;
        measurement.back_to_back_s = self.back_to_back_s;
        measurement.graph_launches = self.graph_launches;
        if let Some(warning) = launch_bound_warning(self.back_to_back_s, measurement.time_s.mean) {
            measurement.warnings.push(warning);
        }
        check_work_ended(&measurement)?;
        // The idle this measurement took: its own where it measured one, else what it carried.
        let measured_idle =
            measurement.windows.iter().any(|w| w.energy.idle_before_w.is_some() || w.energy.idle_after_w.is_some());
        let carried_idle = if measured_idle {
            Some(CarriedIdle {
                watts: measurement.idle_w,
                from_id: self.request.id.clone(),
                measured_at_s: idle_until_s,
            })
        } else {
            self.analysis.carried_idle.clone()
        };
        let handover = kept.map(|recorder| IdleHandover {
            recorder,
            sources: self.sources,
            model: self.model,
            idle_from_s,
            idle_until_s,
            previous_id: self.request.id.clone(),
            carried_idle,
        });
        Ok((measurement, trace, handover))
    }
}

/// Waits until `updates` updates of `source` read after `after_s` have been read, looking every
/// [`TAIL_POLL_S`], or until `cap_s`.
fn wait_for_updates(
    recorder: &mut Recorder,
    clock: &SharedClock,
    source: SourceKind,
    after_s: f64,
    updates: usize,
    cap_s: f64,
) -> Result<()> {
    loop {
        let now = clock.now_s();
        if now >= cap_s || recorder.updates_after(source, after_s)? >= updates {
            return Ok(());
        }
        clock.sleep_s(TAIL_POLL_S.min(cap_s - now));
    }
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
/// Runs one batch of `launches` as window `index` and marks it: by the batch's span on the
/// device where the device knows it ([`Workload::device_span_s`], the simulated GPU), else
/// from the host just before the first launch and just after the wait returned. Returns the
/// batch's time, s.
fn marked_batch(marker: &WindowMarker, workload: &mut dyn Workload, index: u32, launches: u64) -> Result<f64> {
    let host_start_s = marker.clock().now_s();
    let gpu_s = workload.run_batch(launches)?;
    let host_end_s = marker.clock().now_s();
    let (start_s, end_s) = workload.device_span_s().unwrap_or((host_start_s, host_end_s));
    marker.at(index, WindowEdge::Start, start_s);
    marker.at(index, WindowEdge::End, end_s);
    Ok(gpu_s)
}

/// Most window-length batches [`confirm_launch_time`] runs.
const CONFIRM_BATCHES: usize = 3;

/// Launches of this length or longer are not probed for waiting on the host: a host takes
/// microseconds to launch a kernel (3-5 µs on the H200 of issue 63), so it can pace only a
/// kernel of about that length, and the probe costs GPU time.
const PROBE_LAUNCHES_UP_TO_S: f64 = 200e-6;
/// GPU time the probe's launches take at most, s (besides its spin of about 2 ms).
const PROBE_BUDGET_S: f64 = 5e-3;
/// The share of each window the GPU may wait for the host before a benchmark is called
/// launch-bound.
pub const LAUNCH_BOUND_WAIT_SHARE: f64 = 0.10;

/// The launches' time back to back (the launch-bound probe, [`Workload::back_to_back_s`]),
/// inside the warm-up's auxiliary window: for kernels on the harness's stream shorter than
/// [`PROBE_LAUNCHES_UP_TO_S`], over as many launches as fit in [`PROBE_BUDGET_S`] (8 to [`PROBE_MAX_LAUNCHES`]).
fn probe_back_to_back(workload: &mut dyn Workload, launch_s: f64) -> Result<Option<f64>> {
    if workload.time_basis() != TimeBasis::CudaEvents || !(launch_s > 0.0 && launch_s < PROBE_LAUNCHES_UP_TO_S) {
        return Ok(None);
    }
    let launches = ((PROBE_BUDGET_S / launch_s).floor() as u64).clamp(8, PROBE_MAX_LAUNCHES);
    workload.back_to_back_s(launches)
}

/// The warning of a launch-bound benchmark: the GPU ran the launches back to back in
/// `back_to_back_s` each, but each took `time_per_launch_s` in the windows, so it waited
/// more than [`LAUNCH_BOUND_WAIT_SHARE`] of each window for the host.
pub fn launch_bound_warning(back_to_back_s: Option<f64>, time_per_launch_s: f64) -> Option<Warning> {
    let b2b = back_to_back_s.filter(|b| *b > 0.0 && b.is_finite())?;
    if time_per_launch_s.is_nan() || time_per_launch_s <= 0.0 {
        return None;
    }
    let waited = 1.0 - b2b / time_per_launch_s;
    (waited > LAUNCH_BOUND_WAIT_SHARE).then(|| {
        Warning::new(
            WarningKind::LaunchBound,
            format!(
                "launch-bound: the GPU runs these launches back to back in {} each, but each took {} in the \
                 windows: it waited {:.0} % of each window for the host between launches, so the energy per launch \
                 follows this host's launch rate (the active idle in the gaps) more than the kernel; replay the launches \
                 as a CUDA graph (`graph = 100` in #[energy_bench]/#[energy_test]) or put more work in each launch \
                 (a loop, a larger grid)",
                energy_units::format_si(b2b, "s", 3),
                energy_units::format_si(time_per_launch_s, "s", 3),
                100.0 * waited
            ),
        )
    })
}

/// For work timed on the host clock (library work, `any_stream`/`wait`): the warm-up's time
/// per call checked with a batch of one window's length, inside the warm-up's auxiliary
/// window. A library's first calls (autotune, kernel compilation) and each batch's own wait
/// can make the warm-up's small batches read far slower than its calls run once warm: burn
/// 0.21's fused elementwise op was planned at 1.06 ms per call and ran at 7.4 µs on an H200,
/// every window under a millisecond against a 100 ms counter tick
/// (research/results/2026-12-01-newcomer-libraries). While a window-length batch takes under
/// half its planned time, the estimate becomes that batch's and another is run (at most
/// [`CONFIRM_BATCHES`]).
fn confirm_launch_time(workload: &mut dyn Workload, launch_s: f64, window_s: f64) -> Result<f64> {
    let mut launch_s = launch_s;
    for _ in 0..CONFIRM_BATCHES {
        if !(launch_s.is_finite() && launch_s > 0.0 && window_s.is_finite() && window_s > 0.0) {
            break;
        }
        let launches = whole_quanta(launches_filling(window_s, launch_s), workload.launch_quantum());
        let per_launch = workload.run_batch(launches)? / launches as f64;
        if !(per_launch.is_finite() && per_launch > 0.0) {
            return Ok(launch_s);
        }
        if per_launch >= 0.5 * launch_s {
            return Ok(per_launch);
        }
        launch_s = per_launch;
    }
    Ok(launch_s)
}

fn warm_up(workload: &mut dyn Workload, warmup_s: f64) -> Result<f64> {
    // A CUDA graph runs its launches a replay at a time: each batch is whole replays.
    let quantum = workload.launch_quantum();
    let first = workload.run_batch(quantum)?;
    if first >= warmup_s {
        let second = workload.run_batch(quantum)?;
        if second >= warmup_s / 2.0 {
            return Ok(second / quantum as f64);
        }
    }
    let (mut batch, mut spent, mut gpu, mut launched) = (quantum, 0.0, 0.0, 0u64);
    while spent < warmup_s {
        let t = workload.run_batch(batch)?;
        spent += t.max(1e-6);
        gpu += t;
        launched += batch;
        // Doubling, but no further than the rest of the warm-up at this batch's pace (a last
        // doubled batch would overrun it by up to its whole length).
        let per_launch = t / batch as f64;
        let rest = if per_launch > 0.0 && per_launch.is_finite() {
            ((warmup_s - spent) / per_launch).ceil().clamp(1.0, MAX_LAUNCHES_PER_WINDOW as f64) as u64
        } else {
            MAX_LAUNCHES_PER_WINDOW
        };
        batch = whole_quanta((batch * 2).min(rest), quantum);
    }
    Ok(gpu / launched as f64)
}

/// Launches of each guard around a counter's windows: enough to fill one update period
/// (so that the tick interval holding a measured window's outer edge lies in kernel
/// launches on both sides), at most a window's. None on other sensors (their idle lead and
/// tail are as long as their model needs anyway) and when one launch lasts more than two
/// periods: a window of such launches spans several ticks, its edges carry a small part of
/// it, and a guard would cost a whole long launch.
pub fn guard_launches(plan: &Plan, model: &SensorModel) -> Option<u64> {
    let SensorModel::Counter { period_s } = *model else { return None };
    if plan.launch_s.is_nan() || plan.launch_s <= 0.0 || plan.launch_s > 2.0 * period_s {
        return None;
    }
    let launches = launches_filling(period_s, plan.launch_s);
    Some(launches.min(plan.launches_per_window.max(1)))
}

/// Adds the metadata every measurement trace carries.
fn annotate_trace(
    trace: &mut Trace,
    id: &str,
    facts_before: &DeviceFacts,
    facts_after: &DeviceFacts,
    plan: &Plan,
    guard: Option<u64>,
    gpu_times: &[f64],
) {
    trace.set_metadata("benchmark", id);
    facts_before.annotate(trace, "start");
    facts_after.annotate(trace, "end");
    trace.set_metadata("launches per window", plan.launches_per_window);
    if let Some(guard) = guard {
        trace.set_metadata("launches per guard", guard);
    }
    for (i, g) in gpu_times.iter().enumerate() {
        trace.set_metadata(&format!("window {i} gpu_time_s"), format!("{g:.9}"));
    }
}

#[cfg(test)]
mod tests;
