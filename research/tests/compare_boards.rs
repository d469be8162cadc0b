//! `compare` across boards of one model, with real saxpy results from two H100 boards
//! (2026-11-22 and 2026-11-24) and an H200: the stated rule (dynamic energy, a threshold
//! above the board-to-board spread) and the refusals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use energy_harness::ResultFile;
use energy_report::compare_across_boards as across;
use energy_report::{compare, ResultSet};
use energy_results::detect::Verdict as CompareVerdict;

fn result(path: &str) -> ResultFile {
    ResultFile::read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(path)).unwrap()
}

fn set(name: &str, r: ResultFile) -> ResultSet {
    ResultSet { dir: PathBuf::from(name), results: BTreeMap::from([(r.id.clone(), r)]), not_run: Default::default() }
}

#[test]
fn two_boards_of_one_model_compare_on_dynamic_energy_under_the_stated_rule() {
    let board_a = result("2026-11-22-h100-benches/saxpy_energy.json");
    let board_b = result("2026-11-24-memory-h100-h200/saxpy-h100/saxpy_energy.json");
    assert_ne!(board_a.device.uuid, board_b.device.uuid);
    // One GPU only, by default.
    let e = compare(&set("a", board_a.clone()), &set("b", board_b.clone()), 5.0).unwrap_err().to_string();
    assert!(e.contains("different GPUs"), "{e}");
    let c = across(&set("a", board_a.clone()), &set("b", board_b.clone()), 5.0).unwrap();
    let rule = c.rule.clone().unwrap();
    assert!(rule.contains("dynamic energy") && rule.contains(&board_a.device.uuid), "{rule}");
    assert_eq!(c.threshold_pct, 15.0, "the threshold is raised to the board-to-board spread");
    let change = &c.changes[0];
    assert_eq!(change.baseline_j.mean, board_a.dynamic_j.mean);
    assert_ne!(change.verdict, CompareVerdict::Regression, "the same saxpy on two boards: {change:?}");
    // A 25 % rise of the dynamic energy on the other board is a regression.
    let mut worse = board_b.clone();
    let d = &mut worse.figures.dynamic_j;
    for e in [&mut d.mean, &mut d.ci_low, &mut d.ci_high] {
        *e = board_a.dynamic_j.mean * 1.25 + (*e - board_b.dynamic_j.mean);
    }
    let c = across(&set("a", board_a), &set("b", worse), 5.0).unwrap();
    assert_eq!(c.changes[0].verdict, CompareVerdict::Regression, "{:?}", c.changes[0]);
}

#[test]
fn another_model_is_refused_across_boards() {
    let h100 = result("2026-11-24-memory-h100-h200/saxpy-h100/saxpy_energy.json");
    let h200 = result("2026-11-24-memory-h100-h200/saxpy-h200/saxpy_energy.json");
    let e = across(&set("a", h100), &set("b", h200), 5.0).unwrap_err().to_string();
    assert!(e.contains("different GPU models") && e.contains("H200"), "{e}");
}
