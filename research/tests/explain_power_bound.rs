//! Protocol v3's power bound (`energy_report::PowerBound`): a board's mean
//! power stays at its enforced limit, so a launch draws at most `(limit − active idle) × time`
//! above active idle. Checked on the math, on a model's and a result's validation, and on a
//! committed capped measurement (protocol v2's BF16 GEMM on H100 board 3, at 703.6 W under a
//! 700 W limit: a seen kernel, used here to test the mechanism, never as evidence for it).

use std::path::{Path, PathBuf};

use energy_harness::ResultFile;
use energy_report::{explain, launches_per_call, one_call, render_markdown, EnergyModel, PowerBound};
use energy_suites::heldout::Case;
use energy_suites::model::SuiteRun;

fn board3() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-26-model-protocol-v2/h100-board3")
}

/// A held-out result of board 3 with the limit its trace recorded (`# power_limit_w:`): the
/// v2 runs' results predate the field.
fn with_traced_limit(run: &SuiteRun, name: &str) -> ResultFile {
    let mut result = run.results[name].clone();
    let trace = board3().join(format!("run-heldout/{name}_energy.trace.csv.gz"));
    let bytes = energy_results::archive::read_archived(&trace.with_extension("")).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let limit = text.lines().find_map(|l| l.strip_prefix("# power_limit_w: ")).unwrap();
    result.device.power_limit_w = Some(limit.trim().parse().unwrap());
    result
}

#[test]
fn the_bound_and_its_clamp() {
    let mut result = SuiteRun::read_run_and_ncu(&board3().join("run-heldout"), &board3().join("ncu-heldout"))
        .unwrap()
        .results["heldout_cublas_sdot_own"]
        .clone();
    assert_eq!(PowerBound::of(&result, 0.02), None, "no limit recorded: no bound");
    result.device.power_limit_w = Some(700.0);
    result.idle_w = 100.0;
    result.time_s.mean = 2e-3;
    let b = PowerBound::of(&result, 0.02).unwrap();
    assert!((b.bound_j - 1.2).abs() < 1e-12, "{b:?}");
    assert!(
        (b.range_j.0 - (686.0 - 100.0) * 2e-3).abs() < 1e-12 && (b.range_j.1 - (714.0 - 100.0) * 2e-3).abs() < 1e-12
    );
    // Above the bound: the figure is the bound, each end by its side of the range.
    assert_eq!(b.clamp((2.0, (1.5, 2.5))), (1.2, (b.range_j.0, b.range_j.1)));
    // Below it: unchanged.
    assert_eq!(b.clamp((0.5, (0.4, 0.6))), (0.5, (0.4, 0.6)));
    // Straddling: the high end bounded, the rest kept.
    assert_eq!(b.clamp((1.0, (0.9, 1.3))), (1.0, (0.9, b.range_j.1)));
    // Idle above the limit (a corrupt pairing) bounds at zero, never below.
    result.idle_w = 800.0;
    assert_eq!(PowerBound::of(&result, 0.02).unwrap().bound_j, 0.0);
}

#[test]
fn a_model_and_a_result_are_checked() {
    let mut model = EnergyModel::read_json(&board3().join("fit/model.json")).unwrap();
    for bad in [-0.01, 0.5, f64::NAN] {
        model.power_limit_tolerance = Some(bad);
        let e = model.validate().unwrap_err();
        assert!(e.contains("power_limit_tolerance"), "{e}");
    }
    model.power_limit_tolerance = Some(0.02);
    model.validate().unwrap();
    let run = SuiteRun::read_run_and_ncu(&board3().join("run-heldout"), &board3().join("ncu-heldout")).unwrap();
    let mut result = with_traced_limit(&run, "heldout_cublas_sdot_own");
    result.validate().unwrap();
    for bad in [0.0, -700.0, f64::INFINITY, 1e6] {
        result.device.power_limit_w = Some(bad);
        let e = result.validate().unwrap_err();
        assert!(e.contains("power_limit_w"), "{e}");
    }
}

