//! Issue 35, item 1 without a GPU: the model fitted in two data regimes (switching and
//! constant operands) and `cargo energy explain`'s bracket [constant data, switching data].
//! The two fits recover known costs from a synthetic training set with noise; a kernel
//! placed at operand activity 0.25 is said to be at ≈ 0.25; one below the constant-data
//! prediction gets the outside line; a model without constant costs explains as before.

use std::path::Path;

use energy_report::{operand_bracket, render_markdown, EnergyModel, RegimeCost};
use energy_suites::model::{
    fit_regimes, in_constant_fit, in_current_fit, Observation, SuiteRun, CLASSES, HELD_OUT_APPS,
};

fn template() -> EnergyModel {
    let mut m = EnergyModel::parse(
        r#"{"format":"energy-model/1","gpu":"synthetic","fitted_on":["synthetic"],"sm_clock_mhz":0,
            "source":"synthetic","classes":[{"name":"x","kind":"compute","unit":"u","ncu_metrics":["m"],
            "scale":1,"j_per_unit":0,"ci_j":null}]}"#,
        Path::new("template"),
    )
    .unwrap();
    m.classes.clear();
    m
}

/// The committed H100 model-suite run (board 1, results and ncu exports) and the published
/// H100 model.
fn committed_run_and_model() -> (SuiteRun, EnergyModel) {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let board = results.join("2026-11-24-model-h100-h200/h100-board1");
    let run = SuiteRun::read_run_and_ncu(&board.join("run"), &board.join("ncu")).unwrap();
    (run, EnergyModel::read_json(&results.join("model-h100.json")).unwrap())
}

/// Deterministic numbers in [0, 1).
fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// 60 kernels priced with `truth`, each leaning on one class, measured with ±2 % noise.
fn kernels(truth: &[f64], suffix: &str, state: &mut u64) -> Vec<Observation> {
    (0..60)
        .map(|k| {
            let units: Vec<f64> = (0..CLASSES.len())
                .map(|i| {
                    if i == k % CLASSES.len() {
                        1e9 * (0.5 + lcg(state))
                    } else if lcg(state) < 0.3 {
                        1e8 * lcg(state)
                    } else {
                        0.0
                    }
                })
                .collect();
            let exact: f64 = units.iter().zip(truth).map(|(u, c)| u * c).sum();
            let dynamic_j = exact * (1.0 + 0.04 * (lcg(state) - 0.5));
            Observation { name: format!("train_k{k}{suffix}"), kernel: "k".into(), dynamic_j, units }
        })
        .collect()
}

