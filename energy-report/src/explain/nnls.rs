//! Non-negative least squares (Lawson and Hanson, 1974), with the intervals of the
//! coefficients that the fit leaves free.

use energy_results::{solve_linear, student_t_975};
use energy_results::{Error, ErrorKind, Result};

/// The fit of `A x ≈ b` with `x ≥ 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct NnlsFit {
    /// The coefficients.
    pub x: Vec<f64>,
    /// The 95 % interval of each coefficient the fit left free (`x > 0`), from the
    /// least-squares fit on those columns with the residual variance (Student t); `None`
    /// for a coefficient held at zero by the constraint, or where the fit has no degree of
    /// freedom left.
    pub ci: Vec<Option<(f64, f64)>>,
    /// Root mean square of the residuals.
    pub residual_rms: f64,
    /// Rows less free coefficients.
    pub degrees_of_freedom: usize,
}

/// Solves `min |A x − b|` subject to `x ≥ 0`. `a` is row-major (one row per observation);
/// every row must have the same length. Columns of zeros get a zero coefficient.
pub fn nnls(a: &[Vec<f64>], b: &[f64]) -> Result<NnlsFit> {
    // Solved on columns and values scaled to a largest magnitude of 1 (counts of thousands
    // against energies of picojoules), then scaled back.
    let cols = a.first().map_or(0, Vec::len);
    let column_scale: Vec<f64> = (0..cols)
        .map(|j| a.iter().filter_map(|r| r.get(j)).fold(0.0f64, |m, v| m.max(v.abs())))
        .map(|m| if m > 0.0 && m.is_finite() { m } else { 1.0 })
        .collect();
    let value_scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let value_scale = if value_scale > 0.0 && value_scale.is_finite() { value_scale } else { 1.0 };
    let scaled: Vec<Vec<f64>> = a.iter().map(|r| r.iter().zip(&column_scale).map(|(v, c)| v / c).collect()).collect();
    let scaled_b: Vec<f64> = b.iter().map(|v| v / value_scale).collect();
    let mut fit = nnls_unit(&scaled, &scaled_b)?;
    for (j, c) in column_scale.iter().enumerate() {
        let k = value_scale / c;
        fit.x[j] *= k;
        fit.ci[j] = fit.ci[j].map(|(lo, hi)| (lo * k, hi * k));
    }
    fit.residual_rms *= value_scale;
    Ok(fit)
}

/// [`nnls`] on a problem of unit scale.
fn nnls_unit(a: &[Vec<f64>], b: &[f64]) -> Result<NnlsFit> {
    let rows = a.len();
    let cols = a.first().map_or(0, Vec::len);
    if rows == 0 || cols == 0 || b.len() != rows || a.iter().any(|r| r.len() != cols) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("nnls: {rows} rows of {cols} columns against {} values: the shapes do not match", b.len()),
        ));
    }
    if a.iter().flatten().chain(b).any(|v| !v.is_finite()) {
        return Err(Error::new(ErrorKind::InvalidInput, "nnls: a value is not finite"));
    }
    let scale = a.iter().flatten().chain(b).fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    let tol = 1e-12 * scale * scale * rows as f64;
    let mut x = vec![0.0; cols];
    let mut free = vec![false; cols];
    let gradient = |x: &[f64]| -> Vec<f64> {
        let r: Vec<f64> = (0..rows).map(|i| b[i] - dot(&a[i], x)).collect();
        (0..cols).map(|j| (0..rows).map(|i| a[i][j] * r[i]).sum()).collect()
    };
    for _ in 0..(3 * cols + 10) {
        let w = gradient(&x);
        let Some((t, _)) = (0..cols)
            .filter(|&j| !free[j])
            .map(|j| (j, w[j]))
            .filter(|(_, wj)| *wj > tol)
            .max_by(|p, q| p.1.total_cmp(&q.1))
        else {
            break;
        };
        free[t] = true;
        for _ in 0..(3 * cols + 10) {
            let s = least_squares_on(a, b, &free)?;
            if (0..cols).filter(|&j| free[j]).all(|j| s[j] > 0.0) {
                x = s;
                break;
            }
            // Step from x towards s until the first free coefficient reaches zero.
            let alpha = (0..cols)
                .filter(|&j| free[j] && s[j] <= 0.0)
                .map(|j| x[j] / (x[j] - s[j]))
                .fold(f64::INFINITY, f64::min);
            for j in 0..cols {
                x[j] += alpha * (s[j] - x[j]);
                if free[j] && x[j] <= 1e-15 * scale {
                    free[j] = false;
                    x[j] = 0.0;
                }
            }
        }
    }
    let residuals: Vec<f64> = (0..rows).map(|i| b[i] - dot(&a[i], &x)).collect();
    let rss: f64 = residuals.iter().map(|r| r * r).sum();
    let n_free = free.iter().filter(|f| **f).count();
    let degrees_of_freedom = rows.saturating_sub(n_free);
    let mut ci = vec![None; cols];
    if degrees_of_freedom > 0 && n_free > 0 {
        let sigma2 = rss / degrees_of_freedom as f64;
        let index: Vec<usize> = (0..cols).filter(|&j| free[j]).collect();
        let normal = normal_matrix(a, &index);
        let t = student_t_975(degrees_of_freedom);
        for (k, &j) in index.iter().enumerate() {
            // The k-th diagonal element of the inverse of the normal matrix.
            let unit: Vec<f64> = (0..index.len()).map(|r| if r == k { 1.0 } else { 0.0 }).collect();
            if let Some(column) = solve_linear(normal.clone(), unit) {
                let half = t * (sigma2 * column[k]).max(0.0).sqrt();
                ci[j] = Some((x[j] - half, x[j] + half));
            }
        }
    }
    Ok(NnlsFit { x, ci, residual_rms: (rss / rows as f64).sqrt(), degrees_of_freedom })
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum()
}

