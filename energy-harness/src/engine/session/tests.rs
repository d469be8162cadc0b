//! The session engine's tests: the warm-up, the window checks, and one idle handed from a
//! session to the next (simulated GPU).

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
    let estimate = warm_up(&mut lazy, WARMUP_S).unwrap();
    assert!((estimate - 1e-3).abs() < 1e-12, "{estimate}");
    // A kernel of 1 s: two launches, and its own time.
    let mut long = LazyInit { first_s: 1.0, launch_s: 1.0, launched: 0 };
    assert_eq!(warm_up(&mut long, WARMUP_S).unwrap(), 1.0);
    assert_eq!(long.launched, 2);
    // A short first launch (module load) is left out of the estimate as before.
    let mut jit = LazyInit { first_s: 0.05, launch_s: 20e-6, launched: 0 };
    assert!((warm_up(&mut jit, WARMUP_S).unwrap() - 20e-6).abs() < 1e-15);
}

#[test]
fn the_warm_up_spends_its_time_and_not_a_doubled_batch_more() {
    // The L2-resident saxpy of the gate study (1.22 ms a launch): doubling batches alone
    // (1, 2, … 32: 77 ms) would end with 64 more launches, 155 ms in all.
    for (launch_s, warmup_s) in [(1.22e-3, 0.1), (20e-6, 0.025), (6.14e-3, 0.1), (57.2e-3, 0.1), (3e-3, 0.025)] {
        let mut steady = LazyInit { first_s: launch_s, launch_s, launched: 0 };
        let estimate = warm_up(&mut steady, warmup_s).unwrap();
        assert!((estimate / launch_s - 1.0).abs() < 1e-9, "{launch_s}: {estimate}");
        // The first launch, then batches ending within one launch past the warm-up.
        let spent = (steady.launched - 1) as f64 * launch_s;
        assert!(spent >= warmup_s - 1e-12 && spent < warmup_s + launch_s + 1e-12, "{launch_s}: spent {spent} s");
    }
}

#[test]
fn a_guard_is_the_warm_ups_last_part_for_kernels_on_a_counter() {
    let counter = SensorModel::Counter { period_s: 0.1 };
    // Kernels timed by CUDA events: the batches spend what the guard (one period) leaves.
    assert!((warmup_batches_s(WARMUP_S, &counter, TimeBasis::CudaEvents) - 0.1).abs() < 1e-12);
    assert_eq!(warmup_batches_s(WARMUP_CONTINUING_S, &counter, TimeBasis::CudaEvents), WARMUP_BATCHES_MIN_S);
    // Library work on the host clock keeps the whole warm-up (its first calls may autotune);
    // other sensors have no guard.
    assert_eq!(warmup_batches_s(WARMUP_CONTINUING_S, &counter, TimeBasis::HostClock), WARMUP_CONTINUING_S);
    let boxcar = SensorModel::Boxcar { width_s: 1.0 };
    assert_eq!(warmup_batches_s(WARMUP_S, &boxcar, TimeBasis::CudaEvents), WARMUP_S);
}

/// Library work timed on the host clock whose first `slow` calls take `slow_s` each (a
/// library autotuning or compiling) and every later one `fast_s`.
struct Autotuning {
    slow: u64,
    slow_s: f64,
    fast_s: f64,
    called: u64,
}

impl Workload for Autotuning {
    fn run(&mut self, launches: u64) -> Result<Batch> {
        let slow = launches.min(self.slow.saturating_sub(self.called));
        self.called += launches;
        Ok(Batch::timed(slow as f64 * self.slow_s + (launches - slow) as f64 * self.fast_s))
    }

    fn time_basis(&self) -> TimeBasis {
        TimeBasis::HostClock
    }
}

