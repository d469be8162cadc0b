//! One benchmark's change between two runs and its verdict: the figure compared, the check
//! before any comparison, the noise of the change, and the one rule every verdict follows.

use std::path::Path;

use serde::Serialize;

use energy_results::detect::{combine, student_t_quantile, verdict_of, Detectability, NoiseBasis, Verdict};
use energy_results::echo;
use energy_results::student_t_975;
use energy_results::Estimate;
use energy_results::ResultFile;
use energy_results::{Error, ErrorKind, Result};

/// The change of one benchmark between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Change {
    /// Benchmark id.
    pub id: String,
    /// Energy per launch in the baseline, J.
    pub baseline_j: Estimate,
    /// Energy per launch in the candidate, J.
    pub candidate_j: Estimate,
    /// Relative change, percent, with its 95 % interval.
    pub change_pct: f64,
    /// Lower end of the interval of the change, percent.
    pub change_low_pct: f64,
    /// Upper end of the interval of the change, percent.
    pub change_high_pct: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Mean die temperature of the windows in the baseline and in the candidate, °C.
    pub temperature_c: (Option<f64>, Option<f64>),
    /// Said when the two ran at temperatures far enough apart to move the energy by
    /// itself (see [`TEMPERATURE_NOTE_C`]) and the figures are not temperature-normalized.
    pub temperature_note: Option<String>,
    /// The noise of the change and the smallest change it could detect.
    pub detectability: Detectability,
    /// Whether the figures compared are the energies at the reference temperature.
    pub normalized: bool,
    /// What was compared, when it is not the plain energy per launch ("energy at 50 °C").
    pub figure_note: Option<String>,
}

/// A difference in temperature between baseline and candidate that `compare` points out,
/// °C: energy rises 0.3-0.55 % per °C on the H100s measured (docs/VALIDATION.md), so 3 °C
/// can move a figure by 1-1.7 % by itself.
pub const TEMPERATURE_NOTE_C: f64 = 3.0;
/// The energy change per °C measured on H100s, percent (low, high).
pub const MEASURED_PCT_PER_C: (f64, f64) = (0.3, 0.55);

/// The note for two temperatures, when they differ by [`TEMPERATURE_NOTE_C`] or more.
pub(super) fn temperature_note(baseline_c: Option<f64>, candidate_c: Option<f64>) -> Option<String> {
    let (b, c) = (baseline_c?, candidate_c?);
    let delta = c - b;
    (delta.abs() >= TEMPERATURE_NOTE_C).then(|| {
        format!(
            "ran {:.0} °C {} than the baseline ({b:.0} → {c:.0} °C): on H100s energy moves {:.1}-{:.1} % for that alone",
            delta.abs(),
            if delta > 0.0 { "warmer" } else { "cooler" },
            delta.abs() * MEASURED_PCT_PER_C.0,
            delta.abs() * MEASURED_PCT_PER_C.1
        )
    })
}

pub(super) fn standard_error(e: &Estimate) -> f64 {
    if e.n < 2 {
        return f64::INFINITY;
    }
    // Halved before subtracting: an interval of ±1e308 has a finite half-width.
    (0.5 * e.ci_high - 0.5 * e.ci_low) / student_t_975(e.n - 1)
}

/// The figure of each result that a comparison takes the relative change of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Energy per launch (`energy_j`): [`compare`](super::compare), one GPU.
    Energy,
    /// Dynamic energy per launch above active idle (`dynamic_j`):
    /// [`compare_across_boards`](super::compare_across_boards).
    Dynamic,
}

impl Figure {
    /// The field's name in a result file.
    pub fn field(self) -> &'static str {
        match self {
            Figure::Energy => "energy_j",
            Figure::Dynamic => "dynamic_j",
        }
    }

    /// The figure of `result`.
    pub fn of(self, result: &ResultFile) -> &Estimate {
        match self {
            Figure::Energy => &result.energy_j,
            Figure::Dynamic => &result.dynamic_j,
        }
    }
}

