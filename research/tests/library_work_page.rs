//! Issue 43's published tables are what their raw files give (`examples/library_work_table.rs`).

use std::path::Path;

#[test]
fn the_library_work_tables_are_regenerated_from_their_raw_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-27-library-work");
    let mut checked = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let page = dir.join("table.md");
        if !page.is_file() {
            continue;
        }
        let regenerated = energy_suites::library_work::table(&dir).unwrap();
        let committed = std::fs::read_to_string(&page).unwrap();
        assert!(
            regenerated == committed,
            "{} differs from what its raw files give: cargo run --example library_work_table -- {}",
            page.display(),
            dir.display()
        );
        checked += 1;
    }
    assert!(checked >= 2, "{checked} run folders with a table");
}

#[test]
fn a_run_folder_without_results_is_refused_by_name() {
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("gpu.csv"), "header\nboard\n").unwrap();
    let err = energy_suites::library_work::table(empty.path()).unwrap_err();
    assert!(err.to_string().contains("no benchmark result"), "{err}");
}