#[test]
fn a_library_warming_slowly_is_planned_from_a_window_length_batch() {
    // burn's fused elementwise op on an H200: planned at 1.06 ms per call, 7.4 µs once warm
    // (its first calls autotune: here 20 of 5 ms, a continuing session's 0.1 s warm-up).
    let mut lib = Autotuning { slow: 20, slow_s: 5e-3, fast_s: 7.4e-6, called: 0 };
    let warm = warm_up(&mut lib, WARMUP_CONTINUING_S).unwrap();
    assert!(warm > 10.0 * 7.4e-6, "the warm-up alone reads slow: {warm}");
    let confirmed = confirm_launch_time(&mut lib, warm, 0.1).unwrap();
    assert!((confirmed / 7.4e-6 - 1.0).abs() < 0.01, "{confirmed}");
    // A library whose calls are steady keeps its estimate (the batch's own, within noise).
    let mut steady = Autotuning { slow: 0, slow_s: 0.0, fast_s: 2e-3, called: 0 };
    let warm = warm_up(&mut steady, WARMUP_S).unwrap();
    assert!((confirm_launch_time(&mut steady, warm, 0.1).unwrap() / 2e-3 - 1.0).abs() < 1e-9);
    // Nothing to confirm with an impossible window length: the estimate stands.
    assert_eq!(confirm_launch_time(&mut steady, 2e-3, f64::NAN).unwrap(), 2e-3);
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
    // One tick per window: 0.1 s of 20 µs launches; the busy cap of 4 s holds 41 windows,
    // the window limit 40.
    assert_eq!(p.launches_per_window, 5_000);
    assert_eq!((p.min_windows, p.max_windows), (10, 40));
    // 100 ms launches: one per window, ten windows, a second of busy time.
    let p = plan(&options, 0.1, &counter);
    assert_eq!((p.launches_per_window, p.min_windows), (1, 10));
    // Launches that do not divide the tick: the window is never shorter than one tick
    // (10.3 ms: ten launches, 103 ms; 60 ms: two, 120 ms).
    assert_eq!(plan(&options, 10.3e-3, &counter).launches_per_window, 10);
    assert_eq!(plan(&options, 60e-3, &counter).launches_per_window, 2);
    assert!(plan(&options, 60e-3, &counter).window_s() >= 0.1);
    // 1 s launches: four windows of one launch (six launches with the warm-up's two).
    let p = plan(&options, 1.0, &counter);
    assert_eq!((p.launches_per_window, p.min_windows, p.max_windows), (1, 4, 4));
    let fixed = MeasureOptions { windows: Some(12), ..MeasureOptions::DEFAULT }.resolve(10).unwrap();
    assert_eq!(plan(&fixed, 1.0, &counter).max_windows, 12);
    let long = MeasureOptions { window_s: Some(0.5), ..MeasureOptions::DEFAULT }.resolve(3).unwrap();
    assert_eq!(plan(&long, 1e-3, &counter).launches_per_window, 500);
    assert!(plan(&options, 1e-3, &SensorModel::Boxcar { width_s: 1.0 }).idle_s >= 1.5);
}

#[test]
fn guards_fill_one_counter_period_at_most_a_window() {
    let options = MeasureOptions::DEFAULT.resolve(10).unwrap();
    let counter = SensorModel::Counter { period_s: 0.1 };
    // 20 µs launches: one period's worth, 5,000 (a window's).
    assert_eq!(guard_launches(&plan(&options, 20e-6, &counter), &counter), Some(5_000));
    // 60 ms launches: two (120 ms), as the window; 150 ms: one.
    assert_eq!(guard_launches(&plan(&options, 60e-3, &counter), &counter), Some(2));
    assert_eq!(guard_launches(&plan(&options, 0.15, &counter), &counter), Some(1));
    // A longer window (0.5 s of 1 ms launches): the guard stays one period.
    let long = MeasureOptions { window_s: Some(0.5), ..MeasureOptions::DEFAULT }.resolve(3).unwrap();
    assert_eq!(guard_launches(&plan(&long, 1e-3, &counter), &counter), Some(100));
    // 1 s launches span ten periods: no guard. Other sensors: none.
    assert_eq!(guard_launches(&plan(&options, 1.0, &counter), &counter), None);
    let boxcar = SensorModel::Boxcar { width_s: 1.0 };
    assert_eq!(guard_launches(&plan(&options, 1e-3, &boxcar), &boxcar), None);
    assert_eq!(guard_launches(&plan(&options, 1e-3, &SensorModel::Identity), &SensorModel::Identity), None);
}

