//! The experiment's runs read back: one call's `runs.tsv` and results ([`read_call`]), the
//! first pairs of its cold `cargo energy ab` invocations, and the outcomes of its `ab`
//! reports ([`read_ab_reports`]).

use std::path::{Path, PathBuf};

use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_results::ab::{AbReport, RunFigures, Side};

use super::modes::{Mode, Outcome};
use super::COLD_IDLE_S;

/// One process of the experiment (a line of runs.tsv) and its result.
#[derive(Clone, Debug)]
pub struct Run {
    /// The call it belongs to (b1c1, …).
    pub tag: String,
    /// Its number in the call.
    pub n: u32,
    /// Cycle (or `calib`, `coldhot`, `zN` for Zeus trials).
    pub cycle: String,
    /// Block within the call.
    pub block: String,
    /// Knob level: 0, 1 or 2 (% more iterations for B).
    pub level: usize,
    /// A (fma0), B (`fma<level>`), K (calibration kernel), V (cold→hot check, fma0).
    pub role: char,
    /// Pair within the block (1-4), 0 outside blocks.
    pub pair: u32,
    /// Whether its block started right after a cool-down (or `zeus` for Zeus trials).
    pub cold: String,
    /// Start and end, ns since the epoch.
    pub start_ns: u128,
    /// End, ns since the epoch.
    pub end_ns: u128,
    /// Its result, when the process succeeded.
    pub result: Option<ResultFile>,
    /// Idle since the previous process of its call ended, s (infinite for a call's first).
    pub idle_before_s: f64,
}

impl Run {
    /// Wall time of the process, s.
    pub fn wall_s(&self) -> f64 {
        (self.end_ns.saturating_sub(self.start_ns)) as f64 * 1e-9
    }
}

/// Reads one unpacked call directory (runs.tsv and res/NNNN.json).
pub fn read_call(dir: &Path) -> Result<Vec<Run>> {
    let tsv = dir.join("runs.tsv");
    let text = std::fs::read_to_string(&tsv).map_err(|e| Error::io(&tsv, "read the runs", e))?;
    let bad = |line: usize, what: &str| Error::new(ErrorKind::Format, format!("{}:{line}: {what}", tsv.display()));
    let mut runs: Vec<Run> = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 12 {
            return Err(bad(i + 1, "expected 12 tab-separated fields"));
        }
        let num = |k: usize| f[k].parse::<u128>().map_err(|_| bad(i + 1, &format!("field {} is not a number", k + 1)));
        let n = num(0)? as u32;
        let exit = f[11].parse::<i32>().map_err(|_| bad(i + 1, "bad exit status"))?;
        let path = dir.join("res").join(format!("{n:04}.json"));
        let result = if exit == 0 && path.exists() { Some(ResultFile::read_json(&path)?) } else { None };
        let start_ns = num(8)?;
        let idle_before_s = runs.last().map_or(f64::INFINITY, |p| start_ns.saturating_sub(p.end_ns) as f64 * 1e-9);
        runs.push(Run {
            idle_before_s,
            tag: f[1].to_string(),
            n,
            cycle: f[2].to_string(),
            block: f[3].to_string(),
            level: num(4)? as usize,
            role: f[5].chars().next().ok_or_else(|| bad(i + 1, "no role"))?,
            pair: num(6)? as u32,
            cold: f[7].to_string(),
            start_ns,
            end_ns: num(9)?,
            result,
        });
    }
    // The call's tag: its runs' (exp.sh writes it on every line), else the folder's name.
    let tag = runs
        .first()
        .map(|r| r.tag.clone())
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    runs.extend(read_ab_first_pairs(dir, &tag)?);
    Ok(runs)
}

/// A run kept from a `cargo energy ab` invocation, checked against the figure its report
/// holds for it (so a file from another run is refused).
fn read_ab_run(path: &Path, figures: &RunFigures) -> Result<ResultFile> {
    let result = ResultFile::read_json(path)?;
    let held = figures.benchmarks.get(&result.id).map(|f| f.energy_j);
    if held.is_none_or(|e| (e - result.energy_j.mean).abs() > 1e-9 * e.abs().max(1e-12)) {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{}: its energy is not the one its `ab` report holds for run {}", path.display(), figures.run),
        ));
    }
    Ok(result)
}

