//! The memory rail per level in the memory suite (issue 34, item 3), on simulated rail
//! readings: the committed H100 points with a memory rail added (a fifth of each point's
//! dynamic energy above a 40 W rail idle), as a run on a board with the rail would record
//! them. The table then shows board against rail per sector for every level; a run
//! without the rail (every committed run) shows no such section and writes no rail fields.

use std::path::Path;

use energy_harness::Estimate;
use kernel_energy::memory::suite::{build_table, fit_configs, load_points, render_markdown};

#[test]
fn every_level_shows_board_and_rail_per_sector_when_the_rail_was_recorded() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-24-memory-h100-h200/h100");
    let mut file = load_points(&dir.join("memory-points.json")).unwrap();
    let plain = build_table(&file, None);
    assert!(!render_markdown(&plain).contains("memory rail"));
    assert!(!serde_json::to_string(&plain).unwrap().contains("rail"));
    for p in &mut file.points {
        let dynamic = p.dynamic_j.scaled(0.2);
        let idle = 40.0 * p.time_s.mean;
        p.rail_dynamic_j = Some(dynamic);
        p.rail_j = Some(Estimate {
            mean: dynamic.mean + idle,
            ci_low: dynamic.ci_low + idle,
            ci_high: dynamic.ci_high + idle,
            ..dynamic
        });
    }
    let table = build_table(&file, None);
    let md = render_markdown(&table);
    assert!(md.contains("## Board and memory rail per level"), "{md}");
    for row in &table.levels {
        let (board, rail) = (row.main.dynamic.unwrap(), row.main.rail_dynamic.unwrap());
        assert!((rail.slope / board.slope - 0.2).abs() < 1e-9, "{}: {}", row.main.key, rail.slope / board.slope);
        let line = md.lines().find(|l| l.starts_with(&format!("| {} | {} | {} |", row.level, row.op, row.main.key)));
        assert!(line.is_some_and(|l| l.ends_with("| 0.20 |")), "{line:?}");
    }
    // A configuration with a point lacking the rail has no rail fit (no half-recorded slope).
    file.points[0].rail_j = None;
    let fits = fit_configs(&file.points);
    assert!(fits.iter().any(|f| f.rail.is_none()) && fits.iter().any(|f| f.rail.is_some()));
}
