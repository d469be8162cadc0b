//! `cargo energy calibrate --thermal`: the board's load power against its die temperature
//! (dP/dT), fitted on a busy kernel measured back to back as the board warms, cached beside
//! the sensor calibration so every later result also carries its energy at the reference
//! temperature (energy_harness::unstable::engine::ThermalCalibration).

use std::io::Write;

use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::unstable::engine::{
    calibrate_thermal, default_calibration_dir, ThermalCalibration, REFERENCE_TEMPERATURE_C,
};
use energy_harness::{Error, ErrorKind, Result};

/// Launch length of the busy kernel, s (as the sensor calibration's).
const BUSY_LAUNCH_S: f64 = 0.005;

pub(super) fn run(device: Option<u32>, seconds: f64, json: bool, save: bool) -> Result<()> {
    let mut device = Device::open(&DeviceRequest::from_env()?, device)?;
    let mut stderr = std::io::stderr();
    if let Some(reason) = device.sim_reason() {
        let _ = writeln!(stderr, "note: calibrating the simulated GPU ({reason}); its figures are simulated");
    }
    if let Some(gpu) = device.sim() {
        if gpu.preset().thermal.is_none() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the simulated GPU `{}` keeps a constant die temperature: there is no dP/dT to fit; ENERGY_DEVICE=sim:h100-warming simulates a board that warms and leaks",
                    gpu.preset().key
                ),
            ));
        }
    }
    let facts = device.facts().clone();
    let _ = writeln!(
        stderr,
        "thermal calibration of {}: the FMA loop ({} ms launches) measured back to back for {seconds:.0} s while the board warms, from {}; start it on a cold board (idle a minute or more)",
        facts.name,
        BUSY_LAUNCH_S * 1e3,
        facts.temperature_c.map_or("an unknown temperature".into(), |t| format!("{t} °C"))
    );
    let mut workload = crate::busy::busy_workload(&device, BUSY_LAUNCH_S)?;
    let calibration =
        calibrate_thermal(&mut device, workload.as_mut(), seconds, "FMA loop, 5 ms launches", &mut |line| {
            let _ = writeln!(std::io::stderr(), "  {line}");
        })?;
    if save {
        let path = calibration.save(&default_calibration_dir())?;
        let _ = writeln!(stderr, "thermal calibration saved to {}", path.display());
    }
    if json {
        let text = serde_json::to_string_pretty(&calibration)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))?;
        crate::output::emit(&format!("{text}\n"))
    } else {
        crate::output::emit(&render(&calibration))
    }
}

fn render(c: &ThermalCalibration) -> String {
    let tag = if c.simulated { " [simulated]" } else { "" };
    let pct = 100.0 * c.watts_per_c / c.mean_power_w;
    format!(
        "{} ({}){tag}\n  dP/dT {:.3} ± {:.3} W/°C at {} ({pct:.2} %/°C of the {:.0} W it drew), {} windows, {:.0}-{:.0} °C\n  every later result on this GPU also carries its energy at {REFERENCE_TEMPERATURE_C:.0} °C; compare uses it when both runs have it\n",
        c.device_name,
        c.uuid,
        c.watts_per_c,
        c.std_error_w_per_c,
        c.sm_clock_mhz.map_or("an unknown SM clock".to_string(), |m| format!("SM {m} MHz")),
        c.mean_power_w,
        c.windows,
        c.temperature_range_c.0,
        c.temperature_range_c.1
    )
}
