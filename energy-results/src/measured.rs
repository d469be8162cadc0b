//! What a measurement found, window by window and in sum: the data a result file holds
//! beside its estimates (the harness's `Measurement` is made of these).

use serde::{Deserialize, Serialize};

use crate::source::{SensorModel, SourceKind};
use crate::stats::Estimate;

/// The energy of one window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowEnergy {
    /// Window index.
    pub index: u32,
    /// Start, s.
    pub start_s: f64,
    /// End, s.
    pub end_s: f64,
    /// What the board drew in the window, J.
    pub energy_j: f64,
    /// Energy above active idle, J.
    pub dynamic_j: f64,
    /// Active idle before the window, W (None when no idle interval was found there).
    pub idle_before_w: Option<f64>,
    /// Active idle after the window, W.
    pub idle_after_w: Option<f64>,
    /// The idle power subtracted for the dynamic energy, W.
    pub idle_w: f64,
    /// Mean power of the curve intervals wholly inside the window, W.
    pub busy_w: Option<f64>,
    /// Curve points (counter ticks, sensor updates) strictly inside the window.
    pub points_inside: usize,
    /// The part of `energy_j` that came from splitting edge intervals, J.
    pub edge_energy_j: f64,
}

impl WindowEnergy {
    /// Length in seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// One measured window: its energy split plus what ran in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowResult {
    /// Energy, idle and edge details.
    #[serde(flatten)]
    pub energy: WindowEnergy,
    /// Launches in the window.
    pub launches: u64,
    /// GPU time of those launches (CUDA events; exact on the simulator), s.
    pub gpu_time_s: f64,
    /// SM clock during the window (the sampler's last reading in it), MHz.
    pub sm_clock_mhz: Option<u32>,
    /// Temperature during the window (the sampler's last reading in it), °C.
    pub temperature_c: Option<u32>,
}

/// Energy per unit of work (operation or byte) when the caller says how much work a launch does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PerUnit {
    /// What a unit is ("op", "byte", "instruction", ...).
    pub unit: String,
    /// Units per launch.
    pub units_per_launch: f64,
    /// Total energy per unit, J.
    pub energy_j: Estimate,
    /// Dynamic energy per unit, J.
    pub dynamic_j: Estimate,
}

/// Net energy per operation against a baseline kernel (Arafa et al.: the same loop
/// without the work under test), as `energy_harness`'s net-energy summary computes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetEnergy {
    /// The baseline benchmark's id.
    pub baseline_id: String,
    /// Operations per launch the difference is divided by (1 when none were given).
    pub ops_per_launch: f64,
    /// (E_with − E_without) / ops, J.
    pub energy_j: Estimate,
}

/// The same windows measured by a second source, as a check on the first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CrossCheck {
    /// The second source.
    pub source: SourceKind,
    /// Its sensor model.
    pub sensor_model: SensorModel,
    /// Its energy per launch, J.
    pub energy_j: Estimate,
    /// (second − first) / first, percent.
    pub difference_pct: f64,
}

/// A rail's energy over the same windows as the board's (the GPU's memory, say): reported
/// beside the board's figures, never subtracted from them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RailEnergy {
    /// The rail.
    pub source: SourceKind,
    /// Its sensor model.
    pub sensor_model: SensorModel,
    /// Its energy per launch, J.
    pub energy_j: Estimate,
    /// Its energy per launch above its own active idle, J.
    #[serde(default)]
    pub dynamic_j: Option<Estimate>,
    /// Its active idle around the windows, W.
    #[serde(default)]
    pub idle_w: Option<f64>,
}

/// How a measurement's windows moved from the first to the last.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Drift {
    /// Change of the energy per launch over the windows (least-squares trend), percent.
    pub energy_change_pct: f64,
    /// Half-width of its 95 % interval, percent.
    pub energy_change_half_width_pct: f64,
    /// Whether the interval excludes zero.
    pub energy_significant: bool,
    /// Temperature in the first window, °C.
    pub temperature_first_c: Option<u32>,
    /// Temperature in the last window, °C.
    pub temperature_last_c: Option<u32>,
    /// Lowest SM clock seen in a window, MHz.
    pub sm_clock_min_mhz: Option<u32>,
    /// Highest SM clock seen in a window, MHz.
    pub sm_clock_max_mhz: Option<u32>,
}

