//! Delestrac's energy model of data movement: the regression that turns a sweep of access
//! counts into energy per access and offset, the level check by latency, and the lower-bound
//! breakdown of an application's accesses.

use serde::{Deserialize, Serialize};

pub use crate::common::{fit_line, LineFit};

/// The memory levels the suite targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Shared memory (software-managed, on the SM).
    Shared,
    /// The L1 data cache.
    L1,
    /// The L2 cache.
    L2,
    /// Device memory (HBM on the H100).
    Dram,
}

impl Level {
    /// Every level, nearest first.
    pub const ALL: [Level; 4] = [Level::Shared, Level::L1, Level::L2, Level::Dram];

    /// Short name (benchmark names, tables).
    pub fn short(self) -> &'static str {
        match self {
            Level::Shared => "shared",
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::Dram => "dram",
        }
    }

    /// Delestrac et al.'s lower bound on an A100 (SXM4 40 GB, 1065 MHz), pJ per 32-byte sector.
    pub fn a100_pj_per_sector(self) -> f64 {
        match self {
            Level::Shared => 82.1,
            Level::L1 => 107.0,
            Level::L2 => 368.0,
            Level::Dram => 2090.0,
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::Shared => "shared",
            Level::L1 => "L1",
            Level::L2 => "L2",
            Level::Dram => "DRAM",
        })
    }
}

/// Latency of a dependent access measured at each level, ns (one thread chasing its chain).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latencies {
    /// Shared memory.
    pub shared_ns: Option<f64>,
    /// L1.
    pub l1_ns: Option<f64>,
    /// L2.
    pub l2_ns: Option<f64>,
    /// DRAM.
    pub dram_ns: Option<f64>,
}

impl Latencies {
    /// The latency of `level`.
    pub fn of(&self, level: Level) -> Option<f64> {
        match level {
            Level::Shared => self.shared_ns,
            Level::L1 => self.l1_ns,
            Level::L2 => self.l2_ns,
            Level::Dram => self.dram_ns,
        }
    }

    /// Sets the latency of `level`.
    pub fn set(&mut self, level: Level, ns: f64) {
        match level {
            Level::Shared => self.shared_ns = Some(ns),
            Level::L1 => self.l1_ns = Some(ns),
            Level::L2 => self.l2_ns = Some(ns),
            Level::Dram => self.dram_ns = Some(ns),
        }
    }
}

/// A level nearer the SM must be at least this many times faster than the next one out
/// (shared and L1 against L2): "much less than".
pub const NEAR_OVER_L2: f64 = 2.0;
/// L2 against DRAM.
pub const L2_OVER_DRAM: f64 = 1.5;

/// The level check without a profiler: each level's latency must fit it,
/// shared and L1 at least [`NEAR_OVER_L2`] times faster than L2, and L2 at least
/// [`L2_OVER_DRAM`] times faster than DRAM. Returns, per level, why its result is flagged
/// (empty: the latencies fit). A level without a latency is flagged as unchecked.
pub fn level_check(latencies: &Latencies) -> Vec<(Level, String)> {
    let mut flags = Vec::new();
    let l2 = latencies.l2_ns;
    let dram = latencies.dram_ns;
    for level in Level::ALL {
        let Some(own) = latencies.of(level) else {
            flags.push((level, format!("no latency was measured for {level}: its level is unchecked")));
            continue;
        };
        match level {
            Level::Shared | Level::L1 => {
                if let Some(l2) = l2 {
                    if own * NEAR_OVER_L2 > l2 {
                        flags.push((
                            level,
                            format!(
                                "{level} latency {own:.1} ns is not {NEAR_OVER_L2}x below L2's {l2:.1} ns: its accesses may not hit {level}"
                            ),
                        ));
                    }
                }
            }
            Level::L2 => {
                if let Some(dram) = dram {
                    if own * L2_OVER_DRAM > dram {
                        flags.push((
                            level,
                            format!(
                                "L2 latency {own:.1} ns is not {L2_OVER_DRAM}x below DRAM's {dram:.1} ns: the L2 accesses may miss, or the DRAM ones hit"
                            ),
                        ));
                    }
                }
            }
            Level::Dram => {
                if let Some(l2) = l2 {
                    if l2 * L2_OVER_DRAM > own {
                        flags.push((
                            level,
                            format!("DRAM latency {own:.1} ns is not {L2_OVER_DRAM}x above L2's {l2:.1} ns: its accesses may hit L2"),
                        ));
                    }
                }
            }
        }
    }
    flags
}

