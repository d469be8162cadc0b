//! `cargo energy ab` end to end on the simulated GPU: a candidate that does 10 % more work
//! per launch is a regression, stated as simulated; the same executable against itself
//! (A/A) is none; a candidate that crashes leaves exit 2 and its exit reason.
//!
//! This test has its own `main` (`harness = false`): the bench executables are hard links
//! of this binary (`tests/common`), which measures one simulated benchmark when
//! `AB_RUNS_CHILD=1`, its launch 10 ms long, 11 ms when its name starts with `heavier`.

mod common;

use std::path::Path;

use common::{bench_targets, cargo_energy, result_files, text};
use energy_harness::unstable::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::unstable::report::current_target_name;
use energy_harness::MeasureOptions;

fn child() -> ! {
    energy_harness::unstable::report::mark_energy_bench();
    let target = current_target_name();
    if target == "crash" {
        eprintln!("crash: the candidate dies at start");
        std::process::exit(101);
    }
    let launch_s = if target.starts_with("heavier") { 0.011 } else { 0.010 };
    // `base` and `heavier` measure `kernel`; a gate's targets `x_…` measure `…`.
    let id = target.split_once('_').map_or("kernel", |(_, id)| id);
    // `steady` runs twice as many windows: intervals of its own that much narrower (what
    // sets a benchmark's share of the sequence's noise, and so when it settles).
    let windows = if id == "steady" { 20 } else { 10 };
    let options = MeasureOptions { windows: Some(windows), ..MeasureOptions::DEFAULT };
    // `noisy` draws a power of its own in every run (±2 %, by the run's number at the end of
    // ENERGY_RUN_ID): a benchmark whose runs differ far beyond its windows.
    let watts = if id == "noisy" {
        let run: usize = std::env::var("ENERGY_RUN_ID")
            .ok()
            .and_then(|r| r.rsplit('-').next().and_then(|n| n.parse().ok()))
            .unwrap_or(0);
        300.0 * (1.0 + 0.02 * [0.9, -0.4, -0.8, 0.7, 0.2, -1.0, 0.5, -0.1][run % 8])
    } else {
        300.0
    };
    let spec = BenchSpec::new(id, file!(), line!()).sim(launch_s, watts).options(options).without_time_bench();
    let collected = run_collect(vec![spec], &RunSettings::default(), |_| {});
    std::process::exit(if collected.failures > 0 { 1 } else { 0 });
}

fn ab(dir: &Path, baseline: &Path, candidate: &Path) -> std::process::Output {
    let out = dir.join("out");
    cargo_energy(&[
        "ab",
        "--baseline",
        baseline.to_str().unwrap(),
        "--candidate",
        candidate.to_str().unwrap(),
        "--min-pairs",
        "2",
        "--max-pairs",
        "2",
        "--output-dir",
        out.to_str().unwrap(),
    ])
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("out").join("ab.json")).unwrap()).unwrap()
}

fn a_heavier_candidate_is_a_simulated_regression() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let exes = bench_targets(dir.path(), &["base", "heavier"]);
    let out = ab(dir.path(), &exes[0], &exes[1]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("REGRESSION") && t.contains("SIMULATED figures"), "{t}");
    assert!(t.contains("pair 2/2 (BA, simulated)"), "{t}");
    let r = report(dir.path());
    assert_eq!(r["schema"], "energy-ab/1");
    assert_eq!(r["device"]["simulated"], true);
    assert_eq!(r["runs"].as_array().unwrap().len(), 4);
    let sides: Vec<&str> = r["runs"].as_array().unwrap().iter().map(|run| run["side"].as_str().unwrap()).collect();
    assert_eq!(sides, ["A", "B", "B", "A"]);
    let c = &r["changes"][0];
    assert_eq!(c["verdict"], "regression", "{c}");
    let change = c["change_pct"].as_f64().unwrap();
    assert!((change - 10.0).abs() < 1.0, "{c}");
    assert!(c["change_low_pct"].as_f64().unwrap() < change && c["change_high_pct"].as_f64().unwrap() > change);
    assert_eq!(c["detectability"]["basis"], "pairs");
    // Each run is a paired one: criterion is handed nothing, each idle tail is one interval.
    let run_dir = dir.path().join("out").join("run-01-A");
    let log = std::fs::read_to_string(run_dir.join("bench.log")).unwrap();
    assert!(log.contains("a run of a paired sequence (ENERGY_PAIRED_RUN)"), "{log}");
    assert!(!log.contains("time:   ["), "criterion was handed the windows: {log}");
    let trace = std::fs::read_dir(run_dir.join("energy").join("new"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".trace.csv"))
        .expect("a trace");
    let trace = std::fs::read_to_string(trace).unwrap();
    assert!(trace.contains("1 counter interval(s) of idle after the stretch"), "{}", &trace[..trace.len().min(2000)]);
    println!("  heavier candidate: {change:+.2} % (simulated), exit 1");
}

