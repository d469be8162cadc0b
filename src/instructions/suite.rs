//! `cargo bench --bench instructions`: every instruction's kernels measured under criterion,
//! then the table of energy per instruction with its checks.
//!
//! For each optimization level (the driver JIT's O4, "optimized", and O0, "non-optimized")
//! each instruction's K-step kernel is measured, at the levels of the linearity check also
//! its 2K-step kernel, and each distinct baseline once (baselines without a helper are the
//! same loop for every instruction of a register width). Kernels run a fixed grid, 8 blocks
//! of 256 threads per SM (2048 threads, every SM full on an H100: the kernels need at most
//! 32 registers), or one thread with `ENERGY_INSTRUCTIONS_THREADS=one` (Arafa's mode).
//! Each kernel's loop count is sized so a launch takes about 10 ms, and before it is
//! measured a short launch is checked against the host's evaluation. Each kernel is
//! measured by the session engine to ±0.5 % (at least 10 back-to-back windows of 0.15 s):
//! about 2.6 s.
//!
//! Every measured kernel is saved at once as a record under `target/energy/suites/
//! instructions/`; the table (`target/energy/suites/instructions.{md,json}`) is built
//! from the records of the GPU just measured whose PTX is the current one, so runs of
//! parts of the suite (`-- 'instructions/(int|logic|base)/'`) add up to one table, and
//! `cargo run --example instructions_table` rebuilds it after an interrupted run.
//!
//! Net energy per thread-instruction (Arafa):
//! `(E_K / L_K - E_base / L_base) / (threads * K * ops_per_step)`, energies per launch and
//! `L` the loop iterations of each kernel (the fixed part of a launch is < 0.1 % of a
//! 10 ms launch and is neglected); per warp-instruction is 32 times that.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use energy_harness::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::kernel_code::{KernelCode, Launcher};
use energy_harness::measurement::result::Measurement;
use energy_harness::measurement::stats::Estimate;
use energy_harness::measurement::MeasureOptions;
use energy_harness::report::file_stem;
use energy_harness::trace::format::write_atomically;
use energy_harness::{CudaGpu, DeviceFacts, Error, ErrorKind, JitOptLevel, KernelArgs, LaunchConfig, Result, Stream};
use serde::{Deserialize, Serialize};

pub use crate::common::suite_dir;
use crate::common::{
    gpu_gate, read_tagged_json, sample_threads, size_loop, suite_measure_options, SUITE_SECONDS_PER_BENCHMARK,
};

use super::catalog::{catalog, Agreement, Category, Instruction, Width};
use super::host::{check_agreement, initial_state, input_bytes, read_result, run_thread};
use super::ptx::{entry_name, file_name, generate, Variant, K, OUTPUT_BYTES_PER_THREAD};

/// Threads per block at full occupancy.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Blocks per SM at full occupancy (2048 threads per SM).
pub const BLOCKS_PER_SM: u32 = 8;
/// Threads per warp.
pub const WARP: f64 = 32.0;
/// Relative difference between the K and 2K figures the linearity check allows.
pub const LINEARITY_TOLERANCE: f64 = 0.05;
/// "div/rem >> add": each division or remainder must cost at least this many additions.
pub const DIVISION_OVER_ADD: f64 = 5.0;

/// How the suite runs, from the environment.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteOptions {
    /// JIT optimization levels measured (`ENERGY_INSTRUCTIONS_LEVELS`, default `O4,O0`).
    pub levels: Vec<JitOptLevel>,
    /// Levels at which the 2K kernels are measured too (the linearity check): the first level.
    pub linearity_levels: Vec<JitOptLevel>,
    /// One thread instead of a full GPU (`ENERGY_INSTRUCTIONS_THREADS=one`).
    pub one_thread: bool,
    /// GPU time per launch the loop count is sized for, s.
    pub launch_s: f64,
    /// How each kernel is measured (precision, window length and count).
    pub measure: MeasureOptions,
    /// Loop iterations of the verification launch of exactly specified instructions
    /// (approximate ones are checked after one iteration, where their error bound holds).
    pub verify_iterations: u32,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions {
            levels: vec![JitOptLevel::O4, JitOptLevel::O0],
            linearity_levels: vec![JitOptLevel::O4],
            one_thread: false,
            launch_s: 0.010,
            measure: suite_measure_options(),
            verify_iterations: 64,
        }
    }
}

fn parse_level(text: &str) -> Result<JitOptLevel> {
    Ok(match text.trim().to_ascii_uppercase().as_str() {
        "O0" => JitOptLevel::O0,
        "O1" => JitOptLevel::O1,
        "O2" => JitOptLevel::O2,
        "O3" => JitOptLevel::O3,
        "O4" => JitOptLevel::O4,
        other => {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("ENERGY_INSTRUCTIONS_LEVELS: `{other}` is not a JIT level (O0 to O4, e.g. `O4,O0`)"),
            ))
        }
    })
}

/// The short name of a level (`O4`).
pub fn level_name(level: JitOptLevel) -> String {
    format!("{level:?}")
}

