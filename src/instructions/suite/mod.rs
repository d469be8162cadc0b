//! `cargo bench --bench instructions`: every instruction's kernels measured under criterion,
//! then the table of energy per instruction with its checks.
//!
//! For each optimization level (the driver JIT's O4, "optimized", and O0, "non-optimized")
//! each instruction's chain is measured at every K of `ENERGY_INSTRUCTIONS_K` (8, 16, 32,
//! 64, 128), its helpers alone at three of them where the chain has a helper, and each
//! distinct baseline (the loop alone, shared by the instructions of a register width) once.
//! Kernels run a fixed grid, 8 blocks of 256 threads per SM (2048 threads, every SM full on
//! an H100), or one thread with `ENERGY_INSTRUCTIONS_THREADS=one` (Arafa's mode, at K = 128
//! against its baseline). Each kernel's loop count is sized so a launch takes about 10 ms,
//! its machine code is read back from the cubin the JIT produced, and before it is measured
//! a short launch is checked against the host's evaluation. Each kernel is measured by the
//! session engine to ±0.5 % (at least 10 back-to-back windows of 0.15 s): about 3 s.
//!
//! Every measured kernel is saved at once as a record under `target/energy/suites/
//! instructions/`; the table (`target/energy/suites/instructions.{md,json}`) is built
//! from the records of the GPU just measured whose PTX is the current one, so runs of
//! parts of the suite (`-- 'instructions/(int|logic|base)/'`) add up to one table, and
//! `cargo run --example instructions_table` rebuilds it after an interrupted run.
//!
//! Energy per thread-instruction is the slope of energy per thread and loop iteration over
//! the instructions per iteration (`K x ops_per_step`), the helper's own slope taken out;
//! Arafa's net figure `(E_K / L_K - E_base / L_base) / (threads * K * ops_per_step)` is
//! kept beside it; per warp-instruction is 32 times either.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use energy_harness::unstable::bench::BenchSpec;
use energy_harness::unstable::device::DeviceFacts;
use energy_harness::unstable::engine::Measurement;
use energy_harness::Estimate;
use energy_harness::MeasureOptions;
use energy_harness::{CudaGpu, Error, ErrorKind, JitOptLevel, KernelArgs, LaunchConfig, Result, Stream};
use energy_harness::{KernelCode, Launcher};
use energy_results::escape::file_stem;
use energy_results::trace::format::write_atomically;
use serde::{Deserialize, Serialize};

pub use crate::common::suite_dir;
use crate::common::{
    gpu_gate, read_tagged_json, run_benchmarks, sample_threads, size_loop, suite_measure_options, verbose, write_json,
    SUITE_SECONDS_PER_BENCHMARK,
};

use super::catalog::{catalog, Agreement, Category, Instruction, Width};
use super::host::{check_agreement, initial_state, input_bytes, read_result, run_thread};
use super::ptx::{entry_name, file_name, generate, Variant, K_NET, K_SWEEP, OUTPUT_BYTES_PER_THREAD};

mod boards;
mod machine;
mod plan;
mod records;
mod render;
mod setup;
mod table;

pub use boards::*;
pub use machine::MachineCode;
use machine::{read_machine_code, NOT_READ_ON_THE_CHECKED_DEVICE};
pub use plan::*;
pub use records::*;
pub use render::*;
pub use setup::*;
pub use table::*;

/// `cargo bench --bench instructions`: measures, prints and writes the table; exit status
/// 1 when a benchmark failed (wrong result, CUDA error), 2 for bad options.
pub fn main() -> std::process::ExitCode {
    let options = match SuiteOptions::from_env() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let simulated = match gpu_gate("instructions") {
        Ok(simulated) => simulated,
        Err(exit) => return exit,
    };
    let instructions = catalog();
    let kernels = plan(&options, &instructions);
    let per_kernel_s = SUITE_SECONDS_PER_BENCHMARK;
    // Without a GPU the plan's times mean nothing here: the line ending the run says what ran.
    if !simulated || verbose() {
        println!(
            "instructions: {} instructions, {} kernels ({} levels, {} threads per launch); about {:.0} s per kernel, {:.0} min for all (criterion filters select a part)",
            instructions.len(),
            kernels.len(),
            options.levels.len(),
            if options.one_thread { "one" } else { "all SMs x 2048" },
            per_kernel_s,
            kernels.len() as f64 * per_kernel_s / 60.0
        );
    }
    let book: FactsBook = Arc::new(Mutex::new(BTreeMap::new()));
    let dir = suite_dir();
    let threads_mode = if options.one_thread { "one" } else { "full" };
    let mut uuid: Option<String> = None;
    let outcome = run_benchmarks(specs(&kernels, &options, &book), |bench| {
        let (Some(m), Some(planned)) = (&bench.kernel, kernels.iter().find(|k| k.name == bench.name)) else {
            return Ok(false);
        };
        let Some(facts) = book.lock().ok().and_then(|b| b.get(&bench.name).cloned()) else { return Ok(false) };
        uuid.get_or_insert_with(|| m.device.uuid.clone());
        let record = KernelRecord {
            format: RECORD_SCHEMA.into(),
            device: m.device.clone(),
            ptx_hash: ptx_hash(&planned.instruction),
            threads_mode: threads_mode.into(),
            timestamp: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            run: KernelRun::new(&bench.name, facts, m),
        };
        save_record(&dir, &record).map(|_| true)
    });
    // The table: this run's kernels and earlier runs' records of the same GPU and kernels.
    outcome.finish("instructions", "kernel", &["host references evaluated"], || {
        publish_table(&dir, &options, uuid.as_deref()).map(|_| ())
    })
}
