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
//! the table (`memory.{json,md}` and the thread sweep `memory-threads.svg`) is built from
//! that file at the end, and `cargo run --example memory_table` rebuilds it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use energy_harness::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::cuda::GpuProperties;
use energy_harness::kernel_code::{KernelCode, Launcher};
use energy_harness::measurement::result::Measurement;
use energy_harness::measurement::stats::Estimate;
use energy_harness::measurement::MeasureOptions;
use energy_harness::trace::format::write_atomically;
use energy_harness::{
    CudaGpu, DeviceBuffer, DeviceFacts, Error, ErrorKind, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Result, Stream,
};
use serde::{Deserialize, Serialize};

pub use crate::common::suite_dir;
use crate::common::{
    gpu_gate, read_tagged_json, sample_threads, size_loop, suite_measure_options, SUITE_SECONDS_PER_BENCHMARK,
};

use super::host::{div_accumulator, load_offset, load_stride, store_offset, ChaseShape};
use super::model::{fit_line, level_check, Latencies, Level, LineFit};
use super::ptx::{generate, MemoryKernel, ELEMENT_BYTES, SECTOR_BYTES, STORE_THREADS, STORE_UNROLL};

/// Threads per block of the main configurations (the paper's lower bound was at 1024).
pub const MAIN_THREADS: u32 = 1024;
/// Threads per block of the thread sweep besides [`MAIN_THREADS`] (L1 and L2).
pub const SWEEP_THREADS: [u32; 4] = [1, 4, 32, 256];
/// Bytes of shared memory each block chases or stores in.
pub const SHARED_REGION_BYTES: u64 = 32 * 1024;
/// The LOAD+DIV kernels' divisor (a kernel parameter: ptxas cannot fold the division).
pub const DIVISOR: u32 = 7;
/// Points of the main configurations, in units of the sized iteration count.
pub const MAIN_POINTS: [u32; 5] = [0, 1, 2, 3, 4];
/// Points of the sweeps.
pub const SWEEP_POINTS: [u32; 3] = [0, 2, 4];
/// Format tag of the points file.
pub const POINTS_FORMAT: &str = "energy-memory-points/1";
/// Format tag of the table.
pub const TABLE_FORMAT: &str = "energy-memory/1";

/// Measurement settings of each point.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteOptions {
    /// How each point is measured (precision, window length and count).
    pub measure: MeasureOptions,
    /// GPU time of the largest point's measurement part, s.
    pub launch_s: f64,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions { measure: suite_measure_options(), launch_s: 0.005 }
    }
}

/// Grid size, relative to the GPU's SMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Blocks {
    /// `n` blocks per SM.
    PerSm(u32),
    /// One block per four SMs.
    QuarterOfSms,
}

impl Blocks {
    /// Blocks for a GPU of `sms` SMs.
    pub fn count(self, sms: u32) -> u32 {
        match self {
            Blocks::PerSm(n) => sms * n,
            Blocks::QuarterOfSms => (sms / 4).max(1),
        }
    }

    /// In benchmark names: `sm`, `2sm`, `qsm`.
    pub fn label(self) -> String {
        match self {
            Blocks::PerSm(1) => "sm".into(),
            Blocks::PerSm(n) => format!("{n}sm"),
            Blocks::QuarterOfSms => "qsm".into(),
        }
    }
}

/// What a configuration is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Sweep {
    /// The main LOAD configuration of a level.
    Level,
    /// The thread sweep.
    Threads,
    /// The block sweep.
    Blocks,
    /// LOAD+DIV.
    Div,
    /// STORE.
    Store,
}

/// One kernel configuration, measured at several points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Its purpose.
    pub sweep: Sweep,
    /// The kernel.
    pub kernel: MemoryKernel,
    /// The level targeted.
    pub level: Level,
    /// Threads per block.
    pub threads: u32,
    /// Grid size.
    pub blocks: Blocks,
    /// Points, in units of the sized iteration count.
    pub points: Vec<u32>,
}

impl Config {
    /// `load`, `load_div` or `store`.
    pub fn op(&self) -> &'static str {
        if self.kernel.divides() {
            "load_div"
        } else if self.kernel.stores() {
            "store"
        } else {
            "load"
        }
    }

    /// `load/l2/1024t_sm`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}t_{}", self.op(), self.level.short(), self.threads, self.blocks.label())
    }

    /// The benchmark name of point `p`: `memory/load/l2/1024t_sm/p2`.
    pub fn point_name(&self, p: u32) -> String {
        format!("memory/{}/p{p}", self.key())
    }
}

fn kernel_for(level: Level, op: &str) -> MemoryKernel {
    match (op, level) {
        ("load", Level::Shared) => MemoryKernel::LoadShared,
        ("load", Level::L1) => MemoryKernel::LoadCached,
        ("load", _) => MemoryKernel::LoadCg,
        ("load_div", Level::L1) => MemoryKernel::LoadDivCached,
        ("load_div", _) => MemoryKernel::LoadDivCg,
        (_, Level::Shared) => MemoryKernel::StoreShared,
        _ => MemoryKernel::StoreCg,
    }
}

