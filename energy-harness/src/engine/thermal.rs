//! Temperature-normalized energy: a board's load power rises with its die temperature
//! (leakage), so one kernel reads 0.3-0.55 % more per °C on the H100s measured
//! (docs/VALIDATION.md). Between two CI runs the board's temperature differs by several
//! degrees, which moves the figure by more than the change a user wants to catch.
//!
//! **Where the coefficient comes from.** The board's power at load rises by `dP/dT` watts
//! per °C at a given SM clock: one figure per board (in W/°C, not % per °C: the extra
//! power is leakage, the same watts whatever kernel keeps the SMs busy at that clock), so
//! it is fitted once per GPU by `cargo energy calibrate --thermal` (a kernel run back to
//! back from a cold board to a hot one, each window's power against its temperature) and
//! cached beside the sensor calibration ([`ThermalCalibration::path_in`]). A run's own
//! windows cannot give it: within the 2-3 s of one benchmark the die moves 0-2 °C, read in
//! whole degrees.
//!
//! **What is reported.** Each window's energy per launch is moved to the reference
//! temperature [`REFERENCE_TEMPERATURE_C`]: `E − k · (T − T_ref) · d / n` (k the
//! coefficient, T the window's temperature, d its length, n its launches). The interval is
//! the windows' interval widened by the coefficient's own uncertainty:
//! `1.96 · σ_k · |T̄ − T_ref| · d̄ / n` added in quadrature (a systematic term: the same
//! error moves every window of the run). The raw figure is always kept beside it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::result::{Measurement, ThermalNormalized, WindowResult};
use super::stats::{linear_fit, Estimate};
use energy_results::error::{echo, Error, ErrorKind, Result};
use energy_results::trace::format::write_atomically;

/// The temperature every normalized figure is stated at, °C: inside the range H100s and
/// H200s run kernels at (40-65 °C), so corrections stay short.
pub const REFERENCE_TEMPERATURE_C: f64 = 50.0;
/// The schema tag of thermal calibration files.
pub const THERMAL_SCHEMA: &str = "energy-thermal/1";
/// Fewest windows a fit takes.
pub const MIN_FIT_WINDOWS: usize = 8;
/// Least temperature span a fit takes, °C: readings come in whole degrees. An H100 SXM's
/// die reaches 41-44 °C within the first second of load from 36 °C idle, and a minute of
/// back-to-back runs spans 41-45 °C in the windows (research/results/2026-11-25-h100-verdicts,
/// b1c1): a wider demand would refuse every calibration there; the fit's standard error,
/// carried into every normalized interval, says what a narrow span costs.
pub const MIN_FIT_SPAN_C: f64 = 3.0;
pub use energy_results::measured::{extrapolation_note, MAX_WATTS_PER_C};

/// A board's load power against die temperature, at one SM clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ThermalCalibration {
    /// Always [`THERMAL_SCHEMA`].
    pub schema: String,
    /// GPU name.
    pub device_name: String,
    /// GPU UUID (the cache key).
    pub uuid: String,
    /// Whether it was fitted on the simulated GPU.
    pub simulated: bool,
    /// When it was fitted (RFC 3339).
    pub created_at: String,
    /// dP/dT, W/°C.
    pub watts_per_c: f64,
    /// Standard error of dP/dT, W/°C.
    pub std_error_w_per_c: f64,
    /// The SM clock of the windows fitted, MHz (windows at other clocks are left out).
    pub sm_clock_mhz: Option<u32>,
    /// Coolest and hottest window fitted, °C.
    pub temperature_range_c: (f64, f64),
    /// Windows fitted.
    pub windows: usize,
    /// Mean load power of the windows fitted, W.
    pub mean_power_w: f64,
    /// The kernel that ran.
    pub kernel: String,
}

/// One window for the fit: its temperature, mean board power and SM clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThermalPoint {
    /// Die temperature, °C.
    pub temperature_c: f64,
    /// Mean board power in the window, W.
    pub power_w: f64,
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<u32>,
}

impl ThermalPoint {
    /// The points of a measurement's windows that have a temperature.
    pub fn of(measurement: &Measurement) -> Vec<ThermalPoint> {
        ThermalPoint::of_windows(&measurement.windows)
    }

    /// The points of `windows` (a result file's, say) that have a temperature.
    pub fn of_windows(windows: &[WindowResult]) -> Vec<ThermalPoint> {
        windows
            .iter()
            .filter_map(|w| {
                let d = w.energy.duration_s();
                let t = w.temperature_c?;
                (d > 0.0 && w.energy.energy_j.is_finite()).then(|| ThermalPoint {
                    temperature_c: f64::from(t),
                    power_w: w.energy.energy_j / d,
                    sm_clock_mhz: w.sm_clock_mhz,
                })
            })
            .collect()
    }
}

