//! The published JSON Schemas (`docs/schemas/`, issue 59): current with the types, and
//! checked by an independent reader. Python's `jsonschema` (`validate_schemas.py` beside
//! this file) validates every result, run and `ab.json` file stored under
//! `research/results/` (gzipped files and the study archives' files included), the result
//! files a fresh simulated run wrote (the budgets of the root package's `cargo test`, under
//! `target/energy/tests/`, when present), `report --format json` of three stored runs, and one
//! broken file it must reject. Required under CI (`.ci/run` installs `jsonschema`); skipped
//! with a line elsewhere when Python lacks it.

use std::path::{Path, PathBuf};
use std::process::Command;

use energy_report::schemas::published_schemas;
use energy_report::{render, Format, ResultSet};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every file under `dir`, at any depth, in order.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_published_schemas_are_what_the_types_give() {
    let dir = repo().join("docs/schemas");
    let schemas = published_schemas();
    for s in &schemas {
        let on_disk = std::fs::read_to_string(dir.join(&s.file_name)).unwrap_or_default();
        assert!(
            on_disk == s.text,
            "docs/schemas/{} is not what the types give: run `cargo run -p energy-suites --example write_schemas`",
            s.file_name
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".schema.json"))
        .collect();
    names.sort();
    let mut expected: Vec<String> = schemas.iter().map(|s| s.file_name.clone()).collect();
    expected.sort();
    assert_eq!(names, expected, "docs/schemas/ holds a schema no type gives");
    for tag in ["energy-result/1", "energy-run/1", "energy-ab/1", "energy-report/1", "energy-campaign/1"] {
        assert!(schemas.iter().any(|s| s.tag == tag), "{tag} is published");
    }
}

/// `python3` with `jsonschema`, or why not.
fn python_with_jsonschema() -> Result<(), String> {
    let out = Command::new("python3").args(["-c", "import jsonschema"]).output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("python3 lacks jsonschema: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => Err(format!("no python3: {e}")),
    }
}

/// The count of accepted files of `tag` in the validator's output.
fn accepted(out: &str, tag: &str) -> usize {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{tag}: ")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn an_independent_reader_accepts_every_stored_file_and_rejects_a_broken_one() {
    if let Err(why) = python_with_jsonschema() {
        assert!(std::env::var_os("CI").is_none(), "under CI the schemas must be validated: {why}");
        eprintln!("skipped: {why} (pip install jsonschema)");
        return;
    }
    let fresh = tempfile::tempdir().unwrap();
    // `report --format json` of three stored runs (the first three run folders that read).
    let results = repo().join("research/results");
    let manifests: Vec<PathBuf> = files_under(&results)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "run.json"))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    let mut reports = 0;
    for dir in &manifests {
        let Ok(set) = ResultSet::read_run(dir) else { continue };
        let text = render(&set, None, 5.0, Format::named("json").unwrap()).unwrap();
        std::fs::write(fresh.path().join(format!("report-{reports}.json")), text).unwrap();
        reports += 1;
        if reports == 3 {
            break;
        }
    }
    assert_eq!(reports, 3, "three stored runs read as reports (of {} run folders)", manifests.len());
    // One broken result file: a stored one whose energy is a string.
    let stored = results.join("2026-11-22-h100-compare/new");
    let one = std::fs::read_dir(&stored)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("run.json"))
        .expect("a stored result file");
    let mut broken: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    broken["energy_j"]["mean"] = serde_json::json!("0.5 J");
    std::fs::write(fresh.path().join("broken-result.json"), broken.to_string()).unwrap();
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"));
    let budgets = target.join("energy/tests");
    let mut cmd = Command::new("python3");
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validate_schemas.py"))
        .arg(repo().join("docs/schemas"))
        .arg(&results)
        .arg(fresh.path());
    if budgets.is_dir() {
        cmd.arg(&budgets);
    } else {
        eprintln!("no fresh simulated results in {} (run `cargo test` at the root first)", budgets.display());
    }
    let out = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{text}");
    let rejected: Vec<&str> = text.lines().filter(|l| l.starts_with("rejected ")).collect();
    assert_eq!(rejected.len(), 1, "only the broken file is rejected:\n{text}");
    assert!(rejected[0].contains("broken-result.json") && rejected[0].contains("energy_j/mean"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    for (tag, at_least) in [
        ("energy-result/1", 1000),
        ("energy-run/1", 50),
        ("energy-ab/1", 10),
        ("energy-report/1", 3),
        ("energy-campaign/1", 1),
    ] {
        assert!(accepted(&text, tag) >= at_least, "{tag}: fewer than {at_least} accepted:\n{text}");
    }
}

/// The wire format of `energy-result/1` and `energy-run/1`, frozen: every result file and
/// every run manifest stored under `research/results/` (gzipped ones included) still reads
/// with today's readers, each figure checked on read.
#[test]
fn every_stored_result_and_run_file_still_reads() {
    use energy_results::{ResultFile, RunManifest, RESULT_SCHEMA, RUN_SCHEMA};
    let results = repo().join("research/results");
    let (mut read_results, mut read_runs, mut failures) = (0, 0, Vec::new());
    for path in files_under(&results) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json.gz").or_else(|| name.strip_suffix(".json")) else { continue };
        // A gzipped file is read through its name without `.gz`, as the readers take it.
        let json = path.with_file_name(format!("{stem}.json"));
        let Ok(bytes) = energy_results::read_archived(&json) else { continue };
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else { continue };
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(RESULT_SCHEMA) => match ResultFile::read_json(&json) {
                Ok(_) => read_results += 1,
                Err(e) => failures.push(format!("{}: {e}", path.display())),
            },
            Some(RUN_SCHEMA) if stem == "run" => match RunManifest::read_manifest(path.parent().unwrap()) {
                Ok(_) => read_runs += 1,
                Err(e) => failures.push(format!("{}: {e}", path.display())),
            },
            _ => {}
        }
    }
    assert!(failures.is_empty(), "stored files that no longer read:\n{}", failures.join("\n"));
    println!("{read_results} result files and {read_runs} run manifests read");
    assert!(read_results >= 1000 && read_runs >= 50, "{read_results} results, {read_runs} runs");
}
