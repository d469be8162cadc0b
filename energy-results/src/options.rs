//! The options a result was measured with, as its file records them.

use serde::{Deserialize, Serialize};

use crate::source::{SensorModel, SourceKind};

/// A benchmark's measurement options after the harness resolved them
/// (`MeasureOptions::resolve`): every value decided and checked. Written
/// into each result as `options`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
/// interpolate them well. A counter's window is one tick (at least 0.1 s):
/// the ten windows criterion needs then take ten ticks, the floor its 100 ms tick sets on
/// an H100 (0.15 s until 2026-11-28: one or two ticks, half again as long). A boxcar or a
/// lagging sensor needs windows as long as its memory for the inversion to stay quiet.
pub fn default_window_s(model: &SensorModel) -> f64 {
    match *model {
        SensorModel::Counter { period_s } => period_s.max(COUNTER_WINDOW_MIN_S),
        SensorModel::Boxcar { width_s } => width_s.max(0.15),
        SensorModel::FirstOrder { tau_s } => (2.0 * tau_s).max(0.15),
        SensorModel::Gated { .. } => 0.5,
        _ => 0.15,
    }
}

/// The shortest default window on an energy counter, s: a counter ticking faster than this
/// still gets windows of this length (launch and marking costs stay negligible).
pub const COUNTER_WINDOW_MIN_S: f64 = 0.1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_sensor() {
        assert_eq!(default_window_s(&SensorModel::Counter { period_s: 0.1 }), 0.1);
        assert_eq!(default_window_s(&SensorModel::Counter { period_s: 0.02 }), COUNTER_WINDOW_MIN_S);
        assert_eq!(default_window_s(&SensorModel::Counter { period_s: 0.5 }), 0.5);
        assert_eq!(default_window_s(&SensorModel::Identity), 0.15);
        assert_eq!(default_window_s(&SensorModel::Boxcar { width_s: 1.0 }), 1.0);
        assert!(default_window_s(&SensorModel::FirstOrder { tau_s: 0.833 }) > 1.6);
    }
}
