//! The memory table: rows per level and operation, the level check, DIV and STORE rows, rendered as markdown and as the thread-sweep SVG.

use super::*;

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
    /// The same over the dynamic energy (above active idle): what Delestrac et al. report
    /// (their Eq. 2-4), pJ, and the configuration it came from.
    #[serde(default)]
    pub dynamic_lower_bound_pj: Option<(f64, String)>,
    /// Delestrac's A100 figure, pJ per sector: a dynamic lower bound at 1065 MHz.
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
    /// The same in dynamic energy (above active idle), J, with its interval.
    #[serde(default)]
    pub per_division_dynamic_j: Option<(f64, f64, f64)>,
    /// Loaded latency per access with and without the division, ns: how much of the
    /// division the load's latency hides.
    #[serde(default)]
    pub latency_ns: Option<(f64, f64)>,
    /// The instruction suite's `div.u32` + `xor.b32`, when available.
    pub reference: Option<DivReference>,
}

/// The suite's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryTable {
    /// [`TABLE_SCHEMA`].
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
    /// Configurations of the points file's plan revision with fewer than three points measured.
    pub missing: Vec<String>,
    /// What Nsight Compute says served each configuration (empty without a profile).
    #[serde(default)]
    pub hit_rates: Vec<HitRow>,
}

pub(super) fn half_width(f: &LineFit) -> f64 {
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
            let lowest = |of: fn(&ConfigFit) -> Option<LineFit>| {
                fits.iter()
                    .filter(|f| f.config.level == level && f.config.op() == op)
                    .filter_map(|f| of(f).map(|e| (e.slope * 1e12, f.key.clone())))
                    .filter(|(pj, _)| *pj > 0.0)
                    .min_by(|a, b| a.0.total_cmp(&b.0))
            };
            let lower_bound_pj = lowest(|f| f.energy);
            let dynamic_lower_bound_pj = lowest(|f| f.dynamic);
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
                dynamic_lower_bound_pj,
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
            let per_division_dynamic_j = match (with.dynamic, without.dynamic) {
                (Some(a), Some(b)) => {
                    let delta = (a.slope - b.slope) * per_access;
                    let half = half_width(&a).hypot(half_width(&b)) * per_access;
                    Some((delta, delta - half, delta + half))
                }
                _ => None,
            };
            Some(DivRow {
                level,
                load_div_j: a.slope,
                load_j: b.slope,
                per_division_j: (delta, delta - half, delta + half),
                per_division_dynamic_j,
                latency_ns: with.latency_ns().zip(without.latency_ns()),
                reference: reference.clone(),
            })
        })
        .collect();
    let measured: Vec<String> = fits.iter().filter(|f| f.points >= 3).map(|f| f.key.clone()).collect();
    let missing = plan_revision(file.plan).iter().map(|c| c.key()).filter(|k| !measured.contains(k)).collect();
    MemoryTable {
        format: TABLE_SCHEMA.into(),
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
        hit_rates: Vec::new(),
    }
}

pub(super) fn pj(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

pub(super) fn pj_ci(f: &Option<LineFit>) -> String {
    match f {
        Some(f) => format!("{} [{}, {}]", pj(f.slope * 1e12), pj(f.slope_ci.0 * 1e12), pj(f.slope_ci.1 * 1e12)),
        None => "-".into(),
    }
}

pub(super) fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".into())
}

