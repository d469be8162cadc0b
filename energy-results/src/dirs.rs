//! Where results live: one rule for every writer (benches, budget tests, suites) and every
//! reader (`cargo energy report`, `compare`), so they always meet.
//!
//! The target directory is found as cargo finds it:
//! 1. `CARGO_TARGET_DIR`, then `CARGO_BUILD_TARGET_DIR` (relative to the current directory);
//! 2. `build.target-dir` of the nearest `.cargo/config.toml` (or `.cargo/config`) from the
//!    current directory upwards (relative to the folder holding `.cargo`);
//! 3. `target/` beside the workspace root: the nearest `Cargo.toml` upwards that declares
//!    `[workspace]`, else the nearest `Cargo.toml`;
//! 4. `target/` in the current directory.
//!
//! Energy results go under `<target>/energy/`. Cargo runs benches and tests in their
//! package's folder, so a bench of a workspace member and `cargo energy` at the workspace
//! root (or in any subfolder) find the same directory.

use std::path::{Path, PathBuf};

/// The target directory of the project around the current directory (see the module docs).
pub fn target_dir() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    target_dir_from(&cwd, |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from))
}

/// `<target>/energy`: runs, budget-test results and suite records.
pub fn energy_dir() -> PathBuf {
    target_dir().join("energy")
}

/// [`target_dir`] from `cwd` with the environment read through `env` (for tests).
pub fn target_dir_from(cwd: &Path, env: impl Fn(&str) -> Option<PathBuf>) -> PathBuf {
    for name in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"] {
        if let Some(dir) = env(name) {
            return cwd.join(dir);
        }
    }
    for dir in cwd.ancestors() {
        for config in [dir.join(".cargo").join("config.toml"), dir.join(".cargo").join("config")] {
            if let Some(target) = std::fs::read_to_string(&config).ok().and_then(|t| config_target_dir(&t)) {
                return dir.join(target);
            }
        }
    }
    let manifests: Vec<&Path> = cwd.ancestors().filter(|d| d.join("Cargo.toml").is_file()).collect();
    let workspace = manifests.iter().find(|d| {
        std::fs::read_to_string(d.join("Cargo.toml"))
            .is_ok_and(|text| text.lines().any(|l| l.trim_start().starts_with("[workspace]")))
    });
    match workspace.or(manifests.first()) {
        Some(root) => root.join("target"),
        None => cwd.join("target"),
    }
}

/// `build.target-dir` of a cargo config file: under `[build]` as `target-dir = "…"`, or
/// at the top as `build.target-dir = "…"`.
fn config_target_dir(text: &str) -> Option<String> {
    let mut section = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim();
        let full_key = if section.is_empty() { key.to_string() } else { format!("{section}.{key}") };
        if full_key == "build.target-dir" {
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
            if !value.is_empty() {
                return Some(value.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<PathBuf> {
        None
    }

    #[test]
    fn environment_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        let env = |n: &str| (n == "CARGO_TARGET_DIR").then(|| PathBuf::from("/ci/target"));
        assert_eq!(target_dir_from(dir.path(), env), PathBuf::from("/ci/target"));
        let env = |n: &str| (n == "CARGO_BUILD_TARGET_DIR").then(|| PathBuf::from("out"));
        assert_eq!(target_dir_from(dir.path(), env), dir.path().join("out"));
    }

    #[test]
    fn the_workspace_root_is_found_from_a_member_or_a_subfolder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\nmembers = [\"crate-a\"]\n").unwrap();
        std::fs::create_dir_all(root.join("crate-a/src/deep")).unwrap();
        std::fs::write(root.join("crate-a/Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        assert_eq!(target_dir_from(&root.join("crate-a"), no_env), root.join("target"));
        assert_eq!(target_dir_from(&root.join("crate-a/src/deep"), no_env), root.join("target"));
        // A lone package: its own target.
        let lone = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(lone.path().join("src")).unwrap();
        std::fs::write(lone.path().join("Cargo.toml"), "[package]\nname = \"b\"\n").unwrap();
        assert_eq!(target_dir_from(&lone.path().join("src"), no_env), lone.path().join("target"));
    }

    #[test]
    fn cargo_config_target_dir_is_honoured() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".cargo")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
        std::fs::write(root.join(".cargo/config.toml"), "[build]\njobs = 2\ntarget-dir = \"build-out\" # here\n")
            .unwrap();
        assert_eq!(target_dir_from(&root.join("sub"), no_env), root.join("build-out"));
        assert_eq!(config_target_dir("build.target-dir = '/x'"), Some("/x".into()));
        assert_eq!(config_target_dir("[net]\ntarget-dir = \"no\""), None);
    }
}
