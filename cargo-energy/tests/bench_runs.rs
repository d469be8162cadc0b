//! Bench runs on the simulated GPU in child processes: a run saved as a baseline and
//! compared, SIGINT at several moments of a run (no mixed or partial result is ever
//! accepted by `report` or `compare`), a failing run, `ENERGY_REQUIRE_GPU=1`, an output
//! directory that cannot be written, and runs of three bench targets: one crashing at
//! start, SIGKILL at random points (each refused by `compare`, the next run starting at
//! once; `KILL_TRIALS`, `KILL_SEED`) (docs/RELIABILITY.md).
//!
//! This test has its own `main` (`harness = false`): the child is this same binary with
//! `BENCH_RUNS_CHILD=1`, and it takes criterion's options (`--save-baseline`), which
//! libtest would reject. `BENCH_RUNS_ONLY=NAME` runs one case.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bench_targets, cargo_energy, text};
use energy_harness::unstable::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::MeasureOptions;
use energy_results::run::RunManifest;
use energy_results::run::TargetStatus;

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
        .options(MeasureOptions { ops: Some(1.0e6), baseline_ops: Some(10.0), ..MeasureOptions::DEFAULT })
        .without_time_bench()]
}

/// A sweep over five block sizes (`args = [...]` as the macro expands it): simulated, the
/// fastest at 1024, the least energy at `BENCH_RUNS_SWEEP` (a model per argument, so the
/// truth is known).
fn sweep_specs(least_energy: u32) -> Vec<BenchSpec> {
    [64u32, 128, 256, 512, 1024]
        .into_iter()
        .map(|block| {
            let seconds = 1e-3 * if block == 1024 { 0.97 } else { 1.0 };
            let watts = if block == least_energy { 280.0 } else { 300.0 };
            BenchSpec::new(&format!("blocks/{block}"), file!(), 1).sim(seconds, watts).without_time_bench().sweep_point(
                "blocks",
                "block",
                &block.to_string(),
            )
        })
        .collect()
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
    let manifest = RunManifest::read_manifest(&t.join("energy/main")).unwrap();
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
        let id = format!("interrupted-{fraction}");
        let spawned = Instant::now();
        let mut child = run_child(t, &[], &[("ENERGY_RUN_ID", &id)]);
        // At that fraction of a whole run, but never before the run has started (its manifest
        // names it): a signal before the process reaches its run leaves the previous run in
        // place, which only `--run-id` tells apart (the SIGKILL test below checks that case).
        let started = |m: &RunManifest| m.invocation.key == format!("env:{id}");
        while !RunManifest::read_manifest(&t.join("energy/new")).is_ok_and(|m| started(&m))
            && spawned.elapsed().as_secs_f64() < 30.0
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        let at_s = (full_run_s * fraction).max(spawned.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_secs_f64(at_s - spawned.elapsed().as_secs_f64().min(at_s)));
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

/// Each result records the commit, branch and dirt of the crate benchmarked (git asked in
/// `CARGO_MANIFEST_DIR`), the host and the windows' temperatures; outside a repository the
/// git fields are absent and the run still succeeds.
fn a_result_records_where_it_came_from() {
    let read = |target: &Path| -> serde_json::Value {
        let manifest = RunManifest::read_manifest(&target.join("energy/new")).unwrap();
        let entry = manifest.results().next().unwrap();
        serde_json::from_str(&std::fs::read_to_string(target.join("energy/new").join(&entry.json)).unwrap()).unwrap()
    };
    let in_repo = tempfile::tempdir().unwrap();
    let repo = env!("CARGO_MANIFEST_DIR");
    assert!(run_child(in_repo.path(), &[], &[("CARGO_MANIFEST_DIR", repo)]).wait().unwrap().success());
    let r = read(in_repo.path());
    let p = &r["provenance"];
    let git_works =
        Command::new("git").args(["-C", repo, "rev-parse", "HEAD"]).output().is_ok_and(|o| o.status.success());
    if git_works {
        let commit = p["commit"].as_str().unwrap_or_default();
        assert!(commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()), "{p}");
        assert!(p["dirty"].is_boolean() && p["commit_time_unix"].is_i64(), "{p}");
    }
    assert!(p["host"].as_str().is_some_and(|h| !h.is_empty()), "{p}");
    let t = &r["temperature_range_c"];
    assert!(t["min_c"].as_u64().unwrap() <= t["max_c"].as_u64().unwrap(), "{r}");
    let outside = tempfile::tempdir().unwrap();
    let plain = outside.path().join("crate");
    std::fs::create_dir_all(&plain).unwrap();
    let status = run_child(outside.path(), &[], &[("CARGO_MANIFEST_DIR", plain.to_str().unwrap()), ("GITHUB_SHA", "")])
        .wait()
        .unwrap();
    assert!(status.success());
    let p = read(outside.path())["provenance"].clone();
    assert!(p["commit"].is_null() && p["branch"].is_null() && p["dirty"].is_null(), "{p}");
    assert!(p["host"].is_string(), "{p}");
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
    for (_, json) in common::result_files(&dir) {
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

// ---------------------------------------------------------------------------------------
// Several bench targets, as `cargo bench` runs them: hard links of this binary named as
// cargo names bench binaries (`alpha-<16 hex>`), so each records itself as `alpha` in the
// run, run in turn by a shell that stops at the first failure, as cargo does. The shell is
// their parent, so they share one run as the binaries of one `cargo bench` do.

/// What a multi-target child does, by its target name: `crash` panics before it starts
/// the run (its manifest entry is missing), `abort` aborts right after (its entry stays
/// `running`); any other name measures one simulated benchmark of that name.
fn multi_target_child() -> ! {
    use energy_harness::unstable::report::{current_target_name, RunWriter};
    use energy_results::dirs::energy_dir;
    use energy_results::run::Invocation;
    let target = current_target_name();
    match target.as_str() {
        "crash" => panic!("crash: the bench target dies at start"),
        "abort" => {
            let _run = RunWriter::begin(&energy_dir().join("new"), &target, &Invocation::current()).unwrap();
            std::process::abort();
        }
        _ => {}
    }
    let options = MeasureOptions { windows: Some(10), ..MeasureOptions::DEFAULT };
    let spec = BenchSpec::new(&target, file!(), line!()).sim(0.01, 300.0).options(options).without_time_bench();
    let collected = run_collect(vec![spec], &RunSettings::default(), |_| {});
    std::process::exit(if collected.failures > 0 { 1 } else { 0 });
}

/// `cargo bench` over `targets` (with `args` for each): a shell in its own process group
/// that runs them in turn and stops at the first that fails.
fn run_targets(target_dir: &Path, targets: &[std::path::PathBuf], args: &str, env: &[(&str, &str)]) -> Child {
    use std::os::unix::process::CommandExt;
    let script: Vec<String> = targets.iter().map(|t| format!("'{}' --bench {args}", t.display())).collect();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script.join(" && ")).process_group(0);
    cmd.env("BENCH_RUNS_CHILD", "1").env("BENCH_RUNS_MULTI", "1").env("CARGO_TARGET_DIR", target_dir);
    cmd.env("ENERGY_DEVICE", "sim").env_remove("ENERGY_REQUIRE_GPU").env_remove("ENERGY_RUN_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
}

fn energy_args<'a>(target: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["compare", "--baseline", "main", "--dir", target.to_str().unwrap()];
    args.extend_from_slice(extra);
    args
}

/// A fresh target directory holding `main`, a complete run of alpha, beta and gamma.
fn with_a_baseline(links: &Path) -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
    let target = tempfile::tempdir().unwrap();
    let targets = bench_targets(links, &["alpha", "beta", "gamma"]);
    let status = run_targets(target.path(), &targets, "--save-baseline main", &[]).wait().unwrap();
    assert!(status.success(), "the baseline run failed");
    let main = RunManifest::read_manifest(&target.path().join("energy/main")).unwrap();
    let names: Vec<&str> = main.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta", "gamma"], "three targets, one run");
    (target, targets)
}

