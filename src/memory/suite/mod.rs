//! `cargo bench --bench memory`: Delestrac's data-movement microbenchmarks under criterion,
//! then the table of energy per 32-byte sector at each memory level.
//!
//! Each configuration (kernel, level, threads per block, blocks) is measured at a sweep of
//! measurement-loop iterations `p x unit` (`p` = 0 is the warm-up alone), the unit sized
//! on the GPU so the largest point's measurement part takes about 5 ms. A line fitted to
//! energy per launch against sectors accessed gives the energy per sector (slope, with its
//! 95 % interval), the offset (intercept less the warm-up alone) and r²; a line fitted to
//! GPU time against a thread's dependent accesses gives the per-access latency of that
//! configuration, which must fit its level (shared/L1 << L2 << DRAM) or the level's result
//! is flagged. Region sizes come from the device's own properties (L2 size, shared memory
//! per SM), not from a table per GPU.
//!
//! Every point is appended, as it is measured, to `target/energy/suites/memory-points.json`;
//! the table (`memory.{json,md}`, the thread sweep `memory-threads.svg` and the block sweep
//! `memory-blocks.svg`) is built from
//! that file at the end, and `cargo run --example memory_table` rebuilds it. Where the same
//! folder holds `memory-profile.json` and `memory-ncu.csv` (the profile mode under Nsight
//! Compute, see [`hit_rates`]), the table gains the hit rates of each
//! configuration and flags a level whose accesses its level did not serve.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use energy_harness::unstable::bench::BenchSpec;
use energy_harness::unstable::device::DeviceFacts;
use energy_harness::unstable::engine::Measurement;
use energy_harness::Estimate;
use energy_harness::GpuProperties;
use energy_harness::MeasureOptions;
use energy_harness::{
    CudaGpu, DeviceBuffer, Error, ErrorKind, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Result, Stream,
};
use energy_harness::{KernelCode, Launcher};
use energy_results::trace::format::write_atomically;
use serde::{Deserialize, Serialize};

pub use crate::common::suite_dir;
use crate::common::{
    gpu_gate, read_tagged_json, run_benchmarks, sample_threads, size_loop, suite_measure_options, verbose, write_json,
    SUITE_SECONDS_PER_BENCHMARK,
};

use super::host::{div_accumulator, load_offset, load_stride, store_offset, ChaseShape};
use super::model::{fit_line, level_check, Latencies, Level, LineFit};
use super::ptx::{generate, MemoryKernel, ELEMENT_BYTES, SECTOR_BYTES, STORE_THREADS, STORE_UNROLL};

mod fit;
mod plan;
mod profile;
mod rail;
mod setup;
mod svg;
mod table;

pub use fit::*;
pub use plan::*;
pub use profile::*;
pub use rail::*;
pub use setup::*;
pub use svg::*;
pub use table::*;

/// Writes the points file (whole or not at all).
pub fn save_points(dir: &Path, file: &PointsFile) -> Result<PathBuf> {
    let path = dir.join("memory-points.json");
    write_json(&path, "a memory points file", file)?;
    Ok(path)
}

/// Reads a points file.
pub fn load_points(path: &Path) -> Result<PointsFile> {
    read_tagged_json(path, "a memory points file", POINTS_SCHEMA, |f: &PointsFile| &f.format)
}

/// Reads a memory table (`memory.json`).
pub fn load_table(path: &Path) -> Result<MemoryTable> {
    read_tagged_json(path, "a memory table", TABLE_SCHEMA, |t: &MemoryTable| &t.format)
}

/// Writes `memory.json`, `memory.md`, `memory-threads.svg` and `memory-blocks.svg` under `dir`.
pub fn write_table(table: &MemoryTable, dir: &Path) -> Result<Vec<PathBuf>> {
    let json = dir.join("memory.json");
    let md = dir.join("memory.md");
    let svg = dir.join("memory-threads.svg");
    write_json(&json, "the memory table", table)?;
    write_atomically(&md, render_markdown(table).as_bytes())?;
    write_atomically(&svg, render_thread_svg(table).as_bytes())?;
    let blocks = dir.join("memory-blocks.svg");
    write_atomically(&blocks, render_block_svg(table).as_bytes())?;
    Ok(vec![json, md, svg, blocks])
}

/// Builds and writes the table from the points file under `dir`.
pub fn publish_table(dir: &Path) -> Result<MemoryTable> {
    let file = load_points(&dir.join("memory-points.json"))?;
    let reference = match div_reference_path() {
        Some(path) => match div_reference(&path) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("memory: no DIV reference: {e}");
                None
            }
        },
        None => None,
    };
    let mut table = build_table(&file, reference);
    match read_hit_rates(dir) {
        Some(Ok(rows)) => attach_hit_rates(&mut table, rows),
        Some(Err(e)) => eprintln!("memory: no hit rates: {e}"),
        None => {}
    }
    let written = write_table(&table, dir)?;
    print!("{}", render_markdown(&table));
    println!("memory: wrote {}", written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    Ok(table)
}

