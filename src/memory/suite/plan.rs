//! The plan of the memory suite: options, configurations (kernel, level, threads, blocks) and their points.

use super::*;

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
/// The schema tag of the points file.
pub const POINTS_SCHEMA: &str = "energy-memory-points/1";
/// The schema tag of the table.
pub const TABLE_SCHEMA: &str = "energy-memory/1";

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

pub(super) fn kernel_for(level: Level, op: &str) -> MemoryKernel {
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
