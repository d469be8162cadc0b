//! The statistics every verdict rests on: the one-sided test a regression must pass, and the
//! smallest change a comparison could have detected with the noise it actually has.
//!
//! A comparison estimates a relative change `c` (percent) with a standard error `s`
//! (percent) on `df` degrees of freedom. A rise is a **regression** when `c` exceeds the
//! threshold and `c − t(1 − α, df) · s > 0`: one-sided at [`FALSE_ALARM_RATE`] (α = 1 %),
//! so an unchanged kernel fails at most 1 % of comparisons *if `s` holds all the noise*.
//! The **detectable change** is `(t(1 − α, df) + t(power, df)) · s`: a true rise of that
//! size is caught in [`DETECTION_POWER`] (95 %) of comparisons. With `s` from the two runs'
//! within-run intervals alone, between-run drift (temperature, board state) is not in it,
//! and the figure is stated as resting on that alone ([`NoiseBasis`]).

use serde::{Deserialize, Serialize};

/// One-sided false-alarm rate of the regression test.
pub const FALSE_ALARM_RATE: f64 = 0.01;
/// The probability at which the detectable change is caught.
pub const DETECTION_POWER: f64 = 0.95;

/// What the standard error of a change was estimated from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoiseBasis {
    /// The two runs' within-run intervals: between-run drift is not in it.
    WithinRun,
    /// The spread of several saved runs of the baseline (between-run noise measured).
    BetweenRuns,
    /// The spread of paired differences of interleaved runs.
    Pairs,
    /// The spread of paired differences, moderated by the other benchmarks of the same runs
    /// (`energy_results::ab::paired_changes`).
    PooledPairs,
    /// The within-run intervals and a between-run drift the user stated (`--drift`).
    StatedDrift,
    /// The spread of control benchmarks' changes between the two runs (`--control`).
    Controls,
}

impl NoiseBasis {
    /// How the basis reads in a verdict line.
    pub fn describe(self) -> &'static str {
        match self {
            NoiseBasis::WithinRun => "within-run intervals only; between-run drift not included",
            NoiseBasis::BetweenRuns => "spread between saved baseline runs",
            NoiseBasis::Pairs => "spread of the paired differences",
            NoiseBasis::PooledPairs => "spread of the paired differences, moderated by the other benchmarks' pairs",
            NoiseBasis::StatedDrift => "within-run intervals and the stated between-run drift (--drift)",
            NoiseBasis::Controls => "spread of the control benchmarks' changes (--control)",
        }
    }
}

/// The noise of a relative change and what it lets a comparison detect.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Detectability {
    /// Standard error of the change, percent.
    pub standard_error_pct: f64,
    /// Its degrees of freedom (∞ written as a large number is never used: at least 1).
    pub degrees_of_freedom: f64,
    /// What it was estimated from.
    pub basis: NoiseBasis,
    /// The smallest rise caught with probability [`DETECTION_POWER`], percent.
    pub detectable_change_pct: f64,
    /// The one-sided false-alarm rate of the test, as a fraction.
    pub false_alarm_rate: f64,
    /// The power the detectable change is stated at, as a fraction.
    pub power: f64,
}

impl Detectability {
    /// The detectability of a change with standard error `standard_error_pct` on
    /// `degrees_of_freedom` (at least 1; non-finite errors give an infinite detectable change).
    pub fn new(standard_error_pct: f64, degrees_of_freedom: f64, basis: NoiseBasis) -> Detectability {
        let df = if degrees_of_freedom.is_finite() { degrees_of_freedom.max(1.0) } else { 1e6 };
        let factor = student_t_quantile(1.0 - FALSE_ALARM_RATE, df) + student_t_quantile(DETECTION_POWER, df);
        let detectable = if standard_error_pct.is_finite() && standard_error_pct >= 0.0 {
            factor * standard_error_pct
        } else {
            f64::INFINITY
        };
        Detectability {
            standard_error_pct,
            degrees_of_freedom: df,
            basis,
            detectable_change_pct: detectable,
            false_alarm_rate: FALSE_ALARM_RATE,
            power: DETECTION_POWER,
        }
    }

    /// The one-sided lower bound of `change_pct` at 1 − α: a regression needs it above zero.
    pub fn lower_bound_pct(&self, change_pct: f64) -> f64 {
        change_pct - student_t_quantile(1.0 - self.false_alarm_rate, self.degrees_of_freedom) * self.standard_error_pct
    }

    /// The one-sided upper bound of `change_pct` at 1 − α: an improvement needs it below zero.
    pub fn upper_bound_pct(&self, change_pct: f64) -> f64 {
        change_pct + student_t_quantile(1.0 - self.false_alarm_rate, self.degrees_of_freedom) * self.standard_error_pct
    }

    /// One line: "detectable change 0.85 % (95 % power, 1 % false alarms; from …)".
    pub fn describe(&self) -> String {
        format!(
            "smallest detectable change {} ({:.0} % power, {:.0} % false alarms; noise from {})",
            format_pct(self.detectable_change_pct),
            self.power * 100.0,
            self.false_alarm_rate * 100.0,
            self.basis.describe()
        )
    }

    /// Said when the practical `threshold_pct` lies below what this comparison can detect.
    pub fn threshold_note(&self, threshold_pct: f64) -> Option<String> {
        (threshold_pct < self.detectable_change_pct).then(|| {
            format!(
                "the threshold {threshold_pct:.2} % is below the smallest detectable change {}: a rise between them is caught less than {:.0} % of the time",
                format_pct(self.detectable_change_pct),
                self.power * 100.0
            )
        })
    }
}

fn format_pct(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.2} %")
    } else {
        "unbounded (too few observations)".to_string()
    }
}

