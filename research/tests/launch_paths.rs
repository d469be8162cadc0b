//! The H100 launch-path table (research/results/2026-11-24-h100-user-crate/table.md) regenerates
//! from its committed raw results.
use std::path::Path;

#[test]
fn the_published_launch_path_table_regenerates_from_its_results() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-24-h100-user-crate");
    let rounds = energy_suites::launch_paths::read_rounds(&dir.join("t-interleaved/energy/new")).unwrap();
    assert_eq!(rounds.len(), 5);
    let published = std::fs::read_to_string(dir.join("table.md")).unwrap();
    assert_eq!(
        energy_suites::launch_paths::render(&rounds).unwrap(),
        published,
        "table.md was edited by hand or the data changed"
    );
}

#[test]
fn a_round_without_its_ptx_reference_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-24-h100-user-crate");
    let mut rounds = energy_suites::launch_paths::read_rounds(&dir.join("t-interleaved/energy/new")).unwrap();
    rounds.get_mut(&3).unwrap().remove("ptx");
    let err = energy_suites::launch_paths::render(&rounds).unwrap_err();
    assert!(err.to_string().contains("round 3 has no `ptx` result"), "{err}");
}
