//! `cargo energy calibrate`: a step response on the GPU, each source's model fitted,
//! cached per GPU UUID.

use std::io::Write;
use std::path::Path;

use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::unstable::engine::{calibrate, StepPlan};
use energy_harness::unstable::engine::{default_calibration_dir, Calibration};
use energy_harness::{Error, ErrorKind, Result};
use energy_results::trace::format::write_trace;

/// Launch length of the busy kernel: short enough for 40 ms pulses, long enough that
/// launch gaps do not matter.
const BUSY_LAUNCH_S: f64 = 0.005;

pub(super) fn run(device: Option<u32>, busy_s: f64, json: bool, trace_out: Option<&Path>, save: bool) -> Result<()> {
    let device = Device::open(&DeviceRequest::from_env()?, device)?;
    let mut stderr = std::io::stderr();
    if let Some(reason) = device.sim_reason() {
        let _ = writeln!(stderr, "note: calibrating the simulated GPU ({reason}); its figures are simulated");
    }
    let plan = StepPlan { busy_s, ..StepPlan::default() };
    let mut workload = crate::busy::busy_workload(&device, BUSY_LAUNCH_S)?;
    let total = 0.3
        + plan.idle_before_s
        + plan.busy_s
        + plan.idle_after_s
        + plan.pulses as f64 * (plan.pulse_s + plan.pulse_gap_s)
        + 1.0;
    let _ = writeln!(
        stderr,
        "calibrating {}: {} s idle, {} s busy (FMA loop), {} s idle, {} pulses of {} ms; about {total:.0} s",
        device.facts().name,
        plan.idle_before_s,
        plan.busy_s,
        plan.idle_after_s,
        plan.pulses,
        plan.pulse_s * 1e3
    );
    let (calibration, trace) = calibrate(&device, workload.as_mut(), plan)?;
    if let Some(path) = trace_out {
        write_trace(&trace, path)?;
        let _ = writeln!(stderr, "trace written to {}", path.display());
    }
    if save {
        let path = calibration.save(&default_calibration_dir())?;
        let _ = writeln!(stderr, "calibration saved to {}", path.display());
    }
    if json {
        let text = serde_json::to_string_pretty(&calibration)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))?;
        crate::output::emit(&format!("{text}\n"))?;
    } else {
        crate::output::emit(&render(&calibration))?;
    }
    Ok(())
}

fn render(c: &Calibration) -> String {
    let mut out = String::new();
    let tag = if c.simulated { " [simulated]" } else { "" };
    out.push_str(&format!("{} ({}){tag}\n", c.device_name, c.uuid));
    out.push_str(&format!(
        "  active idle {:.1} W before, {:.1} W after; busy {:.1} W for {:.3} s\n",
        c.idle_before_w, c.idle_after_w, c.busy_w, c.busy_s
    ));
    if let Some(k) = &c.counter {
        out.push_str(&format!(
            "  counter   ticks every {:.3} ms, phase {:.2} ms, {:.2} ms RMS about the grid; delay {:+.2} ms (rise {:+.2}, fall {:+.2})\n",
            k.period_s * 1e3,
            k.phase_s * 1e3,
            k.residual_rms_s * 1e3,
            k.delay_s * 1e3,
            k.delay_rise_s * 1e3,
            k.delay_fall_s * 1e3
        ));
    }
    for (kind, s) in &c.sources {
        out.push_str(&format!(
            "  {:<9} {:<28} delay {:+.1} ms, residual {:.2} W RMS{}\n",
            kind.name(),
            s.model.to_string(),
            s.delay_s * 1e3,
            s.rms_residual_w,
            s.update_period_s.map(|p| format!(", updates every {:.1} ms", p * 1e3)).unwrap_or_default()
        ));
    }
    out
}
