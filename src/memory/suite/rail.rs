//! The GPU-memory rail beside the board, per level: each point carries the rail's energy
//! over the same windows (recorded by the engine wherever NVML exposes the memory scope),
//! each configuration's fit has the rail's slope, and the table shows board against rail
//! per 32-byte sector. Tested on simulated points in `tests/memory_rail_levels.rs`.

use super::*;
use energy_harness::SourceKind;

/// The memory rail of a measurement, when recorded.
pub(super) fn memory_rail(m: &Measurement) -> Option<&energy_results::measured::RailEnergy> {
    m.rails.iter().find(|r| r.source == SourceKind::MemoryRail)
}

/// The rail's energy per launch against sectors, when every point of the configuration
/// has the figure `of`.
pub(super) fn rail_fit(points: &[&PointRun], of: impl Fn(&PointRun) -> Option<Estimate>) -> Option<LineFit> {
    let xy: Option<Vec<(f64, f64)>> = points.iter().map(|p| of(p).map(|e| (p.sectors, e.mean))).collect();
    fit_line(&xy?)
}

/// The board against the memory rail per level and op (the main configuration of each), pJ
/// per sector, total and dynamic; empty when no level has the rail (runs before it).
pub fn render_rail(t: &MemoryTable) -> String {
    if !t.levels.iter().any(|l| l.main.rail.is_some()) {
        return String::new();
    }
    let ci = |f: &Option<LineFit>| {
        f.map(|f| format!("{:.0} [{:.0}, {:.0}]", f.slope * 1e12, f.slope_ci.0 * 1e12, f.slope_ci.1 * 1e12))
            .unwrap_or_else(|| "-".into())
    };
    let mut s = String::from(
        "\n## Board and memory rail per level\n\nThe GPU-memory rail (NVML's memory power scope) over the same windows as the \
         board, fitted the same way: its energy per sector, total and above its own active idle, beside the board's. The \
         rail is part of the board (never subtracted from it); rail / board is the share of the board's dynamic energy per \
         sector that the memory rail reports.\n\n\
         | level | op | config | board dynamic, pJ/sector | rail, pJ/sector | rail dynamic, pJ/sector | rail / board (dynamic) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for row in &t.levels {
        let m = &row.main;
        let share = match (m.rail_dynamic, m.dynamic) {
            (Some(r), Some(b)) if b.slope > 0.0 => format!("{:.2}", r.slope / b.slope),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {share} |\n",
            row.level,
            row.op,
            m.key,
            ci(&m.dynamic),
            ci(&m.rail),
            ci(&m.rail_dynamic)
        ));
    }
    s
}
