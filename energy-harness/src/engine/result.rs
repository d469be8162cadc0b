//! The result of a measurement: what the bench, test and report layers consume.

use serde::{Deserialize, Serialize};

use super::options::ResolvedOptions;
use super::stats::Estimate;
use super::warning::{Warning, WarningKind};
use super::windows::WindowEnergy;
use crate::gpu::DeviceFacts;
use crate::sensors::{SensorModel, SourceKind};

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
/// without the work under test), as [`super::summary::net_energy`] computes it.
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

/// A complete measurement of one kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Measurement {
    /// Benchmark id.
    pub id: String,
    /// Whether the figures are simulated (the simulated GPU), not measured.
    pub simulated: bool,
    /// The device, as read when the measurement began.
    pub device: DeviceFacts,
    /// When the measurement began (RFC 3339).
    pub timestamp: String,
    /// The source the energies come from.
    pub source: SourceKind,
    /// The sensor model inverted.
    pub sensor_model: SensorModel,
    /// Where the model came from (default, calibration, given).
    pub model_origin: String,
    /// Back-to-back launches per window.
    pub launches_per_window: u64,
    /// The windows.
    pub windows: Vec<WindowResult>,
    /// Energy per launch (what the board drew), J.
    pub energy_j: Estimate,
    /// Energy per launch above active idle, J.
    pub dynamic_j: Estimate,
    /// GPU time per launch, s.
    pub time_s: Estimate,
    /// Mean board power in the windows, W.
    pub power_w: Estimate,
    /// Active idle power around the windows, W.
    pub idle_w: f64,
    /// Mean counter ticks (or sensor updates) inside a window.
    pub ticks_per_window: f64,
    /// Energy per operation, when the launch's operation count is given.
    pub per_op: Option<PerUnit>,
    /// Energy per byte, when the launch's byte count is given.
    pub per_byte: Option<PerUnit>,
    /// A second source's figure for the same windows.
    pub cross_check: Option<CrossCheck>,
    /// The rails recorded beside the board's source, each with its energy over the same
    /// windows (absent in results of older versions and on GPUs without rails).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rails: Vec<RailEnergy>,
    /// Everything that makes a figure less trustworthy.
    pub warnings: Vec<Warning>,
    /// Wall time the measurement took, s.
    pub wall_time_s: f64,
    /// The options it ran with, resolved (absent in results of older versions).
    #[serde(default)]
    pub options: Option<ResolvedOptions>,
    /// Why it stopped adding windows.
    #[serde(default)]
    pub stop: Option<String>,
    /// How the windows moved from the first to the last.
    #[serde(default)]
    pub drift: Option<Drift>,
    /// The energy per launch at the reference temperature, when the board has a thermal
    /// calibration (`cargo energy calibrate --thermal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<ThermalNormalized>,
    /// What the time per launch was read from (CUDA events, or the host clock for library
    /// work).
    #[serde(default, skip_serializing_if = "crate::workload::TimeBasis::is_cuda_events")]
    pub time_basis: crate::workload::TimeBasis,
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

impl Measurement {
    /// Whether a warning of this kind was raised.
    pub fn has_warning(&self, kind: WarningKind) -> bool {
        self.warnings.iter().any(|w| w.kind == kind)
    }
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
