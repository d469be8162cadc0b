//! `cargo energy history`: saved runs across commits. Finds every run (a directory holding
//! `run.json`) under the directories given (run directories, or folders of downloaded CI
//! artifacts that hold them, at any depth), reads each as `report` does (complete,
//! succeeded, unchanged), orders them by commit time when their results know it, else by
//! the run's start, and gathers each benchmark's energy per launch run after run: one
//! series per GPU (UUID), never joined across boards, each point marked a regression when
//! its change from the series' previous point is one by `compare`'s own rule
//! ([`super::compare::change`]). [`render`] draws and writes it.

pub mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::compare::{change, check_comparable_figure, Change, Figure, ResultSet};
use super::natural::sort_natural;
use energy_results::detect::Verdict;
use energy_results::echo;
use energy_results::Estimate;
use energy_results::{Error, ErrorKind, Result};
use energy_results::{Provenance, TemperatureRange};
use energy_results::{RunManifest, MANIFEST_FILE};

/// How deep below a given directory runs are looked for.
pub const MAX_DEPTH: usize = 12;

/// One run of the history.
#[derive(Clone, Debug)]
pub struct HistoryRun {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest's start (RFC 3339).
    pub started: String,
    /// The provenance its results recorded (the first result's, in natural order of ids);
    /// `None` for results of older versions.
    pub provenance: Option<Provenance>,
    /// The label on the x axis: the short commit (`*` when dirty), else the directory's
    /// name.
    pub label: String,
    /// Its results.
    pub results: ResultSet,
}

impl HistoryRun {
    /// Seconds since the Unix epoch the run is ordered by: its commit's time when known,
    /// else its start.
    pub fn order_time(&self) -> Option<f64> {
        let commit = self.provenance.as_ref().and_then(|p| p.commit_time_unix).map(|t| t as f64);
        commit.or_else(|| {
            humantime::parse_rfc3339_weak(&self.started)
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64())
        })
    }
}

/// One benchmark's point in one run.
#[derive(Clone, Debug)]
pub struct HistoryPoint {
    /// The run (an index into [`History::runs`]).
    pub run: usize,
    /// Energy per launch, J.
    pub energy_j: Estimate,
    /// The windows' temperature range, when recorded.
    pub temperature_c: Option<TemperatureRange>,
    /// The change from the series' previous point (none for the first).
    pub change: Option<Change>,
}

impl HistoryPoint {
    /// Whether the change from the previous point is a regression.
    pub fn is_regression(&self) -> bool {
        self.change.as_ref().is_some_and(|c| c.verdict == Verdict::Regression)
    }
}

/// One benchmark on one GPU, run after run.
#[derive(Clone, Debug)]
pub struct GpuSeries {
    /// The GPU's name.
    pub gpu_name: String,
    /// Its UUID.
    pub uuid: String,
    /// The points, in run order.
    pub points: Vec<HistoryPoint>,
}

/// One benchmark across the runs.
#[derive(Clone, Debug)]
pub struct BenchHistory {
    /// Benchmark id.
    pub id: String,
    /// One series per GPU, in the order the GPUs first appear.
    pub series: Vec<GpuSeries>,
}

/// Every run found and every benchmark across them.
#[derive(Clone, Debug)]
pub struct History {
    /// The runs, oldest first.
    pub runs: Vec<HistoryRun>,
    /// The benchmarks, in natural order of their ids.
    pub benchmarks: Vec<BenchHistory>,
    /// Whether the figures are simulated (all of them, or none: a mix is refused).
    pub simulated: bool,
    /// The regression threshold, percent.
    pub threshold_pct: f64,
}

/// The run directories under `dirs`: each given directory that holds `run.json`, and every
/// such directory below one (at most 12 levels deep, symbolic links not followed), each
/// once, sorted. A directory that does not exist is an error.
pub fn find_runs(dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = BTreeSet::new();
    for dir in dirs {
        if !dir.is_dir() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "`{}` is not a directory: give run directories (target/energy/main) or folders holding them (downloaded CI artifacts)",
                    dir.display()
                ),
            ));
        }
        walk(dir, 0, &mut found)?;
    }
    Ok(found.into_iter().collect())
}

fn walk(dir: &Path, depth: usize, found: &mut BTreeSet<PathBuf>) -> Result<()> {
    if dir.join(MANIFEST_FILE).is_file() {
        found.insert(fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()));
        return Ok(()); // runs do not nest
    }
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, "list the directory", e))?;
    let mut subdirs: Vec<PathBuf> =
        entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect();
    subdirs.sort();
    for sub in subdirs {
        walk(&sub, depth + 1, found)?;
    }
    Ok(())
}

