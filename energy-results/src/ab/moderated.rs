//! The verdict on one benchmark's paired differences: its change, its noise (its own
//! spread, a period effect fitted out, moderated by the other benchmarks of the same runs)
//! and what it is called (see the module above for the method).

use std::collections::BTreeMap;

use serde::Serialize;

use super::PairFigures;
use crate::detect::{student_t_quantile, verdict_of, Detectability, NoiseBasis, Verdict};
use crate::error::echo;
use crate::error::{Error, ErrorKind, Result};

/// One benchmark's paired change (written, never read: [`AbReport::parse`](super::AbReport::parse) computes it
/// again from the runs' figures).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PairedChange {
    /// Benchmark id.
    pub id: String,
    /// Every pair's figures.
    pub pairs: Vec<PairFigures>,
    /// Mean of the differences, percent as `100 · ln(ratio)`.
    pub mean_difference_pct: f64,
    /// The change, percent: `exp(mean d / 100) − 1`.
    pub change_pct: f64,
    /// Lower end of its 95 % interval (two-sided t on `n − 1` df), percent.
    pub change_low_pct: f64,
    /// Upper end of its 95 % interval, percent.
    pub change_high_pct: f64,
    /// The noise of the change (standard error of the mean difference) and the smallest
    /// change these pairs detect.
    pub detectability: Detectability,
    /// The verdict, as `compare` rules.
    pub verdict: Verdict,
    /// Said when the threshold lies below the detectable change.
    pub threshold_note: Option<String>,
}

/// The degrees of freedom the other benchmarks of a sequence lend each benchmark's noise
/// ([`paired_changes`]): the weight of the prior in Smyth's moderated variance. Two. Four
/// were chosen on the first H200
/// gate study (issue 58: 0 of 54 false alarms on unchanged code, 36 of 36 +2 % changes caught
/// at three pairs) and judged well on four more boards; on a seventh (2026-12-02), an
/// L2-resident benchmark whose runs differ ~5 times more than their windows say (as on every
/// board, less so) was called a +1.3 % regression of unchanged code after two pairs: the
/// others' quiet spread had stood in for its own. Every stored gate judged again after two
/// pairs (`research/results/2026-12-01-ci-gate/gpu-gates.md`, 15 calls, 8 boards): with four,
/// 2 false alarms in 279 benchmark-gates of unchanged code and 8 significant changes either
/// way; with two, none and 3; +2 % caught 196 of 261 times after two pairs instead of 214, so
/// a third pair runs a little more often.
pub const POOLED_PRIOR_DF: f64 = 2.0;

/// One benchmark's paired differences, checked: the change they estimate, the variance of
/// one difference about the model, its degrees of freedom, and the number of pairs the
/// change's standard error divides by.
struct Spread {
    id: String,
    pairs: Vec<PairFigures>,
    mean: f64,
    variance: f64,
    df: f64,
    /// The change's variance is `variance / effective_pairs` (`n` when the orders balance).
    effective_pairs: f64,
    /// Mean over the pairs of the within-run variance of a difference, when every pair has one.
    within_variance: Option<f64>,
}

/// `pairs` checked ([`checked`]) and fitted, with the period effect shrunk by
/// `period_spread` ([`shrunk_period_fit`]) or, without it, fitted in full ([`period_fit`]).
fn spread(id: &str, pairs: Vec<PairFigures>, period_spread: Option<f64>) -> Result<Spread> {
    checked(id, &pairs)?;
    let n = pairs.len();
    let within: Option<Vec<f64>> = pairs.iter().map(|p| p.within_run_se_pct.map(|se| se * se)).collect();
    let within_variance = within.map(|v| v.iter().sum::<f64>() / n as f64);
    let fit = match period_spread {
        Some(tau2) => shrunk_period_fit(&pairs, tau2),
        None => period_fit(&pairs),
    };
    Ok(Spread {
        id: id.to_string(),
        pairs,
        mean: fit.change,
        variance: fit.variance,
        df: fit.df,
        effective_pairs: fit.effective_pairs,
        within_variance,
    })
}