/// A least-squares fit of load power on die temperature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThermalFit {
    /// dP/dT, W/°C.
    pub watts_per_c: f64,
    /// Its standard error, W/°C.
    pub std_error_w_per_c: f64,
    /// The SM clock of the windows kept, MHz.
    pub sm_clock_mhz: Option<u32>,
    /// Coolest and hottest window kept, °C.
    pub temperature_range_c: (f64, f64),
    /// Windows kept.
    pub windows: usize,
    /// Their mean power, W.
    pub mean_power_w: f64,
}

/// Fits dP/dT to `points` (windows of one kernel, from several measurements as the board
/// warms): windows at the most common SM clock only, then least squares of power on
/// temperature. Errors (naming what to do) when fewer than [`MIN_FIT_WINDOWS`] remain, the
/// span is under [`MIN_FIT_SPAN_C`], or the slope is not a board's.
pub fn fit_thermal(points: &[ThermalPoint]) -> Result<ThermalFit> {
    let mut clocks: Vec<Option<u32>> = points.iter().map(|p| p.sm_clock_mhz).collect();
    clocks.sort();
    let modal =
        clocks.chunk_by(|a, b| a == b).max_by_key(|run| run.len()).and_then(|run| run.first().copied()).flatten();
    let kept: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.sm_clock_mhz == modal && p.temperature_c.is_finite() && p.power_w.is_finite())
        .map(|p| (p.temperature_c, p.power_w))
        .collect();
    let refuse = |problem: String| {
        Err(Error::new(
            ErrorKind::Analysis,
            format!("no thermal coefficient: {problem}; run the calibration from a cold board (idle for a minute or more) so the die warms by {MIN_FIT_SPAN_C:.0} °C or more while it runs"),
        ))
    };
    if kept.len() < MIN_FIT_WINDOWS {
        return refuse(format!("{} windows at one SM clock, {MIN_FIT_WINDOWS} needed", kept.len()));
    }
    let low = kept.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let high = kept.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if high - low < MIN_FIT_SPAN_C {
        return refuse(format!("the windows span {low:.0}-{high:.0} °C, {MIN_FIT_SPAN_C:.0} °C needed"));
    }
    let Some(fit) = linear_fit(&kept) else { return refuse("the fit failed".into()) };
    if !(fit.slope.is_finite() && fit.slope_std_err.is_finite() && fit.slope.abs() <= MAX_WATTS_PER_C) {
        return refuse(format!(
            "the slope {:.3} W/°C (± {:.3}) is not a board's leakage (at most {MAX_WATTS_PER_C} W/°C)",
            fit.slope, fit.slope_std_err
        ));
    }
    let mean_power = kept.iter().map(|p| p.1).sum::<f64>() / kept.len() as f64;
    Ok(ThermalFit {
        watts_per_c: fit.slope,
        std_error_w_per_c: fit.slope_std_err,
        sm_clock_mhz: modal,
        temperature_range_c: (low, high),
        windows: kept.len(),
        mean_power_w: mean_power,
    })
}

impl ThermalCalibration {
    /// The calibration of the device `facts` from `points` (see [`fit_thermal`]).
    pub fn fit(facts: &crate::gpu::DeviceFacts, kernel: &str, points: &[ThermalPoint]) -> Result<ThermalCalibration> {
        let fit = fit_thermal(points)?;
        Ok(ThermalCalibration {
            schema: THERMAL_SCHEMA.to_string(),
            device_name: facts.name.clone(),
            uuid: facts.uuid.clone(),
            simulated: facts.simulated,
            created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            watts_per_c: fit.watts_per_c,
            std_error_w_per_c: fit.std_error_w_per_c,
            sm_clock_mhz: fit.sm_clock_mhz,
            temperature_range_c: fit.temperature_range_c,
            windows: fit.windows,
            mean_power_w: fit.mean_power_w,
            kernel: kernel.to_string(),
        })
    }

