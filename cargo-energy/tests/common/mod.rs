//! Helpers of the tests that run bench executables in child processes (`bench_runs`,
//! `ab_runs`): the test binary itself stands in for the bench targets.

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
