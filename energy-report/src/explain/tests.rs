//! Unit tests of the model file's check: one data regime or both, costs beyond any GPU, linear time.

use super::*;

/// A model of `n` compute classes, each with a constant-data cost where `constant` says.
fn model(n: usize, constant: impl Fn(usize) -> bool) -> EnergyModel {
    EnergyModel {
        format: MODEL_SCHEMA.into(),
        gpu: "NVIDIA H100 80GB HBM3".into(),
        fitted_on: vec!["test".into()],
        sm_clock_mhz: 1980.0,
        source: "test".into(),
        classes: (0..n)
            .map(|i| ModelClass {
                name: format!("c{i}"),
                kind: "compute".into(),
                unit: "warp-instruction".into(),
                ncu_metrics: vec![format!("m{i}")],
                subtract_metrics: Vec::new(),
                scale: 1.0,
                j_per_unit: 1e-9,
                ci_j: Some((0.5e-9, 2e-9)),
                constant: constant(i).then_some(RegimeCost { j_per_unit: 0.5e-9, ci_j: None }),
            })
            .collect(),
        active_idle_w: Some(70.0),
        notes: Vec::new(),
        protocol_hash: None,
        power_limit_tolerance: None,
    }
}

#[test]
fn a_model_is_fitted_in_one_regime_or_in_both_for_every_class() {
    assert_eq!(model(10, |_| false).validate(), Ok(()));
    assert_eq!(model(10, |_| true).validate(), Ok(()));
    // The first class without one is named, whether the classes with one come before or after.
    let e = model(10, |i| i != 4 && i != 7).validate().unwrap_err();
    assert_eq!(
        e,
        "class 5 (`c4`): no constant-data cost, while other classes have one (a model is fitted in both data \
         regimes for every class, or in one)"
    );
    assert!(model(10, |i| i == 9).validate().unwrap_err().starts_with("class 1 (`c0`): no constant-data cost"));
    // A class's own figures are checked before the regimes are.
    let mut m = model(10, |i| i == 9);
    m.classes[0].scale = 0.0;
    assert!(m.validate().unwrap_err().starts_with("class 1 (`c0`): scale 0 is not a positive number"));
}

#[test]
fn a_cost_beyond_any_gpu_is_refused_on_read_so_no_page_prints_inf() {
    // Finite but near the largest double: in µJ on the page it was `[0.0, inf]`.
    for (j, ci) in [(1e-9, Some((0.0, 1e308))), (2e9, None), (1e-9, Some((-1e300, 2e-9)))] {
        let mut m = model(3, |_| false);
        m.classes[1].j_per_unit = j;
        m.classes[1].ci_j = ci;
        let e = m.validate().unwrap_err();
        assert!(
            e.starts_with("class 2 (`c1`): j_per_unit or its interval reaches") && e.contains("beyond any GPU"),
            "{e}"
        );
    }
    let mut m = model(3, |_| true);
    m.classes[2].constant = Some(RegimeCost { j_per_unit: 0.5e-9, ci_j: Some((0.0, f64::MAX)) });
    assert!(m.validate().unwrap_err().contains("constant.j_per_unit or its interval reaches"));
}

#[test]
fn the_model_check_is_linear_in_classes() {
    // Each class without a constant-data cost scanned every class for one (quadratic:
    // 100,000 classes took 27 s). Sixteen times the classes must take well under 256
    // times as long, in the thread's CPU time (wall time grew 3x more for the large case on
    // a two-core host beside four busy loops).
    let time = |n: usize| {
        let m = model(n, |_| false);
        crate::test_support::least_cpu_s(|| assert_eq!(m.validate(), Ok(())))
    };
    let (small, large) = (time(2000), time(32_000));
    assert!(large < 48.0 * small, "2,000 classes: {small:.4} s; 32,000: {large:.4} s");
}
