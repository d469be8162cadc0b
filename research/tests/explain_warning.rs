//! `cargo energy explain` on the committed H100 model-suite run: a measured dynamic energy
//! outside the prediction's interval opens the explanation with a warning (by how much, the
//! likely causes), and the kernel-time term's units print in seconds, not as 0.

use std::path::Path;

use energy_report::{outside_prediction, render_markdown, EnergyModel};
use energy_suites::model::{SuiteRun, HELD_OUT_APPS, SELECTION_APPS, ZERO_OPERAND_APPS};

#[test]
fn a_measurement_outside_the_predicted_interval_is_warned_first() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let board = results.join("2026-11-24-model-h100-h200/h100-board1");
    let mut run = SuiteRun::read_run_and_ncu(&board.join("run"), &board.join("ncu")).unwrap();
    let model = EnergyModel::read_json(&results.join("model-h100.json")).unwrap();
    let mut warned = Vec::new();
    for name in HELD_OUT_APPS.iter().chain(&SELECTION_APPS).chain(&ZERO_OPERAND_APPS) {
        let e = run.explain(name, &model).unwrap();
        let (lo, hi) = e.predicted_ci_j.unwrap();
        let outside = e.measured_dynamic_j.0 < lo || e.measured_dynamic_j.0 > hi;
        assert_eq!(e.warning.is_some(), outside, "{name}: {:?} against [{lo}, {hi}]", e.measured_dynamic_j);
        let md = render_markdown(&e, &model);
        let body = md.split_once("\n\n").unwrap().1;
        match &e.warning {
            Some(w) => {
                assert!(body.starts_with("**warning: the measured dynamic energy"), "{md}");
                assert!(w.contains('%') && w.contains("likely causes"), "{w}");
                warned.push(name.to_string());
            }
            None => assert!(!md.contains("warning"), "{md}"),
        }
        // The kernel-time term: its units are seconds, printed with their prefix.
        let time_row = md.lines().find(|l| l.contains("| time |")).unwrap();
        assert!(!time_row.contains("| time | 0 |") && time_row.contains('s'), "{time_row}");
    }
    // On the committed run every application lies inside its (wide) interval: no warning.
    assert!(warned.is_empty(), "{warned:?}");
    // The case: a measured dynamic energy well below the lowest prediction (the
    // zero-operand SGEMM's measurement scaled to 40 %, under its interval's 0.19 J).
    let r = run.results.get_mut("app_sgemm_zero").unwrap();
    r.dynamic_j = r.dynamic_j.scaled(0.4);
    let e = run.explain("app_sgemm_zero", &model).unwrap();
    let md = render_markdown(&e, &model);
    let first = md.split("\n\n").nth(1).unwrap();
    assert!(first.starts_with("**warning:") && first.contains("% below the lowest prediction"), "{md}");
    assert!(first.contains("operands of low entropy"), "{first}");
    // Below the lowest prediction by half: said as 50 % below, with operand entropy first.
    let w = outside_prediction(1.0, (2.0, 3.0)).unwrap();
    assert!(w.contains("50.0 % below the lowest prediction") && w.contains("entropy"), "{w}");
    let w = outside_prediction(4.0, (2.0, 3.0)).unwrap();
    assert!(w.contains("33.3 % above the highest prediction") && w.contains("no term"), "{w}");
    assert_eq!(outside_prediction(2.5, (2.0, 3.0)), None);
}