/// The one check of a result before any comparison (every mode) takes the relative change
/// of its `figure`: every figure as on read ([`ResultFile::validate`]), and the compared
/// one as the total energy is checked: two windows or more, finite, a positive mean, an
/// interval that holds it and is no wider than non-negative observations allow. A
/// non-positive dynamic energy (a kernel that draws no more than active idle) has no
/// relative change: it is refused, never turned into "−50100 %" or "+inf %".
pub fn check_comparable_figure(dir: &Path, result: &ResultFile, figure: Figure) -> Result<()> {
    let refuse = |problem: String| {
        let hint = match figure {
            Figure::Energy => "the result file is corrupt: run `cargo bench` again",
            Figure::Dynamic => "across boards the dynamic energy (above active idle) is compared as a relative change, which needs a positive figure with a bounded interval in both runs; a kernel that draws no more than idle has none: compare its total energy on one board (without --across-boards)",
        };
        Err(Error::new(ErrorKind::InvalidInput, format!("`{}`: {problem}: {hint}", dir.display())))
    };
    if let Err(problem) = result.validate() {
        return refuse(problem);
    }
    if let Err(problem) = figure.of(result).validate(true) {
        return refuse(format!("`{}` {}: {problem}", echo(&result.id), figure.field()));
    }
    Ok(())
}

/// The change from `baseline` to `candidate`, judged against `threshold_pct` with the noise
/// of the two within-run intervals ([`NoiseBasis::WithinRun`]). Both must have passed
/// [`check_comparable_figure`]; a change that is still not a finite number (1e300 J against
/// 1e-10 J) is an error, never `+inf %`. The lower end of the interval stops at −100 % (no
/// energy): a ratio of two positive figures is never negative.
pub fn change(id: &str, baseline: &Estimate, candidate: &Estimate, threshold_pct: f64) -> Result<Change> {
    let ratio = candidate.mean / baseline.mean;
    let detect = within_run(baseline, candidate, ratio, None);
    judge(id, baseline, candidate, ratio, detect, threshold_pct)
}

/// The noise of the change `ratio` from the two runs' within-run intervals: each run's
/// relative error on n − 1 degrees of freedom, combined by Welch, with `extra` (a further
/// relative error, known on many degrees of freedom) in quadrature.
pub(super) fn within_run(baseline: &Estimate, candidate: &Estimate, ratio: f64, extra: Option<f64>) -> Detectability {
    let rel = |e: &Estimate| standard_error(e) / e.mean;
    let mut terms = vec![
        (rel(candidate), candidate.n.saturating_sub(1) as f64),
        (rel(baseline), baseline.n.saturating_sub(1) as f64),
    ];
    terms.extend(extra.map(|e| (e, 1e6)));
    let (rel_se, df) = combine(&terms);
    Detectability::new(100.0 * rel_se * ratio, df, NoiseBasis::WithinRun)
}

/// The change of ratio `ratio` with noise `detect`, as a [`Change`] with its verdict: a
/// regression when it exceeds the threshold and its one-sided lower bound (1 − α) is above
/// zero; an improvement when its upper bound is below zero; the interval shown is the
/// two-sided 95 % one.
pub(super) fn judge(
    id: &str,
    baseline: &Estimate,
    candidate: &Estimate,
    ratio: f64,
    detect: Detectability,
    threshold_pct: f64,
) -> Result<Change> {
    let change = (ratio - 1.0) * 100.0;
    let half = student_t_quantile(0.975, detect.degrees_of_freedom) * detect.standard_error_pct;
    let (low, high) = ((change - half).max(-100.0), change + half);
    if !(change.is_finite() && low.is_finite() && high.is_finite() && ratio > 0.0) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}`: the change from {:.4e} J (± {:.4e}) to {:.4e} J (± {:.4e}) is not a finite positive ratio: one of the figures is corrupt; nothing is compared",
                echo(id),
                baseline.mean,
                0.5 * baseline.ci_high - 0.5 * baseline.ci_low,
                candidate.mean,
                0.5 * candidate.ci_high - 0.5 * candidate.ci_low
            ),
        ));
    }
    let verdict = verdict_of(&detect, change, change, threshold_pct);
    Ok(Change {
        id: id.to_string(),
        baseline_j: *baseline,
        candidate_j: *candidate,
        change_pct: change,
        change_low_pct: low,
        change_high_pct: high,
        verdict,
        temperature_c: (None, None),
        temperature_note: None,
        detectability: detect,
        normalized: false,
        figure_note: None,
    })
}
