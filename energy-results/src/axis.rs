//! Chart axes: labels and round tops, shared by the harness's plots and the reports' charts.

/// An axis label: `decimals` places, or an exponent past 10⁷ (a corrupt time is not 300 digits).
pub fn axis_label(v: f64, decimals: usize) -> String {
    if v.abs() < 1e7 {
        format!("{v:.decimals$}")
    } else {
        format!("{v:.3e}")
    }
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