/// Reads every run under `dirs` ([`find_runs`]) and gathers the history, judging each
/// change against `threshold_pct`; with `gpu`, only the results of the GPU whose UUID starts
/// with it (case aside: `GPU-8e3995bd` names one board of several). Errors (exit 2
/// material): no run found, a run that cannot be read (incomplete, failed, altered, a
/// corrupt result: the file is named), simulated and measured runs together, or a `gpu`
/// no result was measured on (the GPUs found are named).
pub fn read_history(dirs: &[PathBuf], threshold_pct: f64, gpu: Option<&str>) -> Result<History> {
    let found = find_runs(dirs)?;
    if found.is_empty() {
        let given: Vec<String> = dirs.iter().map(|d| format!("`{}`", d.display())).collect();
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "no run found under {}: no directory there holds a {MANIFEST_FILE}. Give run directories (target/energy/main, saved with `cargo bench -- --save-baseline NAME`) or folders of downloaded CI artifacts that hold them",
                given.join(", ")
            ),
        ));
    }
    let mut runs = Vec::new();
    for dir in found {
        let hint = "history reads only complete runs: remove that directory from the ones given, or run `cargo bench` again to replace it";
        let manifest = RunManifest::read_manifest(&dir).map_err(|e| e.context(hint))?;
        let results = ResultSet::read_run(&dir).map_err(|e| e.context(hint))?;
        let mut ids: Vec<&String> = results.results.keys().collect();
        sort_natural(&mut ids, |id| id.as_str());
        let provenance = ids.iter().find_map(|id| results.results[*id].provenance.clone());
        let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
        let label = provenance.as_ref().and_then(Provenance::short_label).unwrap_or(name);
        runs.push(HistoryRun { dir, started: manifest.started, provenance, label, results });
    }
    check_one_kind(&runs)?;
    runs.sort_by(|a, b| {
        let (ta, tb) = (a.order_time().unwrap_or(f64::INFINITY), b.order_time().unwrap_or(f64::INFINITY));
        ta.total_cmp(&tb).then_with(|| a.started.cmp(&b.started)).then_with(|| a.dir.cmp(&b.dir))
    });
    let simulated = runs.first().and_then(|r| r.results.results.values().next()).is_some_and(|r| r.device.simulated);
    if let Some(gpu) = gpu {
        keep_gpu(&mut runs, gpu)?;
    }
    let benchmarks = gather(&runs, threshold_pct)?;
    Ok(History { runs, benchmarks, simulated, threshold_pct })
}

/// Keeps the results measured on the GPU whose UUID starts with `gpu` (case aside), and the
/// runs that hold one; an error naming the GPUs found when none matches.
fn keep_gpu(runs: &mut Vec<HistoryRun>, gpu: &str) -> Result<()> {
    let wanted = gpu.trim().to_ascii_lowercase();
    let matches = |uuid: &str| !wanted.is_empty() && uuid.to_ascii_lowercase().starts_with(&wanted);
    let mut found: BTreeSet<String> = BTreeSet::new();
    for run in runs.iter_mut() {
        for r in run.results.results.values() {
            found.insert(format!("{} {}", r.device.name, r.device.uuid));
        }
        run.results.results.retain(|_, r| matches(&r.device.uuid));
    }
    runs.retain(|run| !run.results.results.is_empty());
    if runs.is_empty() {
        let found: Vec<String> = found.iter().map(|g| echo(g)).collect();
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "--gpu {}: no result was measured on a GPU whose UUID starts with it; the runs hold: {}",
                echo(gpu),
                found.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Refuses simulated and measured results together, naming one file of each.
fn check_one_kind(runs: &[HistoryRun]) -> Result<()> {
    let all = runs.iter().flat_map(|run| run.results.results.values().map(move |r| (run, r)));
    let mut first: [Option<(&Path, &str)>; 2] = [None, None];
    for (run, r) in all {
        let slot = &mut first[usize::from(r.device.simulated)];
        if slot.is_none() {
            *slot = Some((run.dir.as_path(), r.id.as_str()));
        }
    }
    if let [Some((measured_dir, measured_id)), Some((sim_dir, sim_id))] = first {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "simulated and measured runs cannot share a history: `{}` in `{}` is measured, `{}` in `{}` is simulated; give the directories of one kind only",
                echo(measured_id),
                measured_dir.display(),
                echo(sim_id),
                sim_dir.display()
            ),
        ));
    }
    Ok(())
}

/// Each benchmark's series, one per GPU, with each point's change from the previous.
fn gather(runs: &[HistoryRun], threshold_pct: f64) -> Result<Vec<BenchHistory>> {
    let mut by_id: BTreeMap<&str, Vec<GpuSeries>> = BTreeMap::new();
    for (index, run) in runs.iter().enumerate() {
        for r in run.results.results.values() {
            let series = by_id.entry(r.id.as_str()).or_default();
            let position = match series.iter().position(|s| s.uuid == r.device.uuid) {
                Some(p) => p,
                None => {
                    series.push(GpuSeries {
                        gpu_name: r.device.name.clone(),
                        uuid: r.device.uuid.clone(),
                        points: Vec::new(),
                    });
                    series.len() - 1
                }
            };
            let s = &mut series[position];
            check_comparable_figure(&run.dir, r, Figure::Energy)?;
            let change = match s.points.last() {
                Some(previous) => Some(change(&r.id, &previous.energy_j, &r.energy_j, threshold_pct)?),
                None => None,
            };
            s.points.push(HistoryPoint {
                run: index,
                energy_j: r.energy_j,
                temperature_c: r.temperature_range_c,
                change,
            });
        }
    }
    let mut benchmarks: Vec<BenchHistory> =
        by_id.into_iter().map(|(id, series)| BenchHistory { id: id.to_string(), series }).collect();
    sort_natural(&mut benchmarks, |b| b.id.as_str());
    Ok(benchmarks)
}
