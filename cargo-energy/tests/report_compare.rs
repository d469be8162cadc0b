//! `cargo energy compare` and `report` on synthetic result sets: every exit path.

use std::path::Path;
use std::process::Output;

mod common;

use common::result_sets::{cargo_energy, compare, estimate, result, write_set, write_set_with_not_run, GPU};
use energy_harness::unstable::report::RunWriter;
use energy_harness::ResultDevice;
use energy_results::run::Invocation;
use serde_json::{json, Value};

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn no_regression_exits_0_and_reports_every_change() {
    let dir = tempfile::tempdir().unwrap();
    write_set(
        dir.path(),
        "main",
        &[
            result("a/energy", 1.0, GPU, false),
            result("b/energy", 1.0, GPU, false),
            result("c/energy", 1.0, GPU, false),
            result("gone/energy", 1.0, GPU, false),
        ],
    );
    write_set(
        dir.path(),
        "new",
        &[
            result("a/energy", 1.0005, GPU, false),
            result("b/energy", 0.90, GPU, false),
            result("c/energy", 1.03, GPU, false),
            result("fresh/energy", 2.0, GPU, false),
        ],
    );
    // `gone/energy` is missing from the candidate: a failure, unless removed on purpose.
    let missing = compare(dir.path(), &[]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(text(&missing).contains("lacks 1 benchmark(s) of the baseline `main`: gone/energy"), "{}", text(&missing));
    assert!(text(&missing).contains("--removed 'gone/energy'"), "{}", text(&missing));
    let out = compare(dir.path(), &["--removed", "gone/energy"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("no energy regression"), "{t}");
    assert!(t.contains("no significant change"), "{t}");
    assert!(t.contains("improvement"), "{t}");
    assert!(t.contains("rise within threshold"), "{t}");
    assert!(t.contains("fresh/energy") && t.contains("new in new"), "{t}");
    assert!(t.contains("gone/energy") && t.contains("removed on purpose (--removed): only in main"), "{t}");
}

#[test]
fn bad_input_exits_2_with_the_reason() {
    let check = |setup: &dyn Fn(&Path), expected: &str| {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let out = compare(dir.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{expected}: {}", text(&out));
        assert!(text(&out).contains(expected), "expected `{expected}` in: {}", text(&out));
    };
    let good = |d: &Path, run: &str| write_set(d, run, &[result("a/energy", 1.0, GPU, false)]);
    check(&|d| good(d, "new"), "no run `main`");
    check(
        &|d| {
            good(d, "main");
            good(d, "new");
            std::fs::write(d.join("new/broken.json"), "{ truncated").unwrap();
        },
        "does not list",
    );
    check(
        &|d| {
            good(d, "main");
            let mut r = result("a/energy", 1.0, GPU, false);
            r["schema"] = json!("energy-result/2");
            write_set(d, "new", &[r]);
        },
        "schema `energy-result/2`",
    );
    check(
        &|d| {
            good(d, "main");
            write_set(d, "new", &[result("a/energy", 1.0, GPU, true)]);
        },
        "cannot compare simulated and measured",
    );
    check(
        &|d| {
            good(d, "main");
            write_set(d, "new", &[result("a/energy", 1.0, "GPU-bbbb", false)]);
        },
        "different GPUs",
    );
    check(
        &|d| {
            good(d, "main");
            write_set(d, "new", &[result("other/energy", 1.0, GPU, false)]);
        },
        "no benchmark in common",
    );
    check(
        &|d| {
            good(d, "main");
            write_set(d, "new", &[]);
        },
        "holds no energy results",
    );
    let dir = tempfile::tempdir().unwrap();
    good(dir.path(), "main");
    good(dir.path(), "new");
    assert_eq!(compare(dir.path(), &["--threshold", "-3"]).status.code(), Some(2));
}

#[test]
fn report_renders_markdown_json_and_html() {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false)]);
    write_set(dir.path(), "new", &[result("a/energy", 1.10, GPU, false), result("b/energy", 0.5, GPU, false)]);
    let d = dir.path().to_str().unwrap();
    let md = cargo_energy(&["report", "--dir", d, "--baseline", "main"]);
    assert!(md.status.success(), "{}", text(&md));
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    // One baseline run: the +10 % is inconclusive, as compare says (the drift is unknown).
    assert!(
        md.contains("| `a/energy` |") && md.contains("+10.00 %") && md.contains("**inconclusive (drift unknown)**"),
        "{md}"
    );
    assert!(md.contains("| `b/energy` |") && md.contains("| new |"), "{md}");
    let json = cargo_energy(&["report", "--dir", d, "--format", "json", "--baseline", "main"]);
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["schema"], "energy-report/1");
    assert_eq!(v["comparison"]["changes"][0]["verdict"], "inconclusive");
    let out_path = dir.path().join("report.html");
    let html = cargo_energy(&["report", "--dir", d, "--format", "html", "-o", out_path.to_str().unwrap()]);
    assert!(html.status.success(), "{}", text(&html));
    let page = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") && page.contains("plot-a_energy") && page.contains("plot-b_energy"),
        "{page}"
    );
    let bad = cargo_energy(&["report", "--dir", d, "--format", "pdf"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn several_directories_report_one_gpu_each_and_compare_each_with_its_own_baseline() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let uuid_a = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
    let uuid_b = "GPU-c7440000-0000-0000-0000-000000000000";
    write_set(a.path(), "main", &[result("saxpy/energy", 1.0e-3, uuid_a, false)]);
    write_set(a.path(), "new", &[result("saxpy/energy", 1.0e-3, uuid_a, false)]);
    write_set(b.path(), "main", &[result("saxpy/energy", 2.0e-3, uuid_b, false)]);
    // GPU b's saxpy rose 20 %: a regression there, none on a.
    write_set(b.path(), "new", &[result("saxpy/energy", 2.4e-3, uuid_b, false)]);
    let (da, db) = (a.path().to_str().unwrap(), b.path().to_str().unwrap());

    let bmf = cargo_energy(&["report", "--dir", da, "--dir", db, "--format", "bmf"]);
    assert_eq!(bmf.status.code(), Some(0), "{}", text(&bmf));
    let v: Value = serde_json::from_slice(&bmf.stdout).unwrap();
    let names: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(names, ["saxpy/energy @ GPU-aaaaaaaa", "saxpy/energy @ GPU-c7440000"], "one series per GPU");
    assert_eq!(v["saxpy/energy @ GPU-c7440000"]["energy"]["value"], 2.4e-3, "figures are each GPU's own");

    let gab = cargo_energy(&["report", "--dir", da, "--dir", db, "--format", "github-action-benchmark"]);
    let list: Value = serde_json::from_slice(&gab.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 6);
    assert!(list[0]["name"].as_str().unwrap().starts_with("saxpy/energy @ GPU-aaaaaaaa - "), "{}", list[0]["name"]);

    let md = cargo_energy(&["report", "--dir", da, "--dir", db, "--baseline", "main"]);
    let md = text(&md);
    assert_eq!(md.matches("### Energy report").count(), 2, "one table per GPU: {md}");

    // The same GPU's benchmark in two directories cannot be told apart: refused.
    let twin = cargo_energy(&["report", "--dir", da, "--dir", da, "--format", "bmf"]);
    assert_eq!(twin.status.code(), Some(2));
    assert!(text(&twin).contains("two of the directories"), "{}", text(&twin));

    let out = cargo_energy(&["compare", "--baseline", "main", "--dir", da, "--dir", db, "--within-run"]);
    assert_eq!(out.status.code(), Some(1), "a regression on one GPU fails the whole: {}", text(&out));
    let t = text(&out);
    assert!(t.contains(&format!("== {da}")) && t.contains(&format!("== {db}")) && t.contains("REGRESSION"), "{t}");
}

#[test]
fn across_boards_compares_dynamic_energy_under_the_printed_rule() {
    let dir = tempfile::tempdir().unwrap();
    // Board A and board B of one model: total energy 10 % apart (static power), dynamic 12 %.
    write_set(dir.path(), "main", &[result("k", 1.00, "GPU-aaaa", false)]);
    let mut other = result("k", 1.10, "GPU-bbbb", false);
    other["dynamic_j"] = estimate(0.6 * 1.12, 0.003);
    write_set(dir.path(), "new", &[other]);
    // Without the flag: refused, two GPUs.
    let refused = compare(dir.path(), &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("different GPUs"), "{}", text(&refused));
    // With it: dynamic energy, threshold raised to 15 %, +12 % is within it, exit 0.
    let within = compare(dir.path(), &["--across-boards"]);
    let out = text(&within);
    assert_eq!(within.status.code(), Some(0), "{out}");
    assert!(out.contains("dynamic energy per launch") && out.contains("rule: across boards"), "{out}");
    assert!(out.contains("15.0 %") && out.contains("+12.00 %") && out.contains("rise within threshold"), "{out}");
    // +25 % dynamic on the other board is a regression, exit 1.
    let mut worse = result("k", 1.10, "GPU-bbbb", false);
    worse["dynamic_j"] = estimate(0.6 * 1.25, 0.003);
    write_set(dir.path(), "worse", &[worse]);
    let regressed = compare(dir.path(), &["--across-boards", "--candidate", "worse"]);
    assert_eq!(regressed.status.code(), Some(1), "{}", text(&regressed));
    // Another model is refused even across boards.
    let mut h200 = result("k", 1.0, "GPU-cccc", false);
    h200["device"]["name"] = json!("NVIDIA H200");
    write_set(dir.path(), "h200", &[h200]);
    let other_model = compare(dir.path(), &["--across-boards", "--candidate", "h200"]);
    assert_eq!(other_model.status.code(), Some(2), "{}", text(&other_model));
    assert!(text(&other_model).contains("different GPU models"), "{}", text(&other_model));
}

#[test]
fn across_boards_refuses_impossible_dynamic_figures_with_exit_2() {
    // Each case was exit 0 before: "−50100 % improvement", "+inf %", "[−inf, +inf]".
    type Breaker = Box<dyn Fn(&mut Value, &mut Value)>;
    let cases: [(&str, Breaker); 6] = [
        (
            "`k` dynamic_j: mean -0.001 is not positive",
            Box::new(|b, _| b["dynamic_j"] = json!({"mean": -1e-3, "ci_low": -1.1e-3, "ci_high": -0.9e-3, "n": 10})),
        ),
        (
            "`k` dynamic_j: mean 0 is not positive",
            Box::new(|b, _| b["dynamic_j"] = json!({"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 10})),
        ),
        (
            "is wider than non-negative observations",
            Box::new(|_, c| c["dynamic_j"] = json!({"mean": 0.5, "ci_low": -1e8, "ci_high": 1e8, "n": 10})),
        ),
        // Beyond any GPU (it printed `[−inf, +inf]` before): refused on read.
        (
            "J per launch is beyond any GPU",
            Box::new(|_, c| c["dynamic_j"] = json!({"mean": 0.5, "ci_low": -1e308, "ci_high": 1e308, "n": 10})),
        ),
        (
            "is not a finite positive ratio",
            Box::new(|b, c| {
                b["dynamic_j"] = estimate(1e-305, 0.002);
                c["energy_j"] = estimate(1e8, 0.002);
                c["power_w"] = estimate(1e11, 0.002);
                c["dynamic_j"] = estimate(0.9e8, 0.002);
            }),
        ),
        ("is above the total energy", Box::new(|_, c| c["dynamic_j"] = estimate(1.5, 0.002))),
    ];
    for (needle, break_it) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (mut base, mut cand) = (result("k", 1.0, "GPU-aaaa", false), result("k", 1.0, "GPU-bbbb", false));
        break_it(&mut base, &mut cand);
        write_set(dir.path(), "main", &[base]);
        write_set(dir.path(), "new", &[cand]);
        let out = compare(dir.path(), &["--across-boards"]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{needle}: {t}");
        assert!(t.contains(needle), "expected `{needle}` in: {t}");
        assert!(!t.contains("inf") && !t.contains("improvement") && !t.contains("no energy regression"), "{t}");
    }
}

#[test]
fn several_saved_baselines_put_the_drift_between_runs_into_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    // Three baseline runs that scatter by ~1 % between runs, each with a ±0.2 % interval.
    for (run, e) in [("main", 1.000), ("main-2", 1.010), ("main-3", 0.992)] {
        write_set(dir.path(), run, &[result("a/energy", e, GPU, false)]);
    }
    write_set(dir.path(), "new", &[result("a/energy", 1.02, GPU, false)]);
    let d = dir.path().to_str().unwrap();
    // Against one run, +2 % with ±0.2 % intervals is a regression above 1 %, detectable 0.6 %.
    let one = cargo_energy(&["compare", "--baseline", "main", "--dir", d, "--threshold", "1", "--within-run"]);
    assert_eq!(one.status.code(), Some(1), "{}", text(&one));
    assert!(text(&one).contains("within-run intervals only; between-run drift not included"), "{}", text(&one));
    // Against the three, the spread between runs is the noise: +1.9 % is not significant on
    // 2 degrees of freedom, and the detectable change says how far off it is.
    let three = cargo_energy(&[
        "compare",
        "--baseline",
        "main",
        "--baseline",
        "main-2",
        "--baseline",
        "main-3",
        "--dir",
        d,
        "--threshold",
        "1",
    ]);
    let t = text(&three);
    assert_eq!(three.status.code(), Some(0), "{t}");
    assert!(t.contains("spread between saved baseline runs") && t.contains("mean of 3 baseline runs"), "{t}");
    assert!(t.contains("is below the smallest detectable change"), "{t}");
    // Several baselines across boards, or one of another GPU: refused.
    let across =
        cargo_energy(&["compare", "--baseline", "main", "--baseline", "main-2", "--dir", d, "--across-boards"]);
    assert_eq!(across.status.code(), Some(2), "{}", text(&across));
    assert!(text(&across).contains("--across-boards compares one baseline run"), "{}", text(&across));
    // The same run twice, or a copy of one under another name, is no second observation.
    let twice = cargo_energy(&["compare", "--baseline", "main", "--baseline", "main", "--dir", d]);
    assert_eq!(twice.status.code(), Some(2), "{}", text(&twice));
    assert!(text(&twice).contains("are the same run (one run id)"), "{}", text(&twice));
    write_set(dir.path(), "copy", &[result("a/energy", 1.000, GPU, false)]);
    let copy = cargo_energy(&["compare", "--baseline", "main", "--baseline", "copy", "--dir", d]);
    assert_eq!(copy.status.code(), Some(2), "{}", text(&copy));
    assert!(text(&copy).contains("are the same run (identical results)"), "{}", text(&copy));
    // Two nearly equal runs never make the board look noiseless: the within-run error is a
    // floor (±0.2 % intervals: a +0.3 % change is not significant on 1 degree of freedom).
    write_set(dir.path(), "near", &[result("a/energy", 1.0001, GPU, false)]);
    write_set(dir.path(), "new2", &[result("a/energy", 1.003, GPU, false)]);
    let near = cargo_energy(&[
        "compare",
        "--baseline",
        "main",
        "--baseline",
        "near",
        "--candidate",
        "new2",
        "--dir",
        d,
        "--threshold",
        "0.01",
    ]);
    assert_eq!(near.status.code(), Some(0), "{}", text(&near));
    write_set(dir.path(), "other", &[result("a/energy", 1.0, "GPU-bbbb", false)]);
    let other = cargo_energy(&["compare", "--baseline", "main", "--baseline", "other", "--dir", d]);
    assert_eq!(other.status.code(), Some(2), "{}", text(&other));
    assert!(text(&other).contains("different GPUs"), "{}", text(&other));
}

/// A complete run of `results` whose bench target also listed `not_run` benchmarks (id, why),
/// as a bench binary does for `gpu_only` or raw cudarc benchmarks without a GPU.
#[test]
fn benchmarks_not_run_are_rows_of_the_report_and_never_a_silent_pass_of_compare() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let why = "needs a GPU (declared gpu_only)";
    // Both runs without a GPU: the gpu_only benchmark is a row in every table format and in JSON.
    write_set_with_not_run(dir.path(), "main", &[result("a/energy", 1.0, GPU, false)], &[("g/energy", why)]);
    write_set_with_not_run(dir.path(), "new", &[result("a/energy", 1.0, GPU, false)], &[("g/energy", why)]);
    let md = cargo_energy(&["report", "--dir", d, "--baseline", "main"]);
    assert!(md.status.success(), "{}", text(&md));
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(md.contains("| `g/energy` | not run: needs a GPU (declared gpu\\_only) |"), "{md}");
    let json = cargo_energy(&["report", "--dir", d, "--format", "json"]);
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["not_run"][0]["id"], "g/energy");
    assert_eq!(v["not_run"][0]["reason"], why);
    let out_path = dir.path().join("report.html");
    let html = cargo_energy(&["report", "--dir", d, "--format", "html", "-o", out_path.to_str().unwrap()]);
    assert!(html.status.success(), "{}", text(&html));
    let page = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        page.contains("<code>g/energy</code>") && page.contains("not run: needs a GPU (declared gpu_only)"),
        "{page}"
    );
    let out = compare(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("g/energy") && text(&out).contains("not run in new: needs a GPU"), "{}", text(&out));
    // Measured in the baseline, not run in the candidate: not a pass (exit 2), the reason named.
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false), result("g/energy", 2.0, GPU, false)]);
    let out = compare(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not run there: g/energy (needs a GPU (declared gpu_only))"), "{}", text(&out));
    let md = cargo_energy(&["report", "--dir", d, "--baseline", "main"]);
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(md.contains("not run here; measured in the baseline"), "{md}");
}