fn a_bench_target_that_crashes_at_start_leaves_a_run_compare_refuses() {
    let links = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (target, targets) = with_a_baseline(links.path());
    let energy = target.path().join("energy");
    let out = cargo_energy(&energy_args(&energy, &[]));
    assert_eq!(out.status.code(), Some(0), "the complete run compares: {}", text(&out));
    // `cargo bench --bench alpha --bench crash --bench beta`: crash panics before its run
    // starts, cargo stops; the run holds alpha's result only, and is complete as written.
    let crash = bench_targets(links.path(), &["crash"]).remove(0);
    let status = run_targets(target.path(), &[targets[0].clone(), crash, targets[1].clone()], "", &[]).wait().unwrap();
    assert_eq!(status.code(), Some(101), "a panic at start");
    let out = cargo_energy(&energy_args(&energy, &[]));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("lacks 2 benchmark(s) of the baseline `main`"), "{t}");
    assert!(t.contains("(bench targets of `main`: alpha, beta, gamma; of `new`: alpha)"), "{t}");
    println!(
        "  crash at start: compare exit 2: {}",
        t.lines().next().unwrap_or("").chars().take(160).collect::<String>()
    );
    // The same target crashing after its run began: its entry stays `running`.
    let abort = bench_targets(links.path(), &["abort"]).remove(0);
    let status = run_targets(target.path(), &[targets[0].clone(), abort, targets[1].clone()], "", &[]).wait().unwrap();
    assert!(!status.success());
    let out = cargo_energy(&energy_args(&energy, &[]));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("bench target `abort`") && t.contains("never finished"), "{t}");
}