/// `Aᵀ A` restricted to the columns `index`.
fn normal_matrix(a: &[Vec<f64>], index: &[usize]) -> Vec<Vec<f64>> {
    index.iter().map(|&p| index.iter().map(|&q| a.iter().map(|r| r[p] * r[q]).sum()).collect()).collect()
}

/// The least-squares solution on the free columns (zero elsewhere).
fn least_squares_on(a: &[Vec<f64>], b: &[f64], free: &[bool]) -> Result<Vec<f64>> {
    let index: Vec<usize> = (0..free.len()).filter(|&j| free[j]).collect();
    let rhs: Vec<f64> = index.iter().map(|&p| a.iter().zip(b).map(|(r, y)| r[p] * y).sum()).collect();
    let solution = solve_linear(normal_matrix(a, &index), rhs).ok_or_else(|| {
        Error::new(
            ErrorKind::Analysis,
            "nnls: the free columns are linearly dependent (two classes always occur together): merge them or add \
             observations that separate them",
        )
    })?;
    let mut s = vec![0.0; free.len()];
    for (k, &j) in index.iter().enumerate() {
        s[j] = solution[k];
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_costs_come_back_with_intervals_that_hold_them() {
        // 40 kernels, 4 classes with known costs (pJ); counts vary; 1 % noise.
        let truth = [12.0, 30.0, 0.0, 250.0];
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        for _ in 0..40 {
            let row: Vec<f64> = (0..4).map(|_| (next() * 100.0).floor()).collect();
            let y: f64 = row.iter().zip(truth).map(|(n, c)| n * c).sum();
            b.push(y * (1.0 + 0.01 * (next() - 0.5)));
            a.push(row);
        }
        let fit = nnls(&a, &b).unwrap();
        for (j, &t) in truth.iter().enumerate() {
            if t > 0.0 {
                let (lo, hi) = fit.ci[j].expect("a free coefficient has an interval");
                assert!(lo <= t && t <= hi, "class {j}: {t} outside [{lo}, {hi}] ({:?})", fit.x);
                assert!((fit.x[j] - t).abs() / t < 0.05, "{:?}", fit.x);
            } else {
                assert!(fit.x[j] < 1.0, "a zero cost stays near zero: {:?}", fit.x);
            }
        }
        assert!(fit.degrees_of_freedom >= 36);
    }

    #[test]
    fn picojoules_against_counts_fit_as_well_as_unit_numbers() {
        // Steps of 1-20 instructions of three classes at 11, 0 and 380 pJ, in joules.
        let truth = [11e-12, 0.0, 380e-12];
        let a: Vec<Vec<f64>> =
            (0..12).map(|i| vec![(i % 5 + 1) as f64, (i % 3) as f64 * 7.0, (i / 4) as f64]).collect();
        let b: Vec<f64> = a.iter().map(|r| r.iter().zip(truth).map(|(n, c)| n * c).sum()).collect();
        let fit = nnls(&a, &b).unwrap();
        for (x, t) in fit.x.iter().zip(truth) {
            assert!((x - t).abs() <= 1e-6 * 380e-12, "{:?}", fit.x);
        }
    }

    #[test]
    fn the_constraint_holds_where_plain_least_squares_goes_negative() {
        // y = 2 x0 exactly, but x1 is correlated and pulls a free fit below zero.
        let a = vec![vec![1.0, 1.0], vec![2.0, 1.0], vec![3.0, 1.0], vec![4.0, 1.1]];
        let b = vec![1.9, 4.1, 6.0, 8.0];
        let fit = nnls(&a, &b).unwrap();
        assert!(fit.x.iter().all(|v| *v >= 0.0), "{fit:?}");
        assert!((fit.x[0] - 2.0).abs() < 0.1, "{fit:?}");
    }

    #[test]
    fn bad_shapes_are_refused_and_twin_columns_still_fit() {
        assert!(nnls(&[vec![1.0, 2.0]], &[1.0, 2.0]).unwrap_err().to_string().contains("shapes"));
        assert!(nnls(&[vec![f64::NAN]], &[1.0]).unwrap_err().to_string().contains("finite"));
        // Two classes that always occur together cannot be told apart: the fit gives the
        // sum to one of them and still reproduces the data.
        let twins = vec![vec![1.0, 1.0], vec![2.0, 2.0], vec![3.0, 3.0]];
        let fit = nnls(&twins, &[2.0, 4.0, 6.0]).unwrap();
        assert!((fit.x[0] + fit.x[1] - 2.0).abs() < 1e-9 && fit.residual_rms < 1e-9, "{fit:?}");
    }

    proptest! {
        #[test]
        fn coefficients_are_never_negative_and_never_worse_than_zero(
            rows in prop::collection::vec(prop::collection::vec(0.0f64..50.0, 3), 4..12),
            ys in prop::collection::vec(-100.0f64..500.0, 12),
        ) {
            let b: Vec<f64> = ys[..rows.len()].to_vec();
            if let Ok(fit) = nnls(&rows, &b) {
                prop_assert!(fit.x.iter().all(|v| *v >= 0.0));
                // The fit is at least as good as x = 0.
                let rss0: f64 = b.iter().map(|y| y * y).sum();
                let rss: f64 = rows.iter().zip(&b).map(|(r, y)| (y - dot(r, &fit.x)).powi(2)).sum();
                prop_assert!(rss <= rss0 * (1.0 + 1e-9) + 1e-9);
            }
        }
    }
}