#[test]
fn the_two_regimes_fits_recover_their_costs_within_their_intervals() {
    let switching: Vec<f64> = (0..CLASSES.len()).map(|i| (100.0 + 37.0 * i as f64) * 1e-12).collect();
    // Constant data: 40 % to 80 % of the switching cost.
    let constant: Vec<f64> = switching.iter().enumerate().map(|(i, c)| c * (0.4 + 0.025 * i as f64)).collect();
    let mut state = 11;
    let (s_obs, c_obs) = (kernels(&switching, "", &mut state), kernels(&constant, "_const", &mut state));
    assert!(s_obs.iter().all(|o| in_current_fit(&o.name)) && c_obs.iter().all(|o| in_constant_fit(&o.name)));
    let (fitted, constant_fit) = fit_regimes(&s_obs, &c_obs, template()).unwrap();
    assert!(constant_fit.unwrap().in_sample_mape_pct < 2.0);
    // Each cost within 5 % of its truth, and its 95 % interval holding it in at least 90 % of
    // the 34 cases (one in twenty may miss by chance: the noise is random).
    let mut held = 0;
    for ((class, s), c) in fitted.model.classes.iter().zip(&switching).zip(&constant) {
        let k = class.constant.unwrap();
        for (what, want, got, (lo, hi)) in
            [("switching", s, class.j_per_unit, class.ci_j.unwrap()), ("constant", c, k.j_per_unit, k.ci_j.unwrap())]
        {
            assert!((got / want - 1.0).abs() < 0.05, "{}: {what} {got} against {want}", class.name);
            held += usize::from(lo <= *want && *want <= hi);
        }
        assert!(!class.constant_exceeds_switching(), "{}", class.name);
    }
    // 95 % intervals over 34 costs hold about 32 of them; fewer than 29 happens with
    // probability 0.6 % (binomial, n = 34, p = 0.95) and would mean intervals too narrow (31 here, seeded).
    assert!(held >= 29, "{held} of {} intervals hold their cost", 2 * CLASSES.len());
    // The model file carries them and reads back; without constant kernels there are none.
    let text = serde_json::to_string_pretty(&fitted.model).unwrap();
    assert!(text.contains("\"constant\""));
    assert_eq!(EnergyModel::parse(&text, Path::new("m.json")).unwrap(), fitted.model);
    let (alone, none) = fit_regimes(&s_obs, &[], template()).unwrap();
    assert!(none.is_none() && !alone.model.has_constant_costs());
    assert!(!serde_json::to_string(&alone.model).unwrap().contains("constant"));
    // A model with a constant cost in some classes only is refused.
    let mut half = fitted.model.clone();
    half.classes[3].constant = None;
    let err = EnergyModel::parse(&serde_json::to_string(&half).unwrap(), Path::new("h.json")).unwrap_err();
    assert!(err.to_string().contains("no constant-data cost"), "{err}");
}