impl SuiteOptions {
    /// The options, with `ENERGY_INSTRUCTIONS_LEVELS` (`O4,O0`) and
    /// `ENERGY_INSTRUCTIONS_THREADS` (`full` or `one`) applied.
    pub fn from_env() -> Result<SuiteOptions> {
        let mut options = SuiteOptions::default();
        if let Ok(text) = std::env::var("ENERGY_INSTRUCTIONS_LEVELS") {
            let levels =
                text.split(',').filter(|s| !s.trim().is_empty()).map(parse_level).collect::<Result<Vec<_>>>()?;
            if levels.is_empty() {
                return Err(Error::new(ErrorKind::InvalidInput, "ENERGY_INSTRUCTIONS_LEVELS is empty (e.g. `O4,O0`)"));
            }
            options.linearity_levels = vec![levels[0]];
            options.levels = levels;
        }
        if let Ok(text) = std::env::var("ENERGY_INSTRUCTIONS_THREADS") {
            options.one_thread = match text.trim() {
                "full" | "" => false,
                "one" | "1" => true,
                other => {
                    return Err(Error::new(
                        ErrorKind::InvalidInput,
                        format!("ENERGY_INSTRUCTIONS_THREADS: `{other}` is neither `full` nor `one`"),
                    ))
                }
            };
        }
        Ok(options)
    }
}

/// What a kernel's setup found on the GPU: its size and the verification of its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchFacts {
    /// Loop iterations per launch.
    pub iterations: u32,
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Blocks of this kernel that fit on one SM (the driver's occupancy calculator).
    pub resident_blocks_per_sm: u32,
    /// Threads whose stored result was checked against the host's.
    pub verified_threads: usize,
    /// Loop iterations of the verification launch.
    pub verify_iterations: u32,
    /// Mean bits flipped in the destination of each measured instruction (host, thread 0).
    pub toggles_per_instruction: f64,
}

impl LaunchFacts {
    /// Threads per launch.
    pub fn threads(&self) -> f64 {
        self.blocks as f64 * self.threads_per_block as f64
    }
}

/// One kernel the suite measures.
#[derive(Clone, Debug)]
pub struct PlannedKernel {
    /// The benchmark's name (criterion group), see [`kernel_name`].
    pub name: String,
    /// The instruction whose file holds the kernel.
    pub instruction: Instruction,
    /// Which kernel of the file.
    pub variant: Variant,
    /// JIT level.
    pub level: JitOptLevel,
}

/// The benchmark name of one of an instruction's kernels:
/// `instructions/<category>/<stem>/<level>/<kernel>`.
pub fn kernel_name(instruction: &Instruction, variant: Variant, level: JitOptLevel) -> String {
    format!(
        "instructions/{}/{}/{}/{}",
        instruction.category.short(),
        instruction.stem,
        level_name(level),
        variant.suffix()
    )
}

/// Name of a shared or own baseline benchmark: the loop without chain is the same for every
/// instruction of a register width (`instructions/base/w32/O4`) unless the chain has a
/// helper, which stays in its own baselines.
fn baseline_name(instruction: &Instruction, variant: Variant, level: JitOptLevel) -> String {
    if instruction.helper.is_some() {
        kernel_name(instruction, variant, level)
    } else {
        format!("instructions/base/w{}/{}", instruction.width.bits(), level_name(level))
    }
}

/// The benchmark a kernel's figures are subtracted against.
pub fn baseline_of(instruction: &Instruction, variant: Variant, level: JitOptLevel) -> String {
    baseline_name(instruction, variant.baseline(instruction), level)
}

/// The kernels to measure, in order: per level, each instruction's K (and 2K) kernel, and
/// each distinct baseline once, where it is first needed.
pub fn plan(options: &SuiteOptions, instructions: &[Instruction]) -> Vec<PlannedKernel> {
    let mut kernels: Vec<PlannedKernel> = Vec::new();
    for &level in &options.levels {
        let variants: &[Variant] =
            if options.linearity_levels.contains(&level) { &[Variant::K1, Variant::K2] } else { &[Variant::K1] };
        for instruction in instructions {
            for &variant in variants {
                let base = baseline_of(instruction, variant, level);
                if !kernels.iter().any(|k| k.name == base) {
                    kernels.push(PlannedKernel {
                        name: base,
                        instruction: instruction.clone(),
                        variant: variant.baseline(instruction),
                        level,
                    });
                }
                kernels.push(PlannedKernel {
                    name: kernel_name(instruction, variant, level),
                    instruction: instruction.clone(),
                    variant,
                    level,
                });
            }
        }
    }
    kernels
}