/// The configurations, in the order they run: the main LOAD configuration of each level,
/// the thread sweep (L1, L2), the block sweep (L2), LOAD+DIV (L1, L2, DRAM), STORE (shared,
/// L2, DRAM; L1 is write-through on NVIDIA GPUs, so a store "to L1" is a store to L2).
pub fn plan() -> Vec<Config> {
    let config = |sweep, op: &str, level, threads, blocks, points: &[u32]| Config {
        sweep,
        kernel: kernel_for(level, op),
        level,
        threads,
        blocks,
        points: points.to_vec(),
    };
    let mut list = Vec::new();
    for level in Level::ALL {
        list.push(config(Sweep::Level, "load", level, MAIN_THREADS, Blocks::PerSm(1), &MAIN_POINTS));
    }
    for level in [Level::L1, Level::L2] {
        for threads in SWEEP_THREADS {
            list.push(config(Sweep::Threads, "load", level, threads, Blocks::PerSm(1), &SWEEP_POINTS));
        }
    }
    for blocks in [Blocks::QuarterOfSms, Blocks::PerSm(2)] {
        list.push(config(Sweep::Blocks, "load", Level::L2, MAIN_THREADS, blocks, &SWEEP_POINTS));
    }
    for level in [Level::L1, Level::L2, Level::Dram] {
        list.push(config(Sweep::Div, "load_div", level, MAIN_THREADS, Blocks::PerSm(1), &SWEEP_POINTS));
    }
    for level in [Level::Shared, Level::L2, Level::Dram] {
        list.push(config(Sweep::Store, "store", level, STORE_THREADS, Blocks::PerSm(2), &SWEEP_POINTS));
    }
    list
}

/// How a configuration lays out its data on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Elements of each block's region.
    pub sub: u64,
    /// Elements between a thread's consecutive accesses.
    pub stride: u64,
    /// Warm-up steps (one pass over the region).
    pub warm: u64,
}

impl Layout {
    /// Bytes of each block's region.
    pub fn region_bytes(&self) -> u64 {
        self.sub * ELEMENT_BYTES
    }

    /// Sectors one step of a block touches: its threads' consecutive 8-byte elements.
    pub fn sectors_per_block_step(&self) -> u64 {
        (u64::from(self.threads) * ELEMENT_BYTES).div_ceil(SECTOR_BYTES)
    }

    /// Thread accesses per sector access (4 for full sectors, fewer below 4 threads).
    pub fn accesses_per_sector(&self) -> f64 {
        f64::from(self.threads) / self.sectors_per_block_step() as f64
    }
}

/// The region each block of `config` gets, from the GPU's properties: shared memory
/// [`SHARED_REGION_BYTES`]; L1 a quarter of the shared memory per SM (the unified L1 holds
/// at least that with the kernel using no shared memory); L2 a quarter of the L2 split among
/// the blocks; DRAM eight times the L2 (at most an eighth of the memory) split among them.
pub fn layout(config: &Config, properties: &GpuProperties) -> Result<Layout> {
    let blocks = config.blocks.count(properties.sm_count.max(1));
    let threads = config.threads;
    if threads == 0 || threads > properties.max_threads_per_block {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{}: {threads} threads per block (the GPU allows 1 to {})",
                config.key(),
                properties.max_threads_per_block
            ),
        ));
    }
    if config.kernel.stores() && threads != STORE_THREADS {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{}: the STORE kernels are compiled for {STORE_THREADS} threads per block", config.key()),
        ));
    }
    let stride = if config.kernel.stores() { u64::from(STORE_THREADS) } else { load_stride(threads) };
    let granule = if config.kernel.stores() { stride * u64::from(STORE_UNROLL) } else { stride };
    let region_bytes = match config.level {
        Level::Shared => SHARED_REGION_BYTES,
        Level::L1 => properties.shared_per_sm_bytes / 4,
        Level::L2 => properties.l2_bytes / 4 / u64::from(blocks),
        Level::Dram => (8 * properties.l2_bytes).min(properties.total_memory_bytes / 8) / u64::from(blocks),
    };
    let sub = region_bytes / ELEMENT_BYTES / granule * granule;
    if sub < granule.max(u64::from(threads)) || sub > u64::from(u32::MAX) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{}: a region of {region_bytes} bytes per block does not fit {threads} threads with a stride of {stride} elements",
                config.key()
            ),
        ));
    }
    let warm = if config.kernel == MemoryKernel::LoadShared || config.kernel == MemoryKernel::StoreShared {
        0
    } else {
        sub / stride
    };
    Ok(Layout { blocks, threads, sub, stride, warm })
}

/// A configuration ready on the GPU: its kernel, data and sized iteration unit.
#[derive(Clone)]
struct Prepared {
    kernel: Kernel,
    launch: LaunchConfig,
    layout: Layout,
    unit: u32,
    table: Option<Arc<DeviceBuffer<u64>>>,
    out: Arc<DeviceBuffer<u8>>,
    verified_threads: usize,
}

