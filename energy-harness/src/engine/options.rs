//! The one options type of a measurement: what `#[energy_bench]`, `#[energy_test]`,
//! budgets and the suites may ask, all optional, resolved and validated once here against
//! the bounds the macros check at compile time ([`energy_units::bounds`]), and the
//! resolved values written into every result.

use energy_units::bounds::{
    is_gpu_uuid, is_positive, precision_allowed, window_s_allowed, windows_allowed, PRECISION_MAX, PRECISION_MIN,
    WINDOWS_MAX, WINDOW_MAX_S,
};
use serde::{Deserialize, Serialize};

use crate::sensors::SourceKind;
use energy_results::error::{Error, ErrorKind, Result};

/// What a measurement is asked to do. Every field is optional: `None` takes the engine's
/// default, decided in [`MeasureOptions::resolve`] and nowhere else.
///
/// The macros emit one literal of this type (`MeasureOptions { precision: Some(0.005),
/// ..MeasureOptions::DEFAULT }`); budgets and the suites build the same.
///
/// # Examples
///
/// The options of a hand-written budget: 12 bytes per element moved (for a per-byte limit),
/// the GPU by its UUID (as `cargo energy info` prints it), ±0.5 % asked. Values out of
/// bounds are refused when the budget is measured, as [`MeasureOptions::resolve`] refuses
/// them here:
///
/// ```
/// use energy_harness::prelude::*;
///
/// let n = 1usize << 24;
/// let options = MeasureOptions {
///     bytes: Some(12.0 * n as f64),
///     device_uuid: Some("GPU-01234567-89ab-cdef-0123-456789abcdef".into()),
///     precision: Some(0.005),
///     ..MeasureOptions::DEFAULT
/// };
/// assert_eq!(options.resolve(MeasureOptions::MIN_WINDOWS)?.precision, 0.005);
///
/// let too_coarse = MeasureOptions { precision: Some(2.0), ..MeasureOptions::DEFAULT };
/// assert!(too_coarse.resolve(MeasureOptions::MIN_WINDOWS).is_err());
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MeasureOptions {
    /// Operations per launch (energy per op; criterion throughput in elements).
    pub ops: Option<f64>,
    /// Bytes per launch (energy per byte; criterion throughput in bytes).
    pub bytes: Option<f64>,
    /// The GPU: a CUDA device ordinal (default 0), counted as this process sees devices
    /// (after `CUDA_VISIBLE_DEVICES`), found in NVML by UUID.
    pub device: Option<u32>,
    /// The GPU by its UUID (`GPU-…`, as `cargo energy info` and NVML print it) instead of
    /// an ordinal: looked up among the devices CUDA sees when the kernel runs
    /// ([`MeasureOptions::cuda_device`]); `device` is then used only where no GPU driver is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_uuid: Option<String>,
    /// A benchmark's baseline kernel's operations per launch (its energy per op). Without
    /// it the baseline's result has no per-op figure: it does not inherit `ops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_ops: Option<f64>,
    /// A benchmark's baseline kernel's bytes per launch (its energy per byte); not
    /// inherited from `bytes` either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_bytes: Option<f64>,
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
        device_uuid: None,
        baseline_ops: None,
        baseline_bytes: None,
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

    /// The CUDA device ordinal of the GPU asked for: `device_uuid` looked up among the
    /// devices CUDA sees (`device` where no GPU driver is: the simulated GPU runs), else
    /// `device`. An error when no device has that UUID.
    pub fn cuda_device(&self) -> Result<Option<u32>> {
        self.check_uuid()?;
        match &self.device_uuid {
            None => Ok(self.device),
            Some(uuid) => crate::gpu::cuda_ordinal_for_named_gpu(uuid, self.device),
        }
    }

    /// Refuses a `device_uuid` that is no GPU UUID (what `device = "…"` refuses at
    /// compile time), on a machine with a GPU or without one.
    fn check_uuid(&self) -> Result<()> {
        match self.device_uuid.as_deref().filter(|u| !is_gpu_uuid(u)) {
            Some(uuid) => Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "measurement option `device_uuid`: `{}` is not a GPU UUID (`GPU-…`, as `cargo energy info` prints it)",
                    energy_results::error::echo(uuid)
                ),
            )),
            None => Ok(()),
        }
    }

    /// The options a benchmark's baseline kernel is measured with: these, with the
    /// baseline's own counts (it never inherits the kernel's).
    pub fn baseline(&self) -> MeasureOptions {
        MeasureOptions {
            ops: self.baseline_ops,
            bytes: self.baseline_bytes,
            baseline_ops: None,
            baseline_bytes: None,
            ..self.clone()
        }
    }

    /// Checks every value and fills in the defaults. `min_windows` is the caller's floor on
    /// the window count (criterion needs 10 samples; a budget needs [`Self::MIN_WINDOWS`]).
    pub fn resolve(&self, min_windows: usize) -> Result<ResolvedOptions> {
        fn bad<T>(what: &str, detail: String) -> Result<T> {
            Err(Error::new(ErrorKind::InvalidInput, format!("measurement option `{what}`: {detail}")))
        }
        let positive = |what: &str, v: Option<f64>| -> Result<()> {
            match v {
                Some(x) if !is_positive(x) => bad(what, format!("{x} is not a positive, finite number")),
                _ => Ok(()),
            }
        };
        positive("ops", self.ops)?;
        positive("bytes", self.bytes)?;
        positive("baseline_ops", self.baseline_ops)?;
        positive("baseline_bytes", self.baseline_bytes)?;
        positive("window_s", self.window_s)?;
        self.check_uuid()?;
        let precision = self.precision.unwrap_or(Self::DEFAULT_PRECISION);
        if !precision_allowed(precision) {
            return bad(
                "precision",
                format!(
                    "{precision} is outside {PRECISION_MIN} … {PRECISION_MAX} (a relative half-width: 0.01 asks for ±1 %)"
                ),
            );
        }
        if let Some(w) = self.window_s.filter(|w| !window_s_allowed(*w)) {
            return bad("window_s", format!("{w} s is longer than {WINDOW_MAX_S} s; windows are seconds at most"));
        }
        let floor = min_windows.max(Self::MIN_WINDOWS);
        let (min, max) = match self.windows {
            Some(n) if windows_allowed(n, floor) => (n, n),
            Some(n) if n < floor => {
                return bad("windows", format!("{n} windows are too few here: at least {floor} are needed"));
            }
            Some(n) => return bad("windows", format!("{n} windows are more than {WINDOWS_MAX}")),
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

pub use energy_results::options::ResolvedOptions;

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

    /// Every bound of every option, walked at run time: `resolve` accepts a value on the
    /// allowed side and refuses one on the other, exactly as the macros do at compile time
    /// (energy-macros walks the same edges).
    #[test]
    fn resolve_walks_the_shared_bounds() {
        for edge in energy_units::bounds::edges() {
            let mut options = MeasureOptions::DEFAULT;
            let (v, n) = (Some(edge.value), Some(edge.value as usize));
            match edge.option {
                "ops" => options.ops = v,
                "bytes" => options.bytes = v,
                "baseline_ops" => options.baseline_ops = v,
                "baseline_bytes" => options.baseline_bytes = v,
                "precision" => options.precision = v,
                "window_s" => options.window_s = v,
                "windows" => options.windows = n,
                other => panic!("an option `resolve` does not know: {other}"),
            }
            let resolved = options.resolve(edge.windows_floor);
            assert_eq!(resolved.is_ok(), edge.allowed, "{edge:?}: {resolved:?}");
            if let Err(e) = resolved {
                assert!(e.message().contains(&format!("`{}`", edge.option)), "{e}");
            }
        }
    }

    #[test]
    fn the_baseline_has_its_own_counts_and_the_gpu_by_uuid_is_checked() {
        let options = MeasureOptions {
            ops: Some(1e6),
            bytes: Some(4096.0),
            baseline_ops: Some(10.0),
            device: Some(1),
            device_uuid: Some("GPU-c744a1b2-0000".into()),
            precision: Some(0.02),
            ..MeasureOptions::DEFAULT
        };
        let baseline = options.baseline();
        assert_eq!((baseline.ops, baseline.bytes, baseline.baseline_ops), (Some(10.0), None, None));
        assert_eq!(
            (baseline.precision, baseline.device, &baseline.device_uuid),
            (Some(0.02), Some(1), &options.device_uuid)
        );
        let not_a_uuid = MeasureOptions { device_uuid: Some("1".into()), ..MeasureOptions::DEFAULT };
        for err in [not_a_uuid.resolve(10).unwrap_err(), not_a_uuid.cuda_device().unwrap_err()] {
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(err.message().contains("`device_uuid`"), "{err}");
        }
    }
}
