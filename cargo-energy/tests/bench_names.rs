//! Awkward benchmark names end to end (docs/RELIABILITY.md, "Names"): a bench binary on the
//! simulated GPU with a 550-character name, `../../../../tmp/escape`, markup and pipes, and
//! a non-Latin name runs, writes every file inside its run directory, and `report` (every
//! format) and `compare` read it back; a name no output can carry is refused at start.
//! Reports over several directories name each tracker series with its GPU without
//! splicing it into an id that holds ` - `.
//!
//! Its own `main` (`harness = false`), as `bench_runs.rs`: the child is this same binary
//! with `BENCH_NAMES_CHILD` set, taking criterion's options.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{cargo_energy, text};
use energy_harness::unstable::bench::{run_collect, BenchSpec, RunSettings};
use energy_harness::unstable::report::RunWriter;
use energy_harness::{MeasureOptions, ResultDevice};
use energy_results::escape::MAX_STEM_BYTES;
use energy_results::run::Invocation;
use serde_json::{json, Value};

const MARKUP: &str = "pipe|tick`quote\"<b>&amp; - dash @ at *em*";

fn names() -> Vec<String> {
    vec!["n".repeat(550), "../../../../tmp/escape".into(), MARKUP.into(), "能量 ⚡".into()]
}

fn child_specs(which: &str) -> Vec<BenchSpec> {
    let fast = MeasureOptions { windows: Some(10), ..MeasureOptions::DEFAULT };
    let spec =
        |name: &str| BenchSpec::new(name, file!(), 1).sim(0.01, 300.0).options(fast.clone()).without_time_bench();
    match which {
        "control" => vec![spec("bell\u{7}\n| ok |")],
        _ => names().iter().map(|n| spec(n)).collect(),
    }
}

fn run_child(target: &Path, which: &str, args: &[&str]) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .arg("--bench")
        .args(args)
        .env("BENCH_NAMES_CHILD", which)
        .env("CARGO_TARGET_DIR", target)
        .env("ENERGY_DEVICE", "sim")
        .env_remove("ENERGY_REQUIRE_GPU")
        .env_remove("ENERGY_RUN_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// The cells of a GFM table row as cmark-gfm splits them: a backslash and the ASCII
/// punctuation after it are one unit, an unescaped pipe ends a cell, `\|` becomes `|`.
fn gfm_cells(line: &str) -> Vec<String> {
    let body = line.trim().strip_prefix('|').unwrap_or(line.trim());
    let (mut cells, mut cell, mut chars) = (Vec::new(), String::new(), body.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                let next = chars.next().unwrap();
                if next != '|' {
                    cell.push('\\');
                }
                cell.push(next);
            }
            '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    if !cell.trim().is_empty() {
        cells.push(cell.trim().to_string());
    }
    cells
}

fn awkward_names_run_report_and_compare() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    let out = run_child(t, "names", &["--save-baseline", "main"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("too long"), "{}", text(&out));
    // Every file of the run lies directly in its directory, with a short safe name.
    for run in ["new", "main"] {
        let dir = t.join("energy").join(run);
        // `.run.lock` is the run's OS lock file (flock): it stays, empty, between runs.
        let files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f != ".run.lock")
            .collect();
        assert_eq!(files.len(), 1 + 3 * names().len(), "{files:?}");
        for f in &files {
            assert!(f.len() <= MAX_STEM_BYTES + ".trace.csv".len(), "{f}");
            assert!(!f.starts_with('.') && f.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)), "{f}");
        }
    }
    let runs: Vec<String> =
        std::fs::read_dir(t.join("energy")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(runs.len(), 2, "only the two runs under energy/: {runs:?}");

    let energy = t.join("energy");
    let dir = energy.to_str().unwrap();
    let compared = cargo_energy(&["compare", "--baseline", "main", "--dir", dir]);
    assert_eq!(compared.status.code(), Some(0), "{}", text(&compared));
    // `new` and `main` are one run (`--save-baseline` writes both): said first.
    assert!(text(&compared).starts_with("note: ") && text(&compared).contains("hold the very same results"));

    let md = cargo_energy(&["report", "--dir", dir, "--baseline", "main"]);
    assert_eq!(md.status.code(), Some(0), "{}", text(&md));
    let md = String::from_utf8(md.stdout).unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 2 + names().len(), "{md}");
    // Every row as many cells as the header (columns empty on every row are left out).
    for row in &rows {
        assert_eq!(gfm_cells(row).len(), gfm_cells(rows[0]).len(), "{row}");
    }
    let markup_row = rows.iter().find(|r| r.contains("pipe")).unwrap();
    assert_eq!(gfm_cells(markup_row)[0], format!("``{MARKUP}/energy (simulated)``"), "{markup_row}");

    let html = cargo_energy(&["report", "--dir", dir, "--format", "html"]);
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(html.contains("<code>pipe|tick`quote&quot;&lt;b&gt;&amp;amp; - dash @ at *em*/energy (simulated)</code>"));
    assert_eq!(html.matches("<svg").count(), names().len() + 1, "the overview and every plot found and embedded");

    let gab = cargo_energy(&["report", "--dir", dir, "--format", "github-action-benchmark"]);
    let list: Value = serde_json::from_slice(&gab.stdout).unwrap();
    let first = format!("{MARKUP}/energy (simulated) - energy per launch");
    assert!(list.as_array().unwrap().iter().any(|e| e["name"] == first.as_str()), "{list:#}");
}

