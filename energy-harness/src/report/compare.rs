//! Result sets (`target/energy/<run>/*.json`) and their comparison: what `cargo energy
//! report` tabulates and `cargo energy compare` gates CI on.
//!
//! The rule for a regression: a benchmark's energy per launch rose by more than the
//! threshold (the estimate of the change exceeds it) **and** the rise is statistically
//! significant: one-sided at 1 % false alarms ([`super::detect`]), given the noise the
//! comparison has. The noise comes from both runs' intervals (independent measurements; a
//! ratio by the delta method), or, with several saved runs of the baseline, from their
//! spread ([`compare_with_baselines`]), which holds the between-run drift the within-run
//! intervals do not. Every change states the smallest change it could have detected.
//! When both runs carry the energy at the reference temperature (a thermally calibrated
//! board, [`crate::engine::thermal`]), that figure is compared, and the change says so.
//! Improvements and changes that are not significant are reported, never failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::detect::{combine, student_t_quantile, Detectability, NoiseBasis};
use super::run::{PartialRun, RunManifest, RunPin};
use super::ResultFile;
use crate::engine::result::ThermalNormalized;
use crate::engine::stats::{student_t_975, Estimate};
use crate::engine::thermal::{extrapolation_note, validate_normalized};
use crate::error::{echo, Error, ErrorKind, Result};

/// The results of one run, by benchmark id.
#[derive(Clone, Debug)]
pub struct ResultSet {
    /// The directory they were read from.
    pub dir: PathBuf,
    /// The results, by id.
    pub results: BTreeMap<String, ResultFile>,
    /// The benchmarks the run did not run, by id, with why (its manifest's `not_run`).
    pub not_run: BTreeMap<String, String>,
}

impl ResultSet {
    /// Reads the results of the run in `dir`, after checking its manifest
    /// ([`RunManifest::check`]: complete, succeeded, exactly the files it lists). Errors
    /// (exit 2 material) on a missing directory (naming the runs that exist), a missing,
    /// incomplete or failed run, a stray or altered file, a corrupt result, a foreign
    /// schema, two results with one id, or no result at all.
    pub fn read_run(dir: &Path) -> Result<ResultSet> {
        ResultSet::read_run_pinned(dir, None)
    }

    /// [`ResultSet::read_run`], after checking that the run is the one `pin` names
    /// ([`RunManifest::check_pin`]) when given.
    pub fn read_run_pinned(dir: &Path, pin: Option<&RunPin>) -> Result<ResultSet> {
        ResultSet::read_run_pinned_or_empty(dir, pin)?.with_results()
    }