/// Loads, sizes and verifies one kernel on the GPU and returns its launcher. On the
/// checked device (no GPU) the module, kernel name, arguments and launch are checked and
/// the host reference evaluated, but nothing runs: no result to compare, no loop to size.
fn setup_kernel(
    gpu: &Arc<CudaGpu>,
    planned: &PlannedKernel,
    options: &SuiteOptions,
) -> Result<(Launcher, LaunchFacts)> {
    let instruction = &planned.instruction;
    let entry = entry_name(instruction, planned.variant);
    let module = gpu.load_ptx(&generate(instruction), &file_name(instruction), planned.level)?;
    let kernel = module.kernel(&entry)?;
    let properties = gpu.properties()?;
    let resident = kernel.max_active_blocks_per_sm(THREADS_PER_BLOCK, 0)?;
    let (blocks, threads_per_block) =
        if options.one_thread { (1, 1) } else { (properties.sm_count * BLOCKS_PER_SM, THREADS_PER_BLOCK) };
    let threads = blocks as u64 * threads_per_block as u64;
    let input = gpu.upload(&input_bytes(instruction, threads))?;
    let output = gpu.alloc_zeros::<u8>(threads as usize * OUTPUT_BYTES_PER_THREAD)?;
    let config = LaunchConfig::linear(blocks, threads_per_block);
    let stream = gpu.stream().clone();
    let args = |iterations: u32| {
        let args = KernelArgs::new().buffer(&output).buffer(&input).u32(iterations).u32(1);
        // `k0`, `k1` are `.b{width}`: passed at their width (the low bits of the constant).
        instruction.constants.iter().fold(args, |args, &k| match instruction.width {
            Width::W16 => args.u16(k as u16),
            Width::W32 => args.u32(k as u32),
            Width::W64 => args.u64(k),
        })
    };

    // The stored result against the host's, from a short launch.
    let verify_iterations = match instruction.agreement {
        Agreement::Exact => options.verify_iterations,
        Agreement::Relative(_) => 1,
    };
    kernel.launch(&stream, config, &args(verify_iterations))?;
    gpu.synchronize()?;
    let stored = gpu.download(&output)?;
    let mut toggles = 0.0;
    let checked = sample_threads(threads);
    for &thread in &checked {
        let host = run_thread(instruction, planned.variant, initial_state(instruction, thread), verify_iterations)
            .map_err(|e| Error::new(ErrorKind::WrongResult, format!("the host cannot evaluate {entry}: {e}")))?;
        if thread == 0 {
            toggles = host.toggles_per_instruction;
        }
        if gpu.is_checked() {
            continue;
        }
        let result = read_result(instruction, &stored, thread).ok_or_else(|| {
            Error::new(ErrorKind::WrongResult, format!("{entry}: the output buffer has no slot for thread {thread}"))
        })?;
        check_agreement(instruction, &result, &host.result).map_err(|e| {
            Error::new(
                ErrorKind::WrongResult,
                format!(
                    "{entry} ({:?}) stored a result that disagrees with the host's after {verify_iterations} iterations, thread {thread}: {e}",
                    planned.level
                ),
            )
        })?;
    }

    if gpu.is_checked() {
        let args = args(16);
        let buffers = (input, output);
        let launcher: Launcher = Box::new(move |stream: &Stream| {
            let _ = &buffers;
            kernel.launch(stream, config, &args)
        });
        let facts = LaunchFacts {
            iterations: 16,
            blocks,
            threads_per_block,
            resident_blocks_per_sm: resident,
            verified_threads: 0,
            verify_iterations,
            toggles_per_instruction: toggles,
        };
        return Ok((launcher, facts));
    }

    // Loop count for a launch of about `launch_s`, refined from timed launches.
    let timer = gpu.timer()?;
    let time = |iterations: u32| -> Result<f64> {
        timer.start(&stream)?;
        kernel.launch(&stream, config, &args(iterations))?;
        timer.stop(&stream)?;
        gpu.synchronize()?;
        timer.elapsed_s()
    };
    time(16)?;
    let iterations = size_loop(time, 0.0, options.launch_s, 1 << 30)?;
    let args = args(iterations);
    let launch_kernel = kernel.clone();
    // The buffers live as long as the workload.
    let buffers = (input, output);
    let launcher: Launcher = Box::new(move |stream: &Stream| {
        let _ = &buffers;
        launch_kernel.launch(stream, config, &args)
    });
    let facts = LaunchFacts {
        iterations,
        blocks,
        threads_per_block,
        resident_blocks_per_sm: resident,
        verified_threads: checked.len(),
        verify_iterations,
        toggles_per_instruction: toggles,
    };
    Ok((launcher, facts))
}

/// Shared record of each kernel's setup, filled as criterion reaches it.
pub type FactsBook = Arc<Mutex<BTreeMap<String, LaunchFacts>>>;

/// The criterion benchmarks of the planned kernels.
pub fn specs(kernels: &[PlannedKernel], options: &SuiteOptions, book: &FactsBook) -> Vec<BenchSpec> {
    kernels
        .iter()
        .map(|planned| {
            let (p, o, b) = (planned.clone(), options.clone(), book.clone());
            let code = KernelCode::from_fn(move |gpu: &Arc<CudaGpu>| {
                let (launcher, facts) = setup_kernel(gpu, &p, &o)
                    .map_err(|e| e.context(format!("{} ({})", p.instruction.label, p.name)))?;
                if !gpu.is_checked() {
                    b.lock()
                        .map_err(|_| Error::new(ErrorKind::Analysis, "the facts book was poisoned"))?
                        .insert(p.name.clone(), facts);
                }
                Ok(launcher)
            });
            BenchSpec::new(&planned.name, file!(), line!()).code(code).options(options.measure).without_time_bench()
        })
        .collect()
}