fn args(config: &Config, p: &Prepared, iterations: u32) -> KernelArgs {
    let l = &p.layout;
    let sub = l.sub as u32;
    let warm = l.warm as u32;
    let with_table = |a: KernelArgs| match &p.table {
        Some(t) => a.buffer(t.as_ref()),
        None => a,
    };
    match config.kernel {
        MemoryKernel::LoadShared => {
            KernelArgs::new().buffer(p.out.as_ref()).u32(sub).u32(l.stride as u32).u32(iterations)
        }
        MemoryKernel::StoreShared => KernelArgs::new().buffer(p.out.as_ref()).u32(sub).u32(warm).u32(iterations),
        MemoryKernel::StoreCg => {
            with_table(KernelArgs::new()).buffer(p.out.as_ref()).u32(sub).u32(warm).u32(iterations)
        }
        _ => with_table(KernelArgs::new()).buffer(p.out.as_ref()).u32(sub).u32(warm).u32(iterations).u32(DIVISOR),
    }
}

fn verify(gpu: &CudaGpu, config: &Config, p: &Prepared, iterations: u32) -> Result<usize> {
    p.kernel.launch(gpu.stream(), p.launch, &args(config, p, iterations))?;
    gpu.synchronize()?;
    if gpu.is_checked() {
        // Nothing ran: there is no stored result to compare.
        return Ok(0);
    }
    let stored = gpu.download(p.out.as_ref())?;
    let l = p.layout;
    let shape = ChaseShape { sub: l.sub, stride: l.stride, warm: l.warm, iterations: u64::from(iterations) };
    let slot = config.kernel.output_bytes_per_thread() as usize;
    let word = |at: usize| -> Option<u64> {
        stored.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let threads = u64::from(l.blocks) * u64::from(l.threads);
    let checked = sample_threads(threads);
    for &g in &checked {
        let (block, thread) = (g / u64::from(l.threads), g % u64::from(l.threads));
        let at = g as usize * slot;
        let got = word(at).ok_or_else(|| {
            Error::new(
                ErrorKind::WrongResult,
                format!("{}: the output buffer has no slot for thread {g}", config.key()),
            )
        })?;
        let expect = if config.kernel.stores() {
            store_offset(shape, thread)
        } else {
            load_offset(config.kernel, shape, thread)
        };
        if got != expect {
            return Err(Error::new(
                ErrorKind::WrongResult,
                format!(
                    "{} ({}) stored offset {got} for thread {g} after {iterations} iterations; the host expects {expect}: the chain or the kernel is wrong",
                    config.key(),
                    config.kernel.entry()
                ),
            ));
        }
        if config.kernel.divides() {
            let table = p.table.as_ref().map(|t| t.device_address()).unwrap_or(0);
            let acc = word(at + 8).unwrap_or(u64::MAX);
            let host = u64::from(div_accumulator(shape, table, block, thread, DIVISOR));
            if acc != host {
                return Err(Error::new(
                    ErrorKind::WrongResult,
                    format!("{}: thread {g}'s division accumulator is {acc}, the host's {host}", config.key()),
                ));
            }
        }
    }
    Ok(checked.len())
}

fn prepare(gpu: &Arc<CudaGpu>, config: &Config, options: &SuiteOptions) -> Result<Prepared> {
    let properties = gpu.properties()?;
    let layout = layout(config, &properties)?;
    let module = gpu.load_ptx(&generate(config.kernel), &config.kernel.file_name(), JitOptLevel::O4)?;
    let kernel = module.kernel(config.kernel.entry())?;
    let elements = layout.sub * u64::from(layout.blocks);
    let shared_bytes = if config.kernel.shared() { layout.region_bytes() as u32 } else { 0 };
    let table = if config.kernel.shared() {
        None
    } else {
        let table = gpu.alloc_zeros::<u64>(elements as usize)?;
        if !config.kernel.stores() {
            let init = gpu.load_ptx(&generate(MemoryKernel::Init), "init.ptx", JitOptLevel::O4)?.kernel("init")?;
            let init_args = KernelArgs::new().buffer(&table).u64(elements).u64(layout.sub).u64(layout.stride);
            init.launch(gpu.stream(), LaunchConfig::linear(1024, 256), &init_args)?;
        }
        Some(Arc::new(table))
    };
    let out_bytes = u64::from(layout.blocks) * u64::from(layout.threads) * config.kernel.output_bytes_per_thread();
    let out = Arc::new(gpu.alloc_zeros::<u8>(out_bytes as usize)?);
    let launch = LaunchConfig { shared_mem_bytes: shared_bytes, ..LaunchConfig::linear(layout.blocks, layout.threads) };
    let mut prepared = Prepared { kernel, launch, layout, unit: 1, table, out, verified_threads: 0 };
    prepared.verified_threads = verify(gpu, config, &prepared, 2)?;
    if gpu.is_checked() {
        // No GPU time to size the loop by: the smallest unit, for the checked launches.
        return Ok(prepared);
    }

    // The unit: the largest point's measurement part takes about `launch_s`.
    let timer = gpu.timer()?;
    let time = |iterations: u32| -> Result<f64> {
        timer.start(gpu.stream())?;
        prepared.kernel.launch(gpu.stream(), prepared.launch, &args(config, &prepared, iterations))?;
        timer.stop(gpu.stream())?;
        gpu.synchronize()?;
        timer.elapsed_s()
    };
    let largest = f64::from(*config.points.iter().max().unwrap_or(&1)).max(1.0);
    let target = options.launch_s / largest;
    time(0)?;
    let warm_only = time(0)?;
    let unit = size_loop(time, warm_only, target, (f64::from(u32::MAX) / largest) as u32)?;
    prepared.unit = unit;
    Ok(prepared)
}

/// What the setup of a point found: its size and verification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointFacts {
    /// The layout.
    pub layout: Layout,
    /// Iteration unit of its configuration.
    pub unit: u32,
    /// Measurement-loop iterations of this point.
    pub iterations: u32,
    /// Threads whose results were checked against the host.
    pub verified_threads: usize,
}