#[test]
fn explain_places_a_kernel_in_the_bracket_or_says_it_lies_outside() {
    let (mut run, published) = committed_run_and_model();
    assert!(!published.has_constant_costs());
    let name = HELD_OUT_APPS[0];

    // Without constant costs: no bracket, the explanation of today.
    let plain = run.explain(name, &published).unwrap();
    assert!(plain.bracket.is_none() && plain.terms.iter().all(|t| t.constant_j.is_none()));
    let md = render_markdown(&plain, &published);
    assert!(!md.contains("constant data") && !md.contains("operand activity"), "{md}");
    assert!(!serde_json::to_string(&plain).unwrap().contains("bracket"));

    // The published model with constant-data costs at 60 % of its costs.
    let mut model = published.clone();
    for c in &mut model.classes {
        c.constant =
            Some(RegimeCost { j_per_unit: 0.6 * c.j_per_unit, ci_j: c.ci_j.map(|(lo, hi)| (0.6 * lo, 0.6 * hi)) });
    }
    let b = run.explain(name, &model).unwrap().bracket.unwrap();
    assert!((b.constant_j / b.switching_j - 0.6).abs() < 1e-9, "{b:?}");

    // Measured at a quarter of the way from the constant to the switching prediction.
    let r = run.results.get_mut(name).unwrap();
    let target = b.constant_j + 0.25 * (b.switching_j - b.constant_j);
    r.dynamic_j = r.dynamic_j.scaled(target / r.dynamic_j.mean);
    let e = run.explain(name, &model).unwrap();
    let b = e.bracket.as_ref().unwrap();
    assert_eq!(b.placement, "inside");
    assert!((b.activity.unwrap() - 0.25).abs() < 1e-9, "{b:?}");
    assert!(e.warning.is_none());
    let md = render_markdown(&e, &model);
    // The lead, before the table, places the measurement in the bracket.
    let lead = &md[..md.find("## Detail").expect("the detail follows the lead")];
    assert!(lead.contains("operand activity ≈ 0.25 (0: constant data") && lead.contains("brackets it from"), "{md}");
    assert!(md.contains("| constant data, µJ | switching data, µJ |"), "{md}");
    let js = serde_json::to_string(&e).unwrap();
    let v: serde_json::Value = serde_json::from_str(&js).unwrap();
    assert!((v["bracket"]["activity"].as_f64().unwrap() - 0.25).abs() < 1e-9, "{js}");
    assert!(v["bracket"]["line"].as_str().unwrap().starts_with("operand activity ≈ 0.25"), "{js}");

    // Below the constant-data prediction's interval: said first, how far, what it suggests.
    let low = b.constant_ci_j.0;
    let r = run.results.get_mut(name).unwrap();
    r.dynamic_j = r.dynamic_j.scaled(0.5 * low / r.dynamic_j.mean);
    let e = run.explain(name, &model).unwrap();
    let b = e.bracket.as_ref().unwrap();
    assert_eq!(b.placement, "below");
    let w = e.warning.as_ref().unwrap();
    assert!(w.starts_with("warning: outside the bracket") && w.contains("50.0 % below the constant-data prediction"));
    let md = render_markdown(&e, &model);
    assert!(md.split("\n\n").nth(1).unwrap().starts_with("**warning: outside the bracket"), "{md}");
    assert!(!md.contains("operand activity ≈"), "{md}");
    assert_eq!(md.matches("outside the bracket").count(), 1, "the line once, as the page's warning: {md}");

    // Above the switching-data prediction's interval: a missing term or a capped kernel.
    let b = operand_bracket(4.0, (1.0, (0.9, 1.1)), (2.0, (1.8, 2.5)));
    assert_eq!(b.placement, "above");
    assert!(b.line.contains("60.0 % above the switching-data prediction") && b.line.contains("missing term"));
    assert!(b.line.contains("capped kernel"), "{}", b.line);
    // Just under the constant prediction but inside its interval: the activity as computed
    // (below 0), and said so; likewise above the switching prediction.
    let b = operand_bracket(0.95, (1.0, (0.9, 1.1)), (2.0, (1.8, 2.5)));
    assert_eq!(b.placement, "inside");
    assert!(b.line.starts_with("operand activity ≈ -0.05") && b.line.contains("below the constant-data"), "{}", b.line);
    let b = operand_bracket(2.2, (1.0, (0.9, 1.1)), (2.0, (1.8, 2.5)));
    assert_eq!(b.placement, "inside");
    assert!(b.line.starts_with("operand activity ≈ 1.20") && b.line.contains("above the switching-data"), "{}", b.line);

    // A term whose constant cost exceeds its switching cost beyond both intervals is kept and named.
    let used = plain.terms.iter().position(|t| t.units > 0.0 && t.ci_j.is_some()).unwrap();
    let (_, hi) = model.classes[used].ci_j.unwrap();
    model.classes[used].constant = Some(RegimeCost { j_per_unit: 3.0 * hi, ci_j: Some((2.0 * hi, 4.0 * hi)) });
    let e = run.explain(name, &model).unwrap();
    let b = e.bracket.as_ref().unwrap();
    assert_eq!(b.constant_above_switching, vec![model.classes[used].name.clone()]);
    let md = render_markdown(&e, &model);
    assert!(md.contains("its constant-data cost exceeds its switching-data cost beyond both intervals"), "{md}");
}

#[test]
fn explain_names_work_the_model_has_no_term_for_when_its_profile_counts_it() {
    use energy_report::{render_markdown, UNPRICED_WORK};
    let (mut run, model) = committed_run_and_model();
    let name = HELD_OUT_APPS[0];
    // The committed profiles did not collect these metrics: nothing is said.
    let plain = run.explain(name, &model).unwrap();
    assert!(plain.unpriced.is_empty());
    assert!(!render_markdown(&plain, &model).contains("no term for"));
    assert!(!serde_json::to_string(&plain).unwrap().contains("unpriced"));
    // Warpgroup MMA counted in every launch (and atomics' metrics at zero, one absent).
    let (wgmma, wgmma_metrics) = UNPRICED_WORK[0];
    for launch in run.launches.get_mut(name).unwrap() {
        launch.metrics.insert(wgmma_metrics[0].to_string(), 2.5e6);
        launch.metrics.insert("lts__t_sectors_op_atom.sum".to_string(), 0.0);
    }
    let e = run.explain(name, &model).unwrap();
    assert_eq!(e.unpriced.len(), 1, "{:?}", e.unpriced);
    assert_eq!((e.unpriced[0].name.as_str(), e.unpriced[0].count_per_launch), (wgmma, 2.5e6));
    let md = render_markdown(&e, &model);
    assert!(md.contains("Work the model has no term for: **wgmma**, 2.5000e6 per launch"), "{md}");
    assert!(serde_json::to_string(&e).unwrap().contains("\"unpriced\""));
}

