//! Estimates with 95 % confidence intervals from repeated windows.

use serde::{Deserialize, Serialize};

/// A mean over repeated observations with its 95 % confidence interval (Student t).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Estimate {
    /// Sample mean.
    pub mean: f64,
    /// Lower end of the 95 % confidence interval of the mean.
    pub ci_low: f64,
    /// Upper end of the 95 % confidence interval of the mean.
    pub ci_high: f64,
    /// Number of observations.
    pub n: usize,
    /// Sample standard deviation (0 for n = 1). Optional on read: a file without it gets
    /// the one its interval implies ([`Estimate::with_implied_std_dev`]).
    #[serde(default = "unknown_std_dev")]
    pub std_dev: f64,
}

fn unknown_std_dev() -> f64 {
    f64::NAN
}

impl Estimate {
    /// Fills a standard deviation read as unknown from the interval: half-width ×
    /// √n / t(n − 1).
    pub fn with_implied_std_dev(mut self) -> Estimate {
        if self.std_dev.is_nan() {
            self.std_dev = if self.n >= 2 {
                (0.5 * self.ci_high - 0.5 * self.ci_low) / student_t_975(self.n - 1) * (self.n as f64).sqrt()
            } else {
                0.0
            };
        }
        self
    }

    /// Checks that this estimate can be reported and compared: mean, bounds and standard
    /// deviation finite, `ci_low ≤ mean ≤ ci_high`, at least two observations, and, with
    /// `positive`, a mean above zero (an energy, a time). The error says which rule broke.
    pub fn validate(&self, positive: bool) -> std::result::Result<(), String> {
        if self.n < 2 {
            return Err(format!("n = {}: at least 2 windows are needed for an interval", self.n));
        }
        if !(self.mean.is_finite() && self.ci_low.is_finite() && self.ci_high.is_finite()) {
            return Err(format!("mean {} with interval [{}, {}] is not finite", self.mean, self.ci_low, self.ci_high));
        }
        if !(self.std_dev.is_finite() && self.std_dev >= 0.0) {
            return Err(format!("standard deviation {} is not a spread", self.std_dev));
        }
        if !(self.ci_low <= self.mean && self.mean <= self.ci_high) {
            return Err(format!(
                "the interval [{}, {}] does not hold the mean {}",
                self.ci_low, self.ci_high, self.mean
            ));
        }
        if positive && self.mean <= 0.0 {
            return Err(format!("mean {} is not positive", self.mean));
        }
        // Observations that are all ≥ 0 have a standard deviation of at most mean·√n, so
        // the interval's half-width is at most t·mean: anything wider is not a measurement.
        // Compared relative to the mean, so that figures near f64::MAX cannot overflow the
        // bound into infinity and pass.
        if positive {
            let bound = 1.0 + 1e-9;
            let half = 0.5 * self.ci_high - 0.5 * self.ci_low;
            if !(half / self.mean <= student_t_975(self.n - 1) * bound
                && self.std_dev / self.mean <= (self.n as f64).sqrt() * bound)
            {
                return Err(format!(
                    "the interval [{}, {}] (standard deviation {}) is wider than non-negative observations with mean {} allow",
                    self.ci_low, self.ci_high, self.std_dev, self.mean
                ));
            }
        }
        Ok(())
    }

    /// The estimate of the mean of `values`, or `None` when there are none or one is not finite.
    pub fn from_values(values: &[f64]) -> Option<Estimate> {
        let n = values.len();
        if n == 0 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n == 1 {
            // One observation gives no spread: the interval is unbounded, not zero.
            return Some(Estimate { mean, ci_low: f64::NEG_INFINITY, ci_high: f64::INFINITY, n, std_dev: 0.0 });
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let std_dev = var.sqrt();
        let half = student_t_975(n - 1) * std_dev / (n as f64).sqrt();
        Some(Estimate { mean, ci_low: mean - half, ci_high: mean + half, n, std_dev })
    }

    /// A single value taken as exact (no spread, zero-width interval).
    pub fn exact(mean: f64) -> Estimate {
        Estimate { mean, ci_low: mean, ci_high: mean, n: 1, std_dev: 0.0 }
    }

    /// Coefficient of variation of the observations (std dev / |mean|).
    pub fn cv(&self) -> f64 {
        if self.mean == 0.0 {
            f64::INFINITY
        } else {
            self.std_dev / self.mean.abs()
        }
    }

    /// Half the interval width relative to the mean.
    pub fn relative_half_width(&self) -> f64 {
        if self.mean == 0.0 {
            f64::INFINITY
        } else {
            (0.5 * self.ci_high - 0.5 * self.ci_low) / self.mean.abs()
        }
    }

    /// The estimate scaled by a constant (per launch → per op, J → mJ).
    pub fn scaled(&self, factor: f64) -> Estimate {
        let (a, b) = (self.ci_low * factor, self.ci_high * factor);
        Estimate {
            mean: self.mean * factor,
            ci_low: a.min(b),
            ci_high: a.max(b),
            n: self.n,
            std_dev: self.std_dev * factor.abs(),
        }
    }
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (two-sided 95 %).
pub fn student_t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Beyond the table, interpolate in 1/df between 30 (2.042) and ∞ (1.960).
        _ => 1.960 + (2.042 - 1.960) * 30.0 / df as f64,
    }
}