/// One measured point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRun {
    /// Benchmark name.
    pub name: String,
    /// Its configuration.
    pub config: Config,
    /// Point, in units.
    pub p: u32,
    /// Setup facts.
    pub facts: PointFacts,
    /// Sectors the measurement part accesses per launch.
    pub sectors: f64,
    /// Dependent accesses each thread makes in the measurement part.
    pub thread_accesses: f64,
    /// Energy per launch, J.
    pub energy_j: Estimate,
    /// Energy above active idle per launch, J.
    pub dynamic_j: Estimate,
    /// GPU time per launch, s.
    pub time_s: Estimate,
    /// Mean power, W.
    pub power_w: Estimate,
    /// Active idle, W.
    pub idle_w: f64,
    /// SM clock in the windows, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// The engine's warnings.
    pub warnings: Vec<String>,
}

impl PointRun {
    /// From a measurement.
    pub fn new(name: &str, config: &Config, p: u32, facts: PointFacts, m: &Measurement) -> PointRun {
        let per_thread = f64::from(facts.iterations) * f64::from(config.kernel.accesses_per_iteration());
        let sectors = per_thread * f64::from(facts.layout.blocks) * facts.layout.sectors_per_block_step() as f64;
        let clocks: Vec<f64> = m.windows.iter().filter_map(|w| w.sm_clock_mhz.map(f64::from)).collect();
        PointRun {
            name: name.to_string(),
            config: config.clone(),
            p,
            facts,
            sectors,
            thread_accesses: per_thread,
            energy_j: m.energy_j,
            dynamic_j: m.dynamic_j,
            time_s: m.time_s,
            power_w: m.power_w,
            idle_w: m.idle_w,
            sm_clock_mhz: (!clocks.is_empty()).then(|| clocks.iter().sum::<f64>() / clocks.len() as f64),
            warnings: m.warnings.iter().map(|w| w.message.clone()).collect(),
        }
    }
}

/// The points file: every point measured so far, with the GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointsFile {
    /// [`POINTS_FORMAT`].
    pub format: String,
    /// The GPU.
    pub device: DeviceFacts,
    /// Whether simulated.
    pub simulated: bool,
    /// The points, in the order measured.
    pub points: Vec<PointRun>,
}

/// The fit of one configuration's points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigFit {
    /// The configuration.
    pub config: Config,
    /// `load/l2/1024t_sm`.
    pub key: String,
    /// Its layout.
    pub layout: Layout,
    /// Energy per launch against sectors: slope J/sector, intercept J.
    pub energy: Option<LineFit>,
    /// Dynamic energy per launch against sectors.
    pub dynamic: Option<LineFit>,
    /// GPU time per launch against a thread's dependent accesses: slope s/access.
    pub time: Option<LineFit>,
    /// Energy of the warm-up alone (point 0), J.
    pub warm_only_j: Option<f64>,
    /// Delestrac's offset: intercept less the warm-up alone, J.
    pub offset_j: Option<f64>,
    /// Points fitted.
    pub points: usize,
}

impl ConfigFit {
    /// Energy per sector, pJ, with its interval.
    pub fn pj_per_sector(&self) -> Option<(f64, f64, f64)> {
        self.energy.map(|f| (f.slope * 1e12, f.slope_ci.0 * 1e12, f.slope_ci.1 * 1e12))
    }

    /// Per-access latency, ns.
    pub fn latency_ns(&self) -> Option<f64> {
        self.time.map(|f| f.slope * 1e9)
    }
}

/// Fits each configuration that has at least three measured points.
pub fn fit_configs(points: &[PointRun]) -> Vec<ConfigFit> {
    let mut by_key: BTreeMap<String, Vec<&PointRun>> = BTreeMap::new();
    let mut order = Vec::new();
    for point in points {
        let key = point.config.key();
        if !by_key.contains_key(&key) {
            order.push(key.clone());
        }
        by_key.entry(key).or_default().push(point);
    }
    order
        .into_iter()
        .map(|key| {
            let mut list = by_key.remove(&key).unwrap_or_default();
            list.sort_by_key(|p| p.p);
            list.dedup_by_key(|p| p.p);
            let energy = fit_line(&list.iter().map(|p| (p.sectors, p.energy_j.mean)).collect::<Vec<_>>());
            let dynamic = fit_line(&list.iter().map(|p| (p.sectors, p.dynamic_j.mean)).collect::<Vec<_>>());
            let time = fit_line(&list.iter().map(|p| (p.thread_accesses, p.time_s.mean)).collect::<Vec<_>>());
            let warm_only_j = list.iter().find(|p| p.p == 0).map(|p| p.energy_j.mean);
            let offset_j = energy.zip(warm_only_j).map(|(f, w)| f.intercept - w);
            ConfigFit {
                config: list[0].config.clone(),
                key,
                layout: list[0].facts.layout,
                energy,
                dynamic,
                time,
                warm_only_j,
                offset_j,
                points: list.len(),
            }
        })
        .collect()
}

