//! Chart axes: labels and round tops, shared by the harness's plots and the reports' charts.

/// An axis label: at least `decimals` places, more (up to three more) where the tick needs
/// them to be read as itself (a tick at 27.5 on an axis of whole numbers is "27.5", never
/// "28"), or an exponent past 10⁷ (a corrupt time is not 300 digits).
pub fn axis_label(v: f64, decimals: usize) -> String {
    if v.is_nan() || v.abs() >= 1e7 {
        return format!("{v:.3e}");
    }
    let tolerance = 1e-9 * v.abs().max(1.0);
    let places = (decimals..=decimals + 3)
        .find(|&d| format!("{v:.d$}").parse::<f64>().is_ok_and(|shown| (shown - v).abs() <= tolerance))
        .unwrap_or(decimals + 3);
    format!("{v:.places$}")
}

/// An axis's ticks over `[lo, hi]`: round multiples of a round step ([`nice_ceiling`] of
/// the span over `intervals`), at most twelve, each with its label ([`axis_label`], as many
/// places as the step needs, up to twelve). None where the span gives no finite step.
pub fn ticks(lo: f64, hi: f64, intervals: f64) -> Vec<(f64, String)> {
    // Divided before it is multiplied: a span near f64::MAX times the intervals is not a number.
    let step = nice_ceiling((hi - lo) / intervals);
    if !(step.is_finite() && step > 0.0) {
        return Vec::new();
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 12.0) as usize;
    let mut out = Vec::new();
    let mut tick = (lo / step).ceil() * step;
    while tick <= hi && out.len() < 12 {
        out.push((tick, axis_label(tick, decimals)));
        tick += step;
    }
    out
}

/// The smallest of 1, 2, 2.5, 5 and 10 times a power of ten at or above `v`: an axis's top.
pub fn nice_ceiling(v: f64) -> f64 {
    let magnitude = 10f64.powf(v.log10().floor());
    for step in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if step * magnitude >= v {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_reads_as_its_tick() {
        // Ticks every 2.5 on an axis asked for whole numbers (issue 60: "28", "32", "38").
        let labels: Vec<String> = [25.0, 27.5, 30.0, 32.5, 37.5].iter().map(|&v| axis_label(v, 0)).collect();
        assert_eq!(labels, ["25", "27.5", "30", "32.5", "37.5"]);
        // Multiples of 0.1 carry float error, not extra places.
        assert_eq!(axis_label(3.0 * 0.1, 1), "0.3");
        assert_eq!(axis_label(0.25, 1), "0.25");
        // A value no short label holds: three places more at most.
        assert_eq!(axis_label(std::f64::consts::PI, 2), "3.14159");
        assert_eq!(axis_label(2.5e9, 0), "2.500e9");
        assert_eq!(axis_label(f64::NAN, 0), "NaN");
    }

    #[test]
    fn ticks_are_round_multiples_of_a_round_step() {
        let labels: Vec<String> = ticks(26.0, 38.0, 5.0).into_iter().map(|(_, l)| l).collect();
        assert_eq!(labels, ["27.5", "30", "32.5", "35", "37.5"]);
        assert!(ticks(0.0, f64::MAX, 5.0).len() <= 12);
        assert!(ticks(-f64::MAX, f64::MAX, 5.0).is_empty() && ticks(1.0, 1.0, 5.0).is_empty());
    }
}
