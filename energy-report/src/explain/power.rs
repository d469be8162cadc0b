//! The power limit's bound on a prediction: what a board can draw at its enforced limit over
//! a launch's measured time.

use serde::{Deserialize, Serialize};

use super::Priced;
use energy_results::ResultFile;
use energy_units::format_si;

/// The largest power-controller tolerance a model may state (a fraction of the limit).
pub const MAX_POWER_LIMIT_TOLERANCE: f64 = 0.5;

/// The power limit's bound on a launch's dynamic energy: a board's mean power stays at or
/// below its enforced limit (within the controller's tolerance), so a launch of measured time
/// `t` draws at most `(limit − active idle) × t` above active idle. A prediction priced at the
/// model's clock above that bound is of a kernel the limit held back (lower clock and voltage:
/// every operation cheaper than the model's cost); the prediction is then the bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PowerBound {
    /// The board's enforced power limit during the run, W (the result's).
    pub limit_w: f64,
    /// The controller's tolerance, a fraction of the limit (the model's).
    pub tolerance: f64,
    /// Active idle power during the run, W (the result's).
    pub idle_w: f64,
    /// Measured time per launch, s (the result's).
    pub time_s: f64,
    /// `(limit − idle) × time`, J.
    pub bound_j: f64,
    /// The bound at `limit × (1 − tolerance)` and `limit × (1 + tolerance)`, J: what bounds
    /// the low and the high ends of an interval.
    pub range_j: (f64, f64),
    /// Whether the sum of the terms on switching data exceeded the bound (the prediction is
    /// then the bound; the constant-data figure is bounded alike where it exceeds it).
    pub applied: bool,
    /// The measured run's mean power, W (the result's): at or above `limit × (1 − tolerance)`
    /// the limit held the kernel; below, the bound applied because the kernel's data switch
    /// less than the switching-data costs assume, not because of the limit.
    #[serde(default)]
    pub measured_power_w: f64,
}

impl PowerBound {
    /// The bound for `result` under a model of tolerance `tolerance`, `None` when the result
    /// records no power limit.
    pub fn of(result: &ResultFile, tolerance: f64) -> Option<PowerBound> {
        let limit_w = result.device.power_limit_w?;
        let (idle_w, time_s) = (result.idle_w, result.time_s.mean);
        let at = |power_w: f64| (power_w - idle_w).max(0.0) * time_s;
        Some(PowerBound {
            limit_w,
            tolerance,
            idle_w,
            time_s,
            bound_j: at(limit_w),
            range_j: (at(limit_w * (1.0 - tolerance)), at(limit_w * (1.0 + tolerance))),
            applied: false,
            measured_power_w: result.power_w.mean,
        })
    }

    /// A prediction and its interval, bounded: the figure by the bound, the interval's low
    /// end by the range's low end and its high end by the range's high end.
    pub fn clamp(&self, (j, (low, high)): Priced) -> Priced {
        (j.min(self.bound_j), (low.min(self.range_j.0), high.min(self.range_j.1)))
    }

    /// Whether the measured run drew the limit's power (within the tolerance): the limit
    /// held it back.
    pub fn at_limit(&self) -> bool {
        self.measured_power_w >= self.limit_w * (1.0 - self.tolerance)
    }

    /// The line printed when the bound applies: why, as the measured run's power says.
    pub fn line(&self, terms_j: f64) -> String {
        let why = if self.at_limit() {
            format!(
                "the run drew {:.0} W, the limit held this kernel back (lower clock and voltage, each operation cheaper \
                 than the model's cost)",
                self.measured_power_w
            )
        } else {
            format!(
                "the run drew {:.0} W, below the limit: not the limit but the switching-data costs overstate this run \
                 (its operands switch less than random data, or its counts overstate its work)",
                self.measured_power_w
            )
        };
        format!(
            "the terms add up to {} per launch, more than the board draws at its {:.0} W power limit over the measured \
             {} above its {:.0} W active idle ({}, ±{:.0} % for the controller); {why}; the prediction is the bound",
            format_si(terms_j, "J", 4),
            self.limit_w,
            format_si(self.time_s, "s", 4),
            self.idle_w,
            format_si(self.bound_j, "J", 4),
            self.tolerance * 100.0
        )
    }
}
