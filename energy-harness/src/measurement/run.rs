//! What runs on the GPU around a measurement besides the session ([`super::session`]):
//! the simulated workload, recording an arbitrary body with the sensors sampled around it
//! (validation programs, `cargo energy trace`), and the calibration step response.
//!
//! On a virtual clock (the simulated GPU in tests) the body runs first and the sensors are
//! read afterwards over the same span, deterministically.

use std::sync::Arc;

use super::calibrate::fit_calibration;
use super::calibration::Calibration;
use crate::clock::VirtualClock;
use crate::device::Device;
use crate::error::{Error, ErrorKind, Result};
use crate::sampling::{record_until, Sampler, SamplerConfig, WindowMarker};
use crate::sensors::SourceKind;
use crate::sim::{SimGpu, SimKernel};
use crate::trace::Trace;
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