/// One measured kernel, as the table uses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRun {
    /// Benchmark name.
    pub name: String,
    /// Setup facts (size, verification).
    pub facts: LaunchFacts,
    /// Energy per launch, J.
    pub energy_j: Estimate,
    /// Energy above active idle per launch, J.
    pub dynamic_j: Estimate,
    /// GPU time per launch, s.
    pub time_s: Estimate,
    /// Mean power, W.
    pub power_w: Estimate,
    /// Launches per window.
    pub launches_per_window: u64,
    /// Windows.
    pub windows: usize,
    /// SM clock during the windows, MHz (mean of the windows' readings).
    pub sm_clock_mhz: Option<f64>,
    /// The engine's warnings.
    pub warnings: Vec<String>,
}

impl KernelRun {
    /// From a measurement and the kernel's setup facts.
    pub fn new(name: &str, facts: LaunchFacts, m: &Measurement) -> KernelRun {
        let clocks: Vec<f64> = m.windows.iter().filter_map(|w| w.sm_clock_mhz.map(f64::from)).collect();
        KernelRun {
            name: name.to_string(),
            facts,
            energy_j: m.energy_j,
            dynamic_j: m.dynamic_j,
            time_s: m.time_s,
            power_w: m.power_w,
            launches_per_window: m.launches_per_window,
            windows: m.windows.len(),
            sm_clock_mhz: (!clocks.is_empty()).then(|| clocks.iter().sum::<f64>() / clocks.len() as f64),
            warnings: m.warnings.iter().map(|w| w.message.clone()).collect(),
        }
    }

    fn per_iteration(&self, e: &Estimate) -> Estimate {
        e.scaled(1.0 / self.facts.iterations as f64)
    }
}

/// `a - b` of two independent estimates: the interval half-widths add in quadrature.
fn difference(a: &Estimate, b: &Estimate) -> Estimate {
    let half = |e: &Estimate| 0.5 * (e.ci_high - e.ci_low);
    let mean = a.mean - b.mean;
    let h = (half(a).powi(2) + half(b).powi(2)).sqrt();
    Estimate {
        mean,
        ci_low: mean - h,
        ci_high: mean + h,
        n: a.n.min(b.n),
        std_dev: (a.std_dev.powi(2) + b.std_dev.powi(2)).sqrt(),
    }
}

/// The net figures of one kernel against another (its baseline, or the K kernel).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetFigures {
    /// Net energy per thread-instruction, J.
    pub thread_j: Estimate,
    /// Net energy per warp-instruction (32 threads), J.
    pub warp_j: Estimate,
    /// Net energy above active idle per thread-instruction, J.
    pub dynamic_thread_j: Estimate,
    /// Net GPU time per chain step and instruction (the whole GPU running its threads), s.
    pub time_per_instruction_s: f64,
}

fn net(with: &KernelRun, without: &KernelRun, instructions_per_iteration: f64) -> NetFigures {
    let per_instruction = 1.0 / (with.facts.threads() * instructions_per_iteration);
    let total = difference(&with.per_iteration(&with.energy_j), &without.per_iteration(&without.energy_j));
    let dynamic = difference(&with.per_iteration(&with.dynamic_j), &without.per_iteration(&without.dynamic_j));
    let time = with.time_s.mean / with.facts.iterations as f64 - without.time_s.mean / without.facts.iterations as f64;
    NetFigures {
        thread_j: total.scaled(per_instruction),
        warp_j: total.scaled(per_instruction * WARP),
        dynamic_thread_j: dynamic.scaled(per_instruction),
        time_per_instruction_s: time / instructions_per_iteration,
    }
}

/// One row of the table: an instruction at a level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstructionRow {
    /// The PTX instruction(s).
    pub label: String,
    /// File stem.
    pub stem: String,
    /// Family.
    pub category: Category,
    /// JIT level.
    pub level: String,
    /// Measured PTX instructions per chain step.
    pub ops_per_step: u32,
    /// K chain steps against the baseline (Arafa's figure).
    pub net: NetFigures,
    /// 2K chain steps against their baseline, where measured.
    pub net_2k: Option<NetFigures>,
    /// (2K kernel - K kernel) / K steps: free of anything the loop adds once per iteration.
    pub marginal: Option<NetFigures>,
    /// (net at 2K - net at K) / net at K.
    pub linearity: Option<f64>,
    /// The K kernel's launch.
    pub launch: KernelRun,
    /// The baseline it was subtracted against.
    pub baseline: String,
}

/// One sanity check of the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// JIT level.
    pub level: String,
    /// Whether it holds (`None`: a figure it needs was not measured).
    pub holds: Option<bool>,
    /// The figures behind it.
    pub detail: String,
}