    /// The set, or the error for a run that holds no result (its benchmarks were filtered
    /// out, skipped, or run with `--test`), naming those it did not run.
    pub fn with_results(self) -> Result<ResultSet> {
        if self.results.is_empty() {
            let dir = &self.dir;
            let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "run `{}` in `{}` holds no energy results (its benchmarks were filtered out, skipped, or run with --test){}",
                    echo(&name),
                    dir.display(),
                    self.not_run_note("not run", self.not_run.keys().map(String::as_str))
                ),
            ));
        }
        Ok(self)
    }

    /// [`ResultSet::read_run_pinned`], except that a complete run with no result is read as
    /// an empty set: a GPU of `cargo energy run --gpus` that measured nothing (the other
    /// GPUs took every benchmark from the queue), read beside the others.
    pub fn read_run_pinned_or_empty(dir: &Path, pin: Option<&RunPin>) -> Result<ResultSet> {
        let manifest = ResultSet::pinned_manifest(dir, pin)?;
        let paths = manifest.check(dir)?;
        ResultSet::read_listed(dir, &manifest, paths)
    }

    /// The run's manifest, after checking that the run is the one `pin` names when given.
    fn pinned_manifest(dir: &Path, pin: Option<&RunPin>) -> Result<RunManifest> {
        let manifest = RunManifest::read_manifest(dir)?;
        if let Some(pin) = pin {
            manifest.check_pin(dir, pin)?;
        }
        Ok(manifest)
    }

    /// [`ResultSet::read_run_pinned_or_empty`], except that a partial run (bench targets
    /// that never finished: [`RunManifest::partial`]) is read too: the results its targets
    /// committed, each checked as in a complete run, and the [`PartialRun`] that says what
    /// never finished, for `report` to say so. A partial run that committed no result is
    /// refused ([`PartialRun::refusal`]), as are a failed run, a stray or altered file.
    pub fn read_run_pinned_or_partial(dir: &Path, pin: Option<&RunPin>) -> Result<(ResultSet, Option<PartialRun>)> {
        let manifest = ResultSet::pinned_manifest(dir, pin)?;
        let Some(partial) = manifest.partial(dir) else {
            let paths = manifest.check(dir)?;
            return Ok((ResultSet::read_listed(dir, &manifest, paths)?, None));
        };
        let paths = manifest.check_partial(dir)?;
        let set = ResultSet::read_listed(dir, &manifest, paths)?;
        if set.results.is_empty() {
            return Err(partial.refusal());
        }
        Ok((set, Some(partial)))
    }

    /// Reads the results at `paths` (those `manifest` lists, checked) and its `not_run`.
    fn read_listed(dir: &Path, manifest: &RunManifest, paths: Vec<PathBuf>) -> Result<ResultSet> {
        let mut results = BTreeMap::new();
        for path in paths {
            let result = ResultFile::read_json(&path)?;
            if let Some(previous) = results.insert(result.id.clone(), result) {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("two results for benchmark `{}` in `{}`", previous.id, dir.display()),
                ));
            }
        }
        let not_run = manifest.not_run().map(|n| (n.id.clone(), n.reason.clone())).collect();
        Ok(ResultSet { dir: dir.to_path_buf(), results, not_run })
    }

    /// `; HEAD: ID (why), …` for those of `ids` this run did not run; empty when none.
    fn not_run_note<'i>(&self, head: &str, ids: impl Iterator<Item = &'i str>) -> String {
        let listed: Vec<String> =
            ids.filter_map(|id| self.not_run.get(id).map(|why| format!("{} ({})", echo(id), echo(why)))).collect();
        if listed.is_empty() {
            String::new()
        } else {
            format!("; {head}: {}", listed.join(", "))
        }
    }

    /// Checks that every result of both sets comes from one kind of device: all simulated or
    /// all real, and one GPU (UUID).
    pub fn check_comparable(&self, other: &ResultSet) -> Result<()> {
        let all: Vec<(&Path, &ResultFile)> = self
            .results
            .values()
            .map(|r| (self.dir.as_path(), r))
            .chain(other.results.values().map(|r| (other.dir.as_path(), r)))
            .collect();
        let Some(&(first_dir, first)) = all.first() else { return Ok(()) };
        for (dir, r) in &all[1..] {
            if r.device.simulated != first.device.simulated {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "cannot compare simulated and measured results: `{}` in {} is {}, `{}` in {} is {}",
                        first.id,
                        first_dir.display(),
                        if first.device.simulated { "simulated" } else { "measured" },
                        r.id,
                        dir.display(),
                        if r.device.simulated { "simulated" } else { "measured" }
                    ),
                ));
            }
            if r.device.uuid != first.device.uuid {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "results come from different GPUs: {} ({}) and {} ({}); energy is only comparable on one GPU",
                        first.device.name, first.device.uuid, r.device.name, r.device.uuid
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The change of one benchmark between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
fn temperature_note(baseline_c: Option<f64>, candidate_c: Option<f64>) -> Option<String> {
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

/// What a change amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
}

fn standard_error(e: &Estimate) -> f64 {
    if e.n < 2 {
        return f64::INFINITY;
    }
    // Halved before subtracting: an interval of ±1e308 has a finite half-width.
    (0.5 * e.ci_high - 0.5 * e.ci_low) / student_t_975(e.n - 1)
}

/// The figure of each result that a comparison takes the relative change of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Energy per launch (`energy_j`): [`compare`], one GPU.
    Energy,
    /// Dynamic energy per launch above active idle (`dynamic_j`): [`compare_across_boards`].
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
fn within_run(baseline: &Estimate, candidate: &Estimate, ratio: f64, extra: Option<f64>) -> Detectability {
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
fn judge(
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

/// The comparison of two runs.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The threshold, percent.
    pub threshold_pct: f64,
    /// How results were paired when they come from different boards
    /// ([`compare_across_boards`]); `None` for one GPU.
    pub rule: Option<String>,
    /// Benchmarks in both runs.
    pub changes: Vec<Change>,
    /// Benchmarks only in the candidate.
    pub added: Vec<String>,
    /// Benchmarks only in the baseline: a failure unless each was removed on purpose
    /// ([`Comparison::check_missing`]).
    pub removed: Vec<String>,
}

impl Comparison {
    /// The benchmarks that regressed.
    pub fn regressions(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.verdict == Verdict::Regression).collect()
    }

    /// Refuses a candidate that lacks a benchmark of the baseline, unless it is among
    /// `removed_on_purpose`: a benchmark that vanished (its bench target crashed at start,
    /// the run was interrupted between two targets, a filter left it out) is not a pass.
    /// The error names what is missing, the bench targets of both runs (from their
    /// manifests) and the flag that declares a removal.
    pub fn check_missing(
        &self,
        baseline: &ResultSet,
        candidate: &ResultSet,
        removed_on_purpose: &[String],
    ) -> Result<()> {
        let missing: Vec<&str> =
            self.removed.iter().map(String::as_str).filter(|id| !removed_on_purpose.iter().any(|r| r == id)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        const SHOWN: usize = 10;
        let list = |ids: &[&str], sep: &str, each: &dyn Fn(&str) -> String| {
            let mut text = ids.iter().take(SHOWN).map(|id| each(id)).collect::<Vec<_>>().join(sep);
            if ids.len() > SHOWN {
                text.push_str(&format!(" … ({} more)", ids.len() - SHOWN));
            }
            text
        };
        let run_name = |set: &ResultSet| {
            set.dir.file_name().map_or_else(|| set.dir.display().to_string(), |n| n.to_string_lossy().into_owned())
        };
        let targets = |set: &ResultSet| {
            RunManifest::read_manifest(&set.dir).ok().map(|m| {
                let names: Vec<String> = m.targets.iter().map(|t| echo(&t.name)).collect();
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            })
        };
        let targets_note = match (targets(baseline), targets(candidate)) {
            (Some(b), Some(c)) => {
                format!(" (bench targets of `{}`: {b}; of `{}`: {c})", run_name(baseline), run_name(candidate))
            }
            _ => String::new(),
        };
        let not_run_note = candidate.not_run_note("not run there", missing.iter().copied());
        Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "run `{}` in `{}` lacks {} benchmark(s) of the baseline `{}`: {}{targets_note}{not_run_note}. A benchmark that vanished or was not run is not a pass: its bench target crashed at start, the run was interrupted between two bench targets, a filter left it out, or it needs a GPU this run did not have. Run every bench target again (on the baseline's kind of device); if a benchmark was removed on purpose, say so: {}",
                run_name(candidate),
                candidate.dir.display(),
                missing.len(),
                run_name(baseline),
                list(&missing, ", ", &|id| echo(id)),
                list(&missing, " ", &|id| format!("--removed '{}'", echo(id).replace('\'', "'\\''")))
            ),
        ))
    }
}

