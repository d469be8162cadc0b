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
    /// Planned configurations with fewer than three points measured.
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
    let missing = plan().iter().map(|c| c.key()).filter(|k| !measured.contains(k)).collect();
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
         GPU time against a thread's dependent accesses in the same configuration (loaded latency). Lower \
         bound: the lowest energy per sector over the thread and block sweeps.\n\n\
         Like for like with Delestrac et al.: their A100 figures are dynamic lower bounds (energy above idle, \
         their Eq. 2-4, the minimum over their sweeps), not totals — at the A100's L1 peak (108 SMs x 128 B per \
         clock x 1.065 GHz, a sector every 2.17 ps) its ~55 W of static power alone is ~119 pJ per sector, \
         above their 107. So they sit beside our dynamic lower bound. Their clock was locked at 1065 MHz; ours \
         was read, never set (the SM clock of the run is in the line above): a higher clock at a higher \
         voltage raises the dynamic energy per access (roughly with the voltage squared), so our figures are \
         expected above theirs for that reason alone.\n\n",
    );
    s.push_str("## Energy per sector\n\n");
    s.push_str("| level | op | config | region / block | pJ per sector [95 % CI] | dynamic pJ [95 % CI] | r² | offset, mJ | latency, ns | lower bound, pJ | dynamic lower bound, pJ | A100 dynamic lower bound (Delestrac, 1065 MHz), pJ | ours / A100 | level check |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
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
                .map(|(pj_, key)| format!("{} ({key})", pj(*pj_)))
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
                (Some(d1), Some(dn)) => format!(", {:.1}x in dynamic energy", d1.slope / dn.slope),
                _ => String::new(),
            };
            s.push_str(&format!(
                "\n{level}: 1 thread per block costs {:.1}x the energy per sector of {MAIN_THREADS} in total energy{dynamic} (Delestrac saw about 15x on an A100, dynamic: 1600 -> 107 pJ).\n",
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

/// The thread sweep as an SVG plot: energy per sector (log) against threads per block (log 2),
/// total (solid) and dynamic (dashed) energy per level, 95 % intervals as bars.
pub fn render_thread_svg(t: &MemoryTable) -> String {
    let mut series = Vec::new();
    for (level, color) in [(Level::L1, "#1f77b4"), (Level::L2, "#d62728")] {
        let fits: Vec<&ConfigFit> = t.thread_sweep.iter().filter(|f| f.config.level == level).collect();
        series.push(sweep_series(
            format!("{level} total"),
            color,
            false,
            &fits,
            |f| f64::from(f.config.threads),
            |f| f.energy,
        ));
        series.push(sweep_series(
            format!("{level} dynamic"),
            color,
            true,
            &fits,
            |f| f64::from(f.config.threads),
            |f| f.dynamic,
        ));
    }
    let title = format!(
        "{}Energy per 32-byte sector against threads per block, {} ({} blocks)",
        if t.simulated { "SIMULATED: " } else { "" },
        t.device.name,
        t.thread_sweep.first().map(|f| f.layout.blocks).unwrap_or(0)
    );
    render_sweep_svg(&title, "threads per block", &series)
}

/// The block sweep (L2 LOADs at 1024 threads per block) as an SVG plot, total and dynamic
/// energy per sector against the blocks of the grid.
pub fn render_block_svg(t: &MemoryTable) -> String {
    let fits: Vec<&ConfigFit> = t.block_sweep.iter().collect();
    let blocks = |f: &ConfigFit| f64::from(f.layout.blocks);
    let series = vec![
        sweep_series("L2 total".into(), "#d62728", false, &fits, blocks, |f| f.energy),
        sweep_series("L2 dynamic".into(), "#d62728", true, &fits, blocks, |f| f.dynamic),
    ];
    let title = format!(
        "{}Energy per 32-byte sector against blocks, L2 loads, 1024 threads per block, {}",
        if t.simulated { "SIMULATED: " } else { "" },
        t.device.name
    );
    render_sweep_svg(&title, "blocks in the grid", &series)
}

/// One line of a sweep plot: label, colour, dashed, points (x, pJ, interval low, high).
struct SweepLine {
    label: String,
    color: &'static str,
    dashed: bool,
    points: Vec<(f64, f64, f64, f64)>,
}

fn sweep_series(
    label: String,
    color: &'static str,
    dashed: bool,
    fits: &[&ConfigFit],
    x: impl Fn(&ConfigFit) -> f64,
    of: impl Fn(&ConfigFit) -> Option<LineFit>,
) -> SweepLine {
    let mut points: Vec<(f64, f64, f64, f64)> = fits
        .iter()
        .filter_map(|f| {
            let e = of(f)?;
            Some((x(f), e.slope * 1e12, e.slope_ci.0 * 1e12, e.slope_ci.1 * 1e12))
        })
        .filter(|p| p.1 > 0.0 && p.0 > 0.0)
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    SweepLine { label, color, dashed, points }
}

/// A log-log plot of the lines, with each point's 95 % interval.
fn render_sweep_svg(title: &str, x_label: &str, series: &[SweepLine]) -> String {
    let (w, h, left, right, top, bottom) = (780.0, 420.0, 70.0, 190.0, 40.0, 50.0);
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    let all: Vec<f64> =
        series.iter().flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2.max(p.1 / 10.0), p.3])).collect();
    let lo = all.iter().cloned().fold(f64::INFINITY, f64::min).max(1e-3);
    let hi = all.iter().cloned().fold(0.0, f64::max).max(lo * 10.0);
    let (ylo, yhi) = (lo.log10().floor(), hi.log10().ceil());
    let xmin = xs.iter().cloned().fold(f64::INFINITY, f64::min).max(1.0);
    let xmax = xs.iter().cloned().fold(0.0, f64::max).max(xmin * 2.0);
    let (xlo, xhi) = (xmin.log2().floor(), xmax.log2().ceil());
    let x = |v: f64| left + ((v.log2() - xlo) / (xhi - xlo)) * (w - left - right);
    let y = |pj: f64| top + (1.0 - (pj.max(10f64.powf(ylo)).log10() - ylo) / (yhi - ylo)) * (h - top - bottom);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"20\" font-size=\"14\">{title}</text>\n"
    );
    let mut e = xlo;
    while e <= xhi + 1e-9 {
        let v = 2f64.powf(e);
        let xv = x(v);
        s.push_str(&format!(
            "<line x1=\"{xv:.1}\" y1=\"{top}\" x2=\"{xv:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{xv:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v}</text>\n",
            h - bottom,
            h - bottom + 16.0
        ));
        e += 1.0;
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
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{x_label}</text>\n<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">pJ per sector</text>\n",
        (left + w - right) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    ));
    for (i, line) in series.iter().enumerate() {
        let color = line.color;
        let dash = if line.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        if !line.points.is_empty() {
            let path: Vec<String> = line.points.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1))).collect();
            s.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>\n",
                path.join(" ")
            ));
            for p in &line.points {
                s.push_str(&format!(
                    "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{color}\"/><circle cx=\"{0:.1}\" cy=\"{3:.1}\" r=\"3\" fill=\"{color}\"/>\n",
                    x(p.0),
                    y(p.2.max(lo)),
                    y(p.3),
                    y(p.1)
                ));
            }
        }
        let ly = top + 20.0 + 20.0 * i as f64;
        s.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\">{}{}</text>\n",
            w - right + 15.0,
            w - right + 45.0,
            w - right + 52.0,
            ly + 4.0,
            line.label,
            if line.points.is_empty() { " (not measured)" } else { "" }
        ));
    }
    s.push_str("</svg>\n");
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