/// The suite's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstructionTable {
    /// Format tag.
    pub format: String,
    /// Whether the figures come from the simulated GPU.
    pub simulated: bool,
    /// The GPU.
    pub device: Option<DeviceFacts>,
    /// When the run ended (RFC 3339).
    pub timestamp: String,
    /// Threads per launch (`full` occupancy or `one`).
    pub threads_mode: String,
    /// Chain steps per iteration of the K kernels.
    pub k: u32,
    /// The rows, by level then catalog order.
    pub rows: Vec<InstructionRow>,
    /// The sanity checks.
    pub checks: Vec<Check>,
    /// Every kernel measured.
    pub kernels: Vec<KernelRun>,
    /// Kernels planned but not measured (filtered out, failed).
    pub missing: Vec<String>,
}

/// Format tag of [`InstructionTable`] JSON.
pub const TABLE_FORMAT: &str = "energy-instructions/1";

/// Builds the table from the measured kernels (any subset of the plan).
pub fn build_table(
    kernels: &[PlannedKernel],
    runs: &BTreeMap<String, KernelRun>,
    options: &SuiteOptions,
) -> (Vec<InstructionRow>, Vec<Check>, Vec<String>) {
    let mut rows = Vec::new();
    for planned in kernels.iter().filter(|k| k.variant == Variant::K1) {
        let instruction = &planned.instruction;
        let level = planned.level;
        let steps = |v: Variant| (v.chain_steps() * instruction.ops_per_step) as f64;
        let (Some(main), Some(base)) =
            (runs.get(&planned.name), runs.get(&baseline_of(instruction, Variant::K1, level)))
        else {
            continue;
        };
        let k2_name = kernel_name(instruction, Variant::K2, level);
        let k2 = runs.get(&k2_name);
        let base2 = runs.get(&baseline_of(instruction, Variant::K2, level));
        let figures = net(main, base, steps(Variant::K1));
        let net_2k = match (k2, base2) {
            (Some(k2), Some(b2)) => Some(net(k2, b2, steps(Variant::K2))),
            _ => None,
        };
        // The marginal figure: both kernels' per-iteration energies, differing by K steps
        // (and, with a helper, by K helpers: its baselines' difference takes those out).
        let marginal = match (k2, base2) {
            (Some(k2), Some(b2)) if instruction.helper.is_some() => {
                let helpers = net(b2, base, 1.0);
                let mut m = net(k2, main, steps(Variant::K1));
                let h_per = 1.0 / steps(Variant::K1);
                m.thread_j = difference(&m.thread_j, &helpers.thread_j.scaled(h_per));
                m.warp_j = difference(&m.warp_j, &helpers.warp_j.scaled(h_per));
                m.dynamic_thread_j = difference(&m.dynamic_thread_j, &helpers.dynamic_thread_j.scaled(h_per));
                m.time_per_instruction_s -= helpers.time_per_instruction_s * h_per;
                Some(m)
            }
            (Some(k2), Some(_)) => Some(net(k2, main, steps(Variant::K1))),
            _ => None,
        };
        let linearity = net_2k.as_ref().map(|n2| (n2.thread_j.mean - figures.thread_j.mean) / figures.thread_j.mean);
        rows.push(InstructionRow {
            label: instruction.label.to_string(),
            stem: instruction.stem.to_string(),
            category: instruction.category,
            level: level_name(level),
            ops_per_step: instruction.ops_per_step,
            net: figures,
            net_2k,
            marginal,
            linearity,
            launch: main.clone(),
            baseline: base.name.clone(),
        });
    }
    let checks = options.levels.iter().flat_map(|&level| checks(&rows, &level_name(level))).collect();
    let missing = kernels.iter().filter(|k| !runs.contains_key(&k.name)).map(|k| k.name.clone()).collect();
    (rows, checks, missing)
}

fn pj(e: &Estimate) -> String {
    format!("{:.2} pJ [{:.2}, {:.2}]", e.mean * 1e12, e.ci_low * 1e12, e.ci_high * 1e12)
}

