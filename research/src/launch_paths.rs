//! One kernel launched three ways in one process — PTX through the harness, CUDA C through
//! the harness (NVRTC), and a crate's own cudarc code on the harness's stream — in
//! interleaved rounds (`tests/user_crate/benches/interleaved.rs`): does the launch path
//! change what the harness measures? Each path's energy per launch is divided by the PTX
//! launch of its own round (rounds sit seconds apart, so the board's warming cancels), and
//! the mean ratio over the rounds gets a 95 % Student-t interval.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_results::stats::student_t_975;

/// The launch paths, the reference first.
pub const PATHS: [&str; 3] = ["ptx", "cuda_c", "cudarc"];

/// One path's ratios to PTX over the rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct PathRatio {
    /// `cuda_c` or `cudarc`.
    pub path: String,
    /// Energy per launch over PTX's, per round.
    pub energy: Vec<f64>,
    /// Dynamic energy per launch over PTX's, per round.
    pub dynamic: Vec<f64>,
    /// Time per launch over PTX's, per round.
    pub time: Vec<f64>,
}

/// Mean and 95 % half-width of `values`.
pub fn mean_ci(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, student_t_975(n - 1) * (var / n as f64).sqrt())
}

/// The results of the interleaved rounds in `dir` (`r<k>_<path>_energy.json`), by round and path.
pub fn read_rounds(dir: &Path) -> Result<BTreeMap<u32, BTreeMap<String, ResultFile>>> {
    let mut rounds: BTreeMap<u32, BTreeMap<String, ResultFile>> = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, "read the results folder", e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, "read the results folder", e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let Some(stem) = name.strip_suffix("_energy.json") else { continue };
        let Some((round, launch_path)) = stem.strip_prefix('r').and_then(|s| s.split_once('_')) else { continue };
        let Ok(round) = round.parse::<u32>() else { continue };
        if !PATHS.contains(&launch_path) {
            continue;
        }
        rounds.entry(round).or_default().insert(launch_path.to_string(), ResultFile::read_json(&path)?);
    }
    if rounds.is_empty() {
        return Err(Error::new(ErrorKind::InvalidInput, format!("no r<k>_<path>_energy.json in {}", dir.display())));
    }
    Ok(rounds)
}

/// Each non-PTX path's ratios; rounds missing a path are refused.
pub fn ratios(rounds: &BTreeMap<u32, BTreeMap<String, ResultFile>>) -> Result<Vec<PathRatio>> {
    let mut out: Vec<PathRatio> = PATHS[1..]
        .iter()
        .map(|p| PathRatio { path: p.to_string(), energy: vec![], dynamic: vec![], time: vec![] })
        .collect();
    for (round, by_path) in rounds {
        let get = |p: &str| {
            by_path
                .get(p)
                .ok_or_else(|| Error::new(ErrorKind::InvalidInput, format!("round {round} has no `{p}` result")))
        };
        let reference = get("ptx")?;
        for ratio in &mut out {
            let r = get(&ratio.path)?;
            ratio.energy.push(r.energy_j.mean / reference.energy_j.mean);
            ratio.dynamic.push(r.dynamic_j.mean / reference.dynamic_j.mean);
            ratio.time.push(r.time_s.mean / reference.time_s.mean);
        }
    }
    Ok(out)
}

/// The markdown table: per round each path's energy per launch, then the ratios.
pub fn render(rounds: &BTreeMap<u32, BTreeMap<String, ResultFile>>) -> Result<String> {
    let ratios = ratios(rounds)?;
    let any = rounds.values().next().and_then(|r| r.get("ptx")).expect("ratios checked the rounds");
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Device: {} ({}), driver {}{}; {} rounds.\n",
        any.device.name,
        any.device.uuid,
        any.device.driver.as_deref().unwrap_or("unknown"),
        if any.device.simulated { ", SIMULATED" } else { "" },
        rounds.len()
    );
    let _ = writeln!(md, "| round | PTX (harness) mJ | CUDA C (harness, NVRTC) mJ | cudarc (own launch) mJ |");
    let _ = writeln!(md, "|---|---|---|---|");
    for (round, by_path) in rounds {
        let cell = |p: &str| {
            let e = &by_path[p].energy_j;
            format!("{:.3} [{:.3}, {:.3}]", e.mean * 1e3, e.ci_low * 1e3, e.ci_high * 1e3)
        };
        let _ = writeln!(md, "| {round} | {} | {} | {} |", cell("ptx"), cell("cuda_c"), cell("cudarc"));
    }
    let _ = writeln!(md, "\nRatio to the PTX launch of the same round, mean over the rounds with its 95 % interval:\n");
    let _ = writeln!(md, "| path | energy per launch | dynamic energy per launch | time per launch |");
    let _ = writeln!(md, "|---|---|---|---|");
    for r in &ratios {
        let cell = |v: &[f64]| {
            let (m, h) = mean_ci(v);
            format!("{:+.2} % ± {:.2} %", (m - 1.0) * 100.0, h * 100.0)
        };
        let _ = writeln!(md, "| {} | {} | {} | {} |", r.path, cell(&r.energy), cell(&r.dynamic), cell(&r.time));
    }
    Ok(md)
}