/// A manifest that lists a benchmark as not run while the run holds its result (issue 60:
/// `report` showed it twice, `compare` called it both new and not run, exit 0): refused by
/// both, exit 2, the benchmark named.
#[test]
fn a_benchmark_both_measured_and_not_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false)]);
    let both = [result("a/energy", 1.0, GPU, false), result("g/energy", 2.0, GPU, false)];
    write_set_with_not_run(dir.path(), "new", &both, &[("g/energy", "needs a GPU")]);
    for out in [cargo_energy(&["report", "--dir", d]), compare(dir.path(), &[])] {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains("lists benchmark `g/energy` as not run but holds its result"), "{}", text(&out));
    }
}

/// The fault kit's reproducers of issue 60, run as a user would: a sweep point whose dynamic
/// energy is 0 J prints its interval in joules (never `±inf %`), in markdown and HTML; a
/// result whose counter period is −9.2·10¹⁸ s is refused by `report` and `compare`, exit 2.
#[test]
fn a_zero_dynamic_energy_and_an_impossible_sensor_model_as_a_user_meets_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let point = |arg: &str, energy_j: f64, dynamic_j: f64| {
        let mut r = result(&format!("s/{arg}/energy"), energy_j, GPU, false);
        r["dynamic_j"] =
            serde_json::json!({"mean": dynamic_j, "ci_low": dynamic_j - 1e-3, "ci_high": dynamic_j + 1e-3, "n": 10});
        r["sweep"] = serde_json::json!({"sweep": "s", "param": "n", "arg": arg});
        r
    };
    write_set(dir.path(), "new", &[point("1", 0.5, 0.0), point("2", 0.6, 0.3)]);
    for format in ["markdown", "html"] {
        let out = cargo_energy(&["report", "--dir", d, "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let page = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(page.contains("0.000 J ±1.00 mJ") && !page.contains("inf %"), "{format}: {page}");
    }
    let mut bad = result("a/energy", 1.0, GPU, false);
    bad["sensor_model"] = serde_json::json!({"model": "counter", "period_s": -9.2e18});
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false)]);
    write_set(dir.path(), "new", &[bad]);
    for out in [cargo_energy(&["report", "--dir", d, "--format", "json"]), compare(dir.path(), &[])] {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains("sensor_model: the tick period -9200000000000000000 s is not a sensor's"),
            "{}",
            text(&out)
        );
    }
}

