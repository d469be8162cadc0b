//! Issue 43's GPU runs, read back: library work measured by the harness against its
//! independent reference (interleaved ref / harness / ref), the boundary's uncovered time per
//! window, and the stream benchmarks before and after the change. [`table`] regenerates a run
//! folder's `table.md` from its raw files (`ref-*.json`, the benchmarks' result files under
//! `t-*/energy/new/`, `gpu.csv`); `tests/library_work_page.rs` checks the committed pages.
//!
//! Layout of a run folder (what `research/results/2026-11-27-library-work/run*.sh` leaves):
//! - `ref-<tag>-<cycle>-a.json`, `ref-<tag>-<cycle>-b.json`: the reference before and after
//!   the harness's process of cycle `<cycle>` (`<tag>`: `20us`, `2ms`, `candle`, `wgpu`,
//!   `burn`); from run 8 on, references that wait every 150 ms are named
//!   `ref-<tag>-150ms-<cycle>-a.json` (run 8's candle: `ref-150ms-<cycle>-a.json`);
//! - `t-<process>-<cycle>/energy/new/<benchmark>_energy.json`: the harness's results;
//! - `t-sizes-old-<cycle>/…`, `t-sizes-new-<cycle>/…`: the stream benchmarks before and after.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use energy_harness::{Error, ErrorKind, Result, ResultFile};
use serde::Deserialize;

/// The reference's figures (`examples/library_reference.rs`, the candle crate's
/// `src/bin/reference.rs`).
#[derive(Clone, Debug, Deserialize)]
pub struct Reference {
    /// Energy per call, J.
    pub energy_per_call_j: f64,
    /// Energy per call above active idle, J.
    pub dynamic_per_call_j: f64,
    /// Time per call, s.
    pub time_per_call_s: f64,
    /// Uncovered host time per ~150 ms window closed by a context-wide synchronize, s
    /// (absent in the first run's and the candle reference's files).
    #[serde(default)]
    pub boundary_uncovered_s: Vec<f64>,
    /// How often the calls were waited for, ms (`--sync-ms`; absent before run 8: about
    /// every 50 ms).
    #[serde(default)]
    pub sync_ms: Option<f64>,
}

impl Reference {
    /// How often its calls were waited for, in words.
    fn cadence(&self) -> String {
        match self.sync_ms {
            Some(ms) => format!("{ms:.0} ms"),
            None => "~50 ms".into(),
        }
    }
}

/// Which reference a benchmark is compared with.
fn reference_tag(benchmark: &str) -> Option<&'static str> {
    match benchmark {
        "own_stream_20us" | "own_stream_20us_wait" | "harness_stream_20us" => Some("20us"),
        "own_stream_2ms" | "harness_stream_2ms" => Some("2ms"),
        "candle_matmul" | "candle_matmul_wait" => Some("candle"),
        "wgpu_fma" => Some("wgpu"),
        "burn_matmul" => Some("burn"),
        _ => None,
    }
}

fn read_reference(path: &Path) -> Result<Reference> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the reference", e))?;
    serde_json::from_str(&text).map_err(|e| Error::format(path, e.line(), e))
}

fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, "list the run folder", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    out.sort();
    Ok(out)
}

/// The harness's results of a run folder: (process folder, cycle) → benchmark → result.
fn results(dir: &Path) -> Result<BTreeMap<(String, u32), BTreeMap<String, ResultFile>>> {
    let mut out = BTreeMap::new();
    for folder in files(dir)? {
        let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(process) = name.strip_prefix("t-") else { continue };
        let Some((kind, cycle)) = process.rsplit_once('-') else { continue };
        let Ok(cycle) = cycle.parse::<u32>() else { continue };
        let new = folder.join("energy").join("new");
        if !new.is_dir() {
            continue;
        }
        let mut by_name = BTreeMap::new();
        for file in files(&new)? {
            let file_name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            let Some(benchmark) = file_name.strip_suffix("_energy.json") else { continue };
            by_name.insert(benchmark.to_string(), ResultFile::read_json(&file)?);
        }
        out.insert((kind.to_string(), cycle), by_name);
    }
    Ok(out)
}

fn pct(a: f64, b: f64) -> f64 {
    100.0 * (a / b - 1.0)
}

/// An interval of joules in mJ or J, as the summary prints it.
fn joules(e: &energy_harness::Estimate) -> String {
    let (scale, unit) = if e.mean.abs() < 1.0 { (1e3, "mJ") } else { (1.0, "J") };
    format!("{:.4} [{:.4}, {:.4}] {unit}", e.mean * scale, e.ci_low * scale, e.ci_high * scale)
}

