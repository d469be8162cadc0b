//! Helpers of the tests that run bench executables in child processes (`bench_runs`,
//! `ab_runs`, `bench_names`, `gpus_queue`): the test binary itself stands in for the bench
//! targets, and `run_cases` runs each binary's cases.

#![allow(dead_code)] // each test binary uses its own share

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
/// also stands in for bench targets), each caught on panic, and exits 1 when any failed.
/// `only_env` names an environment variable that, when set, keeps only the case it names.
pub fn run_cases(suite: &str, only_env: &str, cases: Vec<(&str, fn())>) {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let only = std::env::var(only_env).ok();
    let cases: Vec<(&str, fn())> =
        cases.into_iter().filter(|(name, _)| only.as_deref().is_none_or(|o| o == *name)).collect();
    let mut failed = 0;
    for (name, case) in cases.iter().copied() {
        let start = std::time::Instant::now();
        match catch_unwind(AssertUnwindSafe(case)) {
            Ok(()) => println!("test {name} ... ok ({:.1} s)", start.elapsed().as_secs_f64()),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("{suite}: {} passed, {failed} failed", cases.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
