//! Unit tests of the comparison: verdicts, refusals in every mode, the temperature note.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use energy_results::{Estimate, ResultFile};

fn est(mean: f64, half: f64) -> Estimate {
    Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: 10, std_dev: half }
}

#[test]
fn verdicts_follow_the_rule() {
    let verdict = |b: Estimate, c: Estimate| change("a", &b, &c, 5.0).unwrap().verdict;
    assert_eq!(verdict(est(1.0, 0.002), est(1.10, 0.002)), Verdict::Regression);
    assert_eq!(verdict(est(1.0, 0.002), est(1.03, 0.002)), Verdict::WithinThreshold);
    assert_eq!(verdict(est(1.0, 0.002), est(0.95, 0.002)), Verdict::Improvement);
    assert_eq!(verdict(est(1.0, 0.05), est(1.06, 0.05)), Verdict::NotSignificant);
    let c = change("a", &est(1.0, 0.002), &est(1.10, 0.002), 5.0).unwrap();
    assert!((c.change_pct - 10.0).abs() < 1e-9);
    assert!(c.change_low_pct < 10.0 && c.change_high_pct > 10.0);
}

/// A result on board `uuid` with energy 1 J per launch and the dynamic energy given (set
/// past the reader, which refuses some of the figures the comparisons must refuse too).
fn result(uuid: &str, dynamic: Estimate) -> ResultFile {
    let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10, "std_dev": mean * 0.01});
    let text = serde_json::json!({
        "schema": "energy-result/1", "id": "k",
        "device": {"name": "H100", "uuid": uuid, "driver": null, "simulated": false},
        "energy_j": e(1.0), "dynamic_j": e(0.5), "time_s": e(1e-3), "power_w": e(1e3), "idle_w": 100.0,
        "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 100,
        "warnings": [], "timestamp": "2026-11-24T00:00:00Z"
    })
    .to_string();
    let mut r = ResultFile::parse(&text, Path::new("k.json")).unwrap();
    r.dynamic_j = dynamic;
    r
}

fn set(dir: &str, r: ResultFile) -> ResultSet {
    ResultSet { dir: PathBuf::from(dir), results: BTreeMap::from([(r.id.clone(), r)]), not_run: Default::default() }
}

#[test]
fn across_boards_refuses_what_it_cannot_compare() {
    let good = est(0.5, 0.005);
    let across = |b: Estimate, c: Estimate| {
        compare_across_boards(&set("main", result("GPU-a", b)), &set("new", result("GPU-b", c)), 5.0)
    };
    assert!(across(good, est(0.5, 0.005)).is_ok());
    // −1 mJ → 500 mJ was "−50100 % improvement"; 0 → 500 mJ "+inf %".
    for (b, c, needle) in [
        (est(-1e-3, 1e-5), good, "dynamic_j: mean -0.001 is not positive"),
        (Estimate { mean: 0.0, ci_low: 0.0, ci_high: 0.0, n: 10, std_dev: 0.0 }, good, "mean 0 is not positive"),
        (good, est(-0.2, 0.001), "mean -0.2 is not positive"),
        // An interval to 1e308 around 0.5 J was "+200 % [−inf, +inf]".
        (good, Estimate { mean: 0.5, ci_low: -1e308, ci_high: 1e308, n: 10, std_dev: 0.01 }, "beyond any GPU"),
        (good, Estimate { std_dev: 1e300, ..good }, "wider than"),
    ] {
        let err = across(b, c).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains(needle), "{needle}: {err}");
        assert!(err.message().contains("without --across-boards"), "{err}");
    }
}

#[test]
fn changes_that_overflow_are_refused_in_every_mode() {
    // Both figures valid on their own, their ratio not a number: refused, never +inf %.
    let huge = Estimate { mean: 1e300, ci_low: 0.99e300, ci_high: 1.01e300, n: 10, std_dev: 1e298 };
    let tiny = est(1e-10, 1e-12);
    let err = change("k", &tiny, &huge, 5.0).unwrap_err();
    assert!(err.message().contains("is not a finite positive ratio"), "{err}");
    // The widest finite interval near f64::MAX: its width overflowed to ±inf % before.
    let widest = Estimate { mean: 1e308, ci_low: -f64::MAX, ci_high: f64::MAX, n: 10, std_dev: 1e306 };
    let c = change("k", &widest, &widest, 5.0).unwrap();
    assert!(c.change_high_pct.is_finite() && c.change_low_pct == -100.0, "{c:?}");
    // A dynamic energy above the total is refused on read.
    let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10});
    let mut v = serde_json::to_value(result("GPU-a", est(0.5, 0.005))).unwrap();
    v["dynamic_j"] = e(1.5);
    let err = ResultFile::parse(&v.to_string(), Path::new("k.json")).unwrap_err();
    assert!(err.message().contains("is above the total energy 1"), "{err}");
}

#[test]
fn plain_and_across_boards_share_one_check() {
    // The same broken energy figure (built in memory, past the reader) is refused by both.
    let mut bad = result("GPU-a", est(0.5, 0.005));
    bad.energy_j = Estimate { mean: -1.0, ci_low: -1.1, ci_high: -0.9, n: 10, std_dev: 0.1 };
    let good = result("GPU-a", est(0.5, 0.005));
    let plain = compare(&set("main", bad.clone()), &set("new", good.clone()), 5.0).unwrap_err();
    let across = compare_across_boards(&set("main", bad), &set("new", good), 5.0).unwrap_err();
    for err in [plain, across] {
        assert!(err.message().contains("`k` energy_j: mean -1 is not positive"), "{err}");
    }
    let empty = ResultSet { dir: PathBuf::from("e"), results: BTreeMap::new(), not_run: Default::default() };
    assert!(compare_across_boards(&empty, &empty, 5.0).unwrap_err().message().contains("no benchmark in common"));
}

#[test]
fn a_temperature_gap_is_pointed_out() {
    assert!(temperature_note(Some(42.0), Some(44.0)).is_none());
    let note = temperature_note(Some(42.0), Some(49.0)).unwrap();
    assert!(note.contains("7 °C warmer") && note.contains("2.1-3.9 %"), "{note}");
    assert!(temperature_note(Some(50.0), Some(45.0)).unwrap().contains("cooler"));
    assert!(temperature_note(None, Some(45.0)).is_none());
}