/// The instruction suite's figures the DIV cross-check compares with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivReference {
    /// The instruction table it came from.
    pub source: String,
    /// Its GPU.
    pub uuid: String,
    /// `div.u32` + `xor.b32`, net energy per thread-instruction at JIT O4, J.
    pub net_j: f64,
    /// The same, dynamic, J.
    pub dynamic_j: f64,
}

/// Reads `div.u32` and `xor.b32` (JIT O4) from an instruction table.
pub fn div_reference(path: &Path) -> Result<DivReference> {
    let table = crate::instructions::suite::read_table(path)?;
    let row = |label: &str| {
        table
            .rows
            .iter()
            .find(|r| r.label == label && r.level == "O4")
            .ok_or_else(|| Error::new(ErrorKind::InvalidInput, format!("{} has no {label} at O4", path.display())))
    };
    let (div, xor) = (row("div.u32")?, row("xor.b32")?);
    Ok(DivReference {
        source: path.display().to_string(),
        uuid: table.device.map(|d| d.uuid).unwrap_or_default(),
        net_j: div.net.thread_j.mean + xor.net.thread_j.mean,
        dynamic_j: div.net.dynamic_thread_j.mean + xor.net.dynamic_thread_j.mean,
    })
}

/// The instruction table used for the DIV cross-check: `$ENERGY_MEMORY_INSTRUCTIONS`, else
/// this GPU's own (`target/energy/suites/instructions.json`), else the H100 table committed
/// under `docs/results/`.
pub fn div_reference_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ENERGY_MEMORY_INSTRUCTIONS") {
        return Some(PathBuf::from(p));
    }
    let own = suite_dir().join("instructions.json");
    if own.is_file() {
        return Some(own);
    }
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results/instructions-h100.json");
    committed.is_file().then_some(committed)
}

/// One level's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelRow {
    /// The level.
    pub level: Level,
    /// `load` or `store`.
    pub op: String,
    /// The main configuration's fit.
    pub main: ConfigFit,
    /// The lowest energy per sector over the level's configurations of this op (the lower
    /// bound), pJ, and the configuration it came from.
    pub lower_bound_pj: Option<(f64, String)>,
    /// Delestrac's A100 figure, pJ per sector.
    pub a100_pj: f64,
    /// Why the level check flags it (empty: its latency fits the level).
    pub flags: Vec<String>,
}

/// The DIV cross-check of one level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivRow {
    /// The level.
    pub level: Level,
    /// LOAD+DIV energy per sector, J.
    pub load_div_j: f64,
    /// LOAD energy per sector, J.
    pub load_j: f64,
    /// (LOAD+DIV - LOAD) per thread access: one `div.u32` and one `xor.b32`, J, with the
    /// interval from the two slopes' (added in quadrature).
    pub per_division_j: (f64, f64, f64),
    /// The instruction suite's `div.u32` + `xor.b32`, when available.
    pub reference: Option<DivReference>,
}

/// The suite's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryTable {
    /// [`TABLE_FORMAT`].
    pub format: String,
    /// Whether simulated.
    pub simulated: bool,
    /// The GPU.
    pub device: DeviceFacts,
    /// When the table was built (RFC 3339).
    pub timestamp: String,
    /// LOAD rows then STORE rows.
    pub levels: Vec<LevelRow>,
    /// The thread sweep: every LOAD fit of L1 and L2 at one block per SM, by threads.
    pub thread_sweep: Vec<ConfigFit>,
    /// The block sweep of L2 LOADs at 1024 threads.
    pub block_sweep: Vec<ConfigFit>,
    /// Per-access latency of each level's main LOAD configuration.
    pub latencies: Latencies,
    /// The DIV cross-check.
    pub div: Vec<DivRow>,
    /// Every configuration's fit.
    pub fits: Vec<ConfigFit>,
    /// Every point.
    pub points: Vec<PointRun>,
    /// Planned configurations with fewer than three points measured.
    pub missing: Vec<String>,
}

fn half_width(f: &LineFit) -> f64 {
    (f.slope_ci.1 - f.slope_ci.0) / 2.0
}