/// A measurement's energy per launch moved to the reference temperature (50 °C).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ThermalNormalized {
    /// The reference temperature, °C.
    pub reference_c: f64,
    /// Energy per launch at the reference temperature, J (interval widened by the
    /// coefficient's uncertainty).
    pub energy_j: Estimate,
    /// The same figure with the windows' spread alone in its interval: what a comparison of
    /// two runs with one coefficient combines (their shared coefficient error enters once,
    /// through their temperature difference).
    pub statistical_j: Estimate,
    /// Mean window length per launch, s: what turns dP/dT into joules per launch.
    pub seconds_per_launch: f64,
    /// Mean temperature of the windows, °C.
    pub mean_temperature_c: f64,
    /// dP/dT used, W/°C.
    pub watts_per_c: f64,
    /// Its standard error, W/°C.
    pub std_error_w_per_c: f64,
    /// The UUID of the board the coefficient was fitted on.
    pub calibration_uuid: String,
    /// The temperatures the coefficient was fitted over, °C: a run outside them is moved
    /// by extrapolation.
    #[serde(default)]
    pub fitted_range_c: Option<(f64, f64)>,
    /// Where the coefficient came from.
    pub origin: String,
}

/// What a batch's time was read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TimeBasis {
    /// CUDA events around the launches on the harness's stream (the GPU's own clock).
    #[default]
    CudaEvents,
    /// The host clock, from a batch's first call to the end of its wait and the
    /// context-wide synchronize: work the harness does not launch (a library's).
    HostClock,
}

impl TimeBasis {
    /// Whether this is the default, CUDA events (left out of a result file).
    pub fn is_cuda_events(&self) -> bool {
        *self == TimeBasis::CudaEvents
    }

    /// A few words for the summary's time line.
    pub fn describe(self) -> &'static str {
        match self {
            TimeBasis::CudaEvents => "CUDA events",
            TimeBasis::HostClock => "host clock: first call to the end of the library's wait",
        }
    }
}

/// The largest |dP/dT| accepted, W/°C: ten times the H100's measured ~1.5 W/°C; beyond it
/// the windows moved for another reason (a clock change, another process).
pub const MAX_WATTS_PER_C: f64 = 20.0;

/// Said when `n`'s windows ran outside the temperatures its coefficient was fitted over
/// (by more than 1 °C): the move to the reference is then an extrapolation.
pub fn extrapolation_note(n: &ThermalNormalized) -> Option<String> {
    let (low, high) = n.fitted_range_c?;
    (n.mean_temperature_c < low - 1.0 || n.mean_temperature_c > high + 1.0).then(|| {
        format!(
            "the windows ran at {:.1} °C, outside the {low:.0}-{high:.0} °C dP/dT was fitted over: moved to {:.0} °C by extrapolation",
            n.mean_temperature_c, n.reference_c
        )
    })
}

/// Checks every figure of a normalized energy (read from a file, it is not trusted): both
/// estimates positive and sound, the interval with the coefficient's error no narrower than
/// the windows' alone, a window length, a temperature and a coefficient that are physical.
pub fn validate_normalized(n: &ThermalNormalized) -> std::result::Result<(), String> {
    n.energy_j.validate(true).map_err(|e| format!("thermal.energy_j: {e}"))?;
    n.statistical_j.validate(true).map_err(|e| format!("thermal.statistical_j: {e}"))?;
    if n.energy_j.ci_high - n.energy_j.ci_low < 0.999 * (n.statistical_j.ci_high - n.statistical_j.ci_low) {
        return Err("thermal.energy_j: its interval is narrower than the windows' alone".into());
    }
    if !(n.seconds_per_launch.is_finite() && n.seconds_per_launch > 0.0) {
        return Err(format!("thermal.seconds_per_launch: {} is not a duration", n.seconds_per_launch));
    }
    if !(n.mean_temperature_c.is_finite() && (-40.0..=150.0).contains(&n.mean_temperature_c)) {
        return Err(format!("thermal.mean_temperature_c: {} is not a die's", n.mean_temperature_c));
    }
    if !(n.reference_c.is_finite() && (-40.0..=150.0).contains(&n.reference_c)) {
        return Err(format!("thermal.reference_c: {} is not a die's", n.reference_c));
    }
    if !(n.watts_per_c.is_finite() && n.watts_per_c.abs() <= MAX_WATTS_PER_C) {
        return Err(format!("thermal.watts_per_c: {} is not a board's", n.watts_per_c));
    }
    if !(n.std_error_w_per_c.is_finite() && n.std_error_w_per_c >= 0.0) {
        return Err(format!("thermal.std_error_w_per_c: {} is not one", n.std_error_w_per_c));
    }
    Ok(())
}
