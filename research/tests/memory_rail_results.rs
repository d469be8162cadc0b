//! The H100 memory-rail run (results/2026-11-25-h100-memory-rail): each stored saxpy result
//! reads back with its memory rail beside the board's counter. The harness's own test reads a
//! copy of one of them (`energy-harness/tests/memory_rail.rs`).

use std::path::Path;

use energy_harness::{ResultFile, SourceKind};

#[test]
fn the_committed_h100_results_with_the_rail_read_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-25-h100-memory-rail");
    for name in ["saxpy_default.json", "saxpy_calibrated.json"] {
        let r = ResultFile::read_json(&dir.join(name)).unwrap();
        assert_eq!(r.source, SourceKind::Counter, "{name}");
        assert_eq!(r.rails.len(), 1, "{name}");
        let rail = &r.rails[0];
        assert_eq!(rail.source, SourceKind::MemoryRail);
        assert!((0.010..0.012).contains(&rail.energy_j.mean), "{name}: {}", rail.energy_j.mean);
        assert!(rail.energy_j.mean < r.energy_j.mean);
    }
}