    /// Checks every figure (finite, a board's slope, an error ≥ 0, a range that is one).
    pub fn validate(&self) -> std::result::Result<(), String> {
        if !(self.watts_per_c.is_finite() && self.watts_per_c.abs() <= MAX_WATTS_PER_C) {
            return Err(format!("dP/dT {} W/°C is not a board's (at most {MAX_WATTS_PER_C})", self.watts_per_c));
        }
        if !(self.std_error_w_per_c.is_finite() && self.std_error_w_per_c >= 0.0) {
            return Err(format!("the standard error {} W/°C is not one", self.std_error_w_per_c));
        }
        let (low, high) = self.temperature_range_c;
        if !(low.is_finite() && high.is_finite() && low <= high && (-40.0..=150.0).contains(&low) && high <= 150.0) {
            return Err(format!("the temperature range {low}-{high} °C is not a die's"));
        }
        if !(self.mean_power_w.is_finite() && self.mean_power_w > 0.0) {
            return Err(format!("the mean power {} W is not one", self.mean_power_w));
        }
        Ok(())
    }

    /// The file it is cached in under `dir`: the sensor calibration's name
    /// ([`Calibration::path_in`](super::calibration::Calibration::path_in)) ending in
    /// `.thermal.json`.
    pub fn path_in(dir: &Path, uuid: &str) -> PathBuf {
        super::calibration::Calibration::path_in(dir, uuid).with_extension("thermal.json")
    }

