//! A GPU's calibration: the fitted model of each of its sources, cached per UUID.
//!
//! Written by `cargo energy calibrate` (see [`calibrate`] and [`fit_calibration`]) as JSON
//! (`energy-calibration/1`) in the calibration directory: `ENERGY_CALIBRATION_DIR`, else
//! `$XDG_CACHE_HOME/energy-harness/calibration`, else `~/.cache/energy-harness/calibration`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod fit;
mod step;

pub use fit::{busy_intervals, fit_calibration};
pub use step::{calibrate, StepPlan};

use crate::sensors::{Quantity, SensorModel, SourceKind};
use energy_results::error::{echo, Error, ErrorKind, Result};
use energy_results::trace::format::write_atomically;

/// The largest reporting delay a calibration may hold, s: sensors report within tens of
/// milliseconds (DESIGN.md §1); a second or more is a failed fit.
pub const MAX_DELAY_S: f64 = 1.0;

/// The schema tag of calibration files.
pub const CALIBRATION_SCHEMA: &str = "energy-calibration/1";

/// The fitted model of one power source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceCalibration {
    /// The model that fit best, with its parameter.
    pub model: SensorModel,
    /// How far the readings trail the power they describe, s (removed before integrating).
    pub delay_s: f64,
    /// RMS of (reading − model prediction) over the step response, W.
    pub rms_residual_w: f64,
    /// The update period seen in the readings, s.
    pub update_period_s: Option<f64>,
    /// RMS residual of the other candidate models, for judging the choice: model → W.
    pub alternatives: BTreeMap<String, f64>,
}

/// The energy counter's fitted ticks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CounterCalibration {
    /// Tick period, s.
    pub period_s: f64,
    /// Tick phase modulo the period, s, on the calibration trace's clock (it is only
    /// stable within one run; recorded to document it).
    pub phase_s: f64,
    /// RMS of tick times about the grid, s.
    pub residual_rms_s: f64,
    /// Delay from a tick to reads seeing it, s, from the step's two edges (mean).
    pub delay_s: f64,
    /// The delay seen at the rising edge, s.
    pub delay_rise_s: f64,
    /// The delay seen at the falling edge, s.
    pub delay_fall_s: f64,
}

/// Everything fitted for one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Calibration {
    /// Always [`CALIBRATION_SCHEMA`].
    pub schema: String,
    /// GPU name.
    pub device_name: String,
    /// GPU UUID (the cache key).
    pub uuid: String,
    /// Driver version.
    pub driver: Option<String>,
    /// Whether this calibration was made on the simulated GPU.
    pub simulated: bool,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// Active idle before the step, W.
    pub idle_before_w: f64,
    /// Active idle after the step, W.
    pub idle_after_w: f64,
    /// Power of the busy kernel, W.
    pub busy_w: f64,
    /// Length of the busy step, s.
    pub busy_s: f64,
    /// The counter, if the GPU has one.
    pub counter: Option<CounterCalibration>,
    /// The power sources.
    pub sources: BTreeMap<SourceKind, SourceCalibration>,
}

impl Calibration {
    /// The model and delay to use for a power source, if calibrated.
    pub fn model_for(&self, kind: SourceKind) -> Option<(SensorModel, f64)> {
        if kind.quantity() == Quantity::Energy {
            return self.counter.as_ref().map(|c| (SensorModel::Counter { period_s: c.period_s }, c.delay_s));
        }
        self.sources.get(&kind).map(|s| (s.model, s.delay_s))
    }

    /// The file this calibration is cached in under `dir`.
    pub fn path_in(dir: &Path, uuid: &str) -> PathBuf {
        let safe: String =
            uuid.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        dir.join(format!("{safe}.json"))
    }

    /// Writes it (atomically) under `dir`; returns the path.
    pub fn save(&self, dir: &Path) -> Result<PathBuf> {
        self.validate().map_err(|problem| {
            Error::new(ErrorKind::Analysis, format!("the calibration is not saved: {problem}; run it again"))
        })?;
        let path = Calibration::path_in(dir, &self.uuid);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the calibration: {e}")))?;
        write_atomically(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Reads a calibration file.
    pub fn read_json(path: &Path) -> Result<Calibration> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the calibration", e))?;
        let value: Calibration = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                ErrorKind::Format,
                format!("{}: not a calibration file ({e}); run `cargo energy calibrate` again", path.display()),
            )
        })?;
        if value.schema != CALIBRATION_SCHEMA {
            return Err(Error::new(
                ErrorKind::Format,
                format!("{}: schema `{}`, expected `{CALIBRATION_SCHEMA}`", path.display(), echo(&value.schema)),
            ));
        }
        value.validate().map_err(|problem| {
            Error::new(
                ErrorKind::Format,
                format!(
                    "{}: {problem}; the calibration is corrupt: delete it and run `cargo energy calibrate` again",
                    path.display()
                ),
            )
        })?;
        Ok(value)
    }

    /// Checks every fitted figure: models within [`SensorModel::validate`]'s bounds, delays
    /// finite and under [`MAX_DELAY_S`], the counter's period positive, power levels finite
    /// and non-negative.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let delay = |what: &str, d: f64| -> std::result::Result<(), String> {
            if d.is_finite() && d.abs() <= MAX_DELAY_S {
                Ok(())
            } else {
                Err(format!("{what} delay {d} s is not a sensor's (at most {MAX_DELAY_S} s either way)"))
            }
        };
        for (kind, source) in &self.sources {
            source.model.validate().map_err(|e| format!("the {kind} model: {e}"))?;
            delay(&format!("the {kind}"), source.delay_s)?;
        }
        if let Some(c) = &self.counter {
            SensorModel::Counter { period_s: c.period_s }.validate().map_err(|e| format!("the counter: {e}"))?;
            for d in [c.delay_s, c.delay_rise_s, c.delay_fall_s] {
                delay("the counter", d)?;
            }
        }
        for (what, w) in [("idle before", self.idle_before_w), ("idle after", self.idle_after_w), ("busy", self.busy_w)]
        {
            if !(w.is_finite() && w >= 0.0) {
                return Err(format!("the {what} power {w} W is not a power"));
            }
        }
        Ok(())
    }

    /// The cached calibration of the GPU with `uuid`, if there is one.
    pub fn load_cached(dir: &Path, uuid: &str) -> Result<Option<Calibration>> {
        let path = Calibration::path_in(dir, uuid);
        if !path.exists() {
            return Ok(None);
        }
        Calibration::read_json(&path).map(Some)
    }
}