mod handover {
    use super::*;
    use crate::clock::VirtualClock;
    use crate::engine::run::SimWorkload;
    use crate::sim::{SimGpu, SimKernel, SimPreset};
    use std::sync::Arc;

    fn device(seed: u64) -> Device {
        let clock = Arc::new(VirtualClock::starting_at(0.0));
        Device::simulated(SimGpu::new(SimPreset::h100().with_seed(seed), clock), "test")
    }

    fn workload(device: &Device, kernel: SimKernel, seed: u64) -> SimWorkload {
        SimWorkload::new(device.sim().unwrap().clone(), kernel).with_time_jitter(0.002, seed)
    }

    fn request(id: &str) -> MeasureRequest {
        MeasureRequest::new(id, MeasureOptions::DEFAULT).min_windows(10)
    }

    /// The counter's updates after `end_s` in `trace`.
    fn updates_after(trace: &Trace, end_s: f64) -> Vec<f64> {
        let series = trace.series(&Channel::Source(SourceKind::Counter));
        series.windows(2).filter(|p| p[1].time_s > end_s && p[1].value != p[0].value).map(|p| p[1].time_s).collect()
    }

    /// A 1 ms kernel at 600 W, then a 20 µs one at 420 W.
    const FIRST: SimKernel = SimKernel { duration_s: 1e-3, power_w: 600.0, ramp_s: 0.0 };
    const SECOND: SimKernel = SimKernel { duration_s: 20e-6, power_w: 420.0, ramp_s: 0.0 };

    /// The first kernel measured with its recording kept, then the second continuing it.
    fn continued(seed: u64, gap_s: f64) -> (Measurement, Trace, Measurement, Trace) {
        continued_as(seed, gap_s, Run::Plain)
    }

    /// How both measurements of [`continued_as`] run.
    #[derive(Clone, Copy, PartialEq)]
    enum Run {
        /// Outside a paired sequence.
        Plain,
        /// A run of a paired sequence ([`MeasureRequest::paired`]).
        Paired,
        /// A lean run of one ([`MeasureRequest::lean`]).
        Lean,
    }

    /// [`continued`], both measurements run as `run` says.
    fn continued_as(seed: u64, gap_s: f64, run: Run) -> (Measurement, Trace, Measurement, Trace) {
        let request = |id: &str| {
            let paired = request(id).paired(run != Run::Plain);
            if run == Run::Lean {
                paired.lean()
            } else {
                paired
            }
        };
        let mut device = device(seed);
        let mut a = workload(&device, FIRST, seed);
        let (first, _, handover) =
            Session::prepare(&device, &mut a, request("first")).unwrap().run_handing_over(&mut device, &mut a).unwrap();
        assert_eq!(handover.previous_id(), "first");
        device.clock().sleep_s(gap_s);
        let mut b = workload(&device, SECOND, seed + 100);
        let (second, trace) = Session::prepare_continuing(&device, &mut b, request("second"), Some(handover))
            .unwrap()
            .run(&mut device, &mut b)
            .unwrap();
        let first_trace = Trace::new();
        (first, first_trace, second, trace)
    }

    /// The truth: the board's energy per launch of `kernel` on the simulated GPU.
    fn truth(kernel: SimKernel) -> f64 {
        kernel.power_w * kernel.duration_s
    }

