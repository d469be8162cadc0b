//! Helpers of the tests that run bench executables in child processes (`bench_runs`,
//! `ab_runs`, `bench_names`, `gpus_queue`): the test binary itself stands in for the bench
//! targets, and `run_cases` runs each binary's cases.

#![allow(dead_code)] // each test binary uses its own share

pub mod result_sets;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `cargo-energy ARGS` on the simulated GPU, outside any pinned run.
pub fn cargo_energy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
        .args(args)
        .env("ENERGY_DEVICE", "sim")
        .env_remove("ENERGY_RUN_ID")
        .output()
        .unwrap()
}

/// The result files of a run's folder (`energy/new`, …; `run.json` aside): each file's name
/// and its JSON.
pub fn result_files(dir: &Path) -> Vec<(String, serde_json::Value)> {
    let mut results = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".json") && name != "run.json" {
            results.push((name, serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()));
        }
    }
    results
}

/// Standard output and standard error, one after the other.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The bench targets `names` under `dir`: hard links (or copies) of this test binary named
/// as cargo names bench binaries (`alpha-<16 hex>`), so each records itself as `alpha`.
pub fn bench_targets(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    names
        .iter()
        .map(|name| {
            let path = dir.join(format!("{name}-0123456789abcdef"));
            if std::fs::hard_link(&exe, &path).is_err() {
                std::fs::copy(&exe, &path).unwrap();
            }
            path
        })
        .collect()
}

/// Runs the cases of a test binary whose `main` is its own (`harness = false`: the binary
/// also stands in for bench targets). The cases named in `alone` first, one at a time (what
/// they assert depends on how fast the machine is: nothing else may load it), then the
/// others side by side on threads of their own, as libtest runs tests: each waits mostly on
/// simulated benchmarks in child processes (real time, not the CPU) and works in a folder of
/// its own. A case's panic fails it; the binary exits 1 when any failed. `only_env` names an
/// environment variable that, when set, keeps only the case it names.
pub fn run_cases(suite: &str, only_env: &str, cases: Vec<(&'static str, fn())>, alone: &[&str]) {
    let only = std::env::var(only_env).ok();
    let cases: Vec<(&str, fn())> =
        cases.into_iter().filter(|(name, _)| only.as_deref().is_none_or(|o| o == *name)).collect();
    for name in alone {
        assert!(cases.iter().any(|c| c.0 == *name) || only.is_some(), "{suite}: no case {name} to run alone");
    }
    let spawn = |name: &str, case: fn()| {
        let timed = move || {
            let start = std::time::Instant::now();
            case();
            start.elapsed().as_secs_f64()
        };
        let thread = std::thread::Builder::new().name(name.to_string()).spawn(timed);
        thread.unwrap_or_else(|e| panic!("{suite}: could not start a thread for {name}: {e}"))
    };
    let mut failed = 0;
    let mut report = |name: &str, outcome: std::thread::Result<f64>| match outcome {
        Ok(seconds) => println!("test {name} ... ok ({seconds:.1} s)"),
        Err(_) => {
            println!("test {name} ... FAILED");
            failed += 1;
        }
    };
    let (first, together): (Vec<_>, Vec<_>) = cases.iter().partition(|(name, _)| alone.contains(name));
    for &(name, case) in first {
        report(name, spawn(name, case).join());
    }
    let running: Vec<_> = together.iter().map(|&&(name, case)| (name, spawn(name, case))).collect();
    for (name, thread) in running {
        report(name, thread.join());
    }
    println!("{suite}: {} passed, {failed} failed", cases.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