/// The table as markdown.
pub fn render_markdown(t: &MemoryTable) -> String {
    let mut s = String::from("# Energy per memory access\n\n");
    let clocks: Vec<f64> = t.points.iter().filter_map(|p| p.sm_clock_mhz).collect();
    let clock = if clocks.is_empty() {
        "SM clock not read".to_string()
    } else {
        let (lo, hi) = clocks.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), c| (lo.min(*c), hi.max(*c)));
        if hi - lo < 1.0 {
            format!("SM clock {lo:.0} MHz in every window (read, never set)")
        } else {
            format!("SM clock {lo:.0} to {hi:.0} MHz in the windows (read, never set)")
        }
    };
    s.push_str(&format!(
        "{}{} {} (driver {}); {clock}; {}.\n\n",
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
         GPU time against a thread's dependent accesses in the same configuration (loaded latency). Lowest \
         measured: the lowest energy per sector over the configurations measured at that level and op (their \
         number beside it); it is a lower bound only as far as a sweep reached its plateau, and with one \
         configuration it is that configuration's figure, no bound at all.\n\n\
         Like for like with Delestrac et al.: their A100 figures are dynamic lower bounds (energy above idle, \
         their Eq. 2-4, the minimum over their sweeps), not totals — at the A100's L1 peak (108 SMs x 128 B per \
         clock x 1.065 GHz, a sector every 2.17 ps) its ~55 W of static power alone is ~119 pJ per sector, \
         above their 107. So they sit beside our lowest measured dynamic figure. Their clock was locked at 1065 MHz; ours \
         was read, never set (the SM clock of the run is in the line above): a higher clock at a higher \
         voltage raises the dynamic energy per access (roughly with the voltage squared), so our figures are \
         expected above theirs for that reason alone.\n",
    );
    s.push_str(crate::common::ACCURACY_NOTE);
    s.push('\n');
    s.push_str("## Energy per sector\n\n");
    s.push_str("| level | op | config | region / block | pJ per sector [95 % CI] | dynamic pJ [95 % CI] | r² | offset, mJ | latency, ns | lowest measured, pJ | lowest measured dynamic, pJ (configurations) | A100 dynamic lower bound (Delestrac, 1065 MHz), pJ | ours / A100 | level check |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for row in &t.levels {
        let m = &row.main;
        s.push_str(&format!(
            "| {} | {} | {} threads x {} blocks | {} KiB | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.level,
            row.op,
            m.layout.threads,
            m.layout.blocks,
            m.layout.region_bytes() / 1024,
            pj_ci(&m.energy),
            pj_ci(&m.dynamic),
            opt(m.energy.map(|f| f.r2), |r| format!("{r:.4}")),
            opt(m.offset_j, |j| format!("{:.2}", j * 1e3)),
            opt(m.latency_ns(), |n| format!("{n:.1}")),
            row.lower_bound_pj.as_ref().map(|(pj_, key)| format!("{} ({key})", pj(*pj_))).unwrap_or_else(|| "-".into()),
            row.dynamic_lower_bound_pj
                .as_ref()
                .map(|(pj_, key)| {
                    let n = t.fits.iter().filter(|f| f.config.level == row.level && f.config.op() == row.op).count();
                    format!(
                        "{} ({key}; {})",
                        pj(*pj_),
                        if n == 1 { "one configuration".into() } else { format!("lowest of {n}") }
                    )
                })
                .unwrap_or_else(|| "-".into()),
            if row.op == "load" { pj(row.a100_pj) } else { "-".into() },
            match (&row.dynamic_lower_bound_pj, row.op.as_str()) {
                (Some((ours, _)), "load") => format!("{:.2}x", ours / row.a100_pj),
                _ => "-".into(),
            },
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
    s.push_str(&render_rail(t));
    s.push_str("\n## Thread sweep (one block per SM)\n\n![thread sweep](memory-threads.svg)\n\n");
    s.push_str(
        "| level | threads per block | pJ per sector [95 % CI] | dynamic pJ [95 % CI] | r² | latency, ns |\n|---|---|---|---|---|---|\n",
    );
    for f in &t.thread_sweep {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            f.config.level,
            f.config.threads,
            pj_ci(&f.energy),
            pj_ci(&f.dynamic),
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
        let dynamic_of = |threads: u32| {
            t.thread_sweep
                .iter()
                .find(|f| f.config.level == level && f.config.threads == threads)
                .and_then(|f| f.dynamic)
        };
        if let (Some(one), Some(full)) = (of(1), of(MAIN_THREADS)) {
            let dynamic = match (dynamic_of(1), dynamic_of(MAIN_THREADS)) {
                (Some(d1), Some(dn)) => sweep_ratio(&d1, &dn),
                _ => String::new(),
            };
            // Delestrac et al., Sec. VI-A: L1 1600 -> 107 pJ; L2 8490 to 4260 -> 378 pJ.
            let theirs = match level {
                Level::L1 => "about 15x on an A100 in L1, dynamic: 1600 -> 107 pJ",
                _ => "11x to 22x on an A100 in L2, dynamic: 4260 to 8490 -> 378 pJ",
            };
            s.push_str(&format!(
                "\n{level}: 1 thread per block costs {:.1}x the energy per sector of {MAIN_THREADS} in total energy{dynamic} (Delestrac saw {theirs}).\n",
                one.slope / full.slope
            ));
        }
    }
    s.push_str("\n## Block sweep (L2, 1024 threads per block)\n\n![block sweep](memory-blocks.svg)\n\n| blocks | pJ per sector [95 % CI] | dynamic pJ [95 % CI] | r² | latency, ns |\n|---|---|---|---|---|\n");
    for f in &t.block_sweep {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            f.layout.blocks,
            pj_ci(&f.energy),
            pj_ci(&f.dynamic),
            opt(f.energy.map(|f| f.r2), |r| format!("{r:.4}")),
            opt(f.latency_ns(), |n| format!("{n:.1}"))
        ));
    }
    s.push_str(&render_other_configurations(t));
    s.push_str(
        "\n## LOAD+DIV cross-check\n\n(LOAD+DIV - LOAD) energy per sector over the thread accesses per sector: one `div.u32` \
         and one `xor.b32` per load, total and dynamic, against the instruction suite's figures for the same two \
         instructions (its chain: one dependent division after another, at full occupancy). Latency: per access \
         with the division and without (equal when the load's latency hides the division).\n\n\
         | level | LOAD+DIV, pJ/sector | LOAD, pJ/sector | div + xor per thread, pJ | dynamic div + xor per thread, pJ | latency with / without DIV, ns | instruction suite net (dynamic), pJ | ratio, total to net | ratio, dynamic to dynamic |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let ci = |(m, lo, hi): (f64, f64, f64)| format!("{} [{}, {}]", pj(m * 1e12), pj(lo * 1e12), pj(hi * 1e12));
    for d in &t.div {
        let m = d.per_division_j.0;
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            d.level,
            pj(d.load_div_j * 1e12),
            pj(d.load_j * 1e12),
            ci(d.per_division_j),
            d.per_division_dynamic_j.map(ci).unwrap_or_else(|| "-".into()),
            d.latency_ns.map(|(a, b)| format!("{a:.1} / {b:.1}")).unwrap_or_else(|| "-".into()),
            d.reference
                .as_ref()
                .map(|r| format!("{} ({})", pj(r.net_j * 1e12), pj(r.dynamic_j * 1e12)))
                .unwrap_or_else(|| "-".into()),
            d.reference.as_ref().map(|r| format!("{:.2}", m / r.net_j)).unwrap_or_else(|| "-".into()),
            d.reference
                .as_ref()
                .zip(d.per_division_dynamic_j)
                .map(|(r, (dm, _, _))| format!("{:.2}", dm / r.dynamic_j))
                .unwrap_or_else(|| "-".into()),
        ));
    }
    if let Some(r) = t.div.first().and_then(|d| d.reference.as_ref()) {
        s.push_str(&format!("\nInstruction figures from `{}` (GPU {}).\n", r.source, r.uuid));
    }
    s.push_str(&render_hit_rates(&t.hit_rates));
    if !t.missing.is_empty() {
        s.push_str(&format!("\nNot measured (filtered out or failed): {}.\n", t.missing.join(", ")));
    }
    s
}