/// Compares two result sets (after [`ResultSet::check_comparable`]). Errors when they share
/// no benchmark.
pub fn compare(baseline: &ResultSet, candidate: &ResultSet, threshold_pct: f64) -> Result<Comparison> {
    baseline.check_comparable(candidate)?;
    pair(baseline, candidate, threshold_pct, Figure::Energy)
}

/// The changes of every benchmark in both sets, on `figure` (each result checked by
/// [`check_comparable_figure`], whatever the mode), and what is in one set only; an error
/// when they have none in common.
fn pair(baseline: &ResultSet, candidate: &ResultSet, threshold_pct: f64, figure: Figure) -> Result<Comparison> {
    let mut changes = Vec::new();
    let mut removed = Vec::new();
    for (id, base) in &baseline.results {
        match candidate.results.get(id) {
            Some(cand) => {
                check_comparable_figure(&baseline.dir, base, figure)?;
                check_comparable_figure(&candidate.dir, cand, figure)?;
                let normalized = match figure {
                    Figure::Energy => normalized_pair(base, cand),
                    Figure::Dynamic => None,
                };
                let mut c = match &normalized {
                    Some((b, c, _)) => normalized_change(id, b, c, threshold_pct)?,
                    None => change(id, figure.of(base), figure.of(cand), threshold_pct)?,
                };
                c.temperature_c = (base.mean_temperature_c(), cand.mean_temperature_c());
                match normalized {
                    Some((_, _, note)) => {
                        c.normalized = true;
                        c.figure_note = Some(note);
                    }
                    None => {
                        c.temperature_note = temperature_note(c.temperature_c.0, c.temperature_c.1);
                        if figure == Figure::Energy {
                            c.figure_note = raw_note(base, cand);
                        }
                    }
                }
                changes.push(c);
            }
            None => removed.push(id.clone()),
        }
    }
    let added: Vec<String> =
        candidate.results.keys().filter(|id| !baseline.results.contains_key(*id)).cloned().collect();
    if changes.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}` and `{}` have no benchmark in common: nothing to compare",
                baseline.dir.display(),
                candidate.dir.display()
            ),
        ));
    }
    Ok(Comparison { threshold_pct, rule: None, changes, added, removed })
}

/// Both results' energies at the reference temperature and what they rest on, when both
/// carry one from the same board's coefficient at the same reference and both are sound.
fn normalized_pair<'a>(
    base: &'a ResultFile,
    cand: &'a ResultFile,
) -> Option<(&'a ThermalNormalized, &'a ThermalNormalized, String)> {
    let (b, c) = (base.thermal.as_ref()?, cand.thermal.as_ref()?);
    let same = b.calibration_uuid == c.calibration_uuid
        && b.reference_c == c.reference_c
        && b.watts_per_c == c.watts_per_c
        && b.std_error_w_per_c == c.std_error_w_per_c
        && validate_normalized(b).is_ok()
        && validate_normalized(c).is_ok();
    same.then(|| {
        let mut note = format!(
            "energy at {:.0} °C (runs at {:.1} and {:.1} °C; {})",
            b.reference_c, b.mean_temperature_c, c.mean_temperature_c, b.origin
        );
        for (which, n) in [("baseline", b), ("candidate", c)] {
            if let Some(extra) = extrapolation_note(n) {
                note.push_str(&format!("; {which}: {extra}"));
            }
        }
        (b, c, note)
    })
}

/// Why two runs' energies at the reference temperature were not compared, when one has
/// it and the other does not, or they rest on different coefficients.
fn raw_note(base: &ResultFile, cand: &ResultFile) -> Option<String> {
    let missing = "has no energy at 50 °C (no thermal calibration of its GPU was found when it ran: `cargo energy calibrate --thermal` caches one under ENERGY_CALIBRATION_DIR, else ~/.cache/energy-harness/calibration; a CI runner must keep that folder)";
    match (&base.thermal, &cand.thermal) {
        (Some(_), None) => Some(format!("raw energy per launch: the candidate {missing}")),
        (None, Some(_)) => Some(format!("raw energy per launch: the baseline {missing}")),
        (Some(_), Some(_)) => Some(
            "raw energy per launch: the two runs' energies at 50 °C rest on different thermal calibrations".to_string(),
        ),
        (None, None) => None,
    }
}

/// The change between two normalized figures of one board: the windows' spread of each run
/// (Welch) and the coefficient's error once, through the runs' temperature difference (both
/// were moved with the same dP/dT, so its error shifts both alike but for that difference).
fn normalized_change(id: &str, b: &ThermalNormalized, c: &ThermalNormalized, threshold_pct: f64) -> Result<Change> {
    let (base, cand) = (&b.statistical_j, &c.statistical_j);
    let ratio = cand.mean / base.mean;
    let coefficient = b.std_error_w_per_c
        * ((c.mean_temperature_c - c.reference_c) * c.seconds_per_launch
            - (b.mean_temperature_c - b.reference_c) * b.seconds_per_launch)
            .abs()
        / base.mean;
    let detect = within_run(base, cand, ratio, Some(coefficient));
    judge(id, &b.energy_j, &c.energy_j, ratio, detect, threshold_pct)
}

/// Compares `candidate` with several saved runs of the baseline code (`baselines`, at least
/// two; CI artifacts of earlier runs of main, say): the baseline figure is their mean and
/// the noise is their spread ([`NoiseBasis::BetweenRuns`]): a run's figure scatters by
/// `s` between runs, so the change has a standard error of `s · √(1 + 1/k)` on `k − 1`
/// degrees of freedom. Temperature-normalized figures are used when every run has one from
/// the same coefficient. All runs must come from one GPU.
pub fn compare_with_baselines(
    baselines: &[ResultSet],
    candidate: &ResultSet,
    threshold_pct: f64,
) -> Result<Comparison> {
    let Some(first) = baselines.first() else {
        return Err(Error::new(ErrorKind::InvalidInput, "no baseline run to compare with"));
    };
    if baselines.len() == 1 {
        return compare(first, candidate, threshold_pct);
    }
    for other in baselines {
        other.check_comparable(candidate)?;
    }
    // The same run twice (a run given twice, or a copy of one) is no second observation.
    let run_id = |set: &ResultSet| RunManifest::read_manifest(&set.dir).ok().map(|m| m.run_id);
    for (i, a) in baselines.iter().enumerate() {
        for b in &baselines[i + 1..] {
            let same_run = run_id(a).is_some() && run_id(a) == run_id(b);
            if same_run || a.results == b.results {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "`{}` and `{}` are the same run ({}): the spread between runs needs separate runs of the baseline code; give each saved run once",
                        a.dir.display(),
                        b.dir.display(),
                        if same_run { "one run id" } else { "identical results" }
                    ),
                ));
            }
        }
    }
    let k = baselines.len();
    let mut changes = Vec::new();
    let mut removed = Vec::new();
    for (id, cand) in &candidate.results {
        check_comparable_figure(&candidate.dir, cand, Figure::Energy)?;
        let mut runs = Vec::new();
        for set in baselines {
            if let Some(r) = set.results.get(id) {
                check_comparable_figure(&set.dir, r, Figure::Energy)?;
                runs.push(r);
            }
        }
        if runs.len() < k {
            continue; // Not in every baseline: reported as new when in none, else skipped below.
        }
        let all_normalized = runs.iter().all(|r| normalized_pair(r, cand).is_some());
        let figure = |r: &ResultFile| {
            if all_normalized {
                r.thermal.as_ref().map_or(r.energy_j, |t| t.energy_j)
            } else {
                r.energy_j
            }
        };
        let values: Vec<f64> = runs.iter().map(|r| figure(r).mean).collect();
        let mean = values.iter().sum::<f64>() / k as f64;
        let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64).sqrt();
        let cand_figure = figure(cand);
        let ratio = cand_figure.mean / mean;
        // A run scatters by at least its own within-run error, whatever a few runs' spread
        // says (two nearly equal runs are no proof of a noiseless board): each term is
        // floored by the within-run error of what it describes.
        let within = |e: &Estimate| standard_error(e) / e.mean;
        let base_within = runs.iter().map(|r| within(&figure(r))).sum::<f64>() / k as f64;
        let sd_rel = sd / mean;
        let rel_se = (sd_rel.max(base_within).powi(2) / k as f64 + sd_rel.max(within(&cand_figure)).powi(2)).sqrt();
        let detect = Detectability::new(100.0 * rel_se * ratio, (k - 1) as f64, NoiseBasis::BetweenRuns);
        let base_estimate = Estimate::from_values(&values).unwrap_or(Estimate::exact(mean));
        let mut c = judge(id, &base_estimate, &cand_figure, ratio, detect, threshold_pct)?;
        c.temperature_c = (runs[0].mean_temperature_c(), cand.mean_temperature_c());
        if all_normalized {
            c.normalized = true;
            c.figure_note = normalized_pair(runs[0], cand).map(|(_, _, note)| format!("{note}; {k} baseline runs"));
        } else {
            c.figure_note = Some(format!("mean of {k} baseline runs"));
        }
        changes.push(c);
    }
    for id in first.results.keys() {
        if !candidate.results.contains_key(id) {
            removed.push(id.clone());
        }
    }
    let added: Vec<String> = candidate
        .results
        .keys()
        .filter(|id| !baselines.iter().all(|set| set.results.contains_key(*id)))
        .cloned()
        .collect();
    if changes.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}` has no benchmark in common with all {k} baseline runs: nothing to compare",
                candidate.dir.display()
            ),
        ));
    }
    Ok(Comparison { threshold_pct, rule: None, changes, added, removed })
}

