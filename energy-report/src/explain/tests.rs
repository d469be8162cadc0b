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

/// A launch with `metrics`.
fn launch(metrics: &[(&str, f64)]) -> crate::ncu::NcuKernel {
    crate::ncu::NcuKernel {
        id: 0,
        name: "fma_loop".into(),
        block: String::new(),
        grid: String::new(),
        metrics: metrics.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
        text: Default::default(),
    }
}

#[test]
fn tensor_pipe_register_moves_are_no_tensor_mma() {
    let (tensor, hfma2, fp16, gmma) =
        (model::TENSOR_PIPE, TENSOR_PIPE_HFMA2, model::FP16_PIPE, "smsp__inst_executed_pipe_tensor_op_gmma.sum");
    // Protocol v3's tensor-MMA term, as the shipped models hold it.
    let class = ModelClass {
        name: "tensor MMA (HMMA)".into(),
        kind: "compute".into(),
        unit: "warp-instruction".into(),
        ncu_metrics: vec![tensor.into()],
        subtract_metrics: vec![fp16.into(), gmma.into()],
        scale: 1.0,
        j_per_unit: 5e-9,
        ci_j: None,
        constant: None,
    };
    // The harness's FFMA loop on an H200 (research/results/2026-12-01-hmma-count): its one
    // tensor-pipe instruction per warp is `HFMA2.MMA R11, -RZ, RZ, 0.234375, 0`.
    let fma_loop = [(tensor, 8448.0), (hfma2, 8448.0), (fp16, 0.0), (gmma, 0.0)];
    assert_eq!(class.priced_units(&launch(&fma_loop)).unwrap(), 0.0);
    // As the file defines the class (what the model was fitted on, and how its published
    // checks regenerate): the moves counted.
    assert_eq!(class.units(&launch(&fma_loop)).unwrap(), 8448.0);
    assert!(!class.counts_tensor_moves(&launch(&fma_loop)));
    // The fp16 training kernel (its HFMA2s counted by both pipes' metrics) and an HMMA one.
    let hfma2_kernel = [(tensor, 2.03e9), (hfma2, 2.03e9), (fp16, 2.03e9), (gmma, 0.0)];
    assert_eq!(class.priced_units(&launch(&hfma2_kernel)).unwrap(), 0.0);
    let hmma_kernel = [(tensor, 6.76e8), (hfma2, 0.0), (fp16, 0.0), (gmma, 0.0)];
    assert_eq!(class.priced_units(&launch(&hmma_kernel)).unwrap(), 6.76e8);
    // An export made before the metric was asked for: counted as v3 did, and said so.
    let old = [(tensor, 8448.0), (fp16, 0.0), (gmma, 0.0)];
    assert_eq!(class.priced_units(&launch(&old)).unwrap(), 8448.0);
    assert!(class.counts_tensor_moves(&launch(&old)));
    let mut m = model(1, |_| false);
    m.classes.push(class.clone());
    let note = price::counting_note(&m, &[&launch(&old)]).expect("a note for the old export");
    assert!(note.contains(hfma2) && note.contains("tensor MMA (HMMA)") && note.contains("profile again"), "{note}");
    assert_eq!(price::counting_note(&m, &[&launch(&fma_loop)]), None);
    // The model asks ncu for the metric that leaves the moves out.
    assert!(m.metric_names().contains(&hfma2));
    // Other terms are counted as their files say.
    let plain = ModelClass { name: "fp16".into(), ncu_metrics: vec![fp16.into()], subtract_metrics: vec![], ..class };
    assert_eq!(plain.counted_subtract(), Vec::<&str>::new());
}
