//! What a run is (docs/GUIDE.md, "What a run is"), end to end with a stand-in for cargo:
//! bench targets run one `cargo bench --bench NAME` at a time make one run that compares
//! against a baseline holding them all; a run cut between its targets is refused by
//! `report` and `compare` without any baseline; a command built from another source, or
//! with a rebuilt executable of a target the run holds, starts a new run.
//!
//! This test has its own `main` (`harness = false`). Its binary stands in for everything:
//! hard-linked as `cargo` it is a small cargo (`bench [--no-run --message-format=json]
//! [--bench NAME]… [-- ARGS]` over the targets in `RUN_RULE_TARGETS`), and as
//! `alpha-<hash>` a bench target measuring one simulated benchmark named after itself.
//! The bench processes find their commit in a git repository the test makes
//! (`CARGO_MANIFEST_DIR`). `RUN_RULE_ONLY=NAME` runs one case.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bench_targets, cargo_energy, text};
use energy_harness::unstable::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::unstable::report::{current_target_name, mark_energy_bench};
use energy_harness::MeasureOptions;
use energy_results::run::RunManifest;
use energy_results::run::TargetStatus;

/// The stand-in for cargo: lists or runs the targets in `RUN_RULE_TARGETS`.
fn fake_cargo() -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    assert_eq!(args.first().map(String::as_str), Some("bench"), "fake cargo: {args:?}");
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (own, bench_args) = (&args[1..split], &args[(split + 1).min(args.len())..]);
    let named: Vec<&str> = own.windows(2).filter(|w| w[0] == "--bench").map(|w| w[1].as_str()).collect::<Vec<_>>();
    let targets: Vec<PathBuf> = std::env::var("RUN_RULE_TARGETS").unwrap().split(',').map(PathBuf::from).collect();
    let selected: Vec<&PathBuf> = targets
        .iter()
        .filter(|t| {
            let name = t.file_name().unwrap().to_string_lossy();
            named.is_empty() || named.iter().any(|n| name.starts_with(&format!("{n}-")))
        })
        .collect();
    if own.iter().any(|a| a == "--no-run") {
        for t in &selected {
            let name = t.file_name().unwrap().to_string_lossy().split('-').next().unwrap().to_string();
            println!(
                "{}",
                serde_json::json!({"reason": "compiler-artifact", "target": {"kind": ["bench"], "name": name},
                    "executable": t.display().to_string(), "manifest_path": "/x/Cargo.toml"})
            );
        }
        std::process::exit(0);
    }
    let me = std::env::current_exe().unwrap();
    for t in selected {
        let status = Command::new(t).arg("--bench").args(bench_args).env("CARGO", &me).status().unwrap();
        if !status.success() {
            std::process::exit(status.code().unwrap_or(1));
        }
        // As if cargo were killed right after this target: the others never start.
        if std::env::var("RUN_RULE_STOP_AFTER").ok().as_deref() == Some(current_name(t).as_str()) {
            std::process::exit(0);
        }
    }
    std::process::exit(0);
}

fn current_name(path: &Path) -> String {
    energy_harness::unstable::report::target_name_of(path)
}

/// A bench target: one simulated benchmark named after the target.
fn bench_target() -> ! {
    mark_energy_bench();
    let target = current_target_name();
    let options = MeasureOptions { windows: Some(10), ..MeasureOptions::DEFAULT };
    let spec = BenchSpec::new(&target, file!(), line!()).sim(0.01, 300.0).options(options).without_time_bench();
    let collected = run_collect(vec![spec], &RunSettings::default(), |_| {});
    std::process::exit(if collected.failures > 0 { 1 } else { 0 });
}

/// A folder with a git repository (the crate's source, as the bench processes see it),
/// the stand-in cargo and the bench targets; `None` without git.
struct Crate {
    dir: tempfile::TempDir,
    cargo: PathBuf,
    targets: Vec<PathBuf>,
}

impl Crate {
    fn new(names: &[&str]) -> Option<Crate> {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        let git = |args: &[&str]| git(&src, args);
        if !git(&["init", "-q"]) {
            println!("  no git here: the run rule needs a commit, nothing to check");
            return None;
        }
        std::fs::write(src.join("lib.rs"), "// one\n").unwrap();
        assert!(git(&["add", "lib.rs"]) && git(&["commit", "-q", "-m", "one"]));
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let cargo = bench_targets(&bin, &["cargo"]).remove(0);
        let cargo_path = bin.join("cargo");
        std::fs::rename(&cargo, &cargo_path).unwrap();
        // Copies, not links: a test rebuilds one by changing its bytes.
        let exe = std::env::current_exe().unwrap();
        let targets = names
            .iter()
            .map(|n| {
                let path = bin.join(format!("{n}-0123456789abcdef"));
                std::fs::copy(&exe, &path).unwrap();
                path
            })
            .collect();
        Some(Crate { dir, cargo: cargo_path, targets })
    }