/// The first pair (A then B) of each cold `cargo energy ab` invocation of a call
/// (`ab/<n>-cold-level<L>.run1.json` and `.run2.json` beside its `.ab.json`, kept by
/// `exp.sh`'s `coldab` mode): two runs after a 20 s cool-down, compared plainly and
/// normalized like any other cold pair. Their wall times are the processes' as `ab`
/// recorded them; each pair is a block of its own (number 100000 + the invocation).
fn read_ab_first_pairs(dir: &Path, tag: &str) -> Result<Vec<Run>> {
    let ab = dir.join("ab");
    let mut runs = Vec::new();
    for first in ab_files(dir, ".run1.json") {
        let stem = first.file_name().map(|n| n.to_string_lossy().replace(".run1.json", "")).unwrap_or_default();
        let bad = |what: &str| Error::new(ErrorKind::Format, format!("{}: {what}", first.display()));
        let (invocation, level) = stem
            .split_once("-cold-level")
            .and_then(|(n, l)| Some((n.parse::<u32>().ok()?, l.parse::<usize>().ok()?)))
            .ok_or_else(|| bad("expected <n>-cold-level<L>.run1.json"))?;
        let second = ab.join(format!("{stem}.run2.json"));
        let report_path = ab.join(format!("{stem}.ab.json"));
        if !second.exists() || !report_path.exists() {
            return Err(bad("its .run2.json or .ab.json is missing"));
        }
        let report = read_ab_report(&report_path)?;
        let [r1, r2, ..] = report.runs.as_slice() else { return Err(bad("its report holds fewer than two runs")) };
        if r1.side != Side::A || r2.side != Side::B {
            return Err(bad("its report's first two runs are not A then B"));
        }
        let ns = |s: f64| (s * 1e9).round() as u128;
        for (k, (path, figures, role)) in [(&first, r1, 'A'), (&second, r2, 'B')].into_iter().enumerate() {
            runs.push(Run {
                tag: tag.to_string(),
                n: 100_000 + 2 * invocation + k as u32,
                cycle: format!("ab{invocation}"),
                block: (100_000 + invocation).to_string(),
                level: if role == 'A' { 0 } else { level },
                role,
                pair: 1,
                cold: "1".into(),
                start_ns: ns(figures.started_s),
                end_ns: ns(figures.started_s + figures.wall_s),
                // The cool-down before the invocation; B follows A at once.
                idle_before_s: if role == 'A' { COLD_IDLE_S } else { 0.0 },
                result: Some(read_ab_run(path, figures)?),
            });
        }
    }
    Ok(runs)
}

/// The files of a call's `ab/` folder whose names end with `suffix`, in name order (none
/// when the call has no such folder).
fn ab_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("ab")) else { return Vec::new() };
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(suffix)).collect();
    files.sort();
    files
}

/// An `ab.json` read back (`AbReport::parse`: every change recomputed from the runs'
/// figures), its errors naming the file.
fn read_ab_report(path: &Path) -> Result<AbReport> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read", e))?;
    AbReport::parse(&text).map_err(|e| Error::new(e.kind(), format!("{}: {}", path.display(), e.message())))
}

/// The outcomes of the `cargo energy ab` invocations of one call: `ab/<n>-level<L>.ab.json`
/// under `dir` (their figures recomputed from each run's, as `AbReport::parse` does).
pub fn read_ab_reports(dir: &Path) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    for path in ab_files(dir, ".ab.json") {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let level = name
            .split("-level")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .and_then(|l| l.parse::<usize>().ok())
            .ok_or_else(|| Error::new(ErrorKind::Format, format!("{}: no level in the name", path.display())))?;
        let report = read_ab_report(&path)?;
        for change in &report.changes {
            outcomes.push(Outcome {
                mode: Mode::AbCommand,
                level,
                // Back to back (`ab` mode) each starts on the board the last one warmed; in
                // `cold` mode (`-cold-` in the name) each follows a fixed cool-down.
                cold: name.contains("-cold-"),
                board: report.device.uuid.clone(),
                change_pct: change.change_pct,
                verdict: change.verdict,
                detectable_pct: change.detectability.detectable_change_pct,
                wall_s: report.wall_s,
                pairs: change.pairs.len(),
            });
        }
    }
    Ok(outcomes)
}

/// Reads every call directory under `dir` (each holding runs.tsv) in name order.
pub fn read_calls(dir: &Path) -> Result<Vec<Run>> {
    let mut calls: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, "list the calls", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("runs.tsv").exists())
        .collect();
    calls.sort();
    let mut runs = Vec::new();
    for call in calls {
        runs.extend(read_call(&call)?);
    }
    Ok(runs)
}