/// The LOAD and STORE configurations that no other section shows (DRAM and shared LOADs
/// besides the main ones, STOREs besides the main ones): what each level's lowest figure
/// is the minimum of, beside the rows above. Empty (no section) for points of plan
/// revision 1, where every such configuration had a row or a sweep of its own.
fn render_other_configurations(t: &MemoryTable) -> String {
    let shown = |f: &ConfigFit| {
        t.levels.iter().any(|r| r.main.key == f.key)
            || t.thread_sweep.iter().chain(&t.block_sweep).any(|s| s.key == f.key)
    };
    let mut others: Vec<&ConfigFit> =
        t.fits.iter().filter(|f| matches!(f.config.op(), "load" | "store") && !shown(f)).collect();
    if others.is_empty() {
        return String::new();
    }
    others.sort_by_key(|f| (f.config.op() == "store", f.config.level, f.config.threads, f.layout.blocks));
    let mut s = String::from(
        "\n## Other configurations of each level\n\nThe LOAD and STORE configurations besides the rows and sweeps \
         above (other threads per block, other blocks per SM): each level's lowest measured figure is the \
         minimum over all its configurations of that op, these among them.\n\n\
         | level | op | config | region / block | pJ per sector [95 % CI] | dynamic pJ [95 % CI] | r² | latency, ns |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for f in others {
        s.push_str(&format!(
            "| {} | {} | {} threads x {} blocks | {} KiB | {} | {} | {} | {} |\n",
            f.config.level,
            f.config.op(),
            f.layout.threads,
            f.layout.blocks,
            f.layout.region_bytes() / 1024,
            pj_ci(&f.energy),
            pj_ci(&f.dynamic),
            opt(f.energy.map(|f| f.r2), |r| format!("{r:.4}")),
            opt(f.latency_ns(), |n| format!("{n:.1}"))
        ));
    }
    s
}

