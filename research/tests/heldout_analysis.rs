//! The held-out analysis (issue 35) without a GPU: synthetic cases give known errors,
//! baselines and bracket coverage; the launches of one iteration are found or refused; and a
//! one-launch prediction on committed data is `explain`'s.

use std::path::Path;

use energy_report::{explain, EnergyModel, NcuKernel};
use energy_report::{launches_per_call, one_call, one_call_of};
use energy_suites::heldout::{
    analyse, bootstrap_mean, predict, render_markdown, unmeasured, Baselines, Case, TrainingPoint,
};
use energy_suites::model::{SuiteRun, HELD_OUT_APPS};
use energy_suites::protocol::Protocol;

fn case(benchmark: &str, regime: &str, measured_j: f64, predicted_j: f64, bracket: (f64, f64)) -> Case {
    Case {
        benchmark: benchmark.into(),
        regime: regime.into(),
        third_party: !benchmark.starts_with("heldout_p_"),
        measured_j,
        measured_ci_j: (0.99 * measured_j, 1.01 * measured_j),
        time_s: measured_j / 200.0,
        predicted_j,
        constant_j: Some(bracket.0),
        bracket_j: Some(bracket),
        instructions: Some(measured_j * 1e9),
        measured_total_j: measured_j + 100.0 * measured_j / 200.0,
        idle_w: 100.0,
        sm_clock_mhz: Some((1980, 1980)),
        unpriced: Vec::new(),
        bounded: None,
        unbounded: None,
    }
}

#[test]
fn known_errors_baselines_and_coverage() {
    // Training kernels: 100 W and 1 nJ per instruction, exactly.
    let training: Vec<TrainingPoint> = [0.1, 0.2, 0.4]
        .iter()
        .map(|&j| TrainingPoint { dynamic_j: j, time_s: j / 100.0, instructions: Some(j * 1e9) })
        .collect();
    let baselines = Baselines::fit(&training).unwrap();
    assert!((baselines.mean_power_w - 100.0).abs() < 1e-9);
    assert!((baselines.j_per_instruction.unwrap() - 1e-9).abs() < 1e-21);
    let cases = [
        case("heldout_a_own", "own", 1.0, 1.1, (0.9, 1.2)),
        case("heldout_a_constant", "constant", 0.5, 1.2, (0.6, 1.2)),
        case("heldout_b_own", "own", 2.0, 1.9, (1.5, 2.5)),
        // A project-written kernel: reported apart, not counted toward the goal.
        case("heldout_p_own", "own", 1.0, 1.5, (0.5, 0.8)),
    ];
    let a = analyse(&cases, &baselines).unwrap();
    assert!((a.rows[0].error_pct - 10.0).abs() < 1e-9);
    assert!((a.rows[2].error_pct + 5.0).abs() < 1e-9);
    // The cases run at 200 W: time × 100 W is half; the instruction cost is exact.
    assert!((a.rows[0].time_power_error_pct + 50.0).abs() < 1e-9);
    assert!(a.rows[0].instruction_error_pct.unwrap().abs() < 1e-9);
    let model = a.model.unwrap();
    assert_eq!(model.kernels, 2);
    assert!((model.mean_pct - 7.5).abs() < 1e-9);
    assert!(model.ci_pct.0 >= 5.0 - 1e-9 && model.ci_pct.1 <= 10.0 + 1e-9 && model.ci_pct.0 < model.ci_pct.1);
    assert!((a.time_power.unwrap().mean_pct - 50.0).abs() < 1e-9);
    assert_eq!(a.model_all_regimes.unwrap().kernels, 3);
    // On total energy the measured static part dilutes the error: (1.1 + 0.5 − 1.5) / 1.5.
    assert!((a.rows[0].total_error_pct - 100.0 / 15.0).abs() < 1e-9, "{}", a.rows[0].total_error_pct);
    assert_eq!(a.model_total.unwrap().kernels, 2);
    // The constant-data case lies below its bracket.
    assert_eq!(a.in_bracket, (2, 3));
    assert!((a.rows[1].activity.unwrap() + 1.0 / 6.0).abs() < 1e-9);
    let md = render_markdown(&a);
    assert!(
        md.contains("| `heldout_b_own` | third party | own |") && md.contains("-5.0 %") && md.contains("2 of 3"),
        "{md}"
    );
    // The project-written kernel: its own figures, none of the goal's.
    assert_eq!(a.model_project.unwrap().kernels, 1);
    assert!((a.model_project.unwrap().mean_pct - 50.0).abs() < 1e-9);
    assert_eq!(a.in_bracket_project, (0, 1));
    assert!(
        md.contains("| `heldout_p_own` | this project | own |") && md.contains("inside the bracket: 0 of 1"),
        "{md}"
    );
    // Against the protocol: two kernels are too few, and 2 of 3 inside is below 90 %.
    let wrong = a.shortfalls(&Protocol::committed().unwrap().acceptance);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    // A case without a positive measurement is refused.
    let bad = [case("heldout_c_own", "own", 0.0, 1.0, (0.0, 1.0))];
    assert!(analyse(&bad, &baselines).unwrap_err().to_string().contains("heldout_c_own"));
    // A training kernel without its count leaves the instruction baseline out.
    let mut partial = training.clone();
    partial[0].instructions = None;
    let b = Baselines::fit(&partial).unwrap();
    assert!(b.j_per_instruction.is_none());
    assert!(analyse(&cases, &b).unwrap().instruction.is_none());
}