fn the_same_executable_against_itself_is_no_regression() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let exes = bench_targets(dir.path(), &["base"]);
    let out = ab(dir.path(), &exes[0], &exes[0]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(!t.contains("REGRESSION") && t.contains("0 regression(s) in 1 benchmark(s) (simulated)"), "{t}");
    // Runs differ (seeded noise per run, the host's scheduling): the A/A change is judged by
    // the noise the pairs show, not by a fixed bound a loaded host exceeds (issue 60: −0.71 %
    // at load 4-11 on two cores). Within the detectable change, (t(99 %) + t(95 %)) standard
    // errors: a bias of the method would exceed it, noise almost never.
    let c = &report(dir.path())["changes"][0];
    let detectable = c["detectability"]["detectable_change_pct"].as_f64().unwrap();
    assert!(detectable.is_finite() && c["change_pct"].as_f64().unwrap().abs() <= detectable, "{c}");
    println!("  A/A: {:+.3} % (simulated), exit 0", c["change_pct"].as_f64().unwrap());
}

fn a_crashing_candidate_is_refused_with_its_exit_reason() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let exes = bench_targets(dir.path(), &["base", "crash"]);
    let out = ab(dir.path(), &exes[0], &exes[1]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("run 2 (candidate)") && t.contains("exited with code 101"), "{t}");
    assert!(t.contains("the candidate dies at start"), "{t}");
}