/// Energy per 32-byte sector access of each level, J (the calibrated lower bounds): loads
/// served by each level, and stores by where they end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectorEnergies {
    /// Shared memory (loads and stores).
    pub shared_j: f64,
    /// A load served by L1.
    pub l1_j: f64,
    /// A load served by L2.
    pub l2_j: f64,
    /// A load served by DRAM (the whole path).
    pub dram_j: f64,
    /// A store absorbed by L2.
    #[serde(default)]
    pub l2_store_j: f64,
    /// A store written back to DRAM (the whole path).
    #[serde(default)]
    pub dram_store_j: f64,
}

impl SectorEnergies {
    /// Delestrac et al.'s A100 figures (loads only: the paper gives no store figures, so
    /// the stores are priced as loads of the same level).
    pub fn a100() -> SectorEnergies {
        let pj = |level: Level| level.a100_pj_per_sector() * 1e-12;
        SectorEnergies {
            shared_j: pj(Level::Shared),
            l1_j: pj(Level::L1),
            l2_j: pj(Level::L2),
            dram_j: pj(Level::Dram),
            l2_store_j: pj(Level::L2),
            dram_store_j: pj(Level::Dram),
        }
    }

    /// The energy of one sector loaded from `level`, J.
    pub fn of(&self, level: Level) -> f64 {
        match level {
            Level::Shared => self.shared_j,
            Level::L1 => self.l1_j,
            Level::L2 => self.l2_j,
            Level::Dram => self.dram_j,
        }
    }
}

/// An application kernel's sector accesses, each counted once at the level that served it
/// (loads) or where it ended (stores); [`AccessCounts::from_ncu`] reads them from Nsight
/// Compute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessCounts {
    /// Shared-memory sectors, loads and stores (wavefronts x 4: a 128-byte wavefront is
    /// four sectors).
    pub shared: f64,
    /// Global-load sectors that hit L1.
    pub l1: f64,
    /// Global-load sectors that hit L2 (missed L1).
    pub l2: f64,
    /// Global-load sectors read from DRAM.
    pub dram: f64,
    /// Global-store sectors that stayed in L2 (not written back during the launch).
    #[serde(default)]
    pub l2_store: f64,
    /// Global-store sectors written back to DRAM during the launch.
    #[serde(default)]
    pub dram_store: f64,
}

/// The Nsight Compute metrics [`AccessCounts::from_ncu`] reads (`ncu --metrics`).
pub const BREAKDOWN_METRICS: [&str; 7] = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "dram__bytes_read.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_write.sum",
];

impl AccessCounts {
    /// A profiled launch's accesses: shared wavefronts (loads and stores) x 4; global-load
    /// sectors that hit L1; SM read sectors that hit L2; DRAM bytes read / 32; global-store
    /// sectors, split into those DRAM wrote back during the launch (DRAM bytes written / 32,
    /// at most the stored sectors) and the rest, which stayed in L2. Every metric of
    /// [`BREAKDOWN_METRICS`] must be in the export.
    pub fn from_ncu(kernel: &energy_report::NcuKernel) -> energy_harness::Result<AccessCounts> {
        let m = |i: usize| kernel.metric(BREAKDOWN_METRICS[i]);
        let sector = super::ptx::SECTOR_BYTES as f64;
        let stored = m(5)?;
        let written_back = (m(6)? / sector).min(stored);
        Ok(AccessCounts {
            shared: 4.0 * (m(0)? + m(1)?),
            l1: m(2)?,
            l2: m(3)?,
            dram: m(4)? / sector,
            l2_store: stored - written_back,
            dram_store: written_back,
        })
    }
}