/// The hit-rate section: what Nsight Compute says served each configuration.
fn render_hit_rates(rows: &[HitRow]) -> String {
    if rows.is_empty() {
        return format!(
            "\n## Which level served the accesses\n\nNo Nsight Compute profile beside the points: the levels are \
             inferred from latency only. To check them: `{NCU_COMMAND}` (METRICS: {}), in the folder of the points.\n",
            NCU_METRICS.join(",")
        );
    }
    let pct = |x: Option<f64>| opt(x, |v| format!("{:.1} %", v * 100.0));
    let mut s = String::from(
        "\n## Which level served the accesses (Nsight Compute)\n\nThe measurement part alone: a launch of the \
         warm-up alone subtracted from one with the measurement loop, clocks and caches left as found \
         (`--clock-control none --cache-control none`). Served: the share of the accesses the targeted level \
         served (L1: L1 hit rate of the global loads; L2: L2 hit rate of the sectors read, or written for \
         STORE; DRAM: DRAM bytes per byte accessed); below 95 % the level's row is flagged; a little above 100 % is the noise of the difference (the warm-up's hits vary \
         from launch to launch). Sectors ncu / ours: \
         ncu's sector count at the level over the suite's (1.00 when the accounting agrees). Shared: wavefronts \
         per warp load (2 for a conflict-free 64-bit load).\n\n\
         | configuration | level | served | L1 hit | L2 hit | DRAM bytes per byte | sectors ncu / ours | shared wavefronts per load | SM clock, MHz | |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.key,
            r.level,
            pct(r.served),
            pct(r.l1_hit),
            pct(r.l2_hit),
            opt(r.dram_per_byte, |v| format!("{v:.3}")),
            opt(r.sectors_ratio, |v| format!("{v:.2}")),
            opt(r.shared_wavefronts_per_load, |v| format!("{v:.2}")),
            opt(r.sm_clock_mhz, |v| format!("{v:.0}")),
            if r.flagged() { "**flagged**" } else { "" }
        ));
    }
    s
}

/// The one-thread to full-block ratio of the dynamic energy per sector, with the range its
/// two intervals allow; unresolved when the one-thread interval reaches zero.
fn sweep_ratio(one: &LineFit, full: &LineFit) -> String {
    let ratio = one.slope / full.slope;
    if one.slope_ci.0 <= 0.0 || full.slope_ci.0 <= 0.0 {
        format!(
            ", {ratio:.1}x in dynamic energy but unresolved: the one-thread interval [{:.0}, {:.0}] pJ reaches zero, so the \
             ratio is at most {:.1}x",
            one.slope_ci.0 * 1e12,
            one.slope_ci.1 * 1e12,
            one.slope_ci.1 / full.slope_ci.0
        )
    } else {
        format!(
            ", {ratio:.1}x [{:.1}, {:.1}] in dynamic energy",
            one.slope_ci.0 / full.slope_ci.1,
            one.slope_ci.1 / full.slope_ci.0
        )
    }
}