/// A gate's build made elsewhere (`--build-only`): two bench targets a side, the candidate's
/// `heavier_one` 10 % heavier; run with `--prebuilt`.
fn a_prebuilt_gate_runs_every_target_of_both_sides_and_writes_the_comment() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let build = dir.path().join("gate-build");
    let side = |name: &str, targets: &[&str]| {
        let folder = build.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        bench_targets(&folder, targets).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
    };
    let base: Vec<String> = side("base", &["base_one", "base_two"]);
    let candidate: Vec<String> = side("candidate", &["heavier_one", "base_two"]);
    let record = |label: &str, exes: &[String]| serde_json::json!({"label": label, "commit": null, "tree": "unknown", "exes": exes, "package_dir": "/nonexistent"});
    let json = serde_json::json!({"schema": "energy-gate-build/1", "cargo_args": [],
        "base": record("base main (00000000)", &base), "candidate": record("candidate (11111111)", &candidate)});
    std::fs::write(build.join("gate-build.json"), json.to_string()).unwrap();
    let md = dir.path().join("energy.md");
    let gate = |extra: &[&str]| {
        let mut args = vec!["gate", "--prebuilt", build.to_str().unwrap(), "--min-pairs", "2", "--max-pairs", "2"];
        args.extend_from_slice(extra);
        cargo_energy(&args)
    };
    let out = gate(&["--markdown", md.to_str().unwrap(), "--output-dir", dir.path().join("out").to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("1 regression(s) in 2 benchmark(s) (simulated)"), "{t}");
    // The gate's lines are the gate's, settlements on the last pair included.
    assert!(t.contains("energy gate: settled after 2 pairs: ") && !t.contains("energy ab:"), "{t}");
    // The gate's default window count said as it starts, and the windows the runs measured
    // (these benchmarks fix their own 10) where the verdict is.
    assert!(t.contains("6 windows per benchmark and run (a benchmark that fixes its own keeps them)"), "{t}");
    assert!(t.contains("2 ABBA pairs, 10 windows per benchmark and run on"), "{t}");
    let comment = std::fs::read_to_string(&md).unwrap();
    assert!(comment.contains("2 ABBA pairs, 10 windows per benchmark and run on"), "{comment}");
    assert!(comment.starts_with("## Energy gate: REGRESSION"), "{comment}");
    // What it could have missed is said of the benchmark it passed, not the one it caught.
    let passed = r#"1 of 2 benchmark(s) regressed beyond 1.00 %; in the benchmarks it passed, the smallest change"#;
    assert!(comment.contains(passed), "{comment}");
    assert!(comment.contains("Compared: candidate (11111111) against base main (00000000)."), "{comment}");
    assert!(comment.contains("SIMULATED"), "{comment}");
    let r = report(dir.path());
    assert_eq!(r["runs"][0]["benchmarks"].as_object().unwrap().len(), 2, "both targets in one run: {r}");
    let passed_detectable = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] != "regression")
        .map(|c| c["detectability"]["detectable_change_pct"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(comment.contains(&format!("could detect was {passed_detectable:.2} %")), "{comment}");
    // The first pair's runs measure an idle tail; the second pair's are lean: none, each
    // benchmark (the first of its process) taking the idle of its lead-in alone.
    let idle_after = |run: &str| -> Vec<bool> {
        let folder = dir.path().join("out").join(run).join("energy").join("new");
        result_files(&folder)
            .into_iter()
            .map(|(name, result)| {
                let windows = result["windows"].as_array().unwrap();
                assert!(windows.iter().all(|w| w["idle_before_w"].is_number()), "{run}: {name}");
                windows.iter().all(|w| w["idle_after_w"].is_number())
            })
            .collect()
    };
    assert_eq!((idle_after("run-01-A"), idle_after("run-02-B")), (vec![true; 2], vec![true; 2]));
    assert_eq!((idle_after("run-03-B"), idle_after("run-04-A")), (vec![false; 2], vec![false; 2]));
    // A budget too small for two pairs is refused with what to do.
    let out = gate(&["--max-minutes", "0.001"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("a verdict needs two"), "{}", text(&out));
    println!("  prebuilt gate over two targets a side: exit 1, the comment written");
}

/// A steady benchmark settles after two pairs and later runs leave it out, while a noisy one
/// runs on: each benchmark costs the pairs its own noise needs.
fn a_settled_benchmark_is_left_out_of_later_pairs() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let exes = bench_targets(dir.path(), &["base_steady", "base_noisy"]);
    let out = dir.path().join("out");
    let (steady, noisy) = (exes[0].to_str().unwrap(), exes[1].to_str().unwrap());
    let args = ["ab", "--baseline", steady, "--baseline", noisy, "--candidate", steady, "--candidate", noisy];
    let out_arg = out.to_str().unwrap();
    let run = cargo_energy(
        &[&args[..], &["--min-pairs", "2", "--max-pairs", "3", "--target", "5", "--output-dir", out_arg]].concat(),
    );
    let t = text(&run);
    assert_eq!(run.status.code(), Some(0), "{t}");
    let r = report(dir.path());
    assert_eq!(r["settled"]["steady/energy (simulated)"], 2, "{t}\n{}", r["changes"]);
    assert!(r["settled"].get("noisy/energy (simulated)").is_none(), "{}", r["changes"]);
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6, "{t}");
    let held = |i: usize| runs[i]["benchmarks"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(held(3).len(), 2);
    assert_eq!(held(4), ["noisy/energy (simulated)"], "pair 3 leaves the settled one out");
    assert!(
        t.contains("settled after 2 pairs, left out of the next: steady/energy (simulated) (precise enough)"),
        "{t}"
    );
    assert!(t.contains("2 pairs (settled: precise enough), "), "the report's line says why: {t}");
    assert_eq!(r["settled_because"]["steady/energy (simulated)"], "precise", "{}", r["settled_because"]);
    let changes = r["changes"].as_array().unwrap();
    let pairs_of = |id: &str| changes.iter().find(|c| c["id"] == id).unwrap()["pairs"].as_array().unwrap().len();
    assert_eq!((pairs_of("steady/energy (simulated)"), pairs_of("noisy/energy (simulated)")), (2, 3));
    println!("  a settled benchmark left out of pair 3, the noisy one ran on");
}

fn main() {
    if std::env::var_os("AB_RUNS_CHILD").is_some() {
        child();
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // The children inherit it through `cargo energy ab`.
    std::env::set_var("AB_RUNS_CHILD", "1");
    let cases: Vec<(&str, fn())> = vec![
        ("a_heavier_candidate_is_a_simulated_regression", a_heavier_candidate_is_a_simulated_regression),
        ("the_same_executable_against_itself_is_no_regression", the_same_executable_against_itself_is_no_regression),
        ("a_crashing_candidate_is_refused_with_its_exit_reason", a_crashing_candidate_is_refused_with_its_exit_reason),
        (
            "a_prebuilt_gate_runs_every_target_of_both_sides_and_writes_the_comment",
            a_prebuilt_gate_runs_every_target_of_both_sides_and_writes_the_comment,
        ),
        ("a_settled_benchmark_is_left_out_of_later_pairs", a_settled_benchmark_is_left_out_of_later_pairs),
    ];
    // The settling case runs before the others, not beside them: whether its steady benchmark
    // settles after two pairs rests on simulated runs agreeing within ~0.3 %, and beside four
    // other sequences on CI's two cores (with the optimized build there) one run in a pair
    // read 1 % low twice in a row (the simulated GPU follows the host's load; about 20 s more).
    common::run_cases("ab_runs", "AB_RUNS_ONLY", cases, &["a_settled_benchmark_is_left_out_of_later_pairs"]);
}