/// One term of a [`Breakdown`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BreakdownTerm {
    /// What is counted (`DRAM loads`, `L2 stores`, ...).
    pub what: String,
    /// Sectors.
    pub sectors: f64,
    /// Energy per sector, J.
    pub j_per_sector: f64,
    /// Sectors x energy per sector, J.
    pub j: f64,
}

/// The lower-bound data-movement energy of an application kernel, term by term.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Loads per level (nearest first), shared memory, then stores.
    pub terms: Vec<BreakdownTerm>,
    /// Sum of the terms, J.
    pub data_movement_j: f64,
    /// The kernel's measured dynamic energy, J, when given.
    pub dynamic_j: Option<f64>,
    /// Dynamic energy not explained by data movement (Delestrac's "Dyn. (rest)": compute and
    /// accesses above the lower bound), J, when the dynamic energy is given.
    pub rest_j: Option<f64>,
}

/// Delestrac's evaluation (Eq. 3 and 4 without the offsets, a lower bound): each count
/// times its energy per sector. Counts must be finite and non-negative.
pub fn breakdown(
    energies: &SectorEnergies,
    counts: &AccessCounts,
    dynamic_j: Option<f64>,
) -> Result<Breakdown, String> {
    let rows = [
        ("shared-memory accesses", counts.shared, energies.shared_j),
        ("L1 loads (hits)", counts.l1, energies.l1_j),
        ("L2 loads (hits)", counts.l2, energies.l2_j),
        ("DRAM loads", counts.dram, energies.dram_j),
        ("stores that stayed in L2", counts.l2_store, energies.l2_store_j),
        ("stores written back to DRAM", counts.dram_store, energies.dram_store_j),
    ];
    if let Some((what, n, _)) = rows.iter().find(|(_, n, _)| !n.is_finite() || *n < 0.0) {
        return Err(format!("the count of {what}, {n}, is not a finite non-negative number"));
    }
    let terms: Vec<BreakdownTerm> = rows
        .iter()
        .map(|&(what, sectors, j_per_sector)| BreakdownTerm {
            what: what.to_string(),
            sectors,
            j_per_sector,
            j: sectors * j_per_sector,
        })
        .collect();
    let data_movement_j = terms.iter().map(|t| t.j).sum::<f64>();
    Ok(Breakdown { terms, data_movement_j, dynamic_j, rest_j: dynamic_j.map(|d| d - data_movement_j) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_come_from_an_ncu_launch_in_sectors() {
        let mut metrics = std::collections::BTreeMap::new();
        // 10 + 5 shared wavefronts, 7 L1 hits, 100 L2 hits, 3200 B read, 50 sectors stored, 640 B written.
        for (name, v) in BREAKDOWN_METRICS.iter().zip([10.0, 5.0, 7.0, 100.0, 3200.0, 50.0, 640.0]) {
            metrics.insert(name.to_string(), v);
        }
        let k = energy_report::NcuKernel {
            id: 0,
            name: "saxpy".into(),
            block: String::new(),
            grid: String::new(),
            metrics,
            text: Default::default(),
        };
        let c = AccessCounts::from_ncu(&k).unwrap();
        assert_eq!((c.shared, c.l1, c.l2, c.dram, c.l2_store, c.dram_store), (60.0, 7.0, 100.0, 100.0, 30.0, 20.0));
        // Write-backs of earlier launches' stores cannot make more than this launch stored.
        let mut more = k.clone();
        more.metrics.insert(BREAKDOWN_METRICS[6].to_string(), 6400.0);
        let c = AccessCounts::from_ncu(&more).unwrap();
        assert_eq!((c.l2_store, c.dram_store), (0.0, 50.0));
        let mut k = k;
        k.metrics.remove(BREAKDOWN_METRICS[3]);
        let e = AccessCounts::from_ncu(&k).unwrap_err().to_string();
        assert!(e.contains("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"), "{e}");
    }

    #[test]
    fn a_line_is_recovered_exactly() {
        let pts: Vec<(f64, f64)> = (0..5).map(|i| (i as f64 * 1e9, 2.0 + 1.5e-10 * i as f64 * 1e9)).collect();
        let f = fit_line(&pts).unwrap();
        assert!((f.slope - 1.5e-10).abs() < 1e-20, "{f:?}");
        assert!((f.intercept - 2.0).abs() < 1e-9);
        assert!((f.r2 - 1.0).abs() < 1e-12);
        assert!(f.slope_ci.0 <= f.slope && f.slope <= f.slope_ci.1);
    }

    #[test]
    fn noise_widens_the_interval_and_lowers_r2() {
        let noisy = [(0.0, 1.0), (1.0, 3.2), (2.0, 4.8), (3.0, 7.3), (4.0, 8.9)];
        let f = fit_line(&noisy).unwrap();
        assert!(f.r2 < 1.0 && f.r2 > 0.98, "{f:?}");
        assert!(f.slope_ci.1 - f.slope_ci.0 > 0.1, "{f:?}");
        assert!(f.slope_ci.0 < 2.0 && 2.0 < f.slope_ci.1, "{f:?}");
    }

    #[test]
    fn too_few_or_degenerate_points_give_no_line() {
        assert!(fit_line(&[(0.0, 1.0), (1.0, 2.0)]).is_none());
        assert!(fit_line(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]).is_none());
        assert!(fit_line(&[(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0)]).is_none());
    }

    #[test]
    fn latencies_that_fit_their_levels_pass() {
        let l = Latencies { shared_ns: Some(15.0), l1_ns: Some(20.0), l2_ns: Some(140.0), dram_ns: Some(480.0) };
        assert!(level_check(&l).is_empty(), "{:?}", level_check(&l));
    }

    #[test]
    fn an_l1_that_is_really_l2_is_flagged() {
        let l = Latencies { shared_ns: Some(15.0), l1_ns: Some(130.0), l2_ns: Some(140.0), dram_ns: Some(480.0) };
        let flags = level_check(&l);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(flags[0].0, Level::L1);
    }

    #[test]
    fn a_dram_that_hits_l2_flags_both() {
        let l = Latencies { shared_ns: Some(15.0), l1_ns: Some(20.0), l2_ns: Some(140.0), dram_ns: Some(150.0) };
        let levels: Vec<Level> = level_check(&l).into_iter().map(|(l, _)| l).collect();
        assert_eq!(levels, vec![Level::L2, Level::Dram]);
        let missing = Latencies { dram_ns: None, ..l };
        assert!(level_check(&missing).iter().any(|(l, why)| *l == Level::Dram && why.contains("unchecked")));
    }

    #[test]
    fn the_breakdown_multiplies_and_sums() {
        let counts = AccessCounts { shared: 1e6, l1: 2e6, l2: 1e6, dram: 1e6, l2_store: 1e6, dram_store: 0.5e6 };
        let b = breakdown(&SectorEnergies::a100(), &counts, Some(5e-3)).unwrap();
        let expect = (82.1e6 + 214.0e6 + 368.0e6 + 2090.0e6 + 368.0e6 + 1045.0e6) * 1e-12;
        assert_eq!(b.terms.len(), 6);
        assert!((b.data_movement_j - expect).abs() < 1e-12, "{b:?}");
        assert!((b.rest_j.unwrap() - (5e-3 - expect)).abs() < 1e-12);
        assert!(breakdown(&SectorEnergies::a100(), &AccessCounts { dram: -1.0, ..counts }, None).is_err());
    }
}