/// The sanity checks of one level: div/rem >> add; fp64 > fp32 > fp16 per operation;
/// energy linear in K.
pub fn checks(rows: &[InstructionRow], level: &str) -> Vec<Check> {
    let find = |stem: &str| rows.iter().find(|r| r.stem == stem && r.level == level);
    let mut out = Vec::new();
    // div/rem >> add.
    let add = find("add_u32");
    for stem in ["div_u32", "div_s32", "rem_u32", "rem_s32", "div_u64", "div_s64", "rem_u64", "rem_s64"] {
        let row = find(stem);
        let (holds, detail) = match (row, add) {
            (Some(r), Some(a)) => {
                let ratio = r.net.thread_j.mean / a.net.thread_j.mean;
                (
                    Some(ratio >= DIVISION_OVER_ADD),
                    format!(
                        "{} / add.u32 = {ratio:.1} ({} against {})",
                        r.label,
                        pj(&r.net.thread_j),
                        pj(&a.net.thread_j)
                    ),
                )
            }
            _ => (None, "not measured".to_string()),
        };
        let label = row.map(|r| r.label.clone()).unwrap_or_else(|| stem.replace('_', "."));
        out.push(Check {
            name: format!("{label} >> add.u32 (at least {DIVISION_OVER_ADD}x)"),
            level: level.into(),
            holds,
            detail,
        });
    }
    // fp64 > fp32 > fp16 per operation. A packed f16x2 instruction does two operations; a
    // scalar f16 instruction one, in the same issue slot: both are checked.
    for (op, f64_stem, f32_stem, f16_stem, f16x2_stem) in [
        ("add", "add_f64", "add_f32", "add_f16", "add_f16x2"),
        ("mul", "mul_f64", "mul_f32", "mul_f16", "mul_f16x2"),
        ("fma", "fma_f64", "fma_f32", "fma_f16", "fma_f16x2"),
    ] {
        let per_op = |stem: &str, ops: f64| find(stem).map(|r| r.net.thread_j.scaled(1.0 / ops));
        let (d, s, h, h2) =
            (per_op(f64_stem, 1.0), per_op(f32_stem, 1.0), per_op(f16_stem, 1.0), per_op(f16x2_stem, 2.0));
        let mut push = |name: String, holds: Option<bool>, detail: String| {
            out.push(Check { name, level: level.into(), holds, detail })
        };
        match (d, s, h2) {
            (Some(d), Some(s), Some(h2)) => push(
                format!("{op}: fp64 > fp32 > fp16 per operation (f16x2: two per instruction)"),
                Some(d.mean > s.mean && s.mean > h2.mean),
                format!("fp64 {}, fp32 {}, fp16 (f16x2) {} per operation", pj(&d), pj(&s), pj(&h2)),
            ),
            _ => push(format!("{op}: fp64 > fp32 > fp16 per operation"), None, "not all measured".into()),
        }
        match (s, h) {
            (Some(s), Some(h)) => push(
                format!("{op}: scalar fp16 < fp32 per operation"),
                Some(h.mean < s.mean),
                format!("fp16 (scalar) {} against fp32 {}", pj(&h), pj(&s)),
            ),
            _ => push(format!("{op}: scalar fp16 < fp32 per operation"), None, "not all measured".into()),
        }
    }
    // Linearity in K.
    let measured: Vec<&InstructionRow> = rows.iter().filter(|r| r.level == level && r.linearity.is_some()).collect();
    if !measured.is_empty() {
        let off: Vec<String> = measured
            .iter()
            .filter(|r| r.linearity.is_some_and(|l| l.abs() > LINEARITY_TOLERANCE))
            .map(|r| format!("{} {:+.1} %", r.label, r.linearity.unwrap_or(0.0) * 100.0))
            .collect();
        out.push(Check {
            name: format!("K and 2K agree within {:.0} % per instruction", LINEARITY_TOLERANCE * 100.0),
            level: level.into(),
            holds: Some(off.is_empty()),
            detail: if off.is_empty() {
                format!("all {} instructions", measured.len())
            } else {
                format!("{} of {} agree; not: {}", measured.len() - off.len(), measured.len(), off.join(", "))
            },
        });
    }
    out
}

fn fmt_ci(e: &Estimate, scale: f64, digits: usize) -> String {
    format!("{:.d$} [{:.d$}, {:.d$}]", e.mean * scale, e.ci_low * scale, e.ci_high * scale, d = digits)
}

/// The table as markdown.
pub fn render_markdown(table: &InstructionTable) -> String {
    let mut md = String::new();
    let gpu = table
        .device
        .as_ref()
        .map(|d| format!("{} {} (driver {})", d.name, d.uuid, d.driver_version.as_deref().unwrap_or("unknown")))
        .unwrap_or_default();
    md.push_str(&format!(
        "# Energy per instruction{}\n\n{}, {} threads per launch, K = {} chain steps per loop iteration; {}.\n\n",
        if table.simulated { " (SIMULATED)" } else { "" },
        if gpu.is_empty() { "GPU unknown".to_string() } else { gpu },
        table.threads_mode,
        table.k,
        table.timestamp
    ));
    md.push_str(
        "Net energy per thread-instruction is Arafa's `(E_K / L_K - E_base / L_base) / (threads x K x ops)` with its 95 % interval; \
per warp-instruction is 32 times that; dynamic leaves out the active-idle power. `K vs 2K` is the net at 2K over the net at K, less 1. \
Grid time is the GPU time one instruction adds to a loop iteration of the whole grid (all threads execute it in that time). Launch: the K kernel's time, total and dynamic energy and power per launch. \
Toggles: mean bits that change in each measured instruction's result (the data's switching activity).\n",
    );
    let levels: Vec<String> = {
        let mut l: Vec<String> = table.rows.iter().map(|r| r.level.clone()).collect();
        l.dedup();
        l
    };
    for level in &levels {
        md.push_str(&format!("\n## JIT {level}\n"));
        for category in Category::ALL {
            let rows: Vec<&InstructionRow> =
                table.rows.iter().filter(|r| &r.level == level && r.category == category).collect();
            if rows.is_empty() {
                continue;
            }
            md.push_str(&format!("\n### {}\n\n", category.label()));
            md.push_str("| instruction | net / thread-instr, pJ | net / warp-instr, nJ | dynamic / thread-instr, pJ | K vs 2K | 2K-K marginal, pJ | grid time / instr, ns | launch: time, total, dynamic, power | toggles |\n");
            md.push_str("|---|---|---|---|---|---|---|---|---|\n");
            for r in rows {
                let l = &r.launch;
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} ms, {:.1} mJ, {:.1} mJ, {:.0} W | {:.1} |\n",
                    r.label,
                    fmt_ci(&r.net.thread_j, 1e12, 3),
                    fmt_ci(&r.net.warp_j, 1e9, 3),
                    fmt_ci(&r.net.dynamic_thread_j, 1e12, 3),
                    r.linearity.map(|x| format!("{:+.1} %", x * 100.0)).unwrap_or_else(|| "-".into()),
                    r.marginal.as_ref().map(|m| format!("{:.3}", m.thread_j.mean * 1e12)).unwrap_or_else(|| "-".into()),
                    r.net.time_per_instruction_s * 1e9,
                    l.time_s.mean * 1e3,
                    l.energy_j.mean * 1e3,
                    l.dynamic_j.mean * 1e3,
                    l.power_w.mean,
                    l.facts.toggles_per_instruction,
                ));
            }
        }
        md.push_str("\n### Checks\n\n| check | holds | figures |\n|---|---|---|\n");
        for c in table.checks.iter().filter(|c| &c.level == level) {
            let holds = match c.holds {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "not measured",
            };
            md.push_str(&format!("| {} | {} | {} |\n", c.name, holds, c.detail));
        }
    }
    if !table.missing.is_empty() {
        md.push_str(&format!(
            "\n{} planned kernels were not measured in this run (filtered out or failed; listed in the JSON's `missing`).\n",
            table.missing.len()
        ));
    }
    md
}

