//! Delestrac's breakdown applied to a real kernel: its accesses per level from an Nsight
//! Compute export, times the memory suite's dynamic lower bound per level, beside the
//! kernel's measured dynamic energy (its `#[energy_bench]` result file).
//!
//! ```sh
//! ncu --clock-control none --launch-count 1 --kernel-name saxpy --csv --page raw --print-units base \
//!     --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,... ./saxpy --bench > saxpy-ncu.csv
//! cargo run --release --example memory_breakdown -- MEMORY_JSON NCU_CSV RESULT_JSON [KERNEL]
//! ```
//!
//! MEMORY_JSON is the suite's `memory.json` (same GPU model), RESULT_JSON the kernel's
//! result file (`target/energy/<bench>/<id>.json`), KERNEL the launch's name in the export
//! (default: the first launch). The metrics: `energy_suites::memory::BREAKDOWN_METRICS`.

use std::path::PathBuf;

use energy_harness::{read_ncu_csv, ResultFile};
use energy_suites::memory::model::BREAKDOWN_METRICS;
use energy_suites::memory::suite::load_table;
use energy_suites::memory::{breakdown, AccessCounts, Level, SectorEnergies};

fn run() -> Result<String, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [memory, ncu, result] = [0, 1, 2].map(|i| args.get(i).map(PathBuf::from));
    let (Some(memory), Some(ncu), Some(result)) = (memory, ncu, result) else {
        return Err(format!(
            "usage: memory_breakdown MEMORY_JSON NCU_CSV RESULT_JSON [KERNEL]; the export needs --metrics {}",
            BREAKDOWN_METRICS.join(",")
        ));
    };
    let table = load_table(&memory).map_err(|e| e.to_string())?;
    let launches = read_ncu_csv(&ncu).map_err(|e| e.to_string())?;
    let launch = match args.get(3) {
        Some(name) => launches.iter().find(|k| k.name.starts_with(name.as_str())),
        None => launches.first(),
    }
    .ok_or_else(|| format!("{}: no launch named {}", ncu.display(), args[3]))?;
    let measured = ResultFile::read(&result).map_err(|e| e.to_string())?;
    if measured.device.name != table.device.name {
        return Err(format!(
            "the kernel ran on {} and the memory table is of {}: use a table of the same GPU model",
            measured.device.name, table.device.name
        ));
    }
    let dynamic_lower = |level: Level| -> Result<f64, String> {
        table
            .levels
            .iter()
            .find(|r| r.level == level && r.op == "load")
            .and_then(|r| r.dynamic_lower_bound_pj.as_ref())
            .map(|(pj, _)| pj * 1e-12)
            .ok_or_else(|| format!("{}: no dynamic lower bound for {level}", memory.display()))
    };
    let energies = SectorEnergies {
        shared_j: dynamic_lower(Level::Shared)?,
        l1_j: dynamic_lower(Level::L1)?,
        l2_j: dynamic_lower(Level::L2)?,
        dram_j: dynamic_lower(Level::Dram)?,
    };
    let counts = AccessCounts::from_ncu(launch).map_err(|e| e.to_string())?;
    let dynamic = measured.dynamic_j;
    let b = breakdown(&energies, &counts, Some(dynamic.mean))?;
    let mut s = format!(
        "Breakdown of `{}` (ncu launch {}, {} x {}) on {}: sectors per level times the memory suite's dynamic \
         lower bound per sector, against the measured dynamic energy per launch.\n\n\
         | level | sectors | pJ per sector (dynamic lower bound) | µJ | share of measured dynamic |\n|---|---|---|---|---|\n",
        launch.name, launch.id, launch.grid, launch.block, measured.device.name
    );
    for (level, j) in &b.per_level_j {
        let n = match level {
            Level::Shared => counts.shared,
            Level::L1 => counts.l1,
            Level::L2 => counts.l2,
            Level::Dram => counts.dram,
        };
        s.push_str(&format!(
            "| {level} | {n:.0} | {:.1} | {:.1} | {:.1} % |\n",
            energies.of(*level) * 1e12,
            j * 1e6,
            j / dynamic.mean * 100.0
        ));
    }
    s.push_str(&format!(
        "| data movement (lower bound) | | | {:.1} | {:.1} % |\n| measured dynamic [95 % CI] | | | {:.1} [{:.1}, {:.1}] | 100 % |\n| rest (compute, accesses above the bound) | | | {:.1} | {:.1} % |\n",
        b.data_movement_j * 1e6,
        b.data_movement_j / dynamic.mean * 100.0,
        dynamic.mean * 1e6,
        dynamic.ci_low * 1e6,
        dynamic.ci_high * 1e6,
        b.rest_j.unwrap_or(0.0) * 1e6,
        b.rest_j.unwrap_or(0.0) / dynamic.mean * 100.0
    ));
    Ok(s)
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(text) => {
            print!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("memory_breakdown: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