/// Mean and least-squares slope of y on x.
pub fn linear_fit(points: &[(f64, f64)]) -> Option<LinearFit> {
    let n = points.len();
    if n < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n as f64;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_res: f64 = points.iter().map(|p| (p.1 - intercept - slope * p.0).powi(2)).sum();
    let ss_tot: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let r_squared = if ss_tot == 0.0 { 1.0 } else { 1.0 - ss_res / ss_tot };
    let slope_std_err = if n > 2 { (ss_res / (n - 2) as f64 / sxx).sqrt() } else { f64::INFINITY };
    Some(LinearFit { slope, intercept, r_squared, slope_std_err, n })
}

/// Solves the square system `a · x = b` by Gaussian elimination with partial pivoting;
/// `None` when it is singular (to working precision).
pub fn solve_linear(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    if a.len() != n || a.iter().any(|row| row.len() != n) {
        return None;
    }
    let scale = a.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
    if scale == 0.0 || !scale.is_finite() {
        return None;
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, row) in lower.iter_mut().enumerate() {
            let factor = row[col] / pivot_row[col];
            if factor != 0.0 {
                for (value, pivot_value) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *value -= factor * pivot_value;
                }
                b[col + 1 + offset] -= factor * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let tail: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// A symmetric positive-definite matrix stored by its lower band: row `i` holds the
/// elements (i, i − k) for k = 0 ..= `bandwidth`. Normal equations whose unknowns each
/// touch only their neighbours (the boxcar inversion's pieces) fit in it, and solve in
/// time linear in the number of unknowns.
#[derive(Clone, Debug)]
pub struct BandedSpd {
    n: usize,
    bandwidth: usize,
    band: Vec<f64>,
}

impl BandedSpd {
    /// An n × n zero matrix holding `bandwidth` sub-diagonals.
    pub fn zeros(n: usize, bandwidth: usize) -> Self {
        BandedSpd { n, bandwidth, band: vec![0.0; n * (bandwidth + 1)] }
    }

    /// Element (i, j); zero outside the band.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        let (hi, lo) = if i >= j { (i, j) } else { (j, i) };
        let k = hi - lo;
        if k > self.bandwidth {
            0.0
        } else {
            self.band[hi * (self.bandwidth + 1) + k]
        }
    }

    /// Adds `value` to (i, j) and, off the diagonal, to (j, i). Panics outside the band
    /// (a caller that sized the band wrongly).
    pub fn add(&mut self, i: usize, j: usize, value: f64) {
        let (hi, lo) = if i >= j { (i, j) } else { (j, i) };
        let k = hi - lo;
        assert!(k <= self.bandwidth, "({i}, {j}) is outside the band of {}", self.bandwidth);
        self.band[hi * (self.bandwidth + 1) + k] += value;
    }

    /// Solves `self · x = b` by banded Cholesky; `None` when the matrix is not positive
    /// definite to working precision (a singular system) or the solution is not finite.
    pub fn solve(mut self, b: &[f64]) -> Option<Vec<f64>> {
        let (n, w) = (self.n, self.bandwidth);
        if b.len() != n || n == 0 {
            return None;
        }
        let scale = (0..n).map(|i| self.band[i * (w + 1)].abs()).fold(0.0, f64::max);
        if scale == 0.0 || !scale.is_finite() {
            return None;
        }
        let at = |i: usize, k: usize| i * (w + 1) + k;
        // In place: the band becomes L with self = L·Lᵀ.
        for i in 0..n {
            for j in i.saturating_sub(w)..=i {
                let mut sum = self.band[at(i, i - j)];
                for k in i.saturating_sub(w)..j {
                    sum -= self.band[at(i, i - k)] * self.band[at(j, j - k)];
                }
                if i == j {
                    if sum <= 1e-12 * scale {
                        return None;
                    }
                    self.band[at(i, 0)] = sum.sqrt();
                } else {
                    self.band[at(i, i - j)] = sum / self.band[at(j, 0)];
                }
            }
        }
        let mut y = vec![0.0; n];
        for i in 0..n {
            let lo = i.saturating_sub(w);
            let sum: f64 = (lo..i).zip(&y[lo..i]).map(|(k, yk)| self.band[at(i, i - k)] * yk).sum();
            y[i] = (b[i] - sum) / self.band[at(i, 0)];
        }
        for i in (0..n).rev() {
            let hi = (i + w + 1).min(n);
            let sum: f64 = (i + 1..hi).zip(&y[i + 1..hi]).map(|(k, yk)| self.band[at(k, k - i)] * yk).sum();
            y[i] = (y[i] - sum) / self.band[at(i, 0)];
        }
        y.iter().all(|v| v.is_finite()).then_some(y)
    }
}

/// A least-squares line.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LinearFit {
    /// Slope.
    pub slope: f64,
    /// Intercept at x = 0.
    pub intercept: f64,
    /// Coefficient of determination.
    pub r_squared: f64,
    /// Standard error of the slope.
    pub slope_std_err: f64,
    /// Number of points.
    pub n: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banded_cholesky_matches_the_dense_solve() {
        // A tridiagonal-plus SPD system, solved both ways.
        let n = 40;
        let mut banded = BandedSpd::zeros(n, 2);
        let mut dense = vec![vec![0.0; n]; n];
        for i in 0..n {
            for (k, v) in [(0usize, 6.0 + (i % 3) as f64), (1, -1.5), (2, 0.25)] {
                if k <= i {
                    banded.add(i, i - k, v);
                    dense[i][i - k] += v;
                    if k > 0 {
                        dense[i - k][i] += v;
                    }
                }
            }
        }
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let x1 = banded.clone().solve(&b).unwrap();
        let x2 = solve_linear(dense, b.clone()).unwrap();
        for (a, c) in x1.iter().zip(&x2) {
            assert!((a - c).abs() < 1e-12, "{a} {c}");
        }
        assert_eq!(banded.get(5, 3), 0.25);
        assert_eq!(banded.get(3, 5), 0.25);
        assert_eq!(banded.get(0, 9), 0.0);
        // Singular: no answer rather than a wrong one.
        let mut singular = BandedSpd::zeros(2, 1);
        for (i, j) in [(0, 0), (1, 1), (1, 0)] {
            singular.add(i, j, 1.0);
        }
        assert!(singular.solve(&[1.0, 1.0]).is_none());
    }

    #[test]
    fn interval_matches_hand_computation() {
        let e = Estimate::from_values(&[10.0, 12.0, 11.0, 13.0, 9.0]).unwrap();
        assert_eq!(e.mean, 11.0);
        let sd = (2.5f64).sqrt();
        assert!((e.std_dev - sd).abs() < 1e-12);
        let half = 2.776 * sd / 5f64.sqrt();
        assert!((e.ci_high - 11.0 - half).abs() < 1e-12);
        assert!((e.cv() - sd / 11.0).abs() < 1e-12);
    }

    #[test]
    fn the_width_check_holds_near_the_largest_float() {
        let e = |mean: f64, ci_low: f64, ci_high: f64| Estimate { mean, ci_low, ci_high, n: 10, std_dev: mean * 0.01 };
        // [−MAX, MAX]: its width overflows to inf when subtracted; the half-width does not.
        let widest = e(1e308, -f64::MAX, f64::MAX);
        assert!(widest.validate(true).is_ok(), "1.8 × the mean, within t(9) = 2.262");
        assert!((widest.relative_half_width() - f64::MAX / 1e308).abs() < 1e-12, "{}", widest.relative_half_width());
        let too_wide = e(5e307, -f64::MAX, f64::MAX);
        assert!(too_wide.validate(true).unwrap_err().contains("wider than non-negative observations"), "{too_wide:?}");
        let spread = Estimate { std_dev: f64::MAX, ..e(1e307, 0.99e307, 1.01e307) };
        assert!(spread.validate(true).is_err());
        // A tiny positive mean with an ordinary interval: far too wide, refused.
        assert!(e(1e-320, 0.0, 1.0).validate(true).is_err());
    }

    #[test]
    fn one_value_has_an_unbounded_interval() {
        let e = Estimate::from_values(&[3.0]).unwrap();
        assert!(e.ci_low.is_infinite() && e.ci_high.is_infinite());
        assert!(Estimate::from_values(&[]).is_none());
        assert!(Estimate::from_values(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn t_quantiles_decrease_to_normal() {
        assert_eq!(student_t_975(4), 2.776);
        assert!(student_t_975(31) < 2.042 && student_t_975(31) > 1.96);
        assert!((student_t_975(100_000) - 1.96).abs() < 1e-3);
    }

    #[test]
    fn solves_linear_systems() {
        let x = solve_linear(vec![vec![0.0, 2.0], vec![3.0, 1.0]], vec![4.0, 5.0]).unwrap();
        assert!((x[0] - 1.0).abs() < 1e-12 && (x[1] - 2.0).abs() < 1e-12);
        assert!(solve_linear(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]).is_none());
        assert!(solve_linear(vec![vec![1.0]], vec![1.0, 2.0]).is_none());
    }

    #[test]
    fn line_fit() {
        let f = linear_fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12);
        assert!((f.r_squared - 1.0).abs() < 1e-12);
        assert!(linear_fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }
}
