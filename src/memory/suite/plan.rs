//! The plan of the memory suite: options, configurations (kernel, level, threads, blocks) and their points.

use super::*;

/// Threads per block of the main configurations (the paper's lower bound was at 1024).
pub const MAIN_THREADS: u32 = 1024;
/// Threads per block of the thread sweep besides [`MAIN_THREADS`] (L1 and L2).
pub const SWEEP_THREADS: [u32; 4] = [1, 4, 32, 256];
/// Threads per block of the second LOAD configuration of shared memory and DRAM (beside
/// [`MAIN_THREADS`] at one and two blocks per SM).
pub const OTHER_LOAD_THREADS: u32 = 256;
/// Threads per block of the second STORE configuration of each level (beside
/// [`STORE_THREADS`] at two and one blocks per SM): a divisor of [`STORE_THREADS`], so the
/// STORE kernels' address step still separates the threads.
pub const OTHER_STORE_THREADS: u32 = 64;
/// The revision of [`plan`]: 1 measured DRAM, shared and each STORE level in one
/// configuration each (20 configurations, 68 points); 2 adds two more of each (30, 98).
pub const PLAN_REVISION: u32 = 2;
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
    /// Another thread count than the level's main LOAD or STORE configuration: the thread
    /// sweep of L1 and L2, the second configuration of DRAM, shared memory and STORE.
    Threads,
    /// Another grid than the level's main LOAD or STORE configuration: the block sweep of
    /// L2, the third configuration of DRAM, shared memory and STORE.
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
/// the thread sweep (L1, L2), the block sweep (L2), DRAM and shared LOADs at
/// [`OTHER_LOAD_THREADS`] and at two blocks per SM, LOAD+DIV (L1, L2, DRAM), STORE (shared,
/// L2, DRAM; L1 is write-through on NVIDIA GPUs, so a store "to L1" is a store to L2) at
/// [`STORE_THREADS`] x 2 blocks per SM, then at [`OTHER_STORE_THREADS`] and at one block per
/// SM. Every LOAD and STORE level is measured in at least three configurations, so its
/// lowest figure is a minimum over more than one.
pub fn plan() -> Vec<Config> {
    plan_revision(PLAN_REVISION)
}

/// The configurations of plan revision `revision` ([`PLAN_REVISION`]): what a points file
/// written under it planned, for its list of configurations not measured.
pub fn plan_revision(revision: u32) -> Vec<Config> {
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
    let more = revision >= 2;
    if more {
        for level in [Level::Shared, Level::Dram] {
            list.push(config(Sweep::Threads, "load", level, OTHER_LOAD_THREADS, Blocks::PerSm(1), &SWEEP_POINTS));
            list.push(config(Sweep::Blocks, "load", level, MAIN_THREADS, Blocks::PerSm(2), &SWEEP_POINTS));
        }
    }
    for level in [Level::L1, Level::L2, Level::Dram] {
        list.push(config(Sweep::Div, "load_div", level, MAIN_THREADS, Blocks::PerSm(1), &SWEEP_POINTS));
    }
    for level in [Level::Shared, Level::L2, Level::Dram] {
        list.push(config(Sweep::Store, "store", level, STORE_THREADS, Blocks::PerSm(2), &SWEEP_POINTS));
    }
    if more {
        for level in [Level::Shared, Level::L2, Level::Dram] {
            list.push(config(Sweep::Threads, "store", level, OTHER_STORE_THREADS, Blocks::PerSm(2), &SWEEP_POINTS));
            list.push(config(Sweep::Blocks, "store", level, STORE_THREADS, Blocks::PerSm(1), &SWEEP_POINTS));
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn gpus() -> [GpuProperties; 2] {
        let h100 = GpuProperties {
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            l2_bytes: 50 * 1024 * 1024,
            shared_per_sm_bytes: 228 * 1024,
            shared_per_block_optin_bytes: 227 * 1024,
            max_threads_per_block: 1024,
            total_memory_bytes: 80 * 1024 * 1024 * 1024,
        };
        let a100 = GpuProperties {
            name: "NVIDIA A100-SXM4-40GB".into(),
            compute_capability: (8, 0),
            sm_count: 108,
            l2_bytes: 40 * 1024 * 1024,
            shared_per_sm_bytes: 164 * 1024,
            shared_per_block_optin_bytes: 163 * 1024,
            total_memory_bytes: 40 * 1024 * 1024 * 1024,
            ..h100.clone()
        };
        [h100, a100]
    }

    #[test]
    fn dram_shared_and_every_store_level_have_three_configurations() {
        let list = plan();
        for (op, level) in [
            ("load", Level::Dram),
            ("load", Level::Shared),
            ("store", Level::Shared),
            ("store", Level::L2),
            ("store", Level::Dram),
        ] {
            let shapes: BTreeSet<(u32, Blocks)> =
                list.iter().filter(|c| c.op() == op && c.level == level).map(|c| (c.threads, c.blocks)).collect();
            assert!(shapes.len() >= 3, "{op} {level}: {shapes:?}");
        }
        // Every LOAD and STORE level the table has a row for rests on three or more.
        for level in Level::ALL {
            assert!(list.iter().filter(|c| c.op() == "load" && c.level == level).count() >= 3, "{level}");
        }
        let keys: BTreeSet<String> = list.iter().map(Config::key).collect();
        assert_eq!(keys.len(), list.len(), "keys are unique");
    }

    #[test]
    fn the_revisions_count_their_configurations_and_points() {
        let count = |list: Vec<Config>| (list.len(), list.iter().map(|c| c.points.len()).sum::<usize>());
        assert_eq!(count(plan_revision(1)), (20, 68));
        assert_eq!(count(plan()), (30, 98));
        // Revision 2 keeps revision 1's configurations, in their order, and adds sweeps of three points.
        let old: Vec<String> = plan_revision(1).iter().map(Config::key).collect();
        let new: Vec<String> = plan().iter().map(Config::key).filter(|k| old.contains(k)).collect();
        assert_eq!(old, new);
        for c in plan().iter().filter(|c| !old.contains(&c.key())) {
            assert_eq!(c.points, SWEEP_POINTS, "{}", c.key());
            assert!(matches!(c.sweep, Sweep::Threads | Sweep::Blocks), "{}", c.key());
        }
    }

    #[test]
    fn the_added_configurations_fit_and_target_their_level() {
        for gpu in gpus() {
            for c in plan() {
                let l = layout(&c, &gpu).unwrap_or_else(|e| panic!("{} on {}: {e}", c.key(), gpu.name));
                let per_sm = l.blocks.div_ceil(gpu.sm_count);
                assert!(per_sm * c.threads <= 2048, "{}: {} threads per SM", c.key(), per_sm * c.threads);
                if c.kernel.shared() {
                    assert!(u64::from(per_sm) * l.region_bytes() <= gpu.shared_per_sm_bytes, "{}", c.key());
                }
                // What the grid touches: a STORE of fewer threads than its kernel's step writes
                // that share of each step.
                let touched = l.region_bytes() * u64::from(l.blocks) * u64::from(c.threads)
                    / if c.kernel.stores() { u64::from(STORE_THREADS) } else { u64::from(c.threads) };
                match c.level {
                    Level::L2 => assert!(touched <= gpu.l2_bytes / 4, "{}: {touched} bytes", c.key()),
                    Level::Dram => assert!(touched >= 3 * gpu.l2_bytes, "{}: {touched} bytes", c.key()),
                    _ => {}
                }
            }
        }
    }
}
