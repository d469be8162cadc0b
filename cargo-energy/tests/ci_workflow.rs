//! The CI workflow a reader copies: the book's CI chapter includes `docs/ci/energy.yml`, and every
//! `cargo-energy` command its `run:` steps give is one the CLI takes (each fails here for
//! want of git or a build, never for a flag it does not know). CI lints the file with
//! actionlint (`.ci/run`); research/results/2026-12-01-ci-gate/ runs its steps as a runner.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn workflow() -> String {
    std::fs::read_to_string(repo().join("docs/ci/energy.yml")).unwrap()
}

#[test]
fn the_books_ci_chapter_shows_the_workflow_file() {
    // The book includes the file itself (mdBook's `{{#include}}`), so the YAML a reader
    // copies is docs/ci/energy.yml wherever it moves; the README points at that chapter.
    let chapter = std::fs::read_to_string(repo().join("docs/book/src/ci.md")).unwrap();
    let block = chapter.split("```yaml\n").nth(1).expect("a yaml block in the CI chapter").split("```").next().unwrap();
    assert_eq!(block.trim(), "{{#include ../../ci/energy.yml}}", "the CI chapter must include docs/ci/energy.yml");
    let included = repo().join("docs/book/src").join("../../ci/energy.yml");
    assert_eq!(std::fs::read_to_string(included).unwrap(), workflow());
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains("(docs/book/src/ci.md)"), "the README links the CI chapter");
}

#[test]
fn every_cargo_energy_command_of_the_workflow_is_one_the_cli_takes() {
    let commands: Vec<Vec<String>> = workflow()
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && l.contains(" gate "))
        .filter_map(|l| l.split_once("cargo-energy\" ").or_else(|| l.split_once("cargo-energy ")))
        .map(|(_, rest)| rest.split_whitespace().map(|w| w.trim_matches('"').to_string()).collect())
        .collect();
    assert!(commands.len() >= 2, "the workflow's gate commands: {commands:?}");
    let dir = tempfile::tempdir().unwrap();
    for args in &commands {
        let args: Vec<String> = args.iter().map(|a| a.replace("$GITHUB_BASE_REF", "main")).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
            .args(&args)
            .current_dir(dir.path())
            .env("GIT_CEILING_DIRECTORIES", dir.path())
            .env_remove("ENERGY_RUN_ID")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument") && !err.contains("Usage:"), "{args:?}: {err}");
        assert!(err.contains("git") || err.contains("gate-build.json"), "{args:?}: {err}");
    }
}