#[test]
fn the_bootstrap_is_fixed_and_holds_the_mean() {
    let values = [1.0, 2.0, 3.0, 10.0];
    let (mean, (lo, hi)) = bootstrap_mean(&values, 10_000, 35).unwrap();
    assert_eq!(mean, 4.0);
    assert!(lo < mean && mean < hi && lo >= 1.0 && hi <= 10.0, "{lo} {hi}");
    assert_eq!(bootstrap_mean(&values, 10_000, 35).unwrap(), (mean, (lo, hi)));
    assert!(bootstrap_mean(&[], 10, 1).is_none());
}

/// A launch of kernel `name` lasting `ns` nanoseconds, with 10 warp-instructions.
fn launch(id: u64, name: &str, ns: f64) -> NcuKernel {
    NcuKernel {
        id,
        name: name.into(),
        block: String::new(),
        grid: String::new(),
        metrics: [("smsp__inst_executed.sum".to_string(), 10.0), ("gpu__time_duration.sum".to_string(), ns)]
            .into_iter()
            .collect(),
        text: Default::default(),
    }
}

fn of(names: &[&str]) -> Vec<NcuKernel> {
    names.iter().enumerate().map(|(i, n)| launch(i as u64, n, 1000.0)).collect()
}

#[test]
fn a_call_is_the_repeat_of_three_that_lasts_the_measured_call() {
    // cuRAND: its first call seeds the generator, then one kernel per call.
    assert_eq!(launches_per_call(&of(&["seed", "gen", "gen", "gen"]), None), Some(1));
    // Two kernels per call: two, not one.
    assert_eq!(launches_per_call(&of(&["a", "b", "a", "b", "a", "b"]), Some(2e-6)), Some(2));
    // Six launches of one kernel: two per call when a call lasts two launches (cuBLAS SASUM
    // launches two kernels of one name), one when it lasts one.
    assert_eq!(launches_per_call(&of(&["k"; 6]), Some(2.1e-6)), Some(2));
    assert_eq!(launches_per_call(&of(&["k"; 6]), Some(0.9e-6)), Some(1));
    // Without a measured time: the largest repeat.
    assert_eq!(launches_per_call(&of(&["k"; 6]), None), Some(2));
    // No repeat lasts about the call, or nothing repeats three times: none.
    assert_eq!(launches_per_call(&of(&["k"; 6]), Some(10e-6)), None);
    assert_eq!(launches_per_call(&of(&["a", "b", "a", "c"]), None), None);
    assert_eq!(launches_per_call(&[], None), None);
    // Copy, then three steps: one call of four, its counts summed.
    let bitonic = of(&["copy", "step", "step", "step"].repeat(3));
    assert_eq!(launches_per_call(&bitonic, Some(4e-6)), Some(4));
    let call = one_call(&bitonic, 4).unwrap();
    assert_eq!(call.metric("smsp__inst_executed.sum").unwrap(), 40.0);
    assert_eq!(call.metric("gpu__time_duration.sum").unwrap(), 4000.0);
    assert_eq!(call.name, "one call: 4 launch(es) of copy, step");
    assert!(one_call(&bitonic[..3], 4).is_err());
    // explain's default: a call of several kernels summed; launches of one kernel as they are.
    let (chosen, note) = one_call_of(bitonic.clone(), 4e-6).unwrap();
    assert_eq!((chosen.len(), chosen[0].metric("smsp__inst_executed.sum").unwrap()), (1, 40.0));
    assert!(note.unwrap().contains("one call: 4 launch(es)"));
    let (chosen, note) = one_call_of(of(&["k"; 3]), 1e-6).unwrap();
    assert_eq!((chosen.len(), note), (3, None));
    let (chosen, note) = one_call_of(of(&["a", "b", "a", "c"]), 1e-6).unwrap();
    assert_eq!(chosen.iter().map(|l| l.id).collect::<Vec<_>>(), [0, 2]);
    assert!(note.unwrap().contains("--kernel"));
}