    #[test]
    fn a_handed_over_idle_is_the_next_sessions_lead_in_and_its_figures_hold() {
        for seed in 1..=4 {
            let (first, _, second, trace) = continued(seed, 0.05);
            assert_eq!(trace.metadata("lead-in"), Some("the idle after first, one recording"), "seed {seed}");
            // Nothing of the first session's windows is in the second's trace.
            assert!(trace.windows().unwrap().iter().all(|w| w.start_s >= first.windows.last().unwrap().energy.end_s));
            // Measured alone, on a fresh device with the same seed.
            let mut device = device(seed);
            let mut b = workload(&device, SECOND, seed + 100);
            let (alone, alone_trace) = measure(&mut device, &mut b, request("second")).unwrap();
            assert_eq!(alone_trace.metadata("lead-in"), None);
            for m in [&second, &alone] {
                let error = m.energy_j.mean / truth(SECOND) - 1.0;
                assert!(error.abs() < 0.01, "seed {seed}: {} off the truth by {:.3} %", m.id, error * 100.0);
                assert!(m.dynamic_j.mean > 0.0 && (m.idle_w - SimPreset::h100().idle_w).abs() < 5.0, "{m:?}");
            }
            // Each within the other's interval.
            let (x, y) = (&second.energy_j, &alone.energy_j);
            assert!(
                x.mean >= y.ci_low && x.mean <= y.ci_high || y.mean >= x.ci_low && y.mean <= x.ci_high,
                "{x:?} {y:?}"
            );
            // The continued one saves the lead-in and part of the warm-up's batches (a virtual
            // clock: no host time).
            let saved = alone.wall_time_s - second.wall_time_s;
            let counter = SensorModel::Counter { period_s: 0.1 };
            let expected = idle_s(&counter) + warmup_batches_s(WARMUP_S, &counter, TimeBasis::CudaEvents)
                - warmup_batches_s(WARMUP_CONTINUING_S, &counter, TimeBasis::CudaEvents);
            // Either tail may wait a tick more for an update made after its stretch.
            assert!(saved > expected - 0.15, "seed {seed}: saved {saved:.3} s, expected at least {expected:.3} s");
            // Its idle tail ended at the counter's third update made after the stretch (the
            // guard after the last window; read later by the reporting delay and a margin):
            // two whole tick intervals of idle, whatever the ticks' phase.
            let marked = trace.windows().unwrap();
            let guard = marked.iter().find(|w| w.index == GUARD_AFTER_WINDOW).expect("a guard after the windows");
            let end = guard.end_s;
            assert!(end > second.windows.last().unwrap().energy.end_s, "seed {seed}");
            // The guards are back to back with the first and the last window, and nothing
            // of them is in the result.
            let first_window = marked.iter().find(|w| w.index == 0).unwrap();
            let before = marked.iter().find(|w| w.index == GUARD_BEFORE_WINDOW).expect("a guard before window 0");
            assert!(
                (0.0..0.005).contains(&(first_window.start_s - before.end_s)),
                "seed {seed}: {before:?} {first_window:?}"
            );
            let last = &second.windows.last().unwrap().energy;
            assert!((0.0..0.005).contains(&(guard.start_s - last.end_s)), "seed {seed}");
            assert_eq!(second.windows.len(), marked.iter().filter(|w| !is_auxiliary_window(w.index)).count());
            // The guard fills one period at the warm-up's pace; the windows are sized by the
            // guard's own pace (the same kernel: within its jitter).
            let guard_launches: f64 = trace.metadata("launches per guard").unwrap().parse().unwrap();
            assert!(
                (guard_launches / second.launches_per_window as f64 - 1.0).abs() < 0.01,
                "seed {seed}: {guard_launches} launches per guard, {} per window",
                second.launches_per_window
            );
            let made_after = end + SourceKind::Counter.default_delay_s() + TAIL_TICK_MARGIN_S;
            let updates = updates_after(&trace, made_after);
            assert_eq!(updates.len(), 3, "seed {seed}: {updates:?} after {made_after}");
            let series = trace.series(&Channel::Source(SourceKind::Counter));
            let tail = series.last().unwrap().time_s - end;
            assert!((0.2..0.34).contains(&tail), "seed {seed}: tail {tail:.3} s");
            assert_eq!(trace.metadata("idle tail"), None);
            // The idle it took is the idle, not the stretch before it.
            let before = second.windows[0].energy.idle_before_w.unwrap();
            assert!((before - SimPreset::h100().idle_w).abs() < 3.0, "seed {seed}: idle before {before:.1} W");
            assert!(
                second.warnings.iter().all(|w| w.kind != energy_results::warning::WarningKind::IdleShift),
                "{:?}",
                second.warnings
            );
        }
    }