/// A run measured at another commit than the checkout `cargo energy` runs in is said to be
/// stale (issue 60: a whole stale complete run passed when nothing pinned it), on stderr,
/// the exit status unchanged; a run whose results record no commit is not judged.
#[test]
fn a_run_measured_at_another_commit_is_said_to_be_stale() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut old = result("a/energy", 1.0, GPU, false);
    old["provenance"] = serde_json::json!({"commit": "0".repeat(40), "dirty": false});
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false)]);
    write_set(dir.path(), "new", &[old]);
    // The tests run in this repository's checkout (a commit that is not 000…); outside a
    // git checkout (a packaged crate) no commit is known and nothing can be judged.
    let head = std::process::Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .is_ok_and(|o| o.status.success());
    for out in [cargo_energy(&["report", "--dir", d]), compare(dir.path(), &[])] {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.contains("is stale: measured at 00000000, this checkout is at "), head, "{err}");
    }
    write_set(dir.path(), "new", &[result("a/energy", 1.0, GPU, false)]);
    let out = cargo_energy(&["report", "--dir", d]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("stale"), "{}", text(&out));
}

/// Commits `r` as a bench target does.
fn commit_result(writer: &RunWriter, r: &Value) {
    let device: ResultDevice = serde_json::from_value(r["device"].clone()).unwrap();
    let id = r["id"].as_str().unwrap();
    let stem = id.replace('/', "_");
    let plot = format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text>plot-{stem}</text></svg>");
    let json = serde_json::to_string_pretty(r).unwrap();
    writer.commit(id, &stem, &device, [json.as_bytes(), b"# energy-trace v1\n", plot.as_bytes()]).unwrap();
}