/// The capped BF16 GEMM: its terms price 1.54 J at the model's 1980 MHz; the board held it at
/// its 700 W limit, so the bound, (700 W − idle) × time, is the prediction and the page says
/// why. An uncapped kernel is left as priced. Without a tolerance in the model, or a limit in
/// the result, nothing is bounded.
#[test]
fn a_capped_kernel_is_predicted_at_the_bound() {
    let run = SuiteRun::read_run_and_ncu(&board3().join("run-heldout"), &board3().join("ncu-heldout")).unwrap();
    let mut model = EnergyModel::read_json(&board3().join("fit/model.json")).unwrap();
    let unbounded = model.clone();
    model.power_limit_tolerance = Some(0.02);
    let priced = |name: &str, model: &EnergyModel, result: &ResultFile| {
        let (_, launches) = run.profiled(name).unwrap();
        let per_call = launches_per_call(launches, Some(result.time_s.mean)).unwrap();
        let call = one_call(launches, per_call).unwrap();
        explain(model, result, &[&call]).unwrap()
    };
    let gemm = with_traced_limit(&run, "heldout_cublas_bf16gemm_own");
    assert_eq!(gemm.device.power_limit_w, Some(700.0));
    let e = priced("heldout_cublas_bf16gemm_own", &model, &gemm);
    let b = e.power_bound.clone().unwrap();
    assert!(b.applied && e.predicted_dynamic_j > b.bound_j, "{b:?}");
    assert_eq!(e.prediction_j(), b.bound_j);
    assert!((b.bound_j - (700.0 - gemm.idle_w) * gemm.time_s.mean).abs() < 1e-12);
    let bracket = e.bracket.as_ref().unwrap();
    assert!(bracket.switching_j <= b.bound_j && bracket.switching_ci_j.1 <= b.range_j.1, "{bracket:?}");
    let md = render_markdown(&e, &model);
    assert!(md.contains("Power limit: the terms add up to") && md.contains("700 W power limit"), "{md}");
    assert!(b.at_limit() && md.contains("the limit held this kernel back"), "{md}");
    // The constant-data twin ran below the limit: bounded all the same (its switching-data
    // terms exceed what the board draws in its time), and said to be no effect of the limit.
    let constant = with_traced_limit(&run, "heldout_cublas_bf16gemm_constant");
    let c = priced("heldout_cublas_bf16gemm_constant", &model, &constant);
    let cb = c.power_bound.clone().unwrap();
    assert!(cb.applied && !cb.at_limit(), "{cb:?}");
    let md_c = render_markdown(&c, &model);
    assert!(md_c.contains("below the limit: not the limit") && !md_c.contains("held this kernel back"), "{md_c}");
    assert!(md.contains("| sum of the terms |") && md.contains("**predicted dynamic** (bounded by the power limit)"));
    // A one-regime model: the bounded figure in the predicted row, the residual against the terms.
    let mut one_regime = model.clone();
    for class in &mut one_regime.classes {
        class.constant = None;
    }
    let e1 = priced("heldout_cublas_bf16gemm_own", &one_regime, &gemm);
    let md = render_markdown(&e1, &one_regime);
    let row = md.lines().find(|l| l.starts_with("| **predicted dynamic**")).unwrap();
    assert!(row.contains("(bounded by the power limit)") && row.contains(&format!("{:.1}", b.bound_j * 1e6)), "{row}");
    assert!(md.contains("| unexplained (measured − sum of the terms) |"), "{md}");
    // The same through the held-out test's case: bounded, and marked so.
    let (_, launches) = run.profiled("heldout_cublas_bf16gemm_own").unwrap();
    let case = Case::measure("heldout_cublas_bf16gemm_own", "own", true, &model, &gemm, launches).unwrap();
    assert_eq!((case.bounded, case.predicted_j), (Some(true), b.bound_j));
    // Unbounded by a model without a tolerance (v1, v2), or a result without a limit.
    let e = priced("heldout_cublas_bf16gemm_own", &unbounded, &gemm);
    assert!(e.power_bound.is_none() && e.prediction_j() == e.predicted_dynamic_j);
    let mut unlimited = gemm.clone();
    unlimited.device.power_limit_w = None;
    let e = priced("heldout_cublas_bf16gemm_own", &model, &unlimited);
    assert!(e.power_bound.is_none());
    assert!(render_markdown(&e, &model).contains("Power limit: the result records none"));
    // An uncapped streaming kernel: far below the bound, priced as before.
    let dot = with_traced_limit(&run, "heldout_cublas_sdot_own");
    let e = priced("heldout_cublas_sdot_own", &model, &dot);
    let b = e.power_bound.clone().unwrap();
    assert!(!b.applied && e.prediction_j() == e.predicted_dynamic_j, "{b:?}");
    assert!(!render_markdown(&e, &model).contains("Power limit"));
}