/// The least threshold across boards of one model, percent: dynamic energy per
/// instruction differed by up to 12 % (median 5 %) between two H100s, and by 0.96-1.14
/// (median 1.016) between an H100 and an H200 (docs/results/instructions-h100.md), so a
/// smaller change between boards is not a change of the code.
pub const ACROSS_BOARDS_MIN_THRESHOLD_PCT: f64 = 15.0;

/// Compares runs made on different boards of one GPU model (CI runners that differ): the
/// stated rule is that only the **dynamic** energy per launch (above active idle) is
/// compared — static power differs from board to board (active idle 118 against 131 W on
/// two H100s) — and a regression must exceed `max(threshold_pct,`
/// [`ACROSS_BOARDS_MIN_THRESHOLD_PCT`]`)`. Results of different models (names), or
/// simulated against measured, are refused.
pub fn compare_across_boards(baseline: &ResultSet, candidate: &ResultSet, threshold_pct: f64) -> Result<Comparison> {
    let all: Vec<&ResultFile> = baseline.results.values().chain(candidate.results.values()).collect();
    let Some(&first) = all.first() else { return pair(baseline, candidate, threshold_pct, Figure::Dynamic) };
    for r in &all[1..] {
        if r.device.simulated != first.device.simulated {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("cannot compare simulated and measured results (`{}` and `{}`)", first.id, r.id),
            ));
        }
        if r.device.name != first.device.name {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "results come from different GPU models: {} and {}; across boards only one model compares",
                    first.device.name, r.device.name
                ),
            ));
        }
    }
    let threshold = threshold_pct.max(ACROSS_BOARDS_MIN_THRESHOLD_PCT);
    let boards = |set: &ResultSet| {
        let mut u: Vec<String> = set.results.values().map(|r| r.device.uuid.clone()).collect();
        u.sort();
        u.dedup();
        u.join(", ")
    };
    let rule = format!(
        "across boards of the {}: dynamic energy per launch compared (static power differs from board to board), \
         threshold {threshold:.1} % (at least {ACROSS_BOARDS_MIN_THRESHOLD_PCT:.0} %: the board-to-board spread); \
         baseline on {}, candidate on {}",
        first.device.name,
        boards(baseline),
        boards(candidate)
    );
    let mut comparison = pair(baseline, candidate, threshold, Figure::Dynamic)?;
    comparison.rule = Some(rule);
    Ok(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(mean: f64, half: f64) -> Estimate {
        Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: 10, std_dev: half }
    }

    #[test]
    fn verdicts_follow_the_rule() {
        let verdict = |b: Estimate, c: Estimate| change("a", &b, &c, 5.0).unwrap().verdict;
        assert_eq!(verdict(est(1.0, 0.002), est(1.10, 0.002)), Verdict::Regression);
        assert_eq!(verdict(est(1.0, 0.002), est(1.03, 0.002)), Verdict::WithinThreshold);
        assert_eq!(verdict(est(1.0, 0.002), est(0.95, 0.002)), Verdict::Improvement);
        assert_eq!(verdict(est(1.0, 0.05), est(1.06, 0.05)), Verdict::NotSignificant);
        let c = change("a", &est(1.0, 0.002), &est(1.10, 0.002), 5.0).unwrap();
        assert!((c.change_pct - 10.0).abs() < 1e-9);
        assert!(c.change_low_pct < 10.0 && c.change_high_pct > 10.0);
    }

    /// A result on board `uuid` with energy 1 J per launch and the dynamic energy given (set
    /// past the reader, which refuses some of the figures the comparisons must refuse too).
    fn result(uuid: &str, dynamic: Estimate) -> ResultFile {
        let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10, "std_dev": mean * 0.01});
        let text = serde_json::json!({
            "schema": "energy-result/1", "id": "k",
            "device": {"name": "H100", "uuid": uuid, "driver": null, "simulated": false},
            "energy_j": e(1.0), "dynamic_j": e(0.5), "time_s": e(1e-3), "power_w": e(1e3), "idle_w": 100.0,
            "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 100,
            "warnings": [], "timestamp": "2026-11-24T00:00:00Z"
        })
        .to_string();
        ResultFile { dynamic_j: dynamic, ..ResultFile::parse(&text, Path::new("k.json")).unwrap() }
    }

    fn set(dir: &str, r: ResultFile) -> ResultSet {
        ResultSet { dir: PathBuf::from(dir), results: BTreeMap::from([(r.id.clone(), r)]), not_run: Default::default() }
    }

    #[test]
    fn across_boards_refuses_what_it_cannot_compare() {
        let good = est(0.5, 0.005);
        let across = |b: Estimate, c: Estimate| {
            compare_across_boards(&set("main", result("GPU-a", b)), &set("new", result("GPU-b", c)), 5.0)
        };
        assert!(across(good, est(0.5, 0.005)).is_ok());
        // −1 mJ → 500 mJ was "−50100 % improvement"; 0 → 500 mJ "+inf %".
        for (b, c, needle) in [
            (est(-1e-3, 1e-5), good, "dynamic_j: mean -0.001 is not positive"),
            (Estimate { mean: 0.0, ci_low: 0.0, ci_high: 0.0, n: 10, std_dev: 0.0 }, good, "mean 0 is not positive"),
            (good, est(-0.2, 0.001), "mean -0.2 is not positive"),
            // An interval to 1e308 around 0.5 J was "+200 % [−inf, +inf]".
            (good, Estimate { mean: 0.5, ci_low: -1e308, ci_high: 1e308, n: 10, std_dev: 0.01 }, "beyond any GPU"),
            (good, Estimate { std_dev: 1e300, ..good }, "wider than"),
        ] {
            let err = across(b, c).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(err.message().contains(needle), "{needle}: {err}");
            assert!(err.message().contains("without --across-boards"), "{err}");
        }
    }

    #[test]
    fn changes_that_overflow_are_refused_in_every_mode() {
        // Both figures valid on their own, their ratio not a number: refused, never +inf %.
        let huge = Estimate { mean: 1e300, ci_low: 0.99e300, ci_high: 1.01e300, n: 10, std_dev: 1e298 };
        let tiny = est(1e-10, 1e-12);
        let err = change("k", &tiny, &huge, 5.0).unwrap_err();
        assert!(err.message().contains("is not a finite positive ratio"), "{err}");
        // The widest finite interval near f64::MAX: its width overflowed to ±inf % before.
        let widest = Estimate { mean: 1e308, ci_low: -f64::MAX, ci_high: f64::MAX, n: 10, std_dev: 1e306 };
        let c = change("k", &widest, &widest, 5.0).unwrap();
        assert!(c.change_high_pct.is_finite() && c.change_low_pct == -100.0, "{c:?}");
        // A dynamic energy above the total is refused on read.
        let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10});
        let mut v = serde_json::to_value(result("GPU-a", est(0.5, 0.005))).unwrap();
        v["dynamic_j"] = e(1.5);
        let err = ResultFile::parse(&v.to_string(), Path::new("k.json")).unwrap_err();
        assert!(err.message().contains("is above the total energy 1"), "{err}");
    }

    #[test]
    fn plain_and_across_boards_share_one_check() {
        // The same broken energy figure (built in memory, past the reader) is refused by both.
        let mut bad = result("GPU-a", est(0.5, 0.005));
        bad.energy_j = Estimate { mean: -1.0, ci_low: -1.1, ci_high: -0.9, n: 10, std_dev: 0.1 };
        let good = result("GPU-a", est(0.5, 0.005));
        let plain = compare(&set("main", bad.clone()), &set("new", good.clone()), 5.0).unwrap_err();
        let across = compare_across_boards(&set("main", bad), &set("new", good), 5.0).unwrap_err();
        for err in [plain, across] {
            assert!(err.message().contains("`k` energy_j: mean -1 is not positive"), "{err}");
        }
        let empty = ResultSet { dir: PathBuf::from("e"), results: BTreeMap::new(), not_run: Default::default() };
        assert!(compare_across_boards(&empty, &empty, 5.0).unwrap_err().message().contains("no benchmark in common"));
    }

    #[test]
    fn a_temperature_gap_is_pointed_out() {
        assert!(temperature_note(Some(42.0), Some(44.0)).is_none());
        let note = temperature_note(Some(42.0), Some(49.0)).unwrap();
        assert!(note.contains("7 °C warmer") && note.contains("2.1-3.9 %"), "{note}");
        assert!(temperature_note(Some(50.0), Some(45.0)).unwrap().contains("cooler"));
        assert!(temperature_note(None, Some(45.0)).is_none());
    }
}