#[test]
fn a_one_launch_prediction_is_explains() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let board = root.join("results/2026-11-24-model-h100-h200/h100-board1");
    let run = SuiteRun::read_run_and_ncu(&board.join("run"), &board.join("ncu")).unwrap();
    let model = EnergyModel::read_json(&root.join("results/model-h100.json")).unwrap();
    let name = HELD_OUT_APPS[0];
    let (result, launches) = (&run.results[name], &run.launches[name]);
    let last = launches.last().unwrap();
    let p = predict(&model, result, std::slice::from_ref(last)).unwrap();
    let e = explain(&model, result, &[last]).unwrap();
    let j = p.switching_j;
    assert_eq!((j, p.switching_ci_j), (e.predicted_dynamic_j, e.predicted_ci_j));
    // The published 2026-11-24 model has no constant-data costs: no bracket.
    assert_eq!((p.constant_j, p.bracket_j), (None, None));
    assert!(p.unpriced.is_empty());
    // The case prices the last call: here one launch.
    let c = Case::measure(name, "own", false, &model, result, launches).unwrap();
    assert!((c.predicted_j - j).abs() <= 1e-12 * j, "{} against {j}", c.predicted_j);
    assert_eq!(c.measured_j, result.dynamic_j.mean);
}

#[test]
fn windows_shorter_than_a_sensor_tick_are_not_a_measurement() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-26-model-protocol-h100-h200");
    let read = |name: &str| {
        energy_harness::ResultFile::read_json(&root.join(format!("h100-board1/run-heldout/{name}_energy.json")))
            .unwrap()
    };
    // cuRAND's normal generator on an H100: windows of one 1 ms launch, sized from a first
    // call that seeded the generator (323 ms): no sensor tick inside any window.
    let why = unmeasured(&read("heldout_curand_normal_own")).unwrap();
    assert!(why.contains("0.00 sensor tick") && why.contains("interpolated"), "{why}");
    assert!(unmeasured(&read("heldout_curand_uniform_own")).is_none());
}

#[test]
fn a_partial_ncu_export_is_named_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("k.csv");
    let stderr = dir.path().join("k.err");
    // An error in the export itself: its reader refuses it as partial.
    std::fs::write(&export, "==PROF== Connected\n==ERROR== Failed to profile \"k\" in process 1\n\"ID\"\n").unwrap();
    let e = energy_report::read_ncu_csv(&export).unwrap_err().to_string();
    assert!(e.contains("==ERROR== Failed to profile") && e.contains("partial"), "{e}");
    // An error on ncu's stderr beside it.
    assert!(energy_suites::model::ncu_error(&stderr).is_none());
    std::fs::write(&stderr, "==WARNING== uncontrolled caches\n").unwrap();
    assert!(energy_suites::model::ncu_error(&stderr).is_none());
    std::fs::write(&stderr, "==ERROR== The application returned an error code (1).\n").unwrap();
    assert!(energy_suites::model::ncu_error(&stderr).unwrap().contains("error code"));
}

#[test]
fn the_analysis_warns_when_the_measured_windows_lie_between_two_ticks() {
    use energy_harness::unstable::engine::{analyze_trace, AnalysisOptions};
    use energy_results::trace::format::read_trace;
    let run = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/2026-11-26-model-protocol-h100-h200/h100-board1/run-heldout");
    let warned = |name: &str| {
        let trace = read_trace(&run.join(format!("{name}_energy.trace.csv"))).unwrap();
        let analysis = analyze_trace(&trace, &AnalysisOptions::default()).unwrap();
        analysis.warnings.iter().find(|w| w.message.contains("span fewer than")).map(|w| w.message.clone())
    };
    // Twelve 1 ms windows after a warm-up of 323 ms: the warm-up's ticks resolve none of them.
    let w = warned("heldout_curand_normal_own").expect("no warning on windows between two ticks");
    assert!(w.contains("12 of 12 windows"), "{w}");
    // Windows of 150 ms: no warning.
    assert_eq!(warned("heldout_curand_uniform_own"), None);
}

#[test]
fn a_mean_just_outside_the_bracket_is_said_to_reach_into_it() {
    let training = [TrainingPoint { dynamic_j: 0.1, time_s: 1e-3, instructions: None }];
    let baselines = Baselines::fit(&training).unwrap();
    // Measured 1.0 J ± 1 %: 0.5 % above a bracket ending at 0.995 J, and far above one at 0.9 J.
    let cases =
        [case("heldout_x_own", "own", 1.0, 0.9, (0.5, 0.995)), case("heldout_y_own", "own", 1.0, 0.8, (0.5, 0.9))];
    let md = render_markdown(&analyse(&cases, &baselines).unwrap());
    assert!(md.contains("with a 95 % interval that reaches into it: `heldout_x_own`"), "{md}");
    assert!(!md.contains("`heldout_y_own` (measured"), "{md}");
}
