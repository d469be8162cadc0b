//! What a sensor reading means, as a model from true power to reading.
//!
//! The simulated GPU pushes its ground-truth power through these models; the
//! correction step inverts them. DESIGN.md §1-2 gives the measured facts behind each.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::echo;

/// A model of how a sensor turns true power into readings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum SensorModel {
    /// The reading is the true power at its update instant.
    Identity,
    /// A first-order lag ("capacitor", Burtscher et al. on the K20): the reading `y`
    /// follows `tau_s · dy/dt = P − y`.
    FirstOrder {
        /// Time constant in seconds (0.83 s fits the K20 figures).
        tau_s: f64,
    },
    /// The mean true power over the `width_s` before each update: the H100's 1 s
    /// average field (a linear 1 s ramp after a step).
    Boxcar {
        /// Averaging width in seconds.
        width_s: f64,
    },
    /// The mean over a gate shorter than the update period: the reading sees only part of
    /// each period (the H100's instant field). Not invertible: what falls outside the gate
    /// was never measured.
    Gated {
        /// Gate width in seconds (about 25 ms).
        gate_s: f64,
        /// Update period in seconds (100 ms).
        period_s: f64,
    },
    /// A cumulative energy counter that advances at ticks with the exact integral of power.
    Counter {
        /// Tick period in seconds (100 ms on the H100).
        period_s: f64,
    },
}

/// The longest time constant, width, gate or period a model may have, s. No GPU sensor
/// known averages over more than a few seconds (the K20's lag is 0.83 s, the H100's
/// average 1 s); a parameter beyond this is a typo or a corrupt file, and inverting it
/// would turn a watt of noise into kilojoules.
pub const MAX_MODEL_SECONDS: f64 = 100.0;

impl SensorModel {
    /// Whether power readings under this model can be corrected back to true power.
    pub fn is_invertible(&self) -> bool {
        !matches!(self, SensorModel::Gated { .. })
    }

    /// Checks the parameters: each finite, positive and at most [`MAX_MODEL_SECONDS`];
    /// a gate no longer than its period. The error says which parameter and why.
    pub fn validate(&self) -> Result<(), String> {
        let check = |value: f64, what: &str| -> Result<(), String> {
            if value.is_finite() && value > 0.0 && value <= MAX_MODEL_SECONDS {
                Ok(())
            } else {
                Err(format!(
                    "{what} {value} s is not a sensor's: it must be a positive number of seconds, at most {MAX_MODEL_SECONDS}"
                ))
            }
        };
        match *self {
            SensorModel::Identity => Ok(()),
            SensorModel::FirstOrder { tau_s } => check(tau_s, "the time constant"),
            SensorModel::Boxcar { width_s } => check(width_s, "the boxcar width"),
            SensorModel::Gated { gate_s, period_s } => {
                check(gate_s, "the gate")?;
                check(period_s, "the period")?;
                if gate_s > period_s {
                    return Err(format!("the gate {gate_s} s is longer than its period {period_s} s"));
                }
                Ok(())
            }
            SensorModel::Counter { period_s } => check(period_s, "the tick period"),
        }
    }
}

/// Seconds to the microsecond: enough for every model parameter, short to read.
fn seconds(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

impl fmt::Display for SensorModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SensorModel::Identity => f.write_str("none"),
            SensorModel::FirstOrder { tau_s } => write!(f, "first-order:{}", seconds(tau_s)),
            SensorModel::Boxcar { width_s } => write!(f, "boxcar:{}", seconds(width_s)),
            SensorModel::Gated { gate_s, period_s } => write!(f, "gated:{}/{}", seconds(gate_s), seconds(period_s)),
            SensorModel::Counter { period_s } => write!(f, "counter:{}", seconds(period_s)),
        }
    }
}

impl FromStr for SensorModel {
    type Err = String;