/// xorshift64*, seeded from the clock (printed; `KILL_SEED` replays a sequence).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn sigkill_at_random_points_across_bench_targets_never_passes_and_never_blocks() {
    let links = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (target, targets) = with_a_baseline(links.path());
    let energy = target.path().join("energy");
    let seed = std::env::var("KILL_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
    });
    let mut rng = Rng(seed);
    // A whole run, pinned as the README's CI recipe pins it.
    let start = Instant::now();
    assert!(run_targets(target.path(), &targets, "", &[("ENERGY_RUN_ID", "whole")]).wait().unwrap().success());
    let full_run_s = start.elapsed().as_secs_f64();
    let out = cargo_energy(&energy_args(&energy, &["--run-id", "whole"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    println!("  seed {seed} (KILL_SEED replays it), a whole run of 3 bench targets: {full_run_s:.1} s");
    let trials = std::env::var("KILL_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(6);
    let (mut refused, mut finished) = (0, 0);
    // Trial 0: the moment the first target has recorded its end (between two targets);
    // the others at random points of a whole run.
    for trial in 0..=trials {
        let id = format!("kill-{trial}");
        let at = if trial == 0 { f64::INFINITY } else { rng.unit() * full_run_s };
        let spawned = Instant::now();
        let mut child = run_targets(target.path(), &targets, "", &[("ENERGY_RUN_ID", &id)]);
        // The run starts at once, whatever the previous kill left (a lock, a half-written
        // manifest): its manifest names this trial's run within seconds, never after 30 s.
        let mut started_s = None;
        loop {
            let now = spawned.elapsed().as_secs_f64();
            let run = RunManifest::read_manifest(&energy.join("new"))
                .ok()
                .filter(|m| m.invocation.key == format!("env:{id}"));
            if started_s.is_none() && run.is_some() {
                started_s = Some(now);
            }
            let first_done =
                run.is_some_and(|m| m.targets.first().is_some_and(|t| t.status == TargetStatus::Succeeded));
            if now >= at || (trial == 0 && first_done) || now > 2.0 * full_run_s + 30.0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let at = spawned.elapsed().as_secs_f64();
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
        let status = child.wait().unwrap();
        // Killed after the last target recorded its end but before the shell exited: a
        // complete run, accepted whole.
        let complete = RunManifest::read_manifest(&energy.join("new")).is_ok_and(|m| {
            m.invocation.key == format!("env:{id}")
                && m.targets.len() == targets.len()
                && m.targets.iter().all(|t| t.status == TargetStatus::Succeeded)
        });
        let pinned = cargo_energy(&energy_args(&energy, &["--run-id", &id]));
        let outcome = text(&pinned);
        assert!(!outcome.contains("panicked"), "{outcome}");
        if status.success() || complete {
            finished += 1;
            assert_eq!(pinned.status.code(), Some(0), "a finished run: {outcome}");
        } else {
            refused += 1;
            assert_eq!(pinned.status.code(), Some(2), "SIGKILL at {at:.2} s: {outcome}");
            assert!(
                ["never finished", "lacks", "is not the run asked for", "no run manifest", "lists no bench target"]
                    .iter()
                    .any(|why| outcome.contains(why)),
                "SIGKILL at {at:.2} s: {outcome}"
            );
            // Unpinned, the run is refused too, unless the kill came before this run
            // began (the previous trial's run is then still `new`, refused or complete).
            if let Some(s) = started_s {
                let plain = cargo_energy(&energy_args(&energy, &[]));
                assert_eq!(plain.status.code(), Some(2), "started at {s:.2} s, killed at {at:.2} s: {}", text(&plain));
            }
        }
        // `report` refuses the same runs, except one that only lacks benchmarks: it has no
        // baseline to miss them from.
        if !outcome.contains("lacks") {
            let report = cargo_energy(&["report", "--dir", energy.to_str().unwrap(), "--run-id", &id]);
            assert_eq!(report.status.code(), pinned.status.code(), "report agrees: {}", text(&report));
        }
        if let Some(s) = started_s {
            assert!(s < 10.0, "trial {trial}: the run started {s:.1} s after its spawn");
        }
        let reason: String = outcome.lines().next().unwrap_or("").chars().take(140).collect();
        println!(
            "  SIGKILL at {at:.2} s{} (run started after {}): compare exit {:?}: {reason}",
            if trial == 0 { ", as the first target ended" } else { "" },
            started_s.map_or("—".into(), |s| format!("{s:.2} s")),
            pinned.status.code()
        );
    }
    // After every kill, the next run starts at once and finishes.
    let start = Instant::now();
    assert!(run_targets(target.path(), &targets, "", &[("ENERGY_RUN_ID", "after")]).wait().unwrap().success());
    let after_s = start.elapsed().as_secs_f64();
    assert!(
        after_s < full_run_s * 2.0 + 5.0,
        "the run after the kills took {after_s:.1} s (a whole run: {full_run_s:.1} s)"
    );
    let out = cargo_energy(&energy_args(&energy, &["--run-id", "after"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    println!(
        "  {} kills: {refused} runs refused, {finished} finished before the signal; the next run took {after_s:.1} s",
        trials + 1
    );
}

/// A parameterized benchmark: each argument its own result file carrying its place in the
/// sweep; the run prints the sweep's table and verdict (the least energy where the model put
/// it, told apart beyond the intervals); `report` has the sweep, and `compare` says when the
/// least-energy argument moved.
fn a_sweep_prints_its_verdict_and_compare_says_when_the_optimum_moved() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    let sweep_run = |least: &str, args: &[&str]| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.arg("--bench").args(args).env("BENCH_RUNS_SWEEP", least).env("CARGO_TARGET_DIR", t);
        cmd.env("ENERGY_DEVICE", "sim").env_remove("ENERGY_REQUIRE_GPU").env_remove("ENERGY_RUN_ID");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    let printed = sweep_run("512", &["--save-baseline", "main"]);
    assert!(printed.contains("blocks over block (5 arguments, simulated"), "{printed}");
    assert!(printed.contains("verdict: block 1024 is fastest; block 512 costs"), "{printed}");
    let manifest = RunManifest::read_manifest(&t.join("energy/main")).unwrap();
    assert_eq!(manifest.results().count(), 5);
    for block in ["64", "128", "256", "512", "1024"] {
        let file = t.join(format!("energy/main/blocks_{block}_energy__simulated_.json"));
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(json["sweep"], serde_json::json!({"sweep": "blocks", "param": "block", "arg": block}));
    }
    let same = compare(t);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(!text(&same).contains("moved"), "{}", text(&same));
    sweep_run("256", &[]);
    let moved = compare(t);
    assert!(
        text(&moved).contains("sweep blocks: least energy moved from block 512 (main) to block 256 (new)"),
        "{}",
        text(&moved)
    );
    let md = cargo_energy(&["report", "--format", "markdown", "--dir", t.join("energy").to_str().unwrap()]);
    assert_eq!(md.status.code(), Some(0), "{}", text(&md));
    assert!(text(&md).contains("#### Sweep blocks over block"), "{}", text(&md));
    // The HTML report's sweep table: one line per argument, never literal `\n` (issue 60).
    let html = cargo_energy(&["report", "--format", "html", "--dir", t.join("energy").to_str().unwrap()]);
    assert_eq!(html.status.code(), Some(0), "{}", text(&html));
    let page = String::from_utf8_lossy(&html.stdout).into_owned();
    let pre = &page[page.find("<pre>").expect("the sweep's table") + 5..page.find("</pre>").unwrap()];
    assert!(!pre.contains("\\n") && pre.lines().count() >= 8, "{pre}");
    assert!(pre.lines().any(|l| l.trim_start().starts_with("1024 ")), "{pre}");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--bench"]).env("BENCH_RUNS_SWEEP", "dup").env("CARGO_TARGET_DIR", t).env("ENERGY_DEVICE", "sim");
    let dup = cmd.env_remove("ENERGY_REQUIRE_GPU").env_remove("ENERGY_RUN_ID").output().unwrap();
    assert!(!dup.status.success(), "two benchmarks of one id: {}", text(&dup));
    assert!(text(&dup).contains("the name `blocks/64` is taken by the benchmark at"), "{}", text(&dup));
    println!("  sweep: the verdict printed, the files marked, the moved optimum said, a repeated id refused");
}

fn main() {
    if let Ok(least) = std::env::var("BENCH_RUNS_SWEEP") {
        // `dup`: two arguments that print alike (one id), which the run refuses.
        let specs = match least.as_str() {
            "dup" => [64u32, 64]
                .iter()
                .map(|b| BenchSpec::new(&format!("blocks/{b}"), file!(), 1).sim(1e-3, 300.0))
                .collect(),
            least => sweep_specs(least.parse().unwrap()),
        };
        std::process::exit(
            if energy_harness::unstable::bench::run_registered(specs) == std::process::ExitCode::SUCCESS {
                0
            } else {
                1
            },
        );
    }
    if std::env::var_os("BENCH_RUNS_MULTI").is_some() {
        multi_target_child();
    }
    if std::env::var_os("BENCH_RUNS_CHILD").is_some() {
        let specs = if std::env::var_os("BENCH_RUNS_BASELINE").is_some() { baseline_specs() } else { child_specs() };
        let collected = run_collect(specs, &RunSettings::default(), |_| {});
        std::process::exit(if collected.failures > 0 { 1 } else { 0 });
    }
    // `cargo test -- --list` and filters: this binary's cases are not filterable.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cases: Vec<(&str, fn())> = vec![
        ("a_result_records_where_it_came_from", a_result_records_where_it_came_from),
        ("a_baseline_has_its_own_ops_not_the_kernels", a_baseline_has_its_own_ops_not_the_kernels),
        (
            "a_sweep_prints_its_verdict_and_compare_says_when_the_optimum_moved",
            a_sweep_prints_its_verdict_and_compare_says_when_the_optimum_moved,
        ),
        (
            "a_saved_baseline_compares_and_an_interrupted_run_never_passes",
            a_saved_baseline_compares_and_an_interrupted_run_never_passes,
        ),
        ("a_failing_run_is_recorded_as_failed", a_failing_run_is_recorded_as_failed),
        ("gpu_required_fails_a_simulated_run", gpu_required_fails_a_simulated_run),
        ("an_unwritable_output_directory_fails_the_run_clearly", an_unwritable_output_directory_fails_the_run_clearly),
        (
            "a_bench_target_that_crashes_at_start_leaves_a_run_compare_refuses",
            a_bench_target_that_crashes_at_start_leaves_a_run_compare_refuses,
        ),
        (
            "sigkill_at_random_points_across_bench_targets_never_passes_and_never_blocks",
            sigkill_at_random_points_across_bench_targets_never_passes_and_never_blocks,
        ),
    ];
    // BENCH_RUNS_ONLY=NAME runs one case (the others take minutes).
    common::run_cases("bench_runs", "BENCH_RUNS_ONLY", cases, &[]);
}
