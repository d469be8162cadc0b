//! Delestrac's breakdown applied to a real kernel: its accesses per level from an Nsight
//! Compute export, times the memory suite's lowest measured dynamic energy per level, beside the
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
//! (default: the first launch's name); the counts are the mean over its profiled launches. The metrics: `kernel_energy::memory::BREAKDOWN_METRICS`.

use std::path::PathBuf;

use energy_harness::ResultFile;
use energy_report::read_ncu_csv;
use kernel_energy::memory::model::BREAKDOWN_METRICS;
use kernel_energy::memory::suite::load_table;
use kernel_energy::memory::{breakdown, AccessCounts, Level, SectorEnergies};

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
    let chosen: Vec<&energy_report::NcuKernel> = match args.get(3) {
        Some(name) => launches.iter().filter(|k| k.base_name() == name.as_str()).collect(),
        None => launches.iter().filter(|k| k.name == launches[0].name).collect(),
    };
    if chosen.is_empty() {
        return Err(format!("{}: no launch named {}", ncu.display(), args[3]));
    }
    let measured = ResultFile::read_json(&result).map_err(|e| e.to_string())?;
    if measured.device.name != table.device.name {
        return Err(format!(
            "the kernel ran on {} and the memory table is of {}: use a table of the same GPU model",
            measured.device.name, table.device.name
        ));
    }
    let dynamic_lower = |level: Level, op: &str| -> Result<f64, String> {
        table
            .levels
            .iter()
            .find(|r| r.level == level && r.op == op)
            .and_then(|r| r.dynamic_lower_bound_pj.as_ref())
            .map(|(pj, _)| pj * 1e-12)
            .ok_or_else(|| format!("{}: no dynamic lower bound for {op} {level}", memory.display()))
    };
    let energies = SectorEnergies {
        shared_j: dynamic_lower(Level::Shared, "load")?.min(dynamic_lower(Level::Shared, "store")?),
        l1_j: dynamic_lower(Level::L1, "load")?,
        l2_j: dynamic_lower(Level::L2, "load")?,
        dram_j: dynamic_lower(Level::Dram, "load")?,
        l2_store_j: dynamic_lower(Level::L2, "store")?,
        dram_store_j: dynamic_lower(Level::Dram, "store")?,
    };
    // The mean over the profiled launches of the kernel.
    let mut counts = AccessCounts::default();
    for k in &chosen {
        let c = AccessCounts::from_ncu(k).map_err(|e| e.to_string())?;
        let n = chosen.len() as f64;
        counts.shared += c.shared / n;
        counts.l1 += c.l1 / n;
        counts.l2 += c.l2 / n;
        counts.dram += c.dram / n;
        counts.l2_store += c.l2_store / n;
        counts.dram_store += c.dram_store / n;
    }
    let dynamic = measured.dynamic_j;
    let b = breakdown(&energies, &counts, Some(dynamic.mean))?;
    let mut s = format!(
        "Breakdown of `{}` ({} x {}; mean of {} profiled launches) measured on {} ({}), priced with the memory \
         table of {} ({}): sectors times the memory suite's lowest measured dynamic energy per sector, against the measured \
         dynamic energy per launch.\n\n\
         | what | sectors per launch | pJ per sector (lowest measured dynamic) | µJ | share of measured dynamic |\n|---|---|---|---|---|\n",
        chosen[0].name,
        chosen[0].grid,
        chosen[0].block,
        chosen.len(),
        measured.device.name,
        measured.device.uuid,
        table.device.name,
        table.device.uuid
    );
    for t in &b.terms {
        s.push_str(&format!(
            "| {} | {:.0} | {:.0} | {:.1} | {:.1} % |\n",
            t.what,
            t.sectors,
            t.j_per_sector * 1e12,
            t.j * 1e6,
            t.j / dynamic.mean * 100.0
        ));
    }
    s.push_str(&format!(
        "| data movement (at the lowest measured figures) | | | {:.1} | {:.1} % |\n| measured dynamic [95 % CI] | | | {:.1} [{:.1}, {:.1}] | 100 % |\n",
        b.data_movement_j * 1e6,
        b.data_movement_j / dynamic.mean * 100.0,
        dynamic.mean * 1e6,
        dynamic.ci_low * 1e6,
        dynamic.ci_high * 1e6,
    ));
    let rest = b.rest_j.unwrap_or(0.0);
    if rest >= 0.0 {
        s.push_str(&format!(
            "| rest (compute, accesses above the chase's figures) | | | {:.1} | {:.1} % |\n",
            rest * 1e6,
            rest / dynamic.mean * 100.0
        ));
    } else {
        // No energy is left for the rest: say by how much the estimate overshoots, not a
        // negative energy.
        s.push_str(&format!(
            "| rest (compute, accesses above the chase's figures) | | | none: the estimate exceeds the measurement by {:.1} µJ ({:.1} %) | |\n\n\
             The data-movement estimate exceeds the measured dynamic energy: for this kernel's accesses the suite's \
             per-sector figures (measured with pointer chases) are not a lower bound, or the two were measured on \
             boards that differ by more than the rest.\n",
            -rest * 1e6,
            -rest / dynamic.mean * 100.0
        ));
    }
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