    fn energy(&self) -> PathBuf {
        self.dir.path().join("target").join("energy")
    }

    fn cargo_command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let list: Vec<String> = self.targets.iter().map(|t| t.display().to_string()).collect();
        let mut cmd = Command::new(&self.cargo);
        cmd.args(args).current_dir(self.dir.path().join("src"));
        cmd.env("RUN_RULE_TARGETS", list.join(",")).env("CARGO_MANIFEST_DIR", self.dir.path().join("src"));
        cmd.env("CARGO_TARGET_DIR", self.dir.path().join("target")).env("ENERGY_DEVICE", "sim");
        cmd.env_remove("ENERGY_REQUIRE_GPU").env_remove("ENERGY_RUN_ID").env_remove("ENERGY_EXPECTED_TARGETS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        cmd
    }

    /// `cargo ARGS`, which must succeed; its standard error.
    fn cargo(&self, args: &[&str]) -> String {
        let out = self.cargo_command(args, &[]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "cargo {args:?}: {err}");
        err
    }

    fn compare(&self) -> Output {
        cargo_energy(&["compare", "--baseline", "main", "--dir", self.energy().to_str().unwrap()])
    }

    fn report(&self) -> Output {
        cargo_energy(&["report", "--dir", self.energy().to_str().unwrap()])
    }

    fn new_run(&self) -> RunManifest {
        RunManifest::read_manifest(&self.energy().join("new")).unwrap()
    }
}

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn names(m: &RunManifest) -> Vec<&str> {
    m.targets.iter().map(|t| t.name.as_str()).collect()
}

fn targets_run_one_by_one_compare_against_a_baseline_holding_both() {
    let Some(c) = Crate::new(&["alpha", "beta", "plain"]) else { return };
    // `plain` stands for a criterion bench without the harness: it never writes a run, and
    // no run waits for it.
    std::fs::copy("/bin/true", &c.targets[2]).unwrap();
    c.cargo(&["bench", "--", "--save-baseline", "main"]);
    let main = RunManifest::read_manifest(&c.energy().join("main")).unwrap();
    assert_eq!(names(&main), ["alpha", "beta"]);
    assert_eq!(main.commands.len(), 1);
    assert_eq!(main.commands[0].expected_targets.as_deref(), Some(&["alpha".to_string(), "beta".to_string()][..]));
    assert_eq!(main.commands[0].expected_from, "cargo bench --no-run");
    c.cargo(&["bench", "--bench", "alpha"]);
    let second = c.cargo(&["bench", "--bench", "beta"]);
    assert!(second.contains("continuing the run") && second.contains("keeping bench target(s) alpha"), "{second}");
    let run = c.new_run();
    assert_eq!(names(&run), ["alpha", "beta"], "one run of two commands");
    assert_eq!(run.commands.len(), 2);
    let out = c.compare();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("alpha") && t.contains("beta"), "both compared: {t}");
    assert_eq!(c.report().status.code(), Some(0), "{}", text(&c.report()));
    // `--bench alpha` again replaces alpha's result and keeps beta's.
    let beta_before = c.new_run().targets.iter().find(|t| t.name == "beta").unwrap().clone();
    c.cargo(&["bench", "--bench", "alpha"]);
    let run = c.new_run();
    assert_eq!(names(&run), ["beta", "alpha"]);
    assert_eq!(run.targets[0], beta_before, "beta's part kept as it was");
    assert_eq!(c.compare().status.code(), Some(0), "{}", text(&c.compare()));
    // Every target again from the same source: nothing of the run there is kept, and the
    // message says a new run, not a continued one keeping nothing.
    let again = c.cargo(&["bench"]);
    assert!(again.contains("a new run in") && !again.contains("keeping bench target(s) none"), "{again}");
    assert_eq!(names(&c.new_run()), ["alpha", "beta"]);
    println!("  --bench alpha, then --bench beta: one run, both compared (exit 0); alpha again: beta kept");
}

