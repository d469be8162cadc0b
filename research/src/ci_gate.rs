//! Issue 58's pages: what `compare` says of unchanged code measured twice on one board, from
//! every same-board repeat stored under `research/results/` ([`stored_repeats_page`]).
//!
//! A repeat pair is two complete runs of the same benchmarks (the same ids) on the same GPU
//! (UUID), measured, from the same commit where the results record one, the earlier taken
//! as the baseline. Each pair is compared four ways: the within-run test alone
//! (`--within-run`, what `compare` did before), the default (one baseline: a rise the drift
//! between runs could explain is inconclusive), and with control benchmarks, each benchmark
//! judged with every other benchmark of the pair as a control (leave one out: the mean change
//! of the others is the drift, their spread the noise), unchanged and with its candidate
//! figure raised by 5 % and 10 % (is a real change still caught?).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use energy_harness::{Estimate, Result, ResultFile};
use energy_report::{compare_runs, compare_with_controls, DriftBasis, ResultSet};
use energy_results::archive::read_archived;
use energy_results::detect::Verdict;
use energy_results::run::RunManifest;
use energy_results::run::TargetStatus;

use kernel_energy::generated::Page;

mod edges;
mod gpu;
pub use edges::edge_windows_page;
pub use gpu::{gpu_gates_page, read_tgz};

/// The folder of issue 58's pages under `research/results/`.
pub const CI_GATE_DIR: &str = "2026-12-01-ci-gate";
/// The threshold every comparison of the stored pairs uses, percent (`compare`'s default).
pub const THRESHOLD_PCT: f64 = 5.0;

/// One stored run: where, when, and its results.
struct StoredRun {
    dir: PathBuf,
    started: String,
    set: ResultSet,
}

/// Every path under `dir` that `keep` takes, depth first in sorted order (a folder before
/// what it holds).
fn paths_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if keep(&path) {
            out.push(path.clone());
        }
        if path.is_dir() {
            paths_under(&path, keep, out);
        }
    }
}

/// Every directory with a run manifest under `dir`, sorted.
fn run_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    paths_under(dir, &|p| p.is_dir() && p.join("run.json").is_file(), out);
}

/// The run in `dir` when it is complete, measured on a GPU and its results readable (its
/// traces and plots may be absent: only the result files are compared).
fn read_stored(dir: &Path) -> Option<StoredRun> {
    let manifest = RunManifest::read_manifest(dir).ok()?;
    if manifest.partial(dir).is_some() || manifest.targets.iter().any(|t| t.status != TargetStatus::Succeeded) {
        return None;
    }
    let mut results = BTreeMap::new();
    for entry in manifest.results() {
        let path = dir.join(&entry.json);
        let bytes = read_archived(&path).ok()?;
        let result = ResultFile::parse(&String::from_utf8(bytes).ok()?, &path).ok()?;
        results.insert(result.id.clone(), result);
    }
    let first = results.values().next()?;
    if first.device.simulated || results.values().any(|r| r.device.uuid != first.device.uuid) {
        return None;
    }
    Some(StoredRun {
        dir: dir.to_path_buf(),
        started: manifest.started.clone(),
        set: ResultSet { dir: dir.to_path_buf(), results, not_run: BTreeMap::new() },
    })
}

