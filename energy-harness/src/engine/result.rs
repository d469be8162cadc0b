//! The result of a measurement: what the bench, test and report layers consume.

use serde::{Deserialize, Serialize};

use super::options::ResolvedOptions;
use super::stats::Estimate;
use super::warning::{Warning, WarningKind};
use crate::gpu::DeviceFacts;
use crate::sensors::{SensorModel, SourceKind};
pub use energy_results::measured::{
    CrossCheck, Drift, NetEnergy, PerUnit, RailEnergy, ThermalNormalized, WindowResult,
};
use energy_results::provenance::{Provenance, TemperatureRange};
use energy_results::result::{ResultDevice, ResultFile, RESULT_SCHEMA};

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

impl Measurement {
    /// Whether a warning of this kind was raised.
    pub fn has_warning(&self, kind: WarningKind) -> bool {
        self.warnings.iter().any(|w| w.kind == kind)
    }

    /// The result file of this measurement (`net`: its net energy against a baseline
    /// kernel, when one was measured).
    pub fn result_file(&self, net: Option<NetEnergy>) -> ResultFile {
        let m = self;
        ResultFile {
            schema: RESULT_SCHEMA.into(),
            id: m.id.clone(),
            device: ResultDevice {
                name: m.device.name.clone(),
                uuid: m.device.uuid.clone(),
                driver: m.device.driver_version.clone(),
                simulated: m.simulated,
                power_limit_w: m.device.power_limit_w,
            },
            energy_j: m.energy_j,
            dynamic_j: m.dynamic_j,
            time_s: m.time_s,
            power_w: m.power_w,
            idle_w: m.idle_w,
            source: m.source,
            sensor_model: m.sensor_model,
            launches: m.windows.iter().map(|w| w.launches).sum(),
            launches_per_window: m.launches_per_window,
            warnings: m.warnings.clone(),
            timestamp: m.timestamp.clone(),
            per_op: m.per_op.clone(),
            per_byte: m.per_byte.clone(),
            net,
            model_origin: m.model_origin.clone(),
            ticks_per_window: m.ticks_per_window,
            cross_check: m.cross_check.clone(),
            rails: m.rails.clone(),
            wall_time_s: m.wall_time_s,
            windows: m.windows.clone(),
            options: m.options,
            stop: m.stop.clone(),
            drift: m.drift.clone(),
            provenance: Some(Provenance::current().clone()),
            temperature_range_c: TemperatureRange::of_windows(&m.windows),
            thermal: m.thermal.clone(),
            time_basis: m.time_basis,
            sweep: None,
        }
    }
}
