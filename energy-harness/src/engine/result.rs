//! The result of a measurement: what the bench, test and report layers consume.

use serde::{Deserialize, Serialize};

use super::warning::WarningKind;
use crate::gpu::DeviceFacts;
pub use energy_results::measured::{
    CrossCheck, Drift, NetEnergy, PerUnit, RailEnergy, ThermalNormalized, WindowResult,
};
use energy_results::provenance::{Provenance, TemperatureRange};
use energy_results::result::{Figures, ResultDevice, ResultFile, RESULT_SCHEMA};

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
    /// What it found: the figures a result file holds too (one definition, in
    /// `energy_results`), read as the measurement's own fields (`Deref`).
    #[serde(flatten)]
    pub figures: Figures,
}

impl std::ops::Deref for Measurement {
    type Target = Figures;

    fn deref(&self) -> &Figures {
        &self.figures
    }
}

impl std::ops::DerefMut for Measurement {
    fn deref_mut(&mut self) -> &mut Figures {
        &mut self.figures
    }
}

impl Measurement {
    /// Whether a warning of this kind was raised.
    pub fn has_warning(&self, kind: WarningKind) -> bool {
        self.warnings.iter().any(|w| w.kind == kind)
    }

    /// The result file of this measurement (`net`: its net energy against a baseline
    /// kernel, when one was measured).
    pub fn result_file(&self, net: Option<NetEnergy>) -> ResultFile {
        ResultFile {
            schema: RESULT_SCHEMA.into(),
            id: self.id.clone(),
            device: ResultDevice {
                name: self.device.name.clone(),
                uuid: self.device.uuid.clone(),
                driver: self.device.driver_version.clone(),
                simulated: self.simulated,
                power_limit_w: self.device.power_limit_w,
            },
            launches: self.windows.iter().map(|w| w.launches).sum(),
            net,
            provenance: Some(Provenance::current().clone()),
            temperature_range_c: TemperatureRange::of_windows(&self.windows),
            sweep: None,
            figures: self.figures.clone(),
        }
    }
}