/// The run's folder with its repeat marks dropped (`h100-board1-repeat` → `h100-board1`,
/// `t-candle-2` → `t-candle`): two runs are repeats of each other only where their folders
/// say so.
fn repeat_stem(results: &Path, dir: &Path) -> String {
    let relative = dir.strip_prefix(results).unwrap_or(dir);
    let parts: Vec<String> = relative
        .components()
        .map(|c| {
            let part = c.as_os_str().to_string_lossy();
            let part = part.strip_suffix("-repeat").unwrap_or(&part);
            match part.rsplit_once('-') {
                Some((stem, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => stem.to_string(),
                _ => part.to_string(),
            }
        })
        .collect();
    parts.join("/")
}

/// What identifies "the same code on the same board": the folder without its repeat marks,
/// the GPU, the benchmark ids and the commits the results record.
fn pair_key(results: &Path, run: &StoredRun) -> String {
    let first = run.set.results.values().next().expect("a run with results");
    let ids: Vec<&str> = run.set.results.keys().map(String::as_str).collect();
    let mut commits: Vec<String> = run
        .set
        .results
        .values()
        .map(|r| r.provenance.as_ref().and_then(|p| p.commit.clone()).unwrap_or_default())
        .collect();
    commits.sort();
    commits.dedup();
    format!("{}|{}|{}|{}", repeat_stem(results, &run.dir), first.device.uuid, ids.join(","), commits.join(","))
}

/// `set` with benchmark `id`'s energy figures scaled by `factor`.
fn scaled(set: &ResultSet, id: &str, factor: f64) -> ResultSet {
    let scale = |e: &mut Estimate| {
        e.mean *= factor;
        e.ci_low *= factor;
        e.ci_high *= factor;
        e.std_dev *= factor;
    };
    let mut out = set.clone();
    if let Some(r) = out.results.get_mut(id) {
        scale(&mut r.energy_j);
        if let Some(t) = r.thermal.as_mut() {
            scale(&mut t.energy_j);
            scale(&mut t.statistical_j);
        }
    }
    out
}

/// One pair's figures.
struct PairRow {
    baseline: String,
    candidate: String,
    gpu: String,
    minutes_apart: f64,
    benchmarks: usize,
    median_change_pct: f64,
    min_change_pct: f64,
    max_change_pct: f64,
    within_run_regressions: usize,
    default_regressions: usize,
    default_inconclusive: usize,
    /// With the others as controls (three benchmarks or more): false alarms, caught at +5 %
    /// and at +10 %.
    controls: Option<(usize, usize, usize)>,
}

fn minutes_between(a: &str, b: &str) -> f64 {
    let t = |s: &str| humantime::parse_rfc3339_weak(s).ok();
    match (t(a), t(b)) {
        (Some(a), Some(b)) => b.duration_since(a).map(|d| d.as_secs_f64() / 60.0).unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// The leave-one-out control comparison's verdict for `id`.
fn with_others_as_controls(base: &ResultSet, cand: &ResultSet, id: &str) -> Result<Verdict> {
    let controls: Vec<String> = base.results.keys().filter(|k| *k != id).cloned().collect();
    let c = compare_with_controls(base, cand, THRESHOLD_PCT, &controls)?;
    Ok(c.changes.iter().find(|c| c.id == id).map(|c| c.verdict).unwrap_or(Verdict::NotSignificant))
}

fn pair_row(results: &Path, base: &StoredRun, cand: &StoredRun) -> Result<PairRow> {
    let name = |r: &StoredRun| r.dir.strip_prefix(results).unwrap_or(&r.dir).display().to_string();
    let one = std::slice::from_ref(&base.set);
    let within = compare_runs(one, &cand.set, THRESHOLD_PCT, &DriftBasis::WithinRunOnly)?;
    let default = compare_runs(one, &cand.set, THRESHOLD_PCT, &DriftBasis::Unknown)?;
    let mut changes: Vec<f64> = within.changes.iter().map(|c| c.change_pct).collect();
    changes.sort_by(f64::total_cmp);
    let controls = if base.set.results.len() >= 3 {
        let (mut false_alarms, mut caught_5, mut caught_10) = (0, 0, 0);
        for id in base.set.results.keys() {
            let regressed = |cand: &ResultSet| -> Result<usize> {
                Ok(usize::from(with_others_as_controls(&base.set, cand, id)? == Verdict::Regression))
            };
            false_alarms += regressed(&cand.set)?;
            caught_5 += regressed(&scaled(&cand.set, id, 1.05))?;
            caught_10 += regressed(&scaled(&cand.set, id, 1.10))?;
        }
        Some((false_alarms, caught_5, caught_10))
    } else {
        None
    };
    let first = base.set.results.values().next().expect("results");
    Ok(PairRow {
        baseline: name(base),
        candidate: name(cand),
        gpu: format!("{} {}", first.device.name, &first.device.uuid[..first.device.uuid.len().min(12)]),
        minutes_apart: minutes_between(&base.started, &cand.started),
        benchmarks: changes.len(),
        median_change_pct: changes[changes.len() / 2],
        min_change_pct: changes[0],
        max_change_pct: changes[changes.len() - 1],
        within_run_regressions: within.regressions().len(),
        default_regressions: default.regressions().len(),
        default_inconclusive: default.inconclusive().len(),
        controls,
    })
}

/// `2026-12-01-ci-gate/stored-repeats.md`: every same-board repeat pair under `results`
/// through `compare`, before and after issue 58 (see the module's documentation).
pub fn stored_repeats_page(results: &Path) -> Result<Page> {
    let mut dirs = Vec::new();
    run_dirs(results, &mut dirs);
    let runs: Vec<StoredRun> = dirs.iter().filter_map(|d| read_stored(d)).collect();
    let mut groups: BTreeMap<String, Vec<&StoredRun>> = BTreeMap::new();
    for run in &runs {
        groups.entry(pair_key(results, run)).or_default().push(run);
    }
    let mut rows = Vec::new();
    for group in groups.values_mut() {
        group.sort_by(|a, b| a.started.cmp(&b.started));
        for two in group.windows(2) {
            rows.push(pair_row(results, two[0], two[1])?);
        }
    }
    rows.sort_by(|a, b| a.baseline.cmp(&b.baseline));
    let mut t = String::new();
    let _ = writeln!(t, "# Unchanged code measured twice on one board: what `compare` says (issue 58)\n");
    let _ = writeln!(
        t,
        "Generated by `energy_suites::ci_gate::stored_repeats_page` from the stored runs under `research/results/` \
         (`cargo run -p energy-suites --example republish`); measured figures, each on the board's own sensor. \
         {} complete measured runs were read; a **repeat pair** is two of them whose folders name them repeats \
         (`…-repeat`, `…-1` and `…-2`), with the same benchmarks, GPU (UUID) and recorded commit, the earlier as the \
         baseline. Threshold {THRESHOLD_PCT:.0} % (`compare`'s default).\n",
        runs.len()
    );
    let _ = writeln!(
        t,
        "- **within-run**: regressions by the within-run test alone (`compare --within-run`; `compare`'s default \
         before issue 58).\n- **default**: `compare` now, one baseline run: regressions / inconclusive rises (exit 3: \
         the drift between runs is unknown).\n- **controls**: each benchmark judged with every other benchmark of the \
         pair as a control (`--control`, leave one out): false alarms on the unchanged code, and how many of the \
         benchmarks are caught when their candidate figure alone is raised by 5 % and by 10 %.\n"
    );
    let _ = writeln!(
        t,
        "| baseline run | candidate run | GPU | apart | benchmarks | change: median [min, max] | within-run | default | controls: false alarms | caught +5 % | caught +10 % |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let (controls_false, caught_5, caught_10) = match r.controls {
            Some((f, c5, c10)) => {
                (f.to_string(), format!("{c5} of {}", r.benchmarks), format!("{c10} of {}", r.benchmarks))
            }
            None => ("— (needs 3 benchmarks)".into(), "—".into(), "—".into()),
        };
        let _ = writeln!(
            t,
            "| `{}` | `{}` | {} | {} | {} | {:+.2} % [{:+.2}, {:+.2}] | {} | {} / {} | {} | {} | {} |",
            r.baseline,
            r.candidate,
            r.gpu,
            if r.minutes_apart.is_finite() { format!("{:.0} min", r.minutes_apart) } else { "—".into() },
            r.benchmarks,
            r.median_change_pct,
            r.min_change_pct,
            r.max_change_pct,
            r.within_run_regressions,
            r.default_regressions,
            r.default_inconclusive,
            controls_false,
            caught_5,
            caught_10
        );
    }
    let sum = |f: &dyn Fn(&PairRow) -> usize| rows.iter().map(f).sum::<usize>();
    let n = sum(&|r| r.benchmarks);
    let with_controls: Vec<&PairRow> = rows.iter().filter(|r| r.controls.is_some()).collect();
    let nc: usize = with_controls.iter().map(|r| r.benchmarks).sum();
    let csum = |f: &dyn Fn((usize, usize, usize)) -> usize| {
        with_controls.iter().filter_map(|r| r.controls).map(f).sum::<usize>()
    };
    let _ = writeln!(
        t,
        "\n**All {} pairs, {n} benchmark comparisons of unchanged code:** within-run test {} regressions; the default \
         {} regressions and {} inconclusive. With the others as controls ({} pairs of three benchmarks or more, {nc} \
         comparisons): {} false alarms, {} of {nc} caught at +5 % and {} of {nc} at +10 %.",
        rows.len(),
        sum(&|r| r.within_run_regressions),
        sum(&|r| r.default_regressions),
        sum(&|r| r.default_inconclusive),
        with_controls.len(),
        csum(&|c| c.0),
        csum(&|c| c.1),
        csum(&|c| c.2)
    );
    Ok(Page { path: PathBuf::from(CI_GATE_DIR).join("stored-repeats.md"), text: t })
}

/// Every page of issue 58 regenerated from its raw data.
pub fn ci_gate_pages(results: &Path) -> Result<Vec<Page>> {
    Ok(vec![stored_repeats_page(results)?, gpu_gates_page(results)?, edge_windows_page(results)?])
}