/// The markdown tables of one run folder, regenerated from its raw files.
pub fn table(dir: &Path) -> Result<String> {
    let results = results(dir)?;
    let mut md = String::new();
    let gpu = std::fs::read_to_string(dir.join("gpu.csv")).map_err(|e| Error::io(&dir.join("gpu.csv"), "read", e))?;
    let board = gpu.lines().nth(1).unwrap_or_default();
    let _ = writeln!(md, "Board (nvidia-smi before the run): {board}\n");
    let _ = writeln!(
        md,
        "| process | benchmark | time per call | harness energy per call | reference waits every | reference (before, after) | Δ energy | harness dynamic per call | reference dynamic | Δ dynamic |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
    let mut rows = 0;
    for ((process, cycle), by_name) in &results {
        if process.starts_with("sizes") || process == "unwaited" {
            continue;
        }
        for (benchmark, r) in by_name {
            let Some(tag) = reference_tag(benchmark) else { continue };
            let named = |side: &str| {
                [
                    format!("ref-{tag}-{cycle}-{side}.json"),
                    format!("ref-{tag}-150ms-{cycle}-{side}.json"),
                    format!("ref-150ms-{cycle}-{side}.json"),
                ]
                .into_iter()
                .map(|name| dir.join(name))
                .find(|path| path.is_file())
            };
            let (Some(before), Some(after)) = (named("a"), named("b")) else { continue };
            let (a, b) = (read_reference(&before)?, read_reference(&after)?);
            let ref_e = 0.5 * (a.energy_per_call_j + b.energy_per_call_j);
            let ref_d = 0.5 * (a.dynamic_per_call_j + b.dynamic_per_call_j);
            let scale = if ref_e < 1.0 { (1e3, "mJ") } else { (1.0, "J") };
            let _ = writeln!(
                md,
                "| {process}-{cycle} | {benchmark} | {:.2} µs ({}) | {} | {} | {:.4}, {:.4} {u} | {:+.2} % | {} | {:.4} {u} | {:+.2} % |",
                r.time_s.mean * 1e6,
                match r.time_basis {
                    energy_results::measured::TimeBasis::HostClock => "host",
                    _ => "events",
                },
                joules(&r.energy_j),
                a.cadence(),
                a.energy_per_call_j * scale.0,
                b.energy_per_call_j * scale.0,
                pct(r.energy_j.mean, ref_e),
                joules(&r.dynamic_j),
                ref_d * scale.0,
                pct(r.dynamic_j.mean, ref_d),
                u = scale.1,
            );
            rows += 1;
        }
    }
    if rows == 0 {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{}: no benchmark result with its references before and after", dir.display()),
        ));
    }
    let mut boundary: Vec<(String, Vec<f64>)> = Vec::new();
    let mut cadences: Vec<(String, Reference)> = Vec::new();
    for file in files(dir)? {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if name.starts_with("ref-") && name.ends_with(".json") {
            let r = read_reference(&file)?;
            if !r.boundary_uncovered_s.is_empty() {
                boundary.push((name.clone(), r.boundary_uncovered_s.clone()));
            }
            cadences.push((name, r));
        }
    }
    if cadences.iter().any(|(_, r)| r.sync_ms.is_some()) {
        let _ = writeln!(
            md,
            "\nEach reference run (by name; `0` ran before the cycles, `3` after them), with how often it waited for its calls (the harness waits once per ~150 ms window):\n"
        );
        let _ = writeln!(md, "| reference run | waits every | time per call | energy per call | dynamic per call |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        for (name, r) in &cadences {
            let _ = writeln!(
                md,
                "| {name} | {} | {:.2} µs | {:.4} J | {:.4} J |",
                r.cadence(),
                r.time_per_call_s * 1e6,
                r.energy_per_call_j,
                r.dynamic_per_call_j
            );
        }
    }
    if !boundary.is_empty() {
        let _ = writeln!(
            md,
            "\nThe boundary: host time per ~150 ms window of calls closed by a context-wide synchronize, less the GPU's own span of the calls (CUDA events around them), 20 windows per reference run:\n"
        );
        let _ = writeln!(md, "| reference run | median | largest | share of a 150 ms window (median) |");
        let _ = writeln!(md, "|---|---|---|---|");
        for (name, mut v) in boundary {
            v.sort_by(f64::total_cmp);
            let median = v[v.len() / 2];
            let _ = writeln!(
                md,
                "| {name} | {:.1} µs | {:.1} µs | {:.3} % |",
                median * 1e6,
                v[v.len() - 1] * 1e6,
                100.0 * median / 0.15
            );
        }
    }
    let sizes: Vec<_> = results.iter().filter(|((p, _), _)| p.starts_with("sizes")).collect();
    if !sizes.is_empty() {
        let _ = writeln!(
            md,
            "\nStream benchmarks (the FMA loop on the harness's stream) before the change (`sizes-old`, 3dfadc4) and after (`sizes-new`), interleaved:\n"
        );
        let _ = writeln!(md, "| process | benchmark | energy per launch | dynamic per launch |");
        let _ = writeln!(md, "|---|---|---|---|");
        for ((process, cycle), by_name) in sizes {
            for (benchmark, r) in by_name {
                let _ = writeln!(
                    md,
                    "| {process}-{cycle} | {benchmark} | {} | {} |",
                    joules(&r.energy_j),
                    joules(&r.dynamic_j)
                );
            }
        }
    }
    Ok(md)
}