    #[test]
    fn a_paired_run_measures_one_interval_of_idle_and_its_figures_hold() {
        // Sixteen phases of the counter's ticks against the stretch's end: with four, a tail
        // that counted an update read just after the end but made before it passed by luck.
        let mut saved_s = Vec::new();
        for seed in 1..=16 {
            let (_, _, plain, _) = continued_as(seed, 0.05, Run::Plain);
            let (_, _, paired, trace) = continued_as(seed, 0.05, Run::Paired);
            assert!(trace.metadata("idle tail").is_some_and(|m| m.starts_with("1 counter interval")), "seed {seed}");
            // Its tail ended at the counter's second update made after the guard (read after
            // it by more than the reporting delay and a margin): one whole interval.
            let guard = trace.windows().unwrap().into_iter().find(|w| w.index == GUARD_AFTER_WINDOW).unwrap();
            let made_after = guard.end_s + SourceKind::Counter.default_delay_s() + TAIL_TICK_MARGIN_S;
            let updates = updates_after(&trace, made_after);
            assert_eq!(updates.len(), 2, "seed {seed}: {updates:?} after {made_after}");
            let tail = trace.series(&Channel::Source(SourceKind::Counter)).last().unwrap().time_s - guard.end_s;
            assert!((0.1..0.24).contains(&tail), "seed {seed}: tail {tail:.3} s");
            // The total energy holds as well as the plain run's; the idle is still the idle.
            for m in [&plain, &paired] {
                let error = m.energy_j.mean / truth(SECOND) - 1.0;
                assert!(error.abs() < 0.01, "seed {seed}: off the truth by {:.3} %", error * 100.0);
                assert!((m.idle_w - SimPreset::h100().idle_w).abs() < 5.0, "seed {seed}: idle {:.1} W", m.idle_w);
                // A rail is a part of the board: no idle above the board's, no dynamic below
                // nothing (the memory rail's 1 s boxcar cannot give either after a short tail).
                for rail in &m.rails {
                    assert!(rail.idle_w.is_none_or(|w| (0.0..=m.idle_w).contains(&w)), "seed {seed}: {rail:?}");
                    assert!(rail.dynamic_j.is_none_or(|d| d.mean >= 0.0), "seed {seed}: {rail:?}");
                }
            }
            // A paired run records no rail (its figures need more idle than such a run has).
            assert!(paired.rails.is_empty() && !plain.rails.is_empty(), "seed {seed}: {:?}", plain.rails);
            // About one tick interval shorter (a virtual clock: no host time); either may wait
            // a tick more for an update made after its stretch, or stop at the idle's cap.
            let saved = plain.wall_time_s - paired.wall_time_s;
            assert!((-0.02..0.25).contains(&saved), "seed {seed}: saved {saved:.3} s");
            saved_s.push(saved);
        }
        let mean = saved_s.iter().sum::<f64>() / saved_s.len() as f64;
        assert!((0.05..0.15).contains(&mean), "saved {mean:.3} s on average: {saved_s:?}");
    }