/// A run whose second bench target never finished (Ctrl-C, a crash, a kill: its entry stays
/// `running`; before, `report` refused it with no table): `report` shows what the run
/// committed under a line saying it is partial and naming what never finished, in markdown,
/// HTML and JSON (`partial`), and exits 2, as `compare` refuses it; a tracker format refuses
/// it outright, and a partial run that committed nothing is refused as before.
#[test]
fn report_of_a_partial_run_says_so_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    write_set(dir.path(), "main", &[result("a/energy", 1.0, GPU, false), result("b/energy", 1.0, GPU, false)]);
    let new = dir.path().join("new");
    let invocation = Invocation { key: "test:partial".into() };
    let alpha = RunWriter::begin(&new, "alpha", &invocation).unwrap();
    commit_result(&alpha, &result("a/energy", 1.0, GPU, false));
    alpha.finish(0).unwrap();
    // `beta` commits one result and is killed before it finishes: no `finish`.
    let beta = RunWriter::begin(&new, "beta", &invocation).unwrap();
    commit_result(&beta, &result("b/energy", 1.01, GPU, false));
    drop(beta);

    let md = cargo_energy(&["report", "--dir", d]);
    assert_eq!(md.status.code(), Some(2), "{}", text(&md));
    let out = String::from_utf8_lossy(&md.stdout).into_owned();
    let first = out.lines().next().unwrap_or("");
    assert!(first.starts_with("> **PARTIAL RUN:** run \\`new\\` in "), "{out}");
    assert!(first.contains("bench target \\`beta\\` (pid ") && first.contains("never finished"), "{first}");
    assert!(first.contains("only the 2 result(s)") && first.contains("(finished: \\`alpha\\`)"), "{first}");
    assert!(out.contains("| `a/energy` |") && out.contains("| `b/energy` |"), "the table of what it holds: {out}");
    let err = String::from_utf8_lossy(&md.stderr);
    assert!(err.contains("is partial: bench target `beta` (pid ") && err.contains("exits 2 on it"), "{err}");
    assert!(err.contains("(the report above says so first)"), "{err}");
    println!("markdown's first line: {first}\nstderr: {err}");

    let json = cargo_energy(&["report", "--dir", d, "--format", "json"]);
    assert_eq!(json.status.code(), Some(2), "{}", text(&json));
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["schema"], "energy-report/1");
    assert_eq!(v["benchmarks"].as_array().unwrap().len(), 2);
    assert_eq!(v["partial"]["unfinished_targets"][0]["name"], "beta");
    assert_eq!(v["partial"]["finished_targets"], json!(["alpha"]));
    assert_eq!(v["partial"]["results"], 2);
    assert!(v["partial"]["line"].as_str().unwrap().starts_with("run `new` in "), "{}", v["partial"]);

    let page_path = dir.path().join("report.html");
    let html = cargo_energy(&["report", "--dir", d, "--format", "html", "-o", page_path.to_str().unwrap()]);
    assert_eq!(html.status.code(), Some(2), "{}", text(&html));
    assert!(text(&html).contains("(the report in `"), "{}", text(&html));
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    let line_at = page.find("<p class=\"partial\"").expect("the partial line");
    assert!(line_at < page.find("<table>").unwrap(), "the line comes before the table");
    assert!(page.contains("bench target `beta` (pid "), "{page}");

    // Against a baseline: the same line, the same exit.
    let against = cargo_energy(&["report", "--dir", d, "--baseline", "main"]);
    assert_eq!(against.status.code(), Some(2), "{}", text(&against));
    assert!(String::from_utf8_lossy(&against.stdout).starts_with("> **PARTIAL RUN:**"), "{}", text(&against));
    // A tracker's series never takes a partial run: refused, nothing on stdout; so does compare.
    for format in ["bmf", "github-action-benchmark"] {
        let tracker = cargo_energy(&["report", "--dir", d, "--format", format]);
        assert_eq!(tracker.status.code(), Some(2), "{}", text(&tracker));
        assert!(tracker.stdout.is_empty() && text(&tracker).contains("never finished"), "{}", text(&tracker));
    }
    let refused = compare(dir.path(), &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("bench target `beta`") && text(&refused).contains("never finished"));

    // Killed before committing anything: nothing to show, refused as before.
    let gamma = RunWriter::begin(&dir.path().join("empty"), "gamma", &invocation).unwrap();
    drop(gamma);
    let nothing = cargo_energy(&["report", "--dir", d, "--run", "empty"]);
    assert_eq!(nothing.status.code(), Some(2), "{}", text(&nothing));
    assert!(nothing.stdout.is_empty() && text(&nothing).contains("is incomplete: bench target `gamma`"));

    // The same run once complete: no line, exit 0.
    write_set(dir.path(), "new", &[result("a/energy", 1.0, GPU, false), result("b/energy", 1.01, GPU, false)]);
    let complete = cargo_energy(&["report", "--dir", d]);
    assert_eq!(complete.status.code(), Some(0), "{}", text(&complete));
    assert!(!text(&complete).contains("PARTIAL"), "{}", text(&complete));
}