/// Writes `instructions.json` and `instructions.md` under `dir` (`instructions-one-thread.*`
/// for the one-thread mode), each written whole or not at all.
pub fn write_table(table: &InstructionTable, dir: &Path) -> Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the suite's output directory", e))?;
    let stem = if table.threads_mode == "one" { "instructions-one-thread" } else { "instructions" };
    let json = dir.join(format!("{stem}.json"));
    let md = dir.join(format!("{stem}.md"));
    let text = serde_json::to_string_pretty(table)
        .map_err(|e| Error::new(ErrorKind::Format, format!("cannot serialize the instruction table: {e}")))?;
    write_atomically(&json, text.as_bytes())?;
    write_atomically(&md, render_markdown(table).as_bytes())?;
    Ok((json, md))
}

/// Reads a table written by [`write_table`].
pub fn read_table(path: &Path) -> Result<InstructionTable> {
    read_tagged_json(path, "an instruction table", TABLE_FORMAT, |t: &InstructionTable| &t.format)
}

/// Format tag of a [`KernelRecord`] file.
pub const RECORD_FORMAT: &str = "energy-instruction-kernel/1";

/// One measured kernel as saved on disk, the moment it was measured: the table is built
/// from these, so runs of parts of the suite (criterion filters) add up to one table and
/// an interrupted run keeps what it measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    /// [`RECORD_FORMAT`].
    pub format: String,
    /// The GPU.
    pub device: DeviceFacts,
    /// Hash of the PTX file the kernel came from: a record of an older kernel is not used.
    pub ptx_hash: String,
    /// `full` or `one`.
    pub threads_mode: String,
    /// When it was measured (RFC 3339).
    pub timestamp: String,
    /// The measurement.
    pub run: KernelRun,
}

fn records_dir(dir: &Path) -> PathBuf {
    dir.join("instructions")
}

