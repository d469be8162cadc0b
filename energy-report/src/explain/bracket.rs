//! The bracket of a model fitted in both data regimes: a kernel's prediction on constant
//! and on switching data, and where its measurement lies between them (operand activity).

use serde::{Deserialize, Serialize};

use super::ExplainedTerm;
use energy_units::format_si;

/// Where a measured kernel lies between the model's two data regimes: the prediction on
/// constant data (operands that never switch) and on switching data (random operands).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OperandBracket {
    /// Predicted dynamic energy on constant data, J, and its interval.
    pub constant_j: f64,
    /// Its interval (the terms' intervals added; a term without one at its figure).
    pub constant_ci_j: (f64, f64),
    /// Predicted dynamic energy on switching data, J (the explanation's prediction).
    pub switching_j: f64,
    /// Its interval.
    pub switching_ci_j: (f64, f64),
    /// (measured − constant) / (switching − constant) with the totals (`None` when the
    /// switching prediction is not above the constant one).
    pub activity: Option<f64>,
    /// `inside` (between the constant prediction's low end and the switching prediction's
    /// high end), `below`, `above`, or `no bracket` (switching not above constant).
    pub placement: String,
    /// The line printed: the operand activity, or where and how far outside the kernel lies
    /// and what that suggests.
    pub line: String,
    /// The classes whose constant-data cost exceeds the switching-data cost beyond both
    /// intervals (kept as fitted), among those the kernel uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant_above_switching: Vec<String>,
}

/// Places `measured` (J) in the bracket [constant, switching] of two predictions, each with
/// its interval: the operand activity when it lies inside (the constant prediction's low end
/// to the switching prediction's high end), else how far outside and what that suggests.
pub fn operand_bracket(
    measured: f64,
    (constant_j, constant_ci_j): (f64, (f64, f64)),
    (switching_j, switching_ci_j): (f64, (f64, f64)),
) -> OperandBracket {
    let span = switching_j - constant_j;
    let activity = (span > 0.0).then(|| (measured - constant_j) / span);
    let m = format_si(measured, "J", 4);
    let (placement, line) = if activity.is_none() {
        (
            "no bracket",
            format!(
                "no operand activity: the constant-data prediction ({}) is not below the switching-data prediction \
                 ({}); the two fits disagree on this kernel's terms",
                format_si(constant_j, "J", 4),
                format_si(switching_j, "J", 4)
            ),
        )
    } else if measured < constant_ci_j.0 {
        (
            "below",
            format!(
                "outside the bracket: the measured dynamic energy ({m}) is {:.1} % below the constant-data prediction \
                 (lowest {}): less than the model prices even with operands that never switch; likely causes: a lower \
                 SM clock than the model's, counted work that did not happen, or a term's constant-data cost fitted \
                 too high",
                (1.0 - measured / constant_ci_j.0) * 100.0,
                format_si(constant_ci_j.0, "J", 4)
            ),
        )
    } else if measured > switching_ci_j.1 {
        (
            "above",
            format!(
                "outside the bracket: the measured dynamic energy ({m}) is {:.1} % above the switching-data prediction \
                 (highest {}): more than the model prices with every operand switching; likely causes: a missing term \
                 (warpgroup MMA, TMA, atomics, texture, local memory), a term's cost fitted from a capped kernel \
                 (lower clock and voltage: priced too low), or a higher clock than the model's",
                (measured / switching_ci_j.1 - 1.0) * 100.0,
                format_si(switching_ci_j.1, "J", 4)
            ),
        )
    } else {
        // As computed: inside the bracket by the intervals, a measurement may lie a little
        // below the constant prediction or above the switching one (activity below 0 or
        // above 1), and the line says so rather than rounding it in.
        let a = activity.unwrap_or_default();
        let past = if a < 0.0 {
            ", below the constant-data prediction but inside its interval"
        } else if a > 1.0 {
            ", above the switching-data prediction but inside its interval"
        } else {
            ""
        };
        (
            "inside",
            format!(
                "operand activity ≈ {a:.2} (0: constant data, {}; 1: switching data, {}; measured {m}{past})",
                format_si(constant_j, "J", 4),
                format_si(switching_j, "J", 4)
            ),
        )
    };
    OperandBracket {
        constant_j,
        constant_ci_j,
        switching_j,
        switching_ci_j,
        activity,
        placement: placement.into(),
        line,
        constant_above_switching: Vec::new(),
    }
}

/// A predicted energy and its interval, J: `(figure, (low, high))`.
pub type Priced = (f64, (f64, f64));

/// Each data regime's total of `terms` with its interval, unbounded: (constant data,
/// switching data), each `(J, (low, high))` (a term without an interval at its figure; a term
/// without a constant-data cost at its switching-data one).
pub fn regime_totals(terms: &[ExplainedTerm]) -> (Priced, Priced) {
    let total = |priced: &mut dyn Iterator<Item = (f64, Option<(f64, f64)>)>| {
        priced.fold((0.0, (0.0, 0.0)), |(sum, (lo, hi)), (j, ci)| {
            let (a, b) = ci.unwrap_or((j, j));
            (sum + j, (lo + a.min(j), hi + b.max(j)))
        })
    };
    (
        total(&mut terms.iter().map(|t| (t.constant_j.unwrap_or(t.j), t.constant_ci_j))),
        total(&mut terms.iter().map(|t| (t.j, t.ci_j))),
    )
}