/// The calibration directory (see the module docs).
pub fn default_calibration_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ENERGY_CALIBRATION_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("energy-harness").join("calibration")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Calibration {
        let mut sources = BTreeMap::new();
        sources.insert(
            SourceKind::AverageField,
            SourceCalibration {
                model: SensorModel::Boxcar { width_s: 1.0 },
                delay_s: 0.002,
                rms_residual_w: 0.3,
                update_period_s: Some(0.1),
                alternatives: BTreeMap::new(),
            },
        );
        Calibration {
            schema: CALIBRATION_SCHEMA.into(),
            device_name: "GPU".into(),
            uuid: "GPU-1234/../x".into(),
            driver: None,
            simulated: true,
            created_at: "2026-11-22T00:00:00Z".into(),
            idle_before_w: 120.0,
            idle_after_w: 121.0,
            busy_w: 272.0,
            busy_s: 3.0,
            counter: None,
            sources,
        }
    }

    /// A measurement plans its idle and guards for the model its analysis will invert with:
    /// `--sensor-model default` sets a calibration aside for both, `auto` takes it for both.
    #[test]
    fn the_plan_and_the_analysis_take_one_model() {
        use crate::engine::analyze::{sensor_model_for, AnalysisOptions, ModelChoice};
        let kind = SourceKind::AverageField;
        let fitted = SensorModel::Boxcar { width_s: 0.5 };
        assert_ne!(kind.default_model(), fitted, "the test needs a fitted model other than the default");
        let mut calibration = sample();
        calibration.sources.get_mut(&kind).unwrap().model = fitted;
        let options = |model: ModelChoice| AnalysisOptions {
            model,
            calibration: Some(calibration.clone()),
            ..AnalysisOptions::default()
        };
        assert_eq!(sensor_model_for(kind, &options(ModelChoice::Default)), kind.default_model());
        assert_eq!(sensor_model_for(kind, &options(ModelChoice::Auto)), fitted);
        assert_eq!(sensor_model_for(kind, &options(ModelChoice::Calibrated)), fitted);
        // Not calibrated for the source: the analysis stops with the reason; the plan takes the default.
        let other = SourceKind::PowerUsage;
        assert_eq!(sensor_model_for(other, &options(ModelChoice::Calibrated)), other.default_model());
    }

    #[test]
    fn saves_loads_and_names_safely() {
        let dir = tempfile::tempdir().unwrap();
        let cal = sample();
        let path = cal.save(dir.path()).unwrap();
        assert_eq!(path.file_name().unwrap(), "GPU-1234____x.json");
        assert_eq!(Calibration::load_cached(dir.path(), &cal.uuid).unwrap().unwrap(), cal);
        assert!(Calibration::load_cached(dir.path(), "GPU-other").unwrap().is_none());
        assert_eq!(cal.model_for(SourceKind::AverageField), Some((SensorModel::Boxcar { width_s: 1.0 }, 0.002)));
    }

    #[test]
    fn corrupt_files_are_format_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, "{ not json").unwrap();
        let err = Calibration::read_json(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Format);
        assert!(err.message().contains("cargo energy calibrate"));
    }

    #[test]
    fn impossible_parameters_are_refused_on_read_and_save() {
        let dir = tempfile::tempdir().unwrap();
        let mut cal = sample();
        cal.sources.get_mut(&SourceKind::AverageField).unwrap().model = SensorModel::FirstOrder { tau_s: -5.0 };
        assert!(cal.save(dir.path()).is_err());
        let path = dir.path().join("neg.json");
        std::fs::write(&path, serde_json::to_string(&cal).unwrap()).unwrap();
        let err = Calibration::read_json(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Format);
        assert!(err.message().contains("time constant -5"), "{err}");
        let mut cal = sample();
        cal.sources.get_mut(&SourceKind::AverageField).unwrap().delay_s = 1e300;
        std::fs::write(&path, serde_json::to_string(&cal).unwrap()).unwrap();
        assert!(Calibration::read_json(&path).unwrap_err().message().contains("delay"));
    }
}
