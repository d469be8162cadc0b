//! The verdict tables of issue 32 (docs/results/2026-11-25-h100-verdicts/table.md)
//! regenerate from the committed raw runs, and the analysis refuses what it cannot use.
use std::path::Path;

fn results() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results/2026-11-25-h100-verdicts")
}

#[test]
fn the_published_verdict_tables_regenerate_from_the_raw_runs() {
    let dir = results();
    let table = energy_suites::verdicts::unpack_and_render(&dir.join("raw")).unwrap();
    let published = std::fs::read_to_string(dir.join("table.md")).unwrap();
    assert_eq!(table, published, "table.md was edited by hand or the raw data changed");
    assert!(!table.contains("NaN"), "{table}");
}

#[test]
fn a_board_without_calibration_runs_is_refused() {
    let err = energy_suites::verdicts::analyze(&[]).map(|a| a.outcomes.len());
    assert_eq!(err.unwrap(), 0);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("runs.tsv"), "header\n1\tx\t1\t1\t0\tA\t1\t1\t10\t20\t40\n").unwrap();
    let err = energy_suites::verdicts::read_call(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("expected 12 tab-separated fields"), "{err}");
    assert!(energy_suites::verdicts::wilson_pct(0, 30).1 > 10.0);
}

#[test]
fn the_validation_page_holds_the_generated_tables_unchanged() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/VALIDATION.md")).unwrap();
    let table = std::fs::read_to_string(results().join("table.md")).unwrap();
    let begin = "<!-- verdicts: begin (generated: table.md) -->\n";
    let start = page.find(begin).expect("the begin marker") + begin.len();
    let end = page[start..].find("<!-- verdicts: end -->").expect("the end marker") + start;
    assert_eq!(&page[start..end], table, "docs/VALIDATION.md's verdict tables differ from table.md");
}
