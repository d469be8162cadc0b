//! The verdict tables of issue 32 (research/results/2026-11-25-h100-verdicts/table.md and
//! research/results/2026-11-25-h200-verdicts/table.md) regenerate from the committed raw runs,
//! docs/VALIDATION.md holds them unchanged, and the analysis refuses what it cannot use.
use std::path::{Path, PathBuf};

/// Each published table: its folder and the markers that hold it in docs/VALIDATION.md.
const TABLES: [(&str, &str, &str); 2] = [
    ("2026-11-25-h100-verdicts", "<!-- verdicts: begin (generated: table.md) -->\n", "<!-- verdicts: end -->"),
    (
        "2026-11-25-h200-verdicts",
        "<!-- verdicts h200: begin (generated: ../2026-11-25-h200-verdicts/table.md) -->\n",
        "<!-- verdicts h200: end -->",
    ),
];

fn results(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(folder)
}

#[test]
fn the_published_verdict_tables_regenerate_from_the_raw_runs() {
    for (folder, _, _) in TABLES {
        let dir = results(folder);
        let table = energy_suites::verdicts::unpack_and_render(&dir.join("raw")).unwrap();
        let published = std::fs::read_to_string(dir.join("table.md")).unwrap();
        assert_eq!(table, published, "{folder}/table.md was edited by hand or the raw data changed");
        assert!(!table.contains("NaN"), "{table}");
    }
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

/// Unpacks one committed call (`tar`) into a folder of its name in a temporary folder.
fn unpack(call: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let into = tmp.path().join(call);
    std::fs::create_dir(&into).unwrap();
    let archive = results("2026-11-25-h100-verdicts").join("raw").join(call).join(format!("{call}.tgz"));
    let status = std::process::Command::new("tar").arg("xzf").arg(&archive).arg("-C").arg(&into).status().unwrap();
    assert!(status.success());
    (tmp, into)
}

#[test]
fn a_cold_ab_invocation_gives_its_first_pair_and_refuses_a_foreign_run() {
    let (_tmp, call) = unpack("b3c2");
    let runs = energy_suites::verdicts::read_call(call.as_path()).unwrap();
    // b3c2 ran `cargo energy ab` only: every run read is a first pair's, A then B, cold.
    assert!(runs.len() >= 20 && runs.len().is_multiple_of(2), "{}", runs.len());
    for pair in runs.chunks(2) {
        assert_eq!((pair[0].role, pair[1].role), ('A', 'B'));
        assert_eq!(pair[0].block, pair[1].block);
        assert!(pair[0].idle_before_s >= energy_suites::verdicts::COLD_IDLE_S);
        assert_eq!(pair[0].tag, "b3c2", "the tag comes from the folder when runs.tsv is empty");
    }
    // Another invocation's first run in place of this one's: refused, naming the file.
    let ab = call.as_path().join("ab");
    std::fs::copy(ab.join("2-cold-level1.run1.json"), ab.join("1-cold-level0.run1.json")).unwrap();
    let err = energy_suites::verdicts::read_call(call.as_path()).unwrap_err().to_string();
    assert!(err.contains("1-cold-level0.run1.json") && err.contains("not the one its `ab` report holds"), "{err}");
    // A missing second run is refused too.
    let (_tmp, call) = unpack("b3c2");
    std::fs::remove_file(call.as_path().join("ab").join("2-cold-level1.run2.json")).unwrap();
    let err = energy_suites::verdicts::read_call(call.as_path()).unwrap_err().to_string();
    assert!(err.contains("2-cold-level1.run1.json") && err.contains("missing"), "{err}");
}

#[test]
fn the_validation_page_holds_the_generated_tables_unchanged() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/VALIDATION.md")).unwrap();
    for (folder, begin, end_marker) in TABLES {
        let table = std::fs::read_to_string(results(folder).join("table.md")).unwrap();
        let start = page.find(begin).expect("the begin marker") + begin.len();
        let end = page[start..].find(end_marker).expect("the end marker") + start;
        assert_eq!(&page[start..end], table, "docs/VALIDATION.md's verdict tables differ from {folder}/table.md");
    }
}