fn a_run_cut_between_its_targets_is_refused_without_a_baseline() {
    let Some(c) = Crate::new(&["alpha", "beta"]) else { return };
    // As if cargo died right after alpha: beta never started.
    let out = c.cargo_command(&["bench"], &[("RUN_RULE_STOP_AFTER", "alpha")]).output().unwrap();
    assert!(out.status.success());
    let run = c.new_run();
    assert_eq!(names(&run), ["alpha"]);
    assert_eq!(run.never_started(), ["beta"]);
    for out in [c.report(), cargo_energy(&["compare", "--baseline", "new", "--dir", c.energy().to_str().unwrap()])] {
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{t}");
        assert!(t.contains("bench target `beta` never started"), "{t}");
    }
    // A real SIGKILL of the whole command once alpha has finished.
    let mut child = {
        use std::os::unix::process::CommandExt;
        let mut cmd = c.cargo_command(&["bench"], &[]);
        cmd.process_group(0).stderr(Stdio::null());
        cmd.spawn().unwrap()
    };
    let start = Instant::now();
    loop {
        let done = RunManifest::read_manifest(&c.energy().join("new"))
            .ok()
            .filter(|m| m.commands.iter().any(|cmd| cmd.key.contains(&format!(":{}@", child.id()))))
            .is_some_and(|m| m.targets.first().is_some_and(|t| t.status == TargetStatus::Succeeded));
        if done || start.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
    let _ = child.wait();
    let out = c.report();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("never started") || t.contains("never finished"), "{t}");
    println!("  cut after alpha (stopped, and SIGKILL): report and compare exit 2, naming beta");
}

fn another_source_or_a_rebuilt_executable_starts_a_new_run() {
    let Some(c) = Crate::new(&["alpha", "beta"]) else { return };
    c.cargo(&["bench", "--", "--save-baseline", "main"]);
    // A commit between the two commands.
    c.cargo(&["bench", "--bench", "alpha"]);
    let src = c.dir.path().join("src");
    std::fs::write(src.join("lib.rs"), "// two\n").unwrap();
    let err = c.cargo(&["bench", "--bench", "beta"]);
    assert!(err.contains("a new run") && err.contains("another source"), "uncommitted change: {err}");
    assert_eq!(names(&c.new_run()), ["beta"]);
    let t = text(&c.compare());
    assert!(t.contains("lacks 1 benchmark(s)"), "{t}");
    // Committed, the same: another commit is another source.
    assert!(git(&src, &["commit", "-q", "-am", "two"]));
    c.cargo(&["bench", "--bench", "alpha"]);
    c.cargo(&["bench", "--bench", "beta"]);
    assert_eq!(names(&c.new_run()), ["alpha", "beta"], "one source again: one run");
    // alpha rebuilt (its bytes changed) before beta's command: alpha's result is stale.
    c.cargo(&["bench", "--bench", "alpha"]);
    let mut bytes = std::fs::read(&c.targets[0]).unwrap();
    bytes.extend_from_slice(b"rebuilt");
    std::fs::write(&c.targets[0], bytes).unwrap();
    let err = c.cargo(&["bench", "--bench", "beta"]);
    assert!(err.contains("rebuilt or removed"), "{err}");
    assert_eq!(names(&c.new_run()), ["beta"]);
    // ENERGY_RUN_ID makes two commands one run whatever their source, and one run only.
    let env = [("ENERGY_RUN_ID", "job-1")];
    assert!(c.cargo_command(&["bench", "--bench", "alpha"], &env).status().unwrap().success());
    assert!(c.cargo_command(&["bench", "--bench", "beta"], &env).status().unwrap().success());
    assert_eq!(names(&c.new_run()), ["alpha", "beta"]);
    assert!(c.cargo_command(&["bench", "--bench", "beta"], &[("ENERGY_RUN_ID", "job-2")]).status().unwrap().success());
    assert_eq!(names(&c.new_run()), ["beta"], "another job's id: a new run");
    println!("  uncommitted change, a rebuilt executable, another ENERGY_RUN_ID: a new run each");
}

fn main() {
    if current_target_name() == "cargo" {
        fake_cargo();
    }
    if std::env::var_os("RUN_RULE_TARGETS").is_some() {
        bench_target();
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cases: Vec<(&str, fn())> = vec![
        (
            "targets_run_one_by_one_compare_against_a_baseline_holding_both",
            targets_run_one_by_one_compare_against_a_baseline_holding_both,
        ),
        (
            "a_run_cut_between_its_targets_is_refused_without_a_baseline",
            a_run_cut_between_its_targets_is_refused_without_a_baseline,
        ),
        (
            "another_source_or_a_rebuilt_executable_starts_a_new_run",
            another_source_or_a_rebuilt_executable_starts_a_new_run,
        ),
    ];
    common::run_cases("run_rule", "RUN_RULE_ONLY", cases, &[]);
}