#[test]
fn a_run_with_constant_kernels_is_read_and_fitted_in_both_regimes() {
    // The committed H100 run, each training kernel given a `_const` twin: the same counts,
    // 60 % of the dynamic energy. Read through `SuiteRun` as `fit_model` reads a run, the
    // constant fit's costs are the switching fit's times 0.6 (the fit is linear in the energies).
    let (mut run, published) = committed_run_and_model();
    assert!(run.constant_training().unwrap().0.is_empty(), "the committed run has no constant kernels");
    let names: Vec<String> = run.results.keys().filter(|n| in_current_fit(n)).cloned().collect();
    for name in &names {
        let twin = format!("{name}_const");
        assert!(in_constant_fit(&twin) && !in_current_fit(&twin), "{twin}");
        let mut r = run.results[name].clone();
        r.id = format!("{twin}/energy");
        r.dynamic_j = r.dynamic_j.scaled(0.6);
        run.results.insert(twin.clone(), r);
        let launches = run.launches[name].clone();
        run.launches.insert(twin, launches);
    }
    let (switching, _) = run.training().unwrap();
    let (constant, _) = run.constant_training().unwrap();
    assert_eq!(constant.len(), switching.len());
    let mut t = published.clone();
    for c in &mut t.classes {
        c.j_per_unit = 0.0;
        c.ci_j = None;
    }
    let (fitted, constant_fit) = fit_regimes(&switching, &constant, t).unwrap();
    assert!(constant_fit.is_some());
    for c in &fitted.model.classes {
        let k = c.constant.as_ref().expect("every class gets its constant cost");
        if c.j_per_unit > 0.0 {
            assert!(
                (k.j_per_unit / c.j_per_unit - 0.6).abs() < 1e-6,
                "{}: {} against {}",
                c.name,
                k.j_per_unit,
                c.j_per_unit
            );
        }
    }
    // And the model explains with a bracket whose low end is 0.6 of its high end.
    let b = run.explain(HELD_OUT_APPS[0], &fitted.model).unwrap().bracket.expect("a bracket");
    assert!((b.constant_j / b.switching_j - 0.6).abs() < 1e-6, "{b:?}");
}

/// A run whose SM clock fell below the model's (the power cap) is said so, with what it does to
/// the prediction; one at the model's clock is not (protocol v2's board 4: the BF16 GEMM ran
/// capped, DGEMV at 1980 MHz).
#[test]
fn explain_says_when_the_run_ran_below_the_models_clock() {
    use energy_report::render_markdown;
    let board = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-26-model-protocol-v2/h100-board4");
    let model = EnergyModel::read_json(&board.join("fit/model.json")).unwrap();
    let run = SuiteRun::read_run_and_ncu(&board.join("run-heldout"), &board.join("ncu-heldout")).unwrap();
    let capped = run.explain("heldout_cublas_bf16gemm_own", &model).unwrap();
    let note = capped.clock_note.clone().expect("the capped run has a clock note");
    assert!(note.contains("1110–1455 MHz") && note.contains("below the 1980 MHz"), "{note}");
    assert!(note.contains("throttle reasons: SW_POWER_CAP"), "{note}");
    assert!(render_markdown(&capped, &model).contains("\nClock: the measured run's SM clock was 1110–1455 MHz"));
    let full = run.explain("heldout_cublas_dgemv_own", &model).unwrap();
    assert_eq!(full.clock_note, None);
    assert!(!render_markdown(&full, &model).contains("Clock:"));
}
