//! A candidate compared with several saved runs of the baseline code: the noise from the
//! spread between runs ([`compare_with_baselines`]).

use super::change::{judge, standard_error};
use super::thermal::normalized_pair;
use super::{check_comparable_figure, compare, Comparison, Figure, ResultSet};
use energy_results::detect::{Detectability, NoiseBasis};
use energy_results::Estimate;
use energy_results::ResultFile;
use energy_results::RunManifest;
use energy_results::{Error, ErrorKind, Result};

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
    Ok(Comparison { threshold_pct, rule: None, changes, added, removed, drift: None })
}