/// The standard error (in the unit of `std_dev`) and Welch–Satterthwaite degrees of freedom
/// of a sum of independent terms, each `(standard error, degrees of freedom)`.
pub fn combine(terms: &[(f64, f64)]) -> (f64, f64) {
    let variance: f64 = terms.iter().map(|(se, _)| se * se).sum();
    let denominator: f64 = terms.iter().filter(|(_, df)| *df > 0.0).map(|(se, df)| se.powi(4) / df).sum();
    let df = if denominator > 0.0 { variance * variance / denominator } else { 1e6 };
    (variance.sqrt(), df)
}

/// The quantile `p` (0 < p < 1) of the standard normal distribution (Acklam's rational
/// approximation, relative error below 1.2e-9).
#[allow(clippy::excessive_precision)] // Acklam's published coefficients, as published
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383577518672690e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let low = 0.02425;
    if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

/// The quantile `p` of Student's t with `df` degrees of freedom: exact for 1 and 2, a
/// Cornish–Fisher expansion in 1/df beyond (within 0.5 % of the tables from df = 3 for
/// p ≤ 0.995).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return f64::NAN;
    }
    if df < 1.5 {
        return (std::f64::consts::PI * (p - 0.5)).tan();
    }
    if df < 2.5 {
        return (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
    }
    let z = normal_quantile(p);
    let (z2, v) = (z * z, df);
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
}

/// What a change amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Rose by more than the threshold, significantly: fails `compare`.
    Regression,
    /// Fell significantly.
    Improvement,
    /// Rose significantly but by less than the threshold.
    WithinThreshold,
    /// The interval of the change includes zero.
    NotSignificant,
    /// Rose beyond the threshold, significantly within the two runs, but the drift between
    /// runs is unknown and could explain it (one baseline run, no drift estimate): neither a
    /// pass nor a regression (`compare` exits 3).
    Inconclusive,
}

/// The one rule every verdict follows (compare, history, ab): a **regression** when
/// `change_pct` exceeds the threshold and the one-sided lower bound of `tested` (the change
/// in the unit `detect` describes: percent here, `100 · ln(ratio)` for pairs) lies above
/// zero; a significant rise within the threshold otherwise; an **improvement** when the
/// upper bound lies below zero; else not significant.
pub fn verdict_of(detect: &Detectability, tested: f64, change_pct: f64, threshold_pct: f64) -> Verdict {
    let significant_rise = detect.lower_bound_pct(tested) > 0.0;
    if significant_rise && change_pct > threshold_pct {
        Verdict::Regression
    } else if significant_rise {
        Verdict::WithinThreshold
    } else if detect.upper_bound_pct(tested) < 0.0 {
        Verdict::Improvement
    } else {
        Verdict::NotSignificant
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_tables() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.99) - 2.326348).abs() < 1e-5);
        assert!((normal_quantile(0.01) + 2.326348).abs() < 1e-5);
        // (p, df, table value)
        for (p, df, table) in [
            (0.975, 1.0, 12.706),
            (0.975, 2.0, 4.303),
            (0.975, 3.0, 3.182),
            (0.975, 5.0, 2.571),
            (0.975, 10.0, 2.228),
            (0.975, 30.0, 2.042),
            (0.99, 3.0, 4.541),
            (0.99, 5.0, 3.365),
            (0.99, 10.0, 2.764),
            (0.99, 29.0, 2.462),
            (0.95, 4.0, 2.132),
            (0.95, 9.0, 1.833),
            (0.95, 29.0, 1.699),
        ] {
            let t = student_t_quantile(p, df);
            assert!((t / table - 1.0).abs() < 0.005, "t({p}, {df}) = {t}, table {table}");
        }
    }

    #[test]
    fn the_detectable_change_is_the_sum_of_two_quantiles_times_the_error() {
        // Many degrees of freedom: (2.326 + 1.645) · 0.25 % ≈ 0.99 %.
        let d = Detectability::new(0.25, 1e6, NoiseBasis::Pairs);
        assert!((d.detectable_change_pct - 0.993).abs() < 0.002, "{d:?}");
        // Few pairs cost power: five pairs (4 df) need a larger change.
        let few = Detectability::new(0.25, 4.0, NoiseBasis::Pairs);
        assert!(few.detectable_change_pct > 1.4 * d.detectable_change_pct, "{few:?}");
        assert!(Detectability::new(f64::INFINITY, 3.0, NoiseBasis::WithinRun).detectable_change_pct.is_infinite());
        assert!(d.threshold_note(0.5).unwrap().contains("below the smallest detectable change 0.99 %"));
        assert!(d.threshold_note(2.0).is_none());
        assert!(d.describe().contains("95 % power, 1 % false alarms"), "{}", d.describe());
    }

    #[test]
    fn the_test_is_one_sided_at_the_false_alarm_rate() {
        // Under no change, c/s follows t(df): the bound is above zero in α of the cases.
        let d = Detectability::new(1.0, 20.0, NoiseBasis::BetweenRuns);
        let critical = student_t_quantile(0.99, 20.0);
        assert!(d.lower_bound_pct(critical + 1e-9) > 0.0);
        assert!(d.lower_bound_pct(critical - 1e-9) < 0.0);
        assert!(d.upper_bound_pct(-critical - 1e-9) < 0.0);
    }

    #[test]
    fn independent_errors_add_in_quadrature_with_welch_degrees_of_freedom() {
        let (se, df) = combine(&[(0.3, 9.0), (0.4, 9.0)]);
        assert!((se - 0.5).abs() < 1e-12);
        // Welch: 0.5⁴ / (0.3⁴/9 + 0.4⁴/9) = 0.0625 / (0.0081/9 + 0.0256/9) ≈ 16.7.
        assert!((df - 16.69).abs() < 0.05, "{df}");
    }
}