    /// Writes it (atomically) under `dir`; returns the path.
    pub fn save(&self, dir: &Path) -> Result<PathBuf> {
        self.validate().map_err(|problem| {
            Error::new(ErrorKind::Analysis, format!("the thermal calibration is not saved: {problem}; run it again"))
        })?;
        let path = ThermalCalibration::path_in(dir, &self.uuid);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the thermal calibration: {e}")))?;
        write_atomically(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Reads a thermal calibration file, checking its schema and figures.
    pub fn read_json(path: &Path) -> Result<ThermalCalibration> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the thermal calibration", e))?;
        let redo = "delete it and run `cargo energy calibrate --thermal` again";
        let value: ThermalCalibration = serde_json::from_str(&text).map_err(|e| {
            Error::new(ErrorKind::Format, format!("{}: not a thermal calibration ({e}); {redo}", path.display()))
        })?;
        if value.schema != THERMAL_SCHEMA {
            return Err(Error::new(
                ErrorKind::Format,
                format!("{}: schema `{}`, expected `{THERMAL_SCHEMA}`", path.display(), echo(&value.schema)),
            ));
        }
        value
            .validate()
            .map_err(|problem| Error::new(ErrorKind::Format, format!("{}: {problem}; {redo}", path.display())))?;
        Ok(value)
    }

    /// The cached thermal calibration of the GPU with `uuid`, if there is one.
    pub fn load_cached(dir: &Path, uuid: &str) -> Result<Option<ThermalCalibration>> {
        let path = ThermalCalibration::path_in(dir, uuid);
        if !path.exists() {
            return Ok(None);
        }
        ThermalCalibration::read_json(&path).map(Some)
    }

    /// Where the coefficient came from, in one phrase.
    pub fn origin(&self) -> String {
        format!(
            "dP/dT {:.3} ± {:.3} W/°C fitted {} on {} windows of {} ({:.0}-{:.0} °C{})",
            self.watts_per_c,
            self.std_error_w_per_c,
            self.created_at,
            self.windows,
            self.kernel,
            self.temperature_range_c.0,
            self.temperature_range_c.1,
            self.sm_clock_mhz.map_or(String::new(), |c| format!(", SM {c} MHz"))
        )
    }
}

/// Windows per measurement of [`calibrate_thermal`]: each measurement takes about 2 s, so
/// the die moves little within one.
pub const CALIBRATION_WINDOWS: usize = 10;

/// Fits the board's dP/dT: `workload` (a kernel that keeps every SM busy) measured back to
/// back for `seconds` on the device's clock while the board warms, each window's power
/// against its temperature ([`ThermalCalibration::fit`]). `progress` hears a line per
/// measurement. Start it on a cold board: a board already hot moves too little.
pub fn calibrate_thermal(
    device: &mut crate::device::Device,
    workload: &mut dyn crate::workload::Workload,
    seconds: f64,
    kernel: &str,
    progress: &mut dyn FnMut(String),
) -> Result<ThermalCalibration> {
    let facts = device.facts().clone();
    // Windows of 0.15 s (the default before windows shrank to one tick): the share of busy
    // time in a round, and so how far the board warms in `seconds`, as calibrated before.
    let options = super::MeasureOptions {
        windows: Some(CALIBRATION_WINDOWS),
        window_s: Some(0.15),
        ..super::MeasureOptions::DEFAULT
    };
    let clock = device.clock().clone();
    let start = clock.now_s();
    let mut points = Vec::new();
    let mut round = 0;
    while clock.now_s() - start < seconds {
        round += 1;
        let (m, _) = super::measure(device, workload, super::MeasureRequest::new("thermal", options.clone()))?;
        let new = ThermalPoint::of(&m);
        if let (Some(first), Some(last)) = (new.first(), new.last()) {
            progress(format!(
                "{:>6.1} s  round {round}: {:.1} W, {:.0} → {:.0} °C",
                clock.now_s() - start,
                m.power_w.mean,
                first.temperature_c,
                last.temperature_c
            ));
        }
        points.extend(new);
    }
    ThermalCalibration::fit(&facts, kernel, &points).map_err(|e| {
        Error::new(
            e.kind(),
            format!("{} (the board warmed over {} windows in {round} rounds)", e.message(), points.len()),
        )
    })
}

/// The windows' energy per launch moved to the reference temperature with `calibration`;
/// `None` when a window lacks its temperature, the coefficient is another board's, or the
/// windows ran at another SM clock than the fit's.
pub fn normalize(
    measurement_uuid: &str,
    windows: &[WindowResult],
    calibration: &ThermalCalibration,
) -> Option<ThermalNormalized> {
    if calibration.uuid != measurement_uuid || windows.len() < 2 {
        return None;
    }
    if let Some(clock) = calibration.sm_clock_mhz {
        if windows.iter().any(|w| w.sm_clock_mhz.is_some_and(|c| c != clock)) {
            return None;
        }
    }
    let k = calibration.watts_per_c;
    let mut values = Vec::with_capacity(windows.len());
    let (mut t_sum, mut d_sum) = (0.0, 0.0);
    for w in windows {
        let t = f64::from(w.temperature_c?);
        let n = w.launches.max(1) as f64;
        let d = w.energy.duration_s();
        values.push((w.energy.energy_j - k * (t - REFERENCE_TEMPERATURE_C) * d) / n);
        t_sum += t;
        d_sum += d / n;
    }
    let count = windows.len() as f64;
    let (mean_t, mean_d) = (t_sum / count, d_sum / count);
    let estimate = Estimate::from_values(&values)?;
    let systematic = 1.96 * calibration.std_error_w_per_c * (mean_t - REFERENCE_TEMPERATURE_C).abs() * mean_d;
    let statistical = 0.5 * (estimate.ci_high - estimate.ci_low);
    let half = statistical.hypot(systematic);
    let energy_j = Estimate { ci_low: estimate.mean - half, ci_high: estimate.mean + half, ..estimate };
    (energy_j.validate(true).is_ok()).then(|| ThermalNormalized {
        reference_c: REFERENCE_TEMPERATURE_C,
        energy_j,
        statistical_j: estimate,
        seconds_per_launch: mean_d,
        mean_temperature_c: mean_t,
        watts_per_c: k,
        std_error_w_per_c: calibration.std_error_w_per_c,
        calibration_uuid: calibration.uuid.clone(),
        fitted_range_c: Some(calibration.temperature_range_c),
        origin: calibration.origin(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::windows::WindowEnergy;

    fn window(t: u32, energy_j: f64, d: f64, launches: u64) -> WindowResult {
        WindowResult {
            energy: WindowEnergy {
                index: 0,
                start_s: 0.0,
                end_s: d,
                energy_j,
                dynamic_j: energy_j * 0.5,
                idle_before_w: None,
                idle_after_w: None,
                idle_w: 100.0,
                busy_w: None,
                points_inside: 1,
                edge_energy_j: 0.0,
            },
            launches,
            gpu_time_s: d,
            sm_clock_mhz: Some(1980),
            temperature_c: Some(t),
        }
    }

    fn calibration(k: f64, se: f64) -> ThermalCalibration {
        ThermalCalibration {
            schema: THERMAL_SCHEMA.into(),
            device_name: "H100".into(),
            uuid: "GPU-a".into(),
            simulated: false,
            created_at: "2026-11-25T00:00:00Z".into(),
            watts_per_c: k,
            std_error_w_per_c: se,
            sm_clock_mhz: Some(1980),
            temperature_range_c: (35.0, 60.0),
            windows: 40,
            mean_power_w: 330.0,
            kernel: "fma".into(),
        }
    }

    #[test]
    fn a_known_leakage_is_fitted_and_removed() {
        // Power 330 W at 50 °C rising 1.5 W/°C: windows from 38 to 62 °C.
        let points: Vec<ThermalPoint> = (38..=62)
            .map(|t| ThermalPoint {
                temperature_c: f64::from(t),
                power_w: 330.0 + 1.5 * (f64::from(t) - 50.0) + if t % 2 == 0 { 0.2 } else { -0.2 },
                sm_clock_mhz: Some(1980),
            })
            .chain([ThermalPoint { temperature_c: 60.0, power_w: 200.0, sm_clock_mhz: Some(1410) }])
            .collect();
        let fit = fit_thermal(&points).unwrap();
        let (k, se) = (fit.watts_per_c, fit.std_error_w_per_c);
        assert!((k - 1.5).abs() < 0.02 && se < 0.05, "{k} ± {se}");
        assert_eq!((fit.sm_clock_mhz, fit.temperature_range_c, fit.windows), (Some(1980), (38.0, 62.0), 25));
        // The same kernel (0.15 s windows of 100 launches) read at 40 and at 60 °C.
        let energy = |t: u32| (330.0 + 1.5 * (f64::from(t) - 50.0)) * 0.15;
        let cold: Vec<WindowResult> =
            (0..6).map(|i| window(40, energy(40) * (1.0 + 1e-4 * i as f64), 0.15, 100)).collect();
        let hot: Vec<WindowResult> =
            (0..6).map(|i| window(60, energy(60) * (1.0 + 1e-4 * i as f64), 0.15, 100)).collect();
        let cal = calibration(k, se);
        let (c, h) = (normalize("GPU-a", &cold, &cal).unwrap(), normalize("GPU-a", &hot, &cal).unwrap());
        let raw_gap = energy(60) / energy(40) - 1.0;
        assert!(raw_gap > 0.08, "{raw_gap}");
        assert!((h.energy_j.mean / c.energy_j.mean - 1.0).abs() < 0.003, "{c:?} {h:?}");
        assert!((c.energy_j.mean - 330.0 * 0.15 / 100.0 * 1.00025).abs() / c.energy_j.mean < 0.003);
        // The coefficient's uncertainty widens the interval, more the farther from 50 °C.
        let wide = normalize("GPU-a", &hot, &calibration(k, 0.2)).unwrap();
        assert!(wide.energy_j.ci_high - wide.energy_j.ci_low > 2.0 * (h.energy_j.ci_high - h.energy_j.ci_low));
        // Another board's coefficient, or another clock, is never applied.
        assert!(normalize("GPU-b", &hot, &cal).is_none());
        let mut slow = hot.clone();
        slow[0].sm_clock_mhz = Some(1410);
        assert!(normalize("GPU-a", &slow, &cal).is_none());
        let mut unknown = hot;
        unknown[1].temperature_c = None;
        assert!(normalize("GPU-a", &unknown, &cal).is_none());
    }

    #[test]
    fn fits_that_are_not_a_boards_are_refused() {
        let flat: Vec<ThermalPoint> = (0..20)
            .map(|i| ThermalPoint { temperature_c: 45.0 + (i % 3) as f64, power_w: 330.0, sm_clock_mhz: Some(1980) })
            .collect();
        let err = fit_thermal(&flat).unwrap_err();
        assert!(err.message().contains("span 45-47 °C, 3 °C needed") && err.message().contains("cold board"), "{err}");
        assert!(fit_thermal(&flat[..3]).unwrap_err().message().contains("3 windows"));
        let wild: Vec<ThermalPoint> = (0..20)
            .map(|i| ThermalPoint {
                temperature_c: 40.0 + i as f64,
                power_w: 100.0 + 50.0 * i as f64,
                sm_clock_mhz: None,
            })
            .collect();
        assert!(fit_thermal(&wild).unwrap_err().message().contains("not a board's leakage"));
        let mut bad = calibration(1.5, 0.05);
        bad.watts_per_c = f64::NAN;
        assert!(bad.validate().is_err());
        bad = calibration(1.5, 0.05);
        bad.temperature_range_c = (70.0, 30.0);
        assert!(bad.validate().is_err());
    }

    #[test]
    fn calibrations_round_trip_through_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let cal = calibration(1.4, 0.03);
        let path = cal.save(dir.path()).unwrap();
        assert!(path.ends_with("GPU-a.thermal.json"));
        assert_eq!(ThermalCalibration::load_cached(dir.path(), "GPU-a").unwrap().unwrap(), cal);
        assert!(ThermalCalibration::load_cached(dir.path(), "GPU-b").unwrap().is_none());
        std::fs::write(&path, "{\"schema\": \"energy-thermal/1\"}").unwrap();
        let err = ThermalCalibration::load_cached(dir.path(), "GPU-a").unwrap_err();
        assert!(err.message().contains("calibrate --thermal"), "{err}");
    }
}