    #[test]
    fn a_lean_paired_run_measures_no_tail_and_carries_the_first_idle() {
        let (mut saved_s, mut saved_first_s, mut guard_s) = (Vec::new(), Vec::new(), Vec::new());
        for seed in 1..=16 {
            let (paired_first, _, paired, _) = continued_as(seed, 0.05, Run::Paired);
            let (first, _, lean, trace) = continued_as(seed, 0.05, Run::Lean);
            assert!(trace.metadata("idle tail").is_some_and(|m| m.starts_with("none")), "seed {seed}");
            // The first measured its lead-in and no tail; the second no idle of its own, and
            // carries the first's, saying so.
            assert!(first.windows.iter().all(|w| w.energy.idle_before_w.is_some() && w.energy.idle_after_w.is_none()));
            assert!((first.idle_w - SimPreset::h100().idle_w).abs() < 5.0, "seed {seed}: idle {:.1} W", first.idle_w);
            assert!(lean.windows.iter().all(|w| w.energy.idle_before_w.is_none() && w.energy.idle_after_w.is_none()));
            assert_eq!(lean.idle_w, first.idle_w, "seed {seed}");
            use energy_results::warning::WarningKind;
            let carried: Vec<_> = lean.warnings.iter().filter(|w| w.kind == WarningKind::IdleCarried).collect();
            assert_eq!(carried.len(), 1, "seed {seed}: {:?}", lean.warnings);
            assert!(carried[0].message.contains("measured with first"), "{}", carried[0].message);
            assert!(lean.warnings.iter().all(|w| w.kind != WarningKind::NoIdle), "seed {seed}");
            // The recording ran until the counter's curve, as the analysis places its ticks,
            // reached past the last window, and hardly longer: the guard after the window ran
            // until then, through the interval holding the window's end, and stopped there.
            let last_end = lean.windows.last().unwrap().energy.end_s;
            let options = AnalysisOptions::default();
            let reach = analyze::counter_curve_end_s(&trace, SourceKind::Counter, &options).unwrap();
            assert!(
                reach >= last_end + GUARD_REACH_MARGIN_S,
                "seed {seed}: curve to {reach:.4} s, window to {last_end:.4} s"
            );
            let guard = trace.windows().unwrap().into_iter().find(|w| w.index == GUARD_AFTER_WINDOW).unwrap();
            let tail = trace.series(&Channel::Source(SourceKind::Counter)).last().unwrap().time_s - guard.end_s;
            assert!(tail < 0.04, "seed {seed}: tail {tail:.3} s");
            guard_s.push(guard.duration_s());
            // The total energy holds as well as a paired run's, and the dynamic rests on the
            // carried idle.
            for m in [&paired, &first, &lean] {
                let kernel = if m.id == "first" { FIRST } else { SECOND };
                let error = m.energy_j.mean / truth(kernel) - 1.0;
                assert!(error.abs() < 0.01, "seed {seed}: {} off the truth by {:.3} %", m.id, error * 100.0);
            }
            let launch_s = lean.time_s.mean;
            let expected_dynamic = lean.energy_j.mean - lean.idle_w * launch_s;
            assert!((lean.dynamic_j.mean / expected_dynamic - 1.0).abs() < 0.01, "seed {seed}: {lean:?}");
            saved_s.push(paired.wall_time_s - lean.wall_time_s);
            saved_first_s.push(paired_first.wall_time_s - first.wall_time_s);
        }
        // Each measurement saves the tail's tick interval and the wait for the tick before it;
        // a process's first one, besides, measures one interval of lead-in, not 0.3 s.
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (saved, saved_first) = (mean(&saved_s), mean(&saved_first_s));
        assert!((0.1..0.25).contains(&saved), "saved {saved:.3} s on average: {saved_s:?}");
        assert!((0.2..0.45).contains(&saved_first), "saved {saved_first:.3} s on average: {saved_first_s:?}");
        // The guard after the windows waits for the tick after them: less than a period where
        // that tick lies far enough past the window's end, a period more where it lies too
        // close to be placed after it (never more than a period, the reporting delay and a
        // slice or two); a fixed guard ran a whole period whatever the phase.
        let guard = mean(&guard_s);
        assert!(guard < 0.1, "guard after {guard:.3} s on average: {guard_s:?}");
        assert!(guard_s.iter().all(|&g| g < 0.13), "{guard_s:?}");
    }

    /// A simulated kernel whose host wakes `delay_s` late from every batch's wait (a loaded
    /// machine), its device span shown to the session or hidden from it.
    struct SlowHost {
        inner: SimWorkload,
        clock: SharedClock,
        delay_s: f64,
        show_span: bool,
    }

    impl Workload for SlowHost {
        fn run(&mut self, launches: u64) -> Result<Batch> {
            let batch = self.inner.run(launches)?;
            self.clock.sleep_s(self.delay_s);
            Ok(batch)
        }

        fn device_span_s(&self) -> Option<(f64, f64)> {
            self.show_span.then(|| self.inner.device_span_s()).flatten()
        }
    }