// The report read at a glance (issue 61), on stored real results: six H100 benchmarks and
// their same-board repeat (`tests/data/report-glance/`), committed into two runs as bench
// targets commit them.

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

/// A campaign of `cargo energy slurm` (its manifest and its shards' runs, as the shards write
/// them) as `report` and `compare` meet it: one table per board, each board's shards merged;
/// a missing shard refused by name unless `--partial`. The real Slurm runs of
/// tests/slurm_cluster.rs (scripts/slurm-test.sh) make such campaigns; this one is written.
#[test]
fn a_campaign_reports_one_table_per_board_and_is_refused_while_a_shard_is_missing() {
    use energy_results::campaign::*;
    let dir = tempfile::tempdir().unwrap();
    let (board_a, board_b) = ("GPU-aaaaaaaa-0000", "GPU-bbbbbbbb-0000");
    // Shards 1 and 3 ran on board A, shard 2 on board B; shard 4 held no benchmark (more shards
    // than benchmarks); shard 5 was cancelled.
    let shards = [(1, board_a, "a/energy"), (2, board_b, "b/energy"), (3, board_a, "c/energy")];
    let mut states = Vec::new();
    for (index, board, id) in shards {
        let job = format!("9_{index}");
        let energy = dir.path().join(CampaignManifest::attempt_dir(index, &job)).join("energy");
        write_set(&energy, "new", &[result(id, 1.0, board, false)]);
        states.push(ShardState {
            index,
            status: ShardStatus::Complete,
            job: Some(job.clone()),
            node: Some(format!("n{index}")),
            gpu_uuid: Some(board.into()),
            run_dir: Some(format!("shards/{index}/{job}/energy/new")),
            results: 1,
            reason: None,
        });
    }
    let empty = dir.path().join(CampaignManifest::attempt_dir(4, "9_4")).join("energy");
    write_set(&empty, "new", &[]);
    states.push(ShardState {
        index: 4,
        status: ShardStatus::Complete,
        job: Some("9_4".into()),
        node: Some("n3".into()),
        gpu_uuid: None,
        run_dir: Some("shards/4/9_4/energy/new".into()),
        results: 0,
        reason: None,
    });
    states.push(ShardState {
        index: 5,
        status: ShardStatus::Missing,
        job: Some("9_5".into()),
        node: Some("n2".into()),
        gpu_uuid: None,
        run_dir: None,
        results: 0,
        reason: Some("stopped: the task received SIGTERM (scancel, or Slurm's time limit: --time)".into()),
    });
    let mut campaign = CampaignManifest {
        schema: CAMPAIGN_SCHEMA.into(),
        id: "campaign-test".into(),
        created: "2026-12-02T00:00:00Z".into(),
        shards: 5,
        bench_args: vec![],
        device: None,
        executables: vec![],
        working_dir: "/w".into(),
        slurm: SlurmOptions { gres: "gpu:1".into(), time: "1:00:00".into(), ..SlurmOptions::default() },
        submissions: vec![],
        shard_states: states,
    };
    campaign.write(dir.path()).unwrap();
    let d = dir.path().to_str().unwrap();
    let refused = cargo_energy(&["report", "--dir", d]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let said = text(&refused);
    assert!(said.contains("1 of 5 shard(s)") && said.contains("shard 5/5 (job 9_5 on n2): missing: stopped"), "{said}");
    let compared = compare(dir.path(), &[]);
    assert_eq!(compared.status.code(), Some(2), "compare refuses it too: {}", text(&compared));
    let partial = cargo_energy(&["report", "--dir", d, "--partial"]);
    assert!(partial.status.success(), "{}", text(&partial));
    let md = String::from_utf8_lossy(&partial.stdout).into_owned();
    assert!(md.contains("4 shard(s) of 5, on 2 board(s)") && md.contains("> **MISSING:** shard 5/5"), "{md}");
    assert_eq!(md.matches("### Energy report").count(), 2, "one table per board: {md}");
    assert!(md.contains("- `GPU-aaaaaaaa` on n1, n3: shard(s) 1, 3\n- `GPU-bbbbbbbb` on n2: shard(s) 2\n"), "{md}");
    assert!(md.contains("Shard(s) 4 measured nothing: no benchmark fell in them"), "{md}");
    let table_a = &md[md.find("GPU-aaaaaaaa, driver").unwrap()..];
    let table_a = &table_a[..table_a.find("### ").unwrap_or(table_a.len())];
    assert!(
        table_a.contains("`a/energy`") && table_a.contains("`c/energy`") && !table_a.contains("`b/energy`"),
        "{md}"
    );
    // Complete once the shard is: no MISSING line, no refusal.
    campaign.shard_states.pop();
    campaign.shards = 4;
    campaign.write(dir.path()).unwrap();
    let whole = cargo_energy(&["report", "--dir", d]);
    assert!(whole.status.success() && !text(&whole).contains("MISSING"), "{}", text(&whole));
}
