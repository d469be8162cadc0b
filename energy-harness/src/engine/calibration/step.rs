//! The calibration step response: idle, a step of busy time, idle, then short pulses, with
//! every source recorded; [`super::fit_calibration`] fits each source's model to it.

use super::fit::fit_calibration;
use super::Calibration;
use crate::device::Device;
use crate::engine::run::record;
use crate::sensors::SourceKind;
use crate::workload::Workload;
use energy_results::error::Result;
use energy_results::trace::Trace;

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
