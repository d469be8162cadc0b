//! The one options type of a measurement: what `#[energy_bench]`, `#[energy_test]`,
//! budgets and the suites may ask, all optional, resolved and validated once here, and
//! the resolved values written into every result.

use energy_units::bounds::{PRECISION_MAX, PRECISION_MIN, WINDOWS_MAX, WINDOW_MAX_S};
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::sensors::{SensorModel, SourceKind};

/// What a measurement is asked to do. Every field is optional: `None` takes the engine's
/// default, decided in [`MeasureOptions::resolve`] and nowhere else.
///
/// The macros emit one literal of this type (`MeasureOptions { precision: Some(0.005),
/// ..MeasureOptions::DEFAULT }`); budgets and the suites build the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeasureOptions {
    /// Operations per launch (energy per op; criterion throughput in elements).
    pub ops: Option<f64>,
    /// Bytes per launch (energy per byte; criterion throughput in bytes).
    pub bytes: Option<f64>,
    /// The GPU: a CUDA device ordinal (default 0), counted as this process sees devices
    /// (after `CUDA_VISIBLE_DEVICES`), found in NVML by UUID.
    pub device: Option<u32>,
    /// The source to measure with (default: the best the GPU has, the counter on Volta+).
    pub source: Option<SourceKind>,
    /// Relative precision asked of the energy per launch: the half-width of its 95 %
    /// interval over the mean (default 0.01). Windows are added until it is reached (or
    /// the window limit is); a miss is a warning.
    pub precision: Option<f64>,
    /// Window length aimed at, s: each window holds as many back-to-back launches as fit
    /// in it, at least one (default: set by the sensor, 0.15 s for the counter).
    pub window_s: Option<f64>,
    /// Exactly this many windows (default: as many as the precision needs, between the
    /// engine's minimum and maximum).
    pub windows: Option<usize>,
}

impl MeasureOptions {
    /// No option given: every value is the engine's default.
    pub const DEFAULT: MeasureOptions = MeasureOptions {
        ops: None,
        bytes: None,
        device: None,
        source: None,
        precision: None,
        window_s: None,
        windows: None,
    };

    /// The default precision: ±1 % (95 % interval) on the energy per launch.
    pub const DEFAULT_PRECISION: f64 = 0.01;
    /// Fewest windows a measurement may have: fewer give no useful interval.
    pub const MIN_WINDOWS: usize = energy_units::bounds::WINDOWS_MIN;
    /// Windows at most when the precision is not reached sooner.
    pub const MAX_WINDOWS: usize = 40;
    /// Busy time at most a measurement spends in its windows when the precision is not
    /// reached sooner, s (long kernels: at most this many launches of 1 s).
    pub const MAX_BUSY_S: f64 = 4.0;

    /// The CUDA device ordinal of the GPU to measure on (default 0).
    pub fn device_index(&self) -> u32 {
        self.device.unwrap_or(0)
    }

    /// Checks every value and fills in the defaults. `min_windows` is the caller's floor on
    /// the window count (criterion needs 10 samples; a budget needs [`Self::MIN_WINDOWS`]).
    pub fn resolve(&self, min_windows: usize) -> Result<ResolvedOptions> {
        fn bad<T>(what: &str, detail: String) -> Result<T> {
            Err(Error::new(ErrorKind::InvalidInput, format!("measurement option `{what}`: {detail}")))
        }
        let positive = |what: &str, v: Option<f64>| -> Result<()> {
            match v {
                Some(x) if !(x.is_finite() && x > 0.0) => bad(what, format!("{x} is not a positive, finite number")),
                _ => Ok(()),
            }
        };
        positive("ops", self.ops)?;
        positive("bytes", self.bytes)?;
        positive("window_s", self.window_s)?;
        let precision = self.precision.unwrap_or(Self::DEFAULT_PRECISION);
        if !(PRECISION_MIN..=PRECISION_MAX).contains(&precision) {
            return bad(
                "precision",
                format!(
                    "{precision} is outside {PRECISION_MIN} … {PRECISION_MAX} (a relative half-width: 0.01 asks for ±1 %)"
                ),
            );
        }
        if let Some(w) = self.window_s {
            if w > WINDOW_MAX_S {
                return bad("window_s", format!("{w} s is longer than a minute; windows are seconds at most"));
            }
        }
        let floor = min_windows.max(Self::MIN_WINDOWS);
        let (min, max) = match self.windows {
            Some(n) if n < floor => {
                return bad("windows", format!("{n} windows are too few here: at least {floor} are needed"));
            }
            Some(n) if n > WINDOWS_MAX => return bad("windows", format!("{n} windows are more than {WINDOWS_MAX}")),
            Some(n) => (n, n),
            None => (floor, Self::MAX_WINDOWS.max(floor)),
        };
        Ok(ResolvedOptions {
            ops: self.ops,
            bytes: self.bytes,
            device: self.device_index(),
            source: self.source,
            precision,
            window_s: self.window_s,
            min_windows: min,
            max_windows: max,
            fixed_windows: self.windows.is_some(),
        })
    }
}