    #[test]
    fn a_host_slow_to_wake_adds_nothing_to_a_simulated_window() {
        for seed in 1..=3 {
            let measured = |show_span: bool| {
                let mut device = device(seed);
                let inner = workload(&device, FIRST, seed);
                let mut slow = SlowHost { inner, clock: device.clock().clone(), delay_s: 0.01, show_span };
                let (m, trace) = measure(&mut device, &mut slow, request("slow")).unwrap();
                (m.energy_j.mean / truth(FIRST) - 1.0, trace)
            };
            let (error, trace) = measured(true);
            assert!(error.abs() < 0.005, "seed {seed}: {:.3} % off the truth", error * 100.0);
            // The windows are the kernels' spans: 10 ms apart, not back to back.
            let windows: Vec<_> =
                trace.windows().unwrap().into_iter().filter(|w| !is_auxiliary_window(w.index)).collect();
            for pair in windows.windows(2) {
                assert!(pair[1].start_s - pair[0].end_s >= 0.01 - 1e-9, "seed {seed}: {pair:?}");
            }
            // Marked from the host, the 10 ms of idle after each batch were counted in.
            let (host_marked, _) = measured(false);
            assert!(host_marked > 0.01, "seed {seed}: host-marked windows {:.3} % off", host_marked * 100.0);
        }
    }

    #[test]
    fn an_idle_handed_over_too_long_ago_is_not_taken() {
        let (_, _, second, trace) = continued(7, HANDOVER_MAX_GAP_S + 0.2);
        assert_eq!(trace.metadata("lead-in"), None);
        assert!((second.energy_j.mean / truth(SECOND) - 1.0).abs() < 0.01);
    }

    #[test]
    fn an_idle_recorded_by_other_sources_is_not_taken() {
        let mut device = device(3);
        let mut a = workload(&device, FIRST, 3);
        let (_, _, handover) =
            Session::prepare(&device, &mut a, request("first")).unwrap().run_handing_over(&mut device, &mut a).unwrap();
        let mut b = workload(&device, SECOND, 4);
        let options = MeasureOptions { source: Some(SourceKind::PowerUsage), ..MeasureOptions::DEFAULT };
        let (_, trace) = Session::prepare_continuing(
            &device,
            &mut b,
            MeasureRequest::new("second", options).min_windows(10),
            Some(handover),
        )
        .unwrap()
        .run(&mut device, &mut b)
        .unwrap();
        assert_eq!(trace.metadata("lead-in"), None);
    }
}

#[test]
fn an_early_stop_check_allows_a_quarter_second_of_windows_uncovered() {
    assert_eq!(uncovered_allowance(0.15), 2);
    assert_eq!(uncovered_allowance(0.1), 3);
    assert_eq!(uncovered_allowance(0.5), 2);
    assert_eq!(uncovered_allowance(1e-3), 8);
    assert_eq!(uncovered_allowance(f64::NAN), 2);
}

/// Issue 63: a kernel shorter than the host's time per launch leaves the GPU waiting between
/// launches. The simulated host takes `SIM_HOST_LAUNCH_S` per launch; the probe times the
/// launches back to back, and the warning names the share of each window the GPU waited.
mod launch_bound {
    use super::*;
    use crate::clock::VirtualClock;
    use crate::engine::run::{SimWorkload, SIM_HOST_LAUNCH_S};
    use crate::sim::{SimGpu, SimKernel, SimPreset};
    use std::sync::Arc;

    fn measured(kernel: SimKernel, host_launch_s: f64) -> Measurement {
        measured_as(kernel, host_launch_s, None)
    }

    /// `kernel` measured with its launches replayed as a CUDA graph of `graph` launches.
    fn measured_as(kernel: SimKernel, host_launch_s: f64, graph: Option<u64>) -> Measurement {
        let clock = Arc::new(VirtualClock::starting_at(0.0));
        let mut device = Device::simulated(SimGpu::new(SimPreset::h100().with_seed(5), clock), "test");
        let workload = SimWorkload::new(device.sim().unwrap().clone(), kernel).with_host_launch_s(host_launch_s);
        let mut workload = match graph {
            Some(launches) => workload.with_graph(launches),
            None => workload,
        };
        let (m, _) = measure(&mut device, &mut workload, MeasureRequest::new("k", MeasureOptions::DEFAULT)).unwrap();
        m
    }