/// FNV-1a of an instruction's generated PTX, in hex.
pub fn ptx_hash(instruction: &Instruction) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in generate(instruction).bytes() {
        h = (h ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Saves a record under `dir` (written whole or not at all).
pub fn save_record(dir: &Path, record: &KernelRecord) -> Result<PathBuf> {
    let records = records_dir(dir);
    std::fs::create_dir_all(&records).map_err(|e| Error::io(&records, "create the records directory", e))?;
    let path = records.join(format!("{}.json", file_stem(&record.run.name)));
    let text = serde_json::to_string_pretty(record)
        .map_err(|e| Error::new(ErrorKind::Format, format!("cannot serialize a kernel record: {e}")))?;
    write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// The records under `dir`; a file that is not a record is reported on stderr and skipped.
pub fn load_records(dir: &Path) -> Vec<KernelRecord> {
    let records = records_dir(dir);
    let Ok(entries) = std::fs::read_dir(&records) else { return Vec::new() };
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    for path in paths {
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<KernelRecord>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(r) if r.format == RECORD_FORMAT => out.push(r),
            Ok(r) => {
                eprintln!("warning: skipping {}: format `{}`, expected `{RECORD_FORMAT}`", path.display(), r.format)
            }
            Err(e) => eprintln!("warning: skipping {}: not a kernel record ({e})", path.display()),
        }
    }
    out
}

/// The table from the records of one GPU (`uuid`) and thread mode whose kernels are the
/// current ones (same PTX); `None` when no record qualifies.
pub fn table_from_records(records: &[KernelRecord], options: &SuiteOptions, uuid: &str) -> Option<InstructionTable> {
    let threads_mode = if options.one_thread { "one" } else { "full" };
    let kernels = plan(options, &catalog());
    let mut chosen: BTreeMap<String, &KernelRecord> = BTreeMap::new();
    for record in records {
        if record.device.uuid != uuid || record.threads_mode != threads_mode {
            continue;
        }
        let Some(planned) = kernels.iter().find(|k| k.name == record.run.name) else { continue };
        if record.ptx_hash != ptx_hash(&planned.instruction) {
            continue;
        }
        let newer = chosen.get(&record.run.name).is_none_or(|old| old.timestamp <= record.timestamp);
        if newer {
            chosen.insert(record.run.name.clone(), record);
        }
    }
    let latest = chosen.values().max_by(|a, b| a.timestamp.cmp(&b.timestamp))?;
    let device = latest.device.clone();
    let timestamp = latest.timestamp.clone();
    let runs: BTreeMap<String, KernelRun> = chosen.iter().map(|(n, r)| (n.clone(), r.run.clone())).collect();
    let (rows, checks, missing) = build_table(&kernels, &runs, options);
    Some(InstructionTable {
        format: TABLE_FORMAT.into(),
        simulated: device.simulated,
        device: Some(device),
        timestamp,
        threads_mode: threads_mode.into(),
        k: K,
        rows,
        checks,
        kernels: runs.into_values().collect(),
        missing,
    })
}

/// Builds the table of GPU `uuid` (default: the GPU of the newest record) from the records
/// under `dir`, prints it and writes `instructions.{json,md}` there.
pub fn publish_table(dir: &Path, options: &SuiteOptions, uuid: Option<&str>) -> Result<InstructionTable> {
    let records = load_records(dir);
    let newest = records.iter().max_by(|a, b| a.timestamp.cmp(&b.timestamp));
    let uuid = match (uuid, newest) {
        (Some(u), _) => u.to_string(),
        (None, Some(r)) => r.device.uuid.clone(),
        (None, None) => {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "no kernel records under {}: run `cargo bench --bench instructions` first",
                    records_dir(dir).display()
                ),
            ))
        }
    };
    let table = table_from_records(&records, options, &uuid).ok_or_else(|| {
        Error::new(
            ErrorKind::Analysis,
            format!("no record of the current kernels for GPU {uuid} under {}", records_dir(dir).display()),
        )
    })?;
    println!("\n{}", render_markdown(&table));
    let (json, md) = write_table(&table, dir)?;
    println!("instructions: wrote {} and {}", json.display(), md.display());
    Ok(table)
}

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
    if let Err(exit) = gpu_gate("instructions") {
        return exit;
    }
    let instructions = catalog();
    let kernels = plan(&options, &instructions);
    let per_kernel_s = SUITE_SECONDS_PER_BENCHMARK;
    println!(
        "instructions: {} instructions, {} kernels ({} levels, {} threads per launch); about {:.0} s per kernel, {:.0} min for all (criterion filters select a part)",
        instructions.len(),
        kernels.len(),
        options.levels.len(),
        if options.one_thread { "one" } else { "all SMs x 2048" },
        per_kernel_s,
        kernels.len() as f64 * per_kernel_s / 60.0
    );
    let book: FactsBook = Arc::new(Mutex::new(BTreeMap::new()));
    let dir = suite_dir();
    let threads_mode = if options.one_thread { "one" } else { "full" };
    let mut uuid: Option<String> = None;
    let mut save_failures = 0;
    // Criterion's HTML plots would add ~3.5 s to each of some 200 kernels: off unless
    // `--plotting-backend` asks for them.
    let collected = run_collect(specs(&kernels, &options, &book), &RunSettings { criterion_plots: false }, |bench| {
        let (Some(m), Some(planned)) = (&bench.kernel, kernels.iter().find(|k| k.name == bench.name)) else { return };
        let Some(facts) = book.lock().ok().and_then(|b| b.get(&bench.name).cloned()) else { return };
        uuid.get_or_insert_with(|| m.device.uuid.clone());
        let record = KernelRecord {
            format: RECORD_FORMAT.into(),
            device: m.device.clone(),
            ptx_hash: ptx_hash(&planned.instruction),
            threads_mode: threads_mode.into(),
            timestamp: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            run: KernelRun::new(&bench.name, facts, m),
        };
        if let Err(e) = save_record(&dir, &record) {
            eprintln!("error: {e}");
            save_failures += 1;
        }
    });
    let Some(uuid) = uuid else {
        if collected.simulated {
            println!("instructions: no kernel was measured (no GPU: the kernels that ran were checked only): no table written");
        } else {
            println!("instructions: no kernel was measured (a filter, --test or --list): no table written");
        }
        return if collected.failures > 0 { std::process::ExitCode::FAILURE } else { std::process::ExitCode::SUCCESS };
    };
    // The table: this run's kernels and earlier runs' records of the same GPU and kernels.
    if let Err(e) = publish_table(&dir, &options, Some(&uuid)) {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    if collected.failures > 0 || save_failures > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
