//! Bench runs on the simulated GPU in child processes: a run saved as a baseline and
//! compared, SIGINT at several moments of a run (no mixed or partial result is ever
//! accepted by `report` or `compare`), a failing run, `ENERGY_REQUIRE_GPU=1`, and an
//! output directory that cannot be written (docs/RELIABILITY.md).
//!
//! This test has its own `main` (`harness = false`): the child is this same binary with
//! `BENCH_RUNS_CHILD=1`, and it takes criterion's options (`--save-baseline`), which
//! libtest would reject.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use energy_harness::unstable::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::unstable::report::{RunManifest, TargetStatus};
use energy_harness::MeasureOptions;

fn child_specs() -> Vec<BenchSpec> {
    ["alpha", "beta"]
        .into_iter()
        .enumerate()
        .map(|(i, name)| BenchSpec::new(name, file!(), 1 + i as u32).sim(0.01, 300.0).without_time_bench())
        .collect()
}

/// A benchmark with a baseline kernel: the kernel does `ops` operations, the baseline its
/// own (fewer) count.
fn baseline_specs() -> Vec<BenchSpec> {
    use energy_harness::KernelCode;
    let nothing = || KernelCode::launch(|_stream: &energy_harness::Stream| Ok(()));
    vec![BenchSpec::new("with_base", file!(), 1)
        .code(nothing())
        .baseline("base_loop", nothing())
        .sim(0.01, 300.0)
        .baseline_sim(0.01, 200.0)
        .options(MeasureOptions { ops: Some(1.0e6), ..MeasureOptions::DEFAULT })
        .baseline_ops(10.0)
        .without_time_bench()]
}

fn run_child(target: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    // `--bench`, as `cargo bench` passes it: without it criterion only tests each benchmark.
    cmd.arg("--bench").args(args);
    cmd.env("BENCH_RUNS_CHILD", "1").env("CARGO_TARGET_DIR", target).env("ENERGY_DEVICE", "sim");
    cmd.env_remove("ENERGY_REQUIRE_GPU").env_remove("ENERGY_RUN_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
}

fn cargo_energy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
        .args(args)
        .env("ENERGY_DEVICE", "sim")
        .env_remove("ENERGY_RUN_ID")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn compare(target: &Path) -> Output {
    cargo_energy(&["compare", "--baseline", "main", "--dir", target.join("energy").to_str().unwrap()])
}

fn report(target: &Path) -> Output {
    cargo_energy(&["report", "--dir", target.join("energy").to_str().unwrap()])
}

fn a_saved_baseline_compares_and_an_interrupted_run_never_passes() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    let status = run_child(t, &["--save-baseline", "main"], &[("ENERGY_RUN_ID", "first")]).wait().unwrap();
    assert!(status.success());
    let manifest = RunManifest::read(&t.join("energy/main")).unwrap();
    assert_eq!(manifest.targets[0].status, TargetStatus::Succeeded);
    assert_eq!(manifest.results().count(), 2);
    let out = compare(t);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let start = Instant::now();
    assert!(run_child(t, &[], &[("ENERGY_RUN_ID", "timing")]).wait().unwrap().success());
    let full_run_s = start.elapsed().as_secs_f64();
    let out = compare(t);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // SIGINT at several moments of a new run: `new` is refused (never the previous run's
    // results), or, when the run had finished before the signal, accepted whole.
    for fraction in [0.02, 0.3, 0.55, 0.8] {
        let mut child = run_child(t, &[], &[("ENERGY_RUN_ID", &format!("interrupted-{fraction}"))]);
        std::thread::sleep(Duration::from_secs_f64(full_run_s * fraction));
        let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
        let status = child.wait().unwrap();
        let out = compare(t);
        let outcome = text(&out);
        assert!(!outcome.contains("panicked"), "{outcome}");
        if status.success() {
            assert_eq!(out.status.code(), Some(0), "a finished run: {outcome}");
        } else {
            assert_eq!(out.status.code(), Some(2), "SIGINT at {fraction} of the run: {outcome}");
            assert!(
                outcome.contains("never finished")
                    || outcome.contains("no run manifest")
                    || outcome.contains("lists no bench target"),
                "SIGINT at {fraction} of the run: {outcome}"
            );
        }
        let r = report(t);
        assert_eq!(r.status.code(), out.status.code(), "report agrees with compare: {}", text(&r));
        let reason: String = outcome.lines().next().unwrap_or("").chars().take(150).collect();
        println!(
            "  SIGINT at {:.0} % of a {full_run_s:.1} s run (child {}): compare exit {:?}: {reason}",
            fraction * 100.0,
            if status.success() { "finished" } else { "interrupted" },
            out.status.code()
        );
    }
}