/// Builds the table from the measured points (any subset of the plan).
pub fn build_table(file: &PointsFile, reference: Option<DivReference>) -> MemoryTable {
    let fits = fit_configs(&file.points);
    let find = |sweep: Sweep, level: Level| fits.iter().find(|f| f.config.sweep == sweep && f.config.level == level);
    let mut latencies = Latencies::default();
    for level in Level::ALL {
        if let Some(ns) = find(Sweep::Level, level).and_then(|f| f.latency_ns()) {
            latencies.set(level, ns);
        }
    }
    let flags = level_check(&latencies);
    let mut levels = Vec::new();
    for (op, sweep) in [("load", Sweep::Level), ("store", Sweep::Store)] {
        for level in Level::ALL {
            let Some(main) = find(sweep, level) else { continue };
            let lower_bound_pj = fits
                .iter()
                .filter(|f| f.config.level == level && f.config.op() == op)
                .filter_map(|f| f.energy.map(|e| (e.slope * 1e12, f.key.clone())))
                .filter(|(pj, _)| *pj > 0.0)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let mut own_flags: Vec<String> =
                flags.iter().filter(|(l, _)| *l == level).map(|(_, w)| w.clone()).collect();
            if op == "store" {
                own_flags.clear(); // the level check is made on the LOAD latencies
            }
            if let Some(f) = main.energy {
                if f.r2 < 0.9 {
                    own_flags.push(format!("r² = {:.3}: energy is not linear in the accesses", f.r2));
                }
            }
            levels.push(LevelRow {
                level,
                op: op.to_string(),
                main: main.clone(),
                lower_bound_pj,
                a100_pj: level.a100_pj_per_sector(),
                flags: own_flags,
            });
        }
    }
    let thread_sweep: Vec<ConfigFit> = {
        let mut list: Vec<ConfigFit> = fits
            .iter()
            .filter(|f| {
                f.config.op() == "load"
                    && matches!(f.config.level, Level::L1 | Level::L2)
                    && f.config.blocks == Blocks::PerSm(1)
            })
            .cloned()
            .collect();
        list.sort_by_key(|f| (f.config.level, f.config.threads));
        list
    };
    let block_sweep: Vec<ConfigFit> = {
        let mut list: Vec<ConfigFit> = fits
            .iter()
            .filter(|f| f.config.op() == "load" && f.config.level == Level::L2 && f.config.threads == MAIN_THREADS)
            .cloned()
            .collect();
        list.sort_by_key(|f| f.layout.blocks);
        list
    };
    let div = [Level::L1, Level::L2, Level::Dram]
        .iter()
        .filter_map(|&level| {
            let with = find(Sweep::Div, level)?;
            let without = find(Sweep::Level, level)?;
            let (a, b) = (with.energy?, without.energy?);
            let per_access = 1.0 / with.layout.accesses_per_sector();
            let delta = (a.slope - b.slope) * per_access;
            let half = half_width(&a).hypot(half_width(&b)) * per_access;
            Some(DivRow {
                level,
                load_div_j: a.slope,
                load_j: b.slope,
                per_division_j: (delta, delta - half, delta + half),
                reference: reference.clone(),
            })
        })
        .collect();
    let measured: Vec<String> = fits.iter().filter(|f| f.points >= 3).map(|f| f.key.clone()).collect();
    let missing = plan().iter().map(|c| c.key()).filter(|k| !measured.contains(k)).collect();
    MemoryTable {
        format: TABLE_FORMAT.into(),
        simulated: file.simulated,
        device: file.device.clone(),
        timestamp: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        levels,
        thread_sweep,
        block_sweep,
        latencies,
        div,
        fits,
        points: file.points.clone(),
        missing,
    }
}