/// Options after [`MeasureOptions::resolve`]: every value decided and checked. Written
/// into each result as `options`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResolvedOptions {
    /// Operations per launch, when given.
    pub ops: Option<f64>,
    /// Bytes per launch, when given.
    pub bytes: Option<f64>,
    /// The GPU's CUDA device ordinal (as this process saw devices).
    pub device: u32,
    /// The source asked for (`None`: the best available, named in the result's `source`).
    pub source: Option<SourceKind>,
    /// Relative precision asked of the energy per launch (95 % half-width over the mean).
    pub precision: f64,
    /// Window length asked for, s (`None`: the sensor's default, [`default_window_s`]).
    pub window_s: Option<f64>,
    /// Fewest windows.
    pub min_windows: usize,
    /// Most windows.
    pub max_windows: usize,
    /// Whether the window count was given (no early stop).
    pub fixed_windows: bool,
}

impl ResolvedOptions {
    /// The window length for a source with `model`: the option, or the sensor's default.
    pub fn window_s(&self, model: &SensorModel) -> f64 {
        self.window_s.unwrap_or_else(|| default_window_s(model))
    }
}

/// The shortest window worth measuring with a sensor: windows sit back to back inside one
/// busy stretch, so their inner edges fall where power is steady and a counter's ticks
/// interpolate them well; 0.15 s holds one or two ticks of 100 ms. A boxcar or a lagging
/// sensor needs windows as long as its memory for the inversion to stay quiet.
pub fn default_window_s(model: &SensorModel) -> f64 {
    match *model {
        SensorModel::Boxcar { width_s } => width_s.max(0.15),
        SensorModel::FirstOrder { tau_s } => (2.0 * tau_s).max(0.15),
        SensorModel::Gated { .. } => 0.5,
        _ => 0.15,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_floors() {
        let r = MeasureOptions::DEFAULT.resolve(10).unwrap();
        assert_eq!(r.precision, 0.01);
        assert_eq!((r.min_windows, r.max_windows, r.fixed_windows), (10, 40, false));
        let r = MeasureOptions::DEFAULT.resolve(0).unwrap();
        assert_eq!(r.min_windows, 3);
        let fixed = MeasureOptions { windows: Some(12), ..MeasureOptions::DEFAULT }.resolve(10).unwrap();
        assert_eq!((fixed.min_windows, fixed.max_windows, fixed.fixed_windows), (12, 12, true));
    }

    #[test]
    fn bad_values_name_the_option() {
        let cases = [
            (MeasureOptions { precision: Some(0.0), ..MeasureOptions::DEFAULT }, "precision"),
            (MeasureOptions { precision: Some(f64::NAN), ..MeasureOptions::DEFAULT }, "precision"),
            (MeasureOptions { ops: Some(-1.0), ..MeasureOptions::DEFAULT }, "ops"),
            (MeasureOptions { window_s: Some(f64::INFINITY), ..MeasureOptions::DEFAULT }, "window_s"),
            (MeasureOptions { windows: Some(5), ..MeasureOptions::DEFAULT }, "windows"),
        ];
        for (options, name) in cases {
            let err = options.resolve(10).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(err.message().contains(&format!("`{name}`")), "{err}");
        }
    }

    #[test]
    fn windows_follow_the_sensor() {
        assert_eq!(default_window_s(&SensorModel::Counter { period_s: 0.1 }), 0.15);
        assert_eq!(default_window_s(&SensorModel::Boxcar { width_s: 1.0 }), 1.0);
        assert!(default_window_s(&SensorModel::FirstOrder { tau_s: 0.833 }) > 1.6);
    }
}