fn a_failing_run_is_recorded_as_failed() {
    let target = tempfile::tempdir().unwrap();
    // An unknown device request fails every benchmark: exit 1, and the run says so.
    let status = run_child(target.path(), &[], &[("ENERGY_DEVICE", "tpu")]).wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let out = report(target.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("failed benchmark"), "{}", text(&out));
}

fn gpu_required_fails_a_simulated_run() {
    let target = tempfile::tempdir().unwrap();
    let out = run_child(target.path(), &[], &[("ENERGY_REQUIRE_GPU", "1")]).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ENERGY_REQUIRE_GPU=1 requires a real NVIDIA GPU"), "{err}");
}

fn an_unwritable_output_directory_fails_the_run_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let out = run_child(&blocker.join("target"), &[], &[]).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot start the run"), "{err}");
}

fn a_baseline_has_its_own_ops_not_the_kernels() {
    let target = tempfile::tempdir().unwrap();
    let child = run_child(target.path(), &[], &[("BENCH_RUNS_BASELINE", "1")]);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = target.path().join("energy").join("new");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".json") || name == "run.json" {
            continue;
        }
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let id = json["id"].as_str().unwrap().to_string();
        let per_op = json["per_op"]["energy_j"]["mean"].as_f64().unwrap();
        let energy = json["energy_j"]["mean"].as_f64().unwrap();
        // The baseline divides by its own 10 ops, the kernel by its 1e6.
        let ops = if id.contains("baseline") { 10.0 } else { 1.0e6 };
        assert!((per_op * ops / energy - 1.0).abs() < 1e-9, "{id}: per op {per_op} J, energy {energy} J");
        seen += 1;
    }
    assert_eq!(seen, 2, "results in {}", dir.display());
    // The report shows the net energy per op against the baseline kernel.
    let md = report(target.path());
    let md = text(&md);
    assert!(md.contains("net vs baseline kernel (95 % CI)"), "{md}");
    assert!(md.contains("/op ±") && md.contains("vs `with_base/baseline (simulated)`"), "{md}");
}

fn main() {
    if std::env::var_os("BENCH_RUNS_CHILD").is_some() {
        let specs = if std::env::var_os("BENCH_RUNS_BASELINE").is_some() { baseline_specs() } else { child_specs() };
        let collected = run_collect(specs, &RunSettings { criterion_plots: false }, |_| {});
        std::process::exit(if collected.failures > 0 { 1 } else { 0 });
    }
    // `cargo test -- --list` and filters: this binary's cases are not filterable.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cases: [(&str, fn()); 5] = [
        ("a_baseline_has_its_own_ops_not_the_kernels", a_baseline_has_its_own_ops_not_the_kernels),
        (
            "a_saved_baseline_compares_and_an_interrupted_run_never_passes",
            a_saved_baseline_compares_and_an_interrupted_run_never_passes,
        ),
        ("a_failing_run_is_recorded_as_failed", a_failing_run_is_recorded_as_failed),
        ("gpu_required_fails_a_simulated_run", gpu_required_fails_a_simulated_run),
        ("an_unwritable_output_directory_fails_the_run_clearly", an_unwritable_output_directory_fails_the_run_clearly),
    ];
    let mut failed = 0;
    for (name, case) in cases {
        match catch_unwind(AssertUnwindSafe(case)) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("bench_runs: {} passed, {failed} failed", cases.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
