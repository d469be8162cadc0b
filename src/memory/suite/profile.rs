//! Which level served each configuration's accesses, from Nsight Compute: the profile mode
//! of `cargo bench --bench memory` and the hit-rate table built from `ncu`'s export.
//!
//! With `ENERGY_MEMORY_PROFILE=1` the bench measures nothing: it loads each configuration
//! (its kernel checked against the host as in a measured run), then launches it twice, the
//! warm-up alone (0 iterations) and [`profile_iterations`] iterations, checks what the
//! second launch stored, and writes the launches in order to `memory-profile.json`. Run
//! under `ncu` ([`NCU_COMMAND`]), every launch of a suite kernel is profiled; the two
//! launches' difference is the measurement part alone (Delestrac's subtraction), so the
//! warm-up's misses do not count against the level. [`hit_rates`] pairs ncu's launches with
//! the profile file (by order and kernel name, refusing any mismatch) and gives, per
//! configuration, the share of its accesses that the targeted level served; a share below
//! [`SERVED_THRESHOLD`] flags the level row: its figure is not published as that level.

use energy_report::NcuKernel;

use super::*;

/// The environment variable that selects the profile mode.
pub const PROFILE_ENV: &str = "ENERGY_MEMORY_PROFILE";
/// The schema tag of `memory-profile.json`.
pub const PROFILE_SCHEMA: &str = "energy-memory-profile/1";
/// The least share of a configuration's accesses its level must serve.
pub const SERVED_THRESHOLD: f64 = 0.95;

/// The metrics the hit-rate table reads (`ncu --metrics`, comma-separated).
pub const NCU_METRICS: [&str; 12] = [
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "sm__cycles_elapsed.avg.per_second",
];

/// How to profile (clocks and caches left as they are: the machines are shared, and each
/// kernel brings its own data into its level).
pub const NCU_COMMAND: &str = "ENERGY_MEMORY_PROFILE=1 ncu --clock-control none --cache-control none \
     --kernel-name regex:'^(load|store)' --csv --page raw --print-units base --metrics METRICS \
     ./memory --bench > memory-ncu.csv";

/// One profiled launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileLaunch {
    /// The configuration.
    pub config: Config,
    /// The kernel's entry (what ncu names the launch).
    pub kernel: String,
    /// Measurement-loop iterations.
    pub iterations: u32,
    /// `check` (the load's check), `warm` (warm-up alone) or `measure`.
    pub purpose: String,
    /// Sectors the measurement part accesses.
    pub sectors: f64,
    /// Thread accesses in the measurement part.
    pub thread_accesses: f64,
}

/// `memory-profile.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileFile {
    /// [`PROFILE_SCHEMA`].
    pub format: String,
    /// The GPU's name.
    pub gpu: String,
    /// Every launch of a suite kernel, in order.
    pub launches: Vec<ProfileLaunch>,
}

/// Iterations of the profiled launch: the measurement part at least 16 times the warm-up's
/// steps (at least 8 iterations; 64 where the kernel has no warm-up loop).
pub fn profile_iterations(layout: &Layout) -> u32 {
    let steps = 16 * layout.warm;
    let per_iteration = u64::from(super::super::ptx::LOAD_UNROLL);
    if layout.warm == 0 {
        64
    } else {
        steps.div_ceil(per_iteration).clamp(8, u64::from(u32::MAX)) as u32
    }
}

fn launch_record(config: &Config, layout: Layout, iterations: u32, purpose: &str) -> ProfileLaunch {
    let (thread_accesses, sectors) = layout.measured_accesses(config.kernel, iterations);
    ProfileLaunch {
        config: config.clone(),
        kernel: config.kernel.entry().to_string(),
        iterations,
        purpose: purpose.to_string(),
        sectors,
        thread_accesses,
    }
}