fn pj(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn pj_ci(f: &Option<LineFit>) -> String {
    match f {
        Some(f) => format!("{} [{}, {}]", pj(f.slope * 1e12), pj(f.slope_ci.0 * 1e12), pj(f.slope_ci.1 * 1e12)),
        None => "-".into(),
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".into())
}

/// The table as markdown.
pub fn render_markdown(t: &MemoryTable) -> String {
    let mut s = String::from("# Energy per memory access\n\n");
    s.push_str(&format!(
        "{}{} {} (driver {}); {}.\n\n",
        if t.simulated { "**SIMULATED** " } else { "" },
        t.device.name,
        t.device.uuid,
        t.device.driver_version.as_deref().unwrap_or("unknown"),
        t.timestamp
    ));
    s.push_str(
        "Energy per 32-byte sector is the slope of the energy per launch against the sectors the measurement \
         loop accesses (the warm-up alone is the first point), with its 95 % interval and r²; dynamic leaves out \
         the active idle. Offset: the intercept less the warm-up alone (Delestrac's ΔE). Latency: the slope of \
         GPU time against a thread's dependent accesses in the same configuration (loaded latency). Lower \
         bound: the lowest energy per sector over the thread and block sweeps.\n\n",
    );
    s.push_str("## Energy per sector\n\n");
    s.push_str("| level | op | config | region / block | pJ per sector | dynamic pJ | r² | offset, mJ | latency, ns | lower bound, pJ | A100 (Delestrac), pJ | level check |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for row in &t.levels {
        let m = &row.main;
        s.push_str(&format!(
            "| {} | {} | {} threads x {} blocks | {} KiB | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.level,
            row.op,
            m.layout.threads,
            m.layout.blocks,
            m.layout.region_bytes() / 1024,
            pj_ci(&m.energy),
            opt(m.dynamic.map(|f| f.slope * 1e12), pj),
            opt(m.energy.map(|f| f.r2), |r| format!("{r:.4}")),
            opt(m.offset_j, |j| format!("{:.2}", j * 1e3)),
            opt(m.latency_ns(), |n| format!("{n:.1}")),
            row.lower_bound_pj.as_ref().map(|(pj_, key)| format!("{} ({key})", pj(*pj_))).unwrap_or_else(|| "-".into()),
            if row.op == "load" { pj(row.a100_pj) } else { "-".into() },
            if row.flags.is_empty() {
                if row.op == "load" {
                    "fits".to_string()
                } else {
                    "-".to_string()
                }
            } else {
                format!("**flagged**: {}", row.flags.join("; "))
            }
        ));
    }
    s.push_str("\n## Thread sweep (one block per SM)\n\n![thread sweep](memory-threads.svg)\n\n");
    s.push_str(
        "| level | threads per block | pJ per sector | dynamic pJ | r² | latency, ns |\n|---|---|---|---|---|---|\n",
    );
    for f in &t.thread_sweep {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            f.config.level,
            f.config.threads,
            pj_ci(&f.energy),
            opt(f.dynamic.map(|f| f.slope * 1e12), pj),
            opt(f.energy.map(|f| f.r2), |r| format!("{r:.4}")),
            opt(f.latency_ns(), |n| format!("{n:.1}"))
        ));
    }
    for level in [Level::L1, Level::L2] {
        let of = |threads: u32| {
            t.thread_sweep
                .iter()
                .find(|f| f.config.level == level && f.config.threads == threads)
                .and_then(|f| f.energy)
        };
        if let (Some(one), Some(full)) = (of(1), of(MAIN_THREADS)) {
            s.push_str(&format!(
                "\n{level}: 1 thread per block costs {:.1}x the energy per sector of {MAIN_THREADS} (Delestrac saw about 15x on an A100).\n",
                one.slope / full.slope
            ));
        }
    }
    s.push_str("\n## Block sweep (L2, 1024 threads per block)\n\n| blocks | pJ per sector | r² | latency, ns |\n|---|---|---|---|\n");
    for f in &t.block_sweep {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            f.layout.blocks,
            pj_ci(&f.energy),
            opt(f.energy.map(|f| f.r2), |r| format!("{r:.4}")),
            opt(f.latency_ns(), |n| format!("{n:.1}"))
        ));
    }
    s.push_str(
        "\n## LOAD+DIV cross-check\n\n(LOAD+DIV - LOAD) energy per sector over the thread accesses per sector: one `div.u32` \
         and one `xor.b32` per load, against the instruction suite's figures for the same two instructions.\n\n\
         | level | LOAD+DIV, pJ/sector | LOAD, pJ/sector | div + xor per thread, pJ | instruction suite net (dynamic), pJ | ratio to net |\n|---|---|---|---|---|---|\n",
    );
    for d in &t.div {
        let (m, lo, hi) = d.per_division_j;
        s.push_str(&format!(
            "| {} | {} | {} | {} [{}, {}] | {} | {} |\n",
            d.level,
            pj(d.load_div_j * 1e12),
            pj(d.load_j * 1e12),
            pj(m * 1e12),
            pj(lo * 1e12),
            pj(hi * 1e12),
            d.reference
                .as_ref()
                .map(|r| format!("{} ({})", pj(r.net_j * 1e12), pj(r.dynamic_j * 1e12)))
                .unwrap_or_else(|| "-".into()),
            d.reference.as_ref().map(|r| format!("{:.2}", m / r.net_j)).unwrap_or_else(|| "-".into()),
        ));
    }
    if let Some(r) = t.div.first().and_then(|d| d.reference.as_ref()) {
        s.push_str(&format!("\nInstruction figures from `{}` (GPU {}).\n", r.source, r.uuid));
    }
    if !t.missing.is_empty() {
        s.push_str(&format!("\nNot measured (filtered out or failed): {}.\n", t.missing.join(", ")));
    }
    s
}

/// One line of the thread-sweep plot: level, colour, and (threads, pJ, CI low, CI high).
type SweepSeries = (Level, &'static str, Vec<(f64, f64, f64, f64)>);

/// The thread sweep as an SVG plot: energy per sector (log) against threads per block (log 2),
/// one line per level, 95 % intervals as bars.
pub fn render_thread_svg(t: &MemoryTable) -> String {
    let (w, h, left, right, top, bottom) = (780.0, 420.0, 70.0, 190.0, 40.0, 50.0);
    let series: Vec<SweepSeries> = [(Level::L1, "#1f77b4"), (Level::L2, "#d62728")]
        .iter()
        .map(|&(level, color)| {
            let pts = t
                .thread_sweep
                .iter()
                .filter(|f| f.config.level == level)
                .filter_map(|f| {
                    let e = f.energy?;
                    Some((f64::from(f.config.threads), e.slope * 1e12, e.slope_ci.0 * 1e12, e.slope_ci.1 * 1e12))
                })
                .filter(|p| p.1 > 0.0)
                .collect();
            (level, color, pts)
        })
        .collect();
    let all: Vec<f64> = series.iter().flat_map(|s| s.2.iter().flat_map(|p| [p.1, p.2.max(p.1 / 10.0), p.3])).collect();
    let lo = all.iter().cloned().fold(f64::INFINITY, f64::min).max(1e-3);
    let hi = all.iter().cloned().fold(0.0, f64::max).max(lo * 10.0);
    let (ylo, yhi) = (lo.log10().floor(), hi.log10().ceil());
    let x = |threads: f64| left + (threads.log2() / 10.0) * (w - left - right);
    let y = |pj: f64| top + (1.0 - (pj.max(10f64.powf(ylo)).log10() - ylo) / (yhi - ylo)) * (h - top - bottom);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"20\" font-size=\"14\">{}Energy per 32-byte sector against threads per block, {} ({} blocks)</text>\n",
        if t.simulated { "SIMULATED: " } else { "" },
        t.device.name,
        t.thread_sweep.first().map(|f| f.layout.blocks).unwrap_or(0)
    );
    for e in 0..=10 {
        let xv = x(f64::from(1u32 << e));
        s.push_str(&format!(
            "<line x1=\"{xv:.1}\" y1=\"{top}\" x2=\"{xv:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{xv:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            h - bottom,
            h - bottom + 16.0,
            1u32 << e
        ));
    }
    let mut d = ylo;
    while d <= yhi + 1e-9 {
        let yv = y(10f64.powf(d));
        s.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{yv:.1}\" x2=\"{:.1}\" y2=\"{yv:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            w - right,
            left - 6.0,
            yv + 4.0,
            10f64.powf(d)
        ));
        d += 1.0;
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">threads per block</text>\n<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">pJ per sector</text>\n",
        (left + w - right) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    ));
    for (i, (level, color, pts)) in series.iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        let path: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1))).collect();
        s.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
            path.join(" ")
        ));
        for p in pts {
            s.push_str(&format!(
                "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{color}\"/><circle cx=\"{0:.1}\" cy=\"{3:.1}\" r=\"3\" fill=\"{color}\"/>\n",
                x(p.0),
                y(p.2.max(lo)),
                y(p.3),
                y(p.1)
            ));
        }
        let ly = top + 20.0 + 20.0 * i as f64;
        s.push_str(&format!(
            "<line x1=\"{0:.1}\" y1=\"{ly:.1}\" x2=\"{1:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"/><text x=\"{2:.1}\" y=\"{3:.1}\">{level} (A100: {4} pJ)</text>\n",
            w - right + 10.0,
            w - right + 30.0,
            w - right + 34.0,
            ly + 4.0,
            level.a100_pj_per_sector()
        ));
    }
    s.push_str("</svg>\n");
    s
}