fn a_name_no_output_can_carry_is_refused_at_start() {
    let target = tempfile::tempdir().unwrap();
    let out = run_child(target.path(), "control", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("holds the control or invisible character U+0007"), "{err}");
    assert!(err.contains("`bell\\u{7}\\n| ok |`"), "shown, not sent raw: {err}");
}

fn result(id: &str, uuid: &str) -> Value {
    let est = |m: f64| json!({"mean": m, "ci_low": m * 0.99, "ci_high": m * 1.01, "n": 10, "std_dev": m * 0.01});
    json!({
        "schema": "energy-result/1", "id": id,
        "device": {"name": "NVIDIA H100 80GB HBM3", "uuid": uuid, "driver": "580", "simulated": false},
        "energy_j": est(1e-3), "dynamic_j": est(5e-4), "time_s": est(1e-3), "power_w": est(1.0),
        "idle_w": 120.0, "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1},
        "launches": 100, "launches_per_window": 10, "warnings": [], "timestamp": "2026-11-23T00:00:00Z"
    })
}

fn write_run(dir: &Path, r: &Value) {
    let writer = RunWriter::begin(&dir.join("new"), "synthetic", &Invocation { key: "names".into() }).unwrap();
    let device: ResultDevice = serde_json::from_value(r["device"].clone()).unwrap();
    let id = r["id"].as_str().unwrap();
    let json = serde_json::to_string_pretty(r).unwrap();
    let stem = energy_results::escape::file_stem(id);
    writer.commit(id, &stem, &device, [json.as_bytes(), b"# energy-trace v1\n", b"<svg/>"]).unwrap();
    writer.finish(0).unwrap();
}

fn tracker_names_over_several_directories_keep_ids_whole() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let id = "fast - slow/energy";
    write_run(a.path(), &result(id, "GPU-aaaaaaaa-0000"));
    write_run(b.path(), &result(id, "GPU-bbbbbbbb-0000"));
    let (da, db) = (a.path().to_str().unwrap(), b.path().to_str().unwrap());
    let gab = cargo_energy(&["report", "--dir", da, "--dir", db, "--format", "github-action-benchmark"]);
    assert_eq!(gab.status.code(), Some(0), "{}", text(&gab));
    let list: Value = serde_json::from_slice(&gab.stdout).unwrap();
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "fast - slow/energy @ GPU-aaaaaaaa - energy per launch",
            "fast - slow/energy @ GPU-aaaaaaaa - dynamic energy per launch",
            "fast - slow/energy @ GPU-aaaaaaaa - time per launch",
            "fast - slow/energy @ GPU-bbbbbbbb - energy per launch",
            "fast - slow/energy @ GPU-bbbbbbbb - dynamic energy per launch",
            "fast - slow/energy @ GPU-bbbbbbbb - time per launch",
        ]
    );
    let bmf = cargo_energy(&["report", "--dir", da, "--dir", db, "--format", "bmf"]);
    let v: Value = serde_json::from_slice(&bmf.stdout).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["fast - slow/energy @ GPU-aaaaaaaa", "fast - slow/energy @ GPU-bbbbbbbb"]);
}

fn main() {
    if let Ok(which) = std::env::var("BENCH_NAMES_CHILD") {
        let collected = run_collect(child_specs(&which), &RunSettings::default(), |_| {});
        std::process::exit(if collected.failures > 0 { 1 } else { 0 });
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cases: Vec<(&str, fn())> = vec![
        ("awkward_names_run_report_and_compare", awkward_names_run_report_and_compare),
        ("a_name_no_output_can_carry_is_refused_at_start", a_name_no_output_can_carry_is_refused_at_start),
        (
            "tracker_names_over_several_directories_keep_ids_whole",
            tracker_names_over_several_directories_keep_ids_whole,
        ),
    ];
    common::run_cases("bench_names", "BENCH_NAMES_ONLY", cases, &[]);
}