/// The profile mode: every configuration of the plan, launched as the module says; the file
/// written under `dir`. Exit status 1 when a configuration fails.
pub fn profile_main(dir: &Path) -> std::process::ExitCode {
    match profile_run(dir) {
        Ok(path) => {
            println!("memory: profile launches in {}", path.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: memory profile: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn profile_run(dir: &Path) -> Result<PathBuf> {
    let gpu = Arc::new(CudaGpu::open(0)?);
    if gpu.is_checked() {
        return Err(Error::new(ErrorKind::NoGpu, "the profile mode needs a real GPU (and ncu around it)"));
    }
    let properties = gpu.properties()?;
    let mut file = ProfileFile { format: PROFILE_SCHEMA.into(), gpu: properties.name.clone(), launches: Vec::new() };
    let path = dir.join("memory-profile.json");
    for config in plan() {
        let prepared = load(&gpu, &config).map_err(|e| e.context(config.key()))?;
        let layout = prepared.layout;
        file.launches.push(launch_record(&config, layout, 2, "check"));
        for (iterations, purpose) in [(0, "warm"), (profile_iterations(&layout), "measure")] {
            prepared.kernel.launch(gpu.stream(), prepared.launch, &args(&config, &prepared, iterations))?;
            gpu.synchronize()?;
            check_stored(&gpu, &config, &prepared, iterations).map_err(|e| e.context(config.key()))?;
            file.launches.push(launch_record(&config, layout, iterations, purpose));
        }
        println!("memory profile: {} launched", config.key());
        // Saved after each configuration: a run cut short keeps its order.
        write_json(&path, "the memory profile file", &file)?;
    }
    Ok(path)
}

/// Reads `memory-profile.json`.
pub fn load_profile(path: &Path) -> Result<ProfileFile> {
    read_tagged_json(path, "a memory profile file", PROFILE_SCHEMA, |f: &ProfileFile| &f.format)
}

/// What ncu says served one configuration's measurement part (pN − p0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HitRow {
    /// `load/l2/1024t_sm`.
    pub key: String,
    /// The level targeted.
    pub level: Level,
    /// L1 hit rate of the global loads (hit sectors / sectors), if the kernel loads globally.
    pub l1_hit: Option<f64>,
    /// L2 hit rate of the sectors the SMs read (or wrote, for STORE).
    pub l2_hit: Option<f64>,
    /// DRAM bytes (read, or written for STORE) per byte the measurement part accesses.
    pub dram_per_byte: Option<f64>,
    /// Shared-memory wavefronts per shared load instruction (2 for a conflict-free 64-bit warp load).
    pub shared_wavefronts_per_load: Option<f64>,
    /// ncu's sectors at the level over the suite's count (1 when the accounting agrees).
    pub sectors_ratio: Option<f64>,
    /// The share of the accesses the targeted level served.
    pub served: Option<f64>,
    /// SM clock during the profiled launch, MHz.
    pub sm_clock_mhz: Option<f64>,
}

impl HitRow {
    /// Whether the targeted level served too few of the accesses.
    pub fn flagged(&self) -> bool {
        self.served.is_some_and(|s| s < SERVED_THRESHOLD)
    }
}

/// Pairs ncu's launches (suite kernels only, in order) with the profile file and computes
/// each configuration's [`HitRow`]. Refuses exports that do not line up.
pub fn hit_rates(profile: &ProfileFile, ncu: &[NcuKernel]) -> Result<Vec<HitRow>> {
    let suite: Vec<&NcuKernel> = ncu
        .iter()
        .filter(|k| MemoryKernel::ALL.iter().any(|m| m.entry() != "init" && k.name.starts_with(m.entry())))
        .collect();
    if suite.len() != profile.launches.len() {
        return Err(Error::new(
            ErrorKind::Format,
            format!(
                "the ncu export holds {} launches of suite kernels, the profile file {}: profile the whole run with \
                 `{NCU_COMMAND}`",
                suite.len(),
                profile.launches.len()
            ),
        ));
    }
    for (i, (k, l)) in suite.iter().zip(&profile.launches).enumerate() {
        // A demangled or decorated name still starts with the entry; the entry's own
        // prefix (`load_cg` in `load_cg_x`) cannot occur: the entries are whole names.
        let name = k.base_name();
        if name != l.kernel {
            return Err(Error::new(
                ErrorKind::Format,
                format!(
                    "ncu launch {} ({i}th of the suite) is `{}`, the profile file says `{}`",
                    k.id, k.name, l.kernel
                ),
            ));
        }
    }
    let mut rows = Vec::new();
    for (i, l) in profile.launches.iter().enumerate() {
        if l.purpose != "measure" || i == 0 || profile.launches[i - 1].purpose != "warm" {
            continue;
        }
        let (warm, measure) = (suite[i - 1], suite[i]);
        let delta = |m: &str| -> Option<f64> { Some(measure.metrics.get(m)? - warm.metrics.get(m)?) };
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let sectors = l.sectors;
        let stores = l.config.kernel.stores();
        let shared = l.config.kernel.shared();
        let l1_sectors = delta(NCU_METRICS[0]);
        let l1_hit = if shared || stores { None } else { ratio(delta(NCU_METRICS[1]), l1_sectors) };
        let (l2_sectors, l2_hits, dram) = if stores {
            (delta(NCU_METRICS[4]), delta(NCU_METRICS[5]), delta(NCU_METRICS[7]))
        } else {
            (delta(NCU_METRICS[2]), delta(NCU_METRICS[3]), delta(NCU_METRICS[6]))
        };
        let l2_hit = if shared { None } else { ratio(l2_hits, l2_sectors) };
        let bytes = sectors * SECTOR_BYTES as f64;
        let dram_per_byte = if shared { None } else { dram.map(|d| d / bytes) };
        let shared_wavefronts_per_load =
            if shared && !stores { ratio(delta(NCU_METRICS[9]), delta(NCU_METRICS[8])) } else { None };
        let sectors_ratio = match l.config.level {
            Level::Shared => None,
            Level::L1 => l1_sectors.map(|s| s / sectors),
            Level::L2 | Level::Dram => l2_sectors.map(|s| s / sectors),
        };
        let served = match l.config.level {
            Level::Shared => shared.then_some(1.0),
            Level::L1 => l1_hit,
            Level::L2 => l2_hit,
            Level::Dram => dram_per_byte.map(|d| d.min(1.0)),
        };
        rows.push(HitRow {
            key: l.config.key(),
            level: l.config.level,
            l1_hit,
            l2_hit,
            dram_per_byte,
            shared_wavefronts_per_load,
            sectors_ratio,
            served,
            sm_clock_mhz: measure.metrics.get(NCU_METRICS[11]).map(|hz| hz / 1e6),
        });
    }
    Ok(rows)
}

/// Reads `memory-profile.json` and `memory-ncu.csv` under `dir`, when both are there.
pub fn read_hit_rates(dir: &Path) -> Option<Result<Vec<HitRow>>> {
    let (profile, csv) = (dir.join("memory-profile.json"), dir.join("memory-ncu.csv"));
    if !profile.exists() || !csv.exists() {
        return None;
    }
    Some(load_profile(&profile).and_then(|p| hit_rates(&p, &energy_report::read_ncu_csv(&csv)?)))
}

/// Sets the table's hit rates and flags each level row whose main configuration's level
/// served fewer than [`SERVED_THRESHOLD`] of its accesses.
pub fn attach_hit_rates(table: &mut MemoryTable, rows: Vec<HitRow>) {
    for level in &mut table.levels {
        if let Some(row) = rows.iter().find(|r| r.key == level.main.key) {
            if row.flagged() {
                level.flags.push(format!(
                    "ncu: {} served {:.1} % of the accesses (< {:.0} %): not published as {}",
                    level.level,
                    row.served.unwrap_or(0.0) * 100.0,
                    SERVED_THRESHOLD * 100.0,
                    level.level
                ));
            }
        }
    }
    table.hit_rates = rows;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn kernel(id: u64, name: &str, metrics: &[(usize, f64)]) -> NcuKernel {
        NcuKernel {
            id,
            name: name.into(),
            block: String::new(),
            grid: String::new(),
            metrics: metrics.iter().map(|&(i, v)| (NCU_METRICS[i].to_string(), v)).collect::<BTreeMap<_, _>>(),
            text: BTreeMap::new(),
        }
    }

    fn l2_profile() -> ProfileFile {
        let config = plan().into_iter().find(|c| c.key() == "load/l2/1024t_sm").unwrap();
        let layout = Layout { blocks: 132, threads: 1024, sub: 12288, stride: 1024, warm: 12 };
        ProfileFile {
            format: PROFILE_SCHEMA.into(),
            gpu: "test".into(),
            launches: vec![
                launch_record(&config, layout, 2, "check"),
                launch_record(&config, layout, 0, "warm"),
                launch_record(&config, layout, 8, "measure"),
            ],
        }
    }

    #[test]
    fn the_measurement_part_is_the_difference_of_the_two_launches() {
        let profile = l2_profile();
        let sectors = profile.launches[2].sectors; // 8 x 32 x 132 x 256
        assert_eq!(sectors, 8.0 * 32.0 * 132.0 * 256.0);
        // The warm-up misses everything; the measurement part hits 99 %.
        let warm = kernel(5, "load_cg", &[(2, 1000.0), (3, 0.0), (6, 32_000.0)]);
        let measure =
            kernel(6, "load_cg", &[(2, 1000.0 + sectors), (3, 0.99 * sectors), (6, 32_000.0 + 0.01 * sectors * 32.0)]);
        let rows = hit_rates(&profile, &[kernel(1, "init", &[]), kernel(4, "load_cg", &[]), warm, measure]).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert!((r.l2_hit.unwrap() - 0.99).abs() < 1e-12 && !r.flagged());
        assert!((r.sectors_ratio.unwrap() - 1.0).abs() < 1e-12);
        assert!((r.dram_per_byte.unwrap() - 0.01).abs() < 1e-12);
        // At 90 % the level row is flagged.
        let measure = kernel(6, "load_cg", &[(2, 1000.0 + sectors), (3, 0.90 * sectors)]);
        let warm = kernel(5, "load_cg", &[(2, 1000.0), (3, 0.0)]);
        let rows = hit_rates(&profile, &[kernel(4, "load_cg", &[]), warm, measure]).unwrap();
        assert!(rows[0].flagged());
    }

    #[test]
    fn exports_that_do_not_line_up_are_refused() {
        let profile = l2_profile();
        let e = hit_rates(&profile, &[kernel(4, "load_cg", &[])]).unwrap_err().to_string();
        assert!(e.contains("1 launches") && e.contains("profile file 3"), "{e}");
        let three = [kernel(4, "load_cg", &[]), kernel(5, "load_cached", &[]), kernel(6, "load_cg", &[])];
        let e = hit_rates(&profile, &three).unwrap_err().to_string();
        assert!(e.contains("load_cached"), "{e}");
    }

    #[test]
    fn the_profiled_launch_outweighs_the_warm_up() {
        let layout = Layout { blocks: 132, threads: 1024, sub: 12288, stride: 1024, warm: 12 };
        assert_eq!(profile_iterations(&layout), 8);
        let layout = Layout { warm: 3072, ..layout };
        assert_eq!(profile_iterations(&layout), 1536);
        assert_eq!(profile_iterations(&Layout { warm: 0, ..layout }), 64);
    }
}
