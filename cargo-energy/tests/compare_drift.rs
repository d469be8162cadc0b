//! `cargo energy compare` and the drift between runs: one baseline run's rise is
//! inconclusive (exit 3) unless a basis holds the drift: `--within-run`, `--drift`,
//! `--control`, several `--baseline`s or `--history` (docs/GUIDE.md, "Drift between runs").

mod common;

use std::process::Output;

use common::result_sets::{cargo_energy, compare, result, write_set, GPU};

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn a_significant_rise_above_the_threshold_exits_1_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false), result("b/energy", 1.0, GPU, false)]);
    write_set(dir.path(), "new", &[result("a/energy", 1.10, GPU, false), result("b/energy", 1.0, GPU, false)]);
    // One baseline run: the drift between the runs is unknown, so the rise is inconclusive
    // (exit 3), said with what would decide it.
    let out = compare(dir.path(), &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(t.contains("INCONCLUSIVE (between-run drift unknown)") && t.contains("1 inconclusive rise(s)"), "{t}");
    assert!(t.contains("drift between runs: between-run drift unknown") && t.contains("cargo energy gate"), "{t}");
    assert!(t.contains("no regression decided: the verdict is inconclusive (exit 3)"), "{t}");
    // On the within-run intervals alone, or with a stated drift of 1 %, it is a regression.
    for flags in [&["--within-run"][..], &["--drift", "1"]] {
        let out = compare(dir.path(), flags);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {}", text(&out));
        assert!(text(&out).contains("1 energy regression(s): a/energy"), "{}", text(&out));
    }
    // A drift of 5 % could explain +10 %: not significant, exit 0.
    let out = compare(dir.path(), &["--drift", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("the stated between-run drift (--drift)"), "{}", text(&out));
    // A higher threshold lets the same rise through.
    assert_eq!(compare(dir.path(), &["--threshold", "15"]).status.code(), Some(0));
    assert_eq!(compare(dir.path(), &["--threshold", "15", "--within-run"]).status.code(), Some(0));
    // Contradictory or impossible bases are refused.
    for (flags, needle) in [
        (&["--drift", "0"][..], "--drift 0"),
        (&["--control", "b/energy"], "needs two or more"),
        (&["--within-run", "--drift", "1"], "cannot be used with"),
    ] {
        let out = compare(dir.path(), flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", text(&out));
        assert!(text(&out).contains(needle), "{flags:?}: {}", text(&out));
    }
}

#[test]
fn control_benchmarks_take_the_drift_between_runs_out_of_every_change() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a/energy", "b/energy", "c/energy", "d/energy"];
    write_set(dir.path(), "main", &names.map(|n| result(n, 1.0, GPU, false)));
    // The board drifted +3 % between the runs (b, c and d are unchanged code); a rose +10 %.
    let drifted = |n: &str| result(n, if n == "a/energy" { 1.10 * 1.03 } else { 1.03 }, GPU, false);
    write_set(dir.path(), "new", &names.map(drifted));
    let controls = ["--control", "c/energy", "--control", "d/energy"];
    let out = compare(dir.path(), &controls);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("1 energy regression(s): a/energy"), "a's +10 % above the drift: {t}");
    assert!(t.contains("between-run drift from 2 control benchmarks") && t.contains("+3.00 %"), "{t}");
    assert!(t.contains("relative to the controls' drift +3.00 % (raw change +3.00 %)"), "b is drift alone: {t}");
    // Without controls the same runs are inconclusive: +3 % of drift looks like a rise.
    assert_eq!(compare(dir.path(), &["--threshold", "2"]).status.code(), Some(3));
    assert_eq!(compare(dir.path(), &["--control", "nope", "--control", "c/energy"]).status.code(), Some(2));
}

#[test]
fn the_newest_saved_runs_of_main_are_the_baseline_with_history() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("artifacts");
    // Main's runs, oldest first, scattering by ~1 % between runs; an old one on another GPU
    // and one of a benchmark since removed.
    write_set(&history.join("old-gpu"), "main", &[result("a/energy", 1.0, "GPU-bbbb", false)]);
    write_set(
        &history.join("older"),
        "main",
        &[result("a/energy", 1.0, GPU, false), result("gone/energy", 1.0, GPU, false)],
    );
    for (i, e) in [1.000, 1.010, 0.992, 1.004].iter().enumerate() {
        std::thread::sleep(std::time::Duration::from_millis(5));
        write_set(&history.join(format!("run-{i}")), "main", &[result("a/energy", *e, GPU, false)]);
    }
    let d = dir.path().to_str().unwrap();
    let h = history.to_str().unwrap();
    let judge = |energy: f64, extra: &[&str]| {
        write_set(dir.path(), "new", &[result("a/energy", energy, GPU, false)]);
        let mut args = vec!["compare", "--history", h, "--dir", d, "--threshold", "1"];
        args.extend_from_slice(extra);
        cargo_energy(&args)
    };
    // +1.5 % is within the spread of the newest four runs: not significant, exit 0.
    let out = judge(1.015, &["--history-runs", "4"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("the 4 newest saved runs") && t.contains("spread of 4 saved baseline runs"), "{t}");
    // +10 % is a regression on that basis, exit 1.
    let out = judge(1.10, &["--history-runs", "4"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // Too few runs of this GPU, or a count below two: refused with what was found.
    let out = judge(1.10, &["--history-runs", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let lonely = tempfile::tempdir().unwrap();
    write_set(lonely.path(), "main", &[result("a/energy", 1.0, GPU, false)]);
    let out = cargo_energy(&["compare", "--history", lonely.path().to_str().unwrap(), "--dir", d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("1 complete run(s)") && text(&out).contains("two or more"), "{}", text(&out));
    // --history and --baseline are one choice.
    let out = cargo_energy(&["compare", "--history", h, "--baseline", "main", "--dir", d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}