/// Shared state of the run: each configuration prepared once, each point's facts.
type PreparedCache = Arc<Mutex<BTreeMap<String, Prepared>>>;
/// Each point's configuration, point and setup facts, by benchmark name (filled as
/// criterion reaches the point).
pub type FactsBook = Arc<Mutex<BTreeMap<String, (Config, u32, PointFacts)>>>;

fn poisoned() -> Error {
    Error::new(ErrorKind::Analysis, "a lock of the memory suite was poisoned")
}

/// The criterion benchmarks: one per point.
pub fn specs(configs: &[Config], options: &SuiteOptions, book: &FactsBook) -> Vec<BenchSpec> {
    let cache: PreparedCache = Arc::new(Mutex::new(BTreeMap::new()));
    let mut list = Vec::new();
    for config in configs {
        for &p in &config.points {
            let (c, o, b, cache) = (config.clone(), options.clone(), book.clone(), cache.clone());
            let name = config.point_name(p);
            let point_name = name.clone();
            let code = KernelCode::from_fn(move |gpu: &Arc<CudaGpu>| {
                let key = c.key();
                let existing = cache.lock().map_err(|_| poisoned())?.get(&key).cloned();
                let prepared = match existing {
                    Some(p) => p,
                    None => {
                        let fresh = prepare(gpu, &c, &o).map_err(|e| e.context(key.clone()))?;
                        cache.lock().map_err(|_| poisoned())?.insert(key.clone(), fresh.clone());
                        fresh
                    }
                };
                let iterations = prepared.unit.checked_mul(p).ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidInput,
                        format!("{point_name}: {p} x {} iterations overflow", prepared.unit),
                    )
                })?;
                b.lock().map_err(|_| poisoned())?.insert(
                    point_name.clone(),
                    (
                        c.clone(),
                        p,
                        PointFacts {
                            layout: prepared.layout,
                            unit: prepared.unit,
                            iterations,
                            verified_threads: prepared.verified_threads,
                        },
                    ),
                );
                let launch_args = args(&c, &prepared, iterations);
                let (kernel, launch) = (prepared.kernel.clone(), prepared.launch);
                let buffers = (prepared.table.clone(), prepared.out.clone());
                Ok(Box::new(move |stream: &Stream| {
                    let _ = &buffers;
                    kernel.launch(stream, launch, &launch_args)
                }) as Launcher)
            });
            // Shared out by a node's queue (`cargo energy run --gpus`): a configuration's
            // points go to one GPU together, its energy per access being their slope.
            list.push(
                BenchSpec::new(&name, file!(), line!())
                    .code(code)
                    .options(options.measure.clone())
                    .without_time_bench()
                    .queue_group(&format!("memory/{}", config.key())),
            );
        }
    }
    list
}

/// `cargo bench --bench memory`: measures every point, then writes the table; exit status 1
/// when a benchmark failed (wrong result, CUDA error), 2 for bad options.
pub fn main() -> std::process::ExitCode {
    let simulated = match gpu_gate("memory") {
        Ok(simulated) => simulated,
        Err(exit) => return exit,
    };
    if std::env::var_os(PROFILE_ENV).is_some_and(|v| v == "1") {
        return profile_main(&suite_dir());
    }
    let options = SuiteOptions::default();
    let configs = plan();
    let points: usize = configs.iter().map(|c| c.points.len()).sum();
    let per_point_s = SUITE_SECONDS_PER_BENCHMARK;
    // Without a GPU the plan's times mean nothing here: the line ending the run says what ran.
    if !simulated || verbose() {
        println!(
            "memory: {} configurations, {points} points; about {per_point_s:.0} s per point, {:.0} min for all (criterion filters select a part)",
            configs.len(),
            points as f64 * per_point_s / 60.0
        );
    }
    let book: FactsBook = Arc::new(Mutex::new(BTreeMap::new()));
    let dir = suite_dir();
    let mut file: Option<PointsFile> = None;
    let outcome = run_benchmarks(specs(&configs, &options, &book), |bench| {
        let Some(m) = &bench.kernel else { return Ok(false) };
        let Some((config, p, facts)) = book.lock().ok().and_then(|b| b.get(&bench.name).cloned()) else {
            return Ok(false);
        };
        let f = file.get_or_insert_with(|| PointsFile {
            format: POINTS_SCHEMA.into(),
            device: m.device.clone(),
            simulated: m.simulated,
            points: Vec::new(),
            plan: PLAN_REVISION,
        });
        f.points.push(PointRun::new(&bench.name, &config, p, facts, m));
        save_points(&dir, f).map(|_| true)
    });
    outcome.finish("memory", "point", &[], || publish_table(&dir).map(|_| ()))
}