    #[test]
    fn a_graph_runs_the_launches_back_to_back_and_measures_the_kernel_itself() {
        // 1 µs kernels, a host taking 3 µs per launch (of a kernel or of a graph).
        let kernel = SimKernel::new(1e-6, 420.0);
        let graphed = measured_as(kernel, SIM_HOST_LAUNCH_S, Some(100));
        assert_eq!(graphed.graph_launches, Some(100));
        assert!(graphed.windows.iter().all(|w| w.launches % 100 == 0), "whole replays in every window");
        assert!(!graphed.has_warning(WarningKind::LaunchBound), "{:?}", graphed.warnings);
        assert!((graphed.time_s.mean / 1e-6 - 1.0).abs() < 0.01, "per launch, not per replay: {}", graphed.time_s.mean);
        let error = graphed.energy_j.mean / truth(kernel) - 1.0;
        assert!(error.abs() < 0.01, "{:.3} % off the truth's energy per launch", 100.0 * error);
        // Launched by the host, each launch also carries two thirds of idle; the dynamic
        // energy (the idle taken out) is the kernel's either way.
        let direct = measured(kernel, SIM_HOST_LAUNCH_S);
        assert_eq!(direct.graph_launches, None);
        assert!(
            direct.energy_j.mean > 1.3 * graphed.energy_j.mean,
            "{} vs {}",
            direct.energy_j.mean,
            graphed.energy_j.mean
        );
        assert!((direct.dynamic_j.mean / graphed.dynamic_j.mean - 1.0).abs() < 0.03);
        // A graph whose replay is shorter than the host's launch of it waits too, and is warned.
        let small = measured_as(kernel, SIM_HOST_LAUNCH_S, Some(2));
        let warning = small.warnings.iter().find(|w| w.kind == WarningKind::LaunchBound).expect("launch-bound");
        assert!(warning.message.contains("waited 33 % of each window"), "{}", warning.message);
    }

    /// The truth: the board's energy per launch of `kernel` on the simulated GPU.
    fn truth(kernel: SimKernel) -> f64 {
        kernel.power_w * kernel.duration_s
    }

    #[test]
    fn a_kernel_shorter_than_its_launch_is_called_launch_bound_with_the_truths_figures() {
        // 1 µs kernels launched every 3 µs: the GPU waits two thirds of each window.
        let short = measured(SimKernel::new(1e-6, 420.0), SIM_HOST_LAUNCH_S);
        let b2b = short.back_to_back_s.expect("probed");
        assert!((b2b / 1e-6 - 1.0).abs() < 0.02, "back to back {b2b} s against the truth's 1 µs");
        assert!((short.time_s.mean / SIM_HOST_LAUNCH_S - 1.0).abs() < 0.02, "the window's pace is the host's");
        let warning = short.warnings.iter().find(|w| w.kind == WarningKind::LaunchBound).expect("called launch-bound");
        assert!(warning.message.contains("waited 67 % of each window"), "{}", warning.message);
        // 20 µs kernels (and 3 µs ones on a host twice as fast): the GPU never waits.
        for (kernel, host) in [(20e-6, SIM_HOST_LAUNCH_S), (3e-6, SIM_HOST_LAUNCH_S / 2.0)] {
            let m = measured(SimKernel::new(kernel, 420.0), host);
            assert!(!m.has_warning(WarningKind::LaunchBound), "{kernel} s: {:?}", m.warnings);
            assert!((m.back_to_back_s.unwrap() / m.time_s.mean - 1.0).abs() < 0.02);
        }
    }

    #[test]
    fn the_warning_needs_a_wait_beyond_a_tenth_and_a_sound_probe() {
        assert!(launch_bound_warning(Some(0.95e-6), 1e-6).is_none(), "5 %: within the allowance");
        assert!(launch_bound_warning(Some(0.5e-6), 1e-6).is_some());
        for bad in [None, Some(0.0), Some(f64::NAN), Some(-1.0)] {
            assert!(launch_bound_warning(bad, 1e-6).is_none());
        }
        assert!(launch_bound_warning(Some(1e-6), 0.0).is_none());
    }
}
