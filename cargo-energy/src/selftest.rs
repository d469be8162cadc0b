//! `cargo energy selftest`: the GPU's sensors checked against physics, a verdict per source.

use std::io::Write;
use std::path::Path;

use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::unstable::engine::virtual_sim_device;
use energy_harness::unstable::engine::{default_calibration_dir, Calibration};
use energy_harness::unstable::selftest::{render as render_selftest, run_selftest, SelftestPlan};
use energy_harness::{Error, ErrorKind, Result};
use energy_results::trace::format::write_atomically;

/// Launch length of the test kernel: a thousand launches make a 0.1 s window.
const TEST_LAUNCH_S: f64 = 100e-6;

/// Runs the selftest; `Ok(false)` when the source the harness measures with is not to be
/// trusted.
pub(super) fn run(device: Option<u32>, json: bool, output: Option<&Path>) -> Result<bool> {
    let opened = Device::open(&DeviceRequest::from_env()?, device)?;
    let mut stderr = std::io::stderr();
    // The simulated GPU runs on a virtual clock: its selftest takes no real time.
    let mut device = match (opened.sim(), opened.sim_reason()) {
        (Some(gpu), Some(reason)) => {
            let _ =
                writeln!(stderr, "note: the selftest runs on the simulated GPU ({reason}); its figures are simulated");
            virtual_sim_device(gpu.preset().clone()).0
        }
        _ => opened,
    };
    let calibration = Calibration::load_cached(&default_calibration_dir(), &device.facts().uuid).unwrap_or_else(|e| {
        let _ = writeln!(stderr, "note: the cached calibration is not used: {e}");
        None
    });
    let mut workload = crate::busy::busy_workload(&device, TEST_LAUNCH_S)?;
    let _ = writeln!(
        stderr,
        "selftest on {}: the FMA loop at ~{:.0} µs per launch; about 45 s{}",
        device.facts().name,
        TEST_LAUNCH_S * 1e6,
        if calibration.is_some() { ", with the cached calibration" } else { "" }
    );
    let report = run_selftest(&mut device, workload.as_mut(), &SelftestPlan::default(), calibration, &mut |step| {
        let _ = writeln!(std::io::stderr(), "  {step}");
    })?;
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the report as JSON: {e}")))?;
    if let Some(path) = output {
        write_atomically(path, format!("{text}\n").as_bytes())?;
        let _ = writeln!(stderr, "report written to {}", path.display());
    }
    crate::output::emit(&if json { format!("{text}\n") } else { render_selftest(&report) })?;
    Ok(report.primary_trusted())
}
