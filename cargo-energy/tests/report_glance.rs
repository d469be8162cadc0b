//! The report read at a glance (issue 61), on stored real results: six H100 benchmarks and
//! their same-board repeat (`tests/data/report-glance/`), committed into two runs as bench
//! targets commit them. The HTML page opens with a summary line and two overview charts
//! (energy per benchmark; change against the baseline), names each warning, leaves out the
//! columns no row fills, keeps every cell on one line and shows no literal `\n`; a run whose
//! plot or trace is missing (a CI artifact downloaded without them) still reports its table
//! and says what is missing, while a changed result file is still refused.

use std::path::Path;
use std::process::Output;

mod common;

use common::result_sets::{cargo_energy, write_set};
use serde_json::Value;

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The stored results of one side, in name order.
fn stored(side: &str) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report-glance").join(side);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        // Read as a run reads an archived result: `<id>.json`, found gzipped.
        .map(|p| serde_json::from_slice(&energy_results::read_archived(&p.with_extension("")).unwrap()).unwrap())
        .collect()
}

/// Both runs in `dir` (`main` and `new`).
fn runs(dir: &Path) {
    write_set(dir, "main", &stored("main"));
    write_set(dir, "new", &stored("new"));
}

#[test]
fn the_html_report_of_stored_runs_reads_at_a_glance() {
    let dir = tempfile::tempdir().unwrap();
    runs(dir.path());
    let d = dir.path().to_str().unwrap();
    let out = cargo_energy(&["report", "--dir", d, "--baseline", "main", "--format", "html"]);
    assert!(out.status.success(), "{}", text(&out));
    let page = String::from_utf8(out.stdout).unwrap();
    // The summary line: counts, verdicts, warnings by benchmark and kind.
    let summary = page.split("<p class=\"summary\">").nth(1).and_then(|s| s.split("</p>").next()).expect("a summary");
    assert!(summary.starts_with("6 benchmarks measured; against the baseline: "), "{summary}");
    assert!(summary.contains("warnings on 5 of 6: <code>app_dgemm/energy</code> (idle shift)"), "{summary}");
    assert!(summary.contains("<code>train_hmma/energy</code> (idle shift, imprecise, throttling)"), "{summary}");
    // The overview charts, above the table: energy per launch and the change with the
    // threshold.
    assert_eq!(page.matches("<svg class=\"overview\"").count(), 2, "{page}");
    let table_at = page.find("<table>").unwrap();
    assert!(page.find("<svg class=\"overview\"").unwrap() < table_at);
    assert!(page.contains(">energy per launch<") && page.contains("threshold +5.0 %"), "{page}");
    assert_eq!(page.matches("class=\"figure\"").count(), 12, "six benchmarks on each chart");
    // No column that no row fills (none of these has a baseline kernel), cells on one line.
    assert!(!page.contains("net vs baseline kernel"), "{page}");
    assert!(page.contains("white-space:nowrap"));
    // Warnings by name in the table, no count.
    assert!(page.contains("<td>idle shift, imprecise, throttling</td>"), "{page}");
    // No literal escape anywhere (issue 60's one-line sweep table): the page's text is HTML.
    assert!(!page.contains("\\n"), "a literal \\n in the page");
    // The markdown alike: the summary under the title.
    let md = cargo_energy(&["report", "--dir", d, "--baseline", "main"]);
    let md = String::from_utf8(md.stdout).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines[2].starts_with("6 benchmarks measured; against the baseline: "), "{md}");
    assert!(!md.contains("net vs baseline kernel") && md.contains("| idle shift, imprecise, throttling |"), "{md}");
}

#[test]
fn a_run_without_its_plots_or_traces_still_reports_and_a_changed_result_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    runs(dir.path());
    let new = dir.path().join("new");
    std::fs::remove_file(new.join("train_ffma_energy.svg")).unwrap();
    std::fs::remove_file(new.join("train_sleep_energy.trace.csv")).unwrap();
    let d = dir.path().to_str().unwrap();
    let out = cargo_energy(&["report", "--dir", d, "--baseline", "main", "--format", "html"]);
    assert!(out.status.success(), "{}", text(&out));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains("2 files the run lists are missing (1 plot, 1 trace: <code>train_sleep_energy.trace.csv</code>, <code>train_ffma_energy.svg</code>)")
            || page.contains("2 files the run lists are missing (1 plot, 1 trace: <code>train_ffma_energy.svg</code>, <code>train_sleep_energy.trace.csv</code>)"),
        "{page}"
    );
    assert!(page.contains("(no plot: ") && page.contains("train_ffma_energy.svg is missing)"), "{page}");
    // compare reads the result files alone: unchanged by the missing plot and trace.
    let compared = cargo_energy(&["compare", "--baseline", "main", "--dir", d, "--within-run"]);
    assert!(matches!(compared.status.code(), Some(0) | Some(1)), "{}", text(&compared));
    // A result file changed after its run wrote it is refused as before.
    let json = new.join("train_ffma_energy.json");
    let changed = std::fs::read_to_string(&json).unwrap().replacen("\"energy_j\"", "\"energy_j\" ", 1);
    std::fs::write(&json, changed).unwrap();
    let out = cargo_energy(&["report", "--dir", d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("that is not the one its run wrote"), "{}", text(&out));
    // And a missing one too.
    std::fs::remove_file(&json).unwrap();
    let out = cargo_energy(&["report", "--dir", d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("is listed but cannot be read"), "{}", text(&out));
}