    /// Parses `none`, `first-order:TAU_S`, `boxcar:WIDTH_S`, `gated:GATE_S/PERIOD_S`,
    /// `counter:PERIOD_S` (seconds, finite and positive).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let model = Self::parse_unchecked(text)?;
        model.validate().map_err(|e| format!("`{}`: {e}", echo(text)))?;
        Ok(model)
    }
}

impl SensorModel {
    fn parse_unchecked(text: &str) -> Result<Self, String> {
        let positive = |value: &str, what: &str| -> Result<f64, String> {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| format!("{what} `{}` must be a positive number of seconds", echo(value)))
        };
        let (name, argument) = match text.split_once(':') {
            Some((name, argument)) => (name.trim(), Some(argument)),
            None => (text.trim(), None),
        };
        match (name, argument) {
            ("none" | "identity", None) => Ok(SensorModel::Identity),
            ("first-order", Some(tau)) => Ok(SensorModel::FirstOrder {
                tau_s: positive(tau, "the time constant")?,
            }),
            ("boxcar", Some(width)) => Ok(SensorModel::Boxcar {
                width_s: positive(width, "the boxcar width")?,
            }),
            ("gated", Some(spec)) => {
                let (gate, period) = spec
                    .split_once('/')
                    .ok_or_else(|| format!("`{}`: write gated:GATE_S/PERIOD_S", echo(text)))?;
                Ok(SensorModel::Gated {
                    gate_s: positive(gate, "the gate")?,
                    period_s: positive(period, "the period")?,
                })
            }
            ("counter", Some(period)) => Ok(SensorModel::Counter {
                period_s: positive(period, "the tick period")?,
            }),
            ("first-order" | "boxcar" | "gated" | "counter", None) => Err(format!(
                "`{}` needs its parameter in seconds, e.g. first-order:0.83 or boxcar:1.0",
                echo(text)
            )),
            _ => Err(format!(
                "unknown sensor model `{}`: use none, first-order:TAU_S, boxcar:WIDTH_S, gated:GATE_S/PERIOD_S or counter:PERIOD_S",
                echo(text)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_parse_round_trip() {
        for model in [
            SensorModel::Identity,
            SensorModel::FirstOrder { tau_s: 0.83 },
            SensorModel::Boxcar { width_s: 1.0 },
            SensorModel::Gated { gate_s: 0.025, period_s: 0.1 },
            SensorModel::Counter { period_s: 0.1 },
        ] {
            assert_eq!(model.to_string().parse::<SensorModel>().unwrap(), model);
        }
    }

    #[test]
    fn bad_models_are_explained() {
        assert!("first-order".parse::<SensorModel>().unwrap_err().contains("needs its parameter"));
        assert!("first-order:-1".parse::<SensorModel>().unwrap_err().contains("positive"));
        assert!("boxcar:abc".parse::<SensorModel>().unwrap_err().contains("positive"));
        assert!("kalman".parse::<SensorModel>().unwrap_err().contains("unknown sensor model"));
        assert!("gated:0.025".parse::<SensorModel>().unwrap_err().contains("GATE_S/PERIOD_S"));
        assert!("first-order:1e300".parse::<SensorModel>().unwrap_err().contains("at most 100"));
        assert!("gated:0.2/0.1".parse::<SensorModel>().unwrap_err().contains("longer than its period"));
        let long = format!("boxcar:{}", "9".repeat(10_000));
        assert!("x".repeat(100_000).parse::<SensorModel>().unwrap_err().len() < 300);
        assert!(long.parse::<SensorModel>().unwrap_err().len() < 300);
    }

    #[test]
    fn validation_bounds_every_parameter() {
        assert!(SensorModel::FirstOrder { tau_s: -5.0 }.validate().is_err());
        assert!(SensorModel::FirstOrder { tau_s: f64::NAN }.validate().is_err());
        assert!(SensorModel::Boxcar { width_s: 0.0 }.validate().is_err());
        assert!(SensorModel::Counter { period_s: f64::INFINITY }.validate().is_err());
        assert!(SensorModel::Boxcar { width_s: 1.0 }.validate().is_ok());
        assert!(SensorModel::Identity.validate().is_ok());
    }
}