/// Two pairs or more, every difference finite.
fn checked(id: &str, pairs: &[PairFigures]) -> Result<()> {
    let n = pairs.len();
    if n < 2 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("`{}`: {n} pair(s): the spread of paired differences needs two pairs or more", echo(id)),
        ));
    }
    if let Some(p) = pairs.iter().find(|p| !p.difference_pct.is_finite()) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}`: pair {}: {:.4e} J against {:.4e} J is not a finite positive ratio: nothing is compared",
                echo(id),
                p.pair,
                p.baseline_j,
                p.candidate_j
            ),
        ));
    }
    Ok(())
}

/// The change of paired differences with a period effect: `dᵢ = c + sᵢ·δ + eᵢ`, where
/// `sᵢ` is −1 when the baseline ran first (AB) and +1 when the candidate did (BA), so `δ`
/// is how much more the first run of a pair reads than the second (a crossover design's
/// period effect; Jones and Kenward). ABBA order balances it out of the change, but not out
/// of the spread: a board on which the first run of each pair read ~0.8 % above the second
/// (an H200 of issue 58's study) spread the differences of a +1 % change from +0.5 % (AB) to
/// +2.1 % (BA), and no change was caught. Fitted by least squares once both orders are
/// present and three pairs or more leave a degree of freedom for the noise; otherwise the
/// plain mean and spread on `n − 1`. Fitted in full for one benchmark alone ([`period_fit`]);
/// a sequence of several shrinks each benchmark's towards zero by how much the period
/// effects of all of them spread ([`shrunk_period_fit`]), so that a board without one does
/// not cost every benchmark a degree of freedom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodFit {
    /// The change `c`, percent as `100 · ln(ratio)`.
    pub change: f64,
    /// The variance of one difference about the fit.
    pub variance: f64,
    /// Its degrees of freedom: `n − 2` with the period effect, `n − 1` without.
    pub df: f64,
    /// The change's variance is `variance / effective_pairs` (`n` when the orders balance).
    pub effective_pairs: f64,
    /// The period effect `δ` (the first run's excess over the second, same unit), when fitted.
    pub period: Option<f64>,
}

/// [`PeriodFit`] of `pairs` (at least two, every difference finite: [`paired_change`]
/// checks both).
pub fn period_fit(pairs: &[PairFigures]) -> PeriodFit {
    let (d, orders) = differences_and_orders(pairs);
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let Some(full) = full_period_fit(&d, &orders) else {
        let variance = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        return PeriodFit { change: mean, variance, df: n - 1.0, effective_pairs: n, period: None };
    };
    full.fit
}

/// The differences and the orders (−1 AB, +1 BA) of `pairs`.
fn differences_and_orders(pairs: &[PairFigures]) -> (Vec<f64>, Vec<f64>) {
    pairs.iter().map(|p| (p.difference_pct, if p.order == "BA" { 1.0 } else { -1.0 })).unzip()
}

/// The least-squares fit of `dᵢ = c + sᵢ·δ + eᵢ`, with what shrinking `δ` needs: the
/// variance of `δ`'s estimate and the determinant of the normal equations. `None` below
/// three pairs or with one order only (no degree of freedom left, or `δ` not estimable).
struct FullPeriodFit {
    fit: PeriodFit,
    /// The variance of the estimate of `δ`: `variance · n / det`.
    period_variance: f64,
    /// `n² − (Σs)²`.
    det: f64,
}

fn full_period_fit(d: &[f64], orders: &[f64]) -> Option<FullPeriodFit> {
    let both_orders = orders.iter().any(|s| *s > 0.0) && orders.iter().any(|s| *s < 0.0);
    if d.len() < 3 || !both_orders {
        return None;
    }
    let n = d.len() as f64;
    // Normal equations of [1, s]: [[n, Σs], [Σs, n]] (s² = 1).
    let (ss, sd): (f64, f64) = (orders.iter().sum(), orders.iter().zip(d).map(|(s, x)| s * x).sum());
    let sum_d: f64 = d.iter().sum();
    let det = n * n - ss * ss;
    let change = (n * sum_d - ss * sd) / det;
    let period = (n * sd - ss * sum_d) / det;
    let rss: f64 = d.iter().zip(orders).map(|(x, s)| (x - change - s * period).powi(2)).sum();
    let variance = rss / (n - 2.0);
    Some(FullPeriodFit {
        fit: PeriodFit { change, variance, df: n - 2.0, effective_pairs: det / n, period: Some(period) },
        period_variance: variance * n / det,
        det,
    })
}

/// How much the true period effects of a sequence's benchmarks spread about zero (`τ²`,
/// squared percent): the mean excess of each benchmark's squared estimate of `δ` over that
/// estimate's variance, at least 0 (a method-of-moments estimate, as in empirical Bayes).
/// `None` unless two benchmarks or more have an estimate: one benchmark's own `δ` says too
/// little of what is real on the board.
pub fn period_effect_spread<'a>(sequences: impl IntoIterator<Item = &'a [PairFigures]>) -> Option<f64> {
    let excess: Vec<f64> = sequences
        .into_iter()
        .filter_map(|pairs| {
            let (d, orders) = differences_and_orders(pairs);
            let full = full_period_fit(&d, &orders)?;
            let period = full.fit.period?;
            Some(period * period - full.period_variance)
        })
        .filter(|e| e.is_finite())
        .collect();
    (excess.len() >= 2).then(|| (excess.iter().sum::<f64>() / excess.len() as f64).max(0.0))
}

/// [`PeriodFit`] of `pairs` with the period effect shrunk towards zero by what the board shows
/// (`period_spread`, [`period_effect_spread`]): `δ` is the full fit's times
/// `h = τ² / (τ² + var δ̂)`, the change `mean d − mean s · δ`, the residual variance on
/// `n − 1 − h` degrees of freedom and the change's variance `variance / n · (1 + h (n²/det − 1))`
/// (the plain mean's at `h = 0`, the full fit's at `h = 1`). On a board without a period effect
/// (`τ² = 0`) a benchmark keeps the degree of freedom the fit would spend (at three pairs, two
/// instead of one); on a board with one, every benchmark's is fitted nearly in full.
pub fn shrunk_period_fit(pairs: &[PairFigures], period_spread: f64) -> PeriodFit {
    let (d, orders) = differences_and_orders(pairs);
    let Some(full) = full_period_fit(&d, &orders) else {
        return period_fit(pairs);
    };
    let total = period_spread + full.period_variance;
    let h = if total > 0.0 && total.is_finite() { (period_spread / total).clamp(0.0, 1.0) } else { 0.0 };
    let n = d.len() as f64;
    let period = h * full.fit.period.unwrap_or(0.0);
    let change = d.iter().sum::<f64>() / n - orders.iter().sum::<f64>() / n * period;
    let df = n - 1.0 - h;
    let rss: f64 = d.iter().zip(&orders).map(|(x, s)| (x - change - s * period).powi(2)).sum();
    PeriodFit {
        change,
        variance: rss / df,
        df,
        effective_pairs: n / (1.0 + h * (n * n / full.det - 1.0)),
        period: Some(period),
    }
}

/// How many times the spread of a benchmark's paired differences (about the fit, period effect
/// included) exceeds what its runs' own intervals predict for one difference; `None` without
/// intervals on every pair or without a spread.
pub fn between_runs_ratio(change: &PairedChange) -> Option<f64> {
    let s = spread(&change.id, change.pairs.clone(), None).ok()?;
    let ratio = (s.variance / s.within_variance?).sqrt();
    (ratio.is_finite() && s.df > 0.0).then_some(ratio)
}

/// Judges a spread with the noise `variance` of one difference on `df` degrees of freedom.
fn judged(s: Spread, variance: f64, df: f64, basis: NoiseBasis, threshold_pct: f64) -> PairedChange {
    let se = (variance / s.effective_pairs).sqrt();
    let detectability = Detectability::new(se, df, basis);
    let half = student_t_quantile(0.975, df) * se;
    let pct = |log_pct: f64| 100.0 * ((log_pct / 100.0).exp() - 1.0);
    let change = pct(s.mean);
    let verdict = verdict_of(&detectability, s.mean, change, threshold_pct);
    PairedChange {
        id: s.id,
        pairs: s.pairs,
        mean_difference_pct: s.mean,
        change_pct: change,
        change_low_pct: pct(s.mean - half),
        change_high_pct: pct(s.mean + half),
        threshold_note: detectability.threshold_note(threshold_pct),
        detectability,
        verdict,
    }
}

/// The paired change of one benchmark `id` over `pairs` (two or more), on its own spread
/// alone ([`NoiseBasis::Pairs`]), judged against `threshold_pct`.
pub fn paired_change(id: &str, pairs: Vec<PairFigures>, threshold_pct: f64) -> Result<PairedChange> {
    let s = spread(id, pairs, None)?;
    let (variance, df) = (s.variance, s.df);
    Ok(judged(s, variance, df, NoiseBasis::Pairs, threshold_pct))
}

/// The paired changes of every benchmark of one sequence (two pairs or more each), each on
/// a moderated variance ([`NoiseBasis::PooledPairs`]):
/// `(d₀ · s₀² + d · s²) / (d₀ + d)` on `d₀ + d` degrees of freedom, where `s²` is the
/// benchmark's own variance of differences about its fit on `d` degrees of freedom (the
/// period effect shrunk by what all the sequence's benchmarks show of it,
/// [`shrunk_period_fit`]: `d` between `n − 2` and `n − 1`), `d₀` is [`POOLED_PRIOR_DF`] (or the
/// others' degrees of freedom, when fewer) and `s₀²` is what the other benchmarks predict
/// for it: their mean ratio of spread to within-run variance times this benchmark's
/// within-run variance when every pair has intervals (a noisy benchmark keeps its noise),
/// their mean variance otherwise. A benchmark alone keeps its own spread.
pub fn paired_changes(by_id: BTreeMap<String, Vec<PairFigures>>, threshold_pct: f64) -> Result<Vec<PairedChange>> {
    paired_changes_weighted(by_id, threshold_pct, POOLED_PRIOR_DF)
}

/// [`paired_changes`] with the other benchmarks weighted as `prior_df` degrees of freedom
/// instead of [`POOLED_PRIOR_DF`] (to judge stored sequences by another weight).
pub fn paired_changes_weighted(
    by_id: BTreeMap<String, Vec<PairFigures>>,
    threshold_pct: f64,
    prior_df: f64,
) -> Result<Vec<PairedChange>> {
    // Estimated before each benchmark is checked and fitted (`spread`): it passes over a
    // benchmark it cannot fit, whose error `spread` then names.
    let period_spread = period_effect_spread(by_id.values().map(Vec::as_slice));
    let spreads: Vec<Spread> =
        by_id.into_iter().map(|(id, pairs)| spread(&id, pairs, period_spread)).collect::<Result<_>>()?;
    let scaled = spreads.iter().all(|s| s.within_variance.is_some_and(|w| w.is_finite() && w > 0.0));
    // What one benchmark says of the others' noise: its variance, or its ratio to within-run.
    let evidence: Vec<f64> = spreads
        .iter()
        .map(|s| if scaled { s.variance / s.within_variance.unwrap_or(1.0) } else { s.variance })
        .collect();
    let total_df: f64 = spreads.iter().map(|s| s.df).sum();
    let weighted: f64 = spreads.iter().zip(&evidence).map(|(s, e)| s.df * e).sum();
    let mut out = Vec::with_capacity(spreads.len());
    for (s, e) in spreads.into_iter().zip(evidence) {
        let others_df = total_df - s.df;
        let prior_df = prior_df.min(others_df);
        if prior_df <= 0.0 {
            let (variance, df) = (s.variance, s.df);
            out.push(judged(s, variance, df, NoiseBasis::Pairs, threshold_pct));
            continue;
        }
        let others = ((weighted - s.df * e) / others_df).max(0.0);
        let prior = if scaled { others * s.within_variance.unwrap_or(0.0) } else { others };
        let variance = (prior_df * prior + s.df * s.variance) / (prior_df + s.df);
        let df = prior_df + s.df;
        out.push(judged(s, variance, df, NoiseBasis::PooledPairs, threshold_pct));
    }
    Ok(out)
}