fn json_error(what: &str, e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Format, format!("cannot serialize {what}: {e}"))
}

/// Writes the points file (whole or not at all).
pub fn save_points(dir: &Path, file: &PointsFile) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the suite's output directory", e))?;
    let path = dir.join("memory-points.json");
    let text = serde_json::to_string_pretty(file).map_err(|e| json_error("a memory points file", e))?;
    write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// Reads a points file.
pub fn load_points(path: &Path) -> Result<PointsFile> {
    read_tagged_json(path, "a memory points file", POINTS_FORMAT, |f: &PointsFile| &f.format)
}

/// Writes `memory.json`, `memory.md` and `memory-threads.svg` under `dir`.
pub fn write_table(table: &MemoryTable, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the suite's output directory", e))?;
    let json = dir.join("memory.json");
    let md = dir.join("memory.md");
    let svg = dir.join("memory-threads.svg");
    let text = serde_json::to_string_pretty(table).map_err(|e| json_error("the memory table", e))?;
    write_atomically(&json, text.as_bytes())?;
    write_atomically(&md, render_markdown(table).as_bytes())?;
    write_atomically(&svg, render_thread_svg(table).as_bytes())?;
    Ok(vec![json, md, svg])
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
    let table = build_table(&file, reference);
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
            list.push(BenchSpec::new(&name, file!(), line!()).code(code).options(options.measure).without_time_bench());
        }
    }
    list
}

/// `cargo bench --bench memory`: measures every point, then writes the table; exit status 1
/// when a benchmark failed (wrong result, CUDA error), 2 for bad options.
pub fn main() -> std::process::ExitCode {
    if let Err(exit) = gpu_gate("memory") {
        return exit;
    }
    let options = SuiteOptions::default();
    let configs = plan();
    let points: usize = configs.iter().map(|c| c.points.len()).sum();
    let per_point_s = SUITE_SECONDS_PER_BENCHMARK;
    println!(
        "memory: {} configurations, {points} points; about {per_point_s:.0} s per point, {:.0} min for all (criterion filters select a part)",
        configs.len(),
        points as f64 * per_point_s / 60.0
    );
    let book: FactsBook = Arc::new(Mutex::new(BTreeMap::new()));
    let dir = suite_dir();
    let mut file: Option<PointsFile> = None;
    let mut save_failures = 0;
    let collected = run_collect(specs(&configs, &options, &book), &RunSettings { criterion_plots: false }, |bench| {
        let Some(m) = &bench.kernel else { return };
        let Some((config, p, facts)) = book.lock().ok().and_then(|b| b.get(&bench.name).cloned()) else { return };
        let f = file.get_or_insert_with(|| PointsFile {
            format: POINTS_FORMAT.into(),
            device: m.device.clone(),
            simulated: m.simulated,
            points: Vec::new(),
        });
        f.points.push(PointRun::new(&bench.name, &config, p, facts, m));
        if let Err(e) = save_points(&dir, f) {
            eprintln!("error: {e}");
            save_failures += 1;
        }
    });
    if file.is_none() {
        if collected.simulated {
            println!("memory: no point was measured (no GPU: the points that ran were checked only): no table written");
        } else {
            println!("memory: no point was measured (a filter, --test or --list): no table written");
        }
        return if collected.failures > 0 { std::process::ExitCode::FAILURE } else { std::process::ExitCode::SUCCESS };
    }
    if let Err(e) = publish_table(&dir) {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    if collected.failures > 0 || save_failures > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
