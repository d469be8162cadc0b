//! `cargo energy history` on runs built from real H100 results (tests/data/h100-fma, from
//! research/results/2026-11-22-h100-compare) and synthetic ones; and the HTML report's overlay,
//! natural order and path-free markdown on the same files. No GPU needed.

use std::path::Path;
use std::process::{Command, Output};

use energy_harness::unstable::report::RunWriter;
use energy_harness::ResultDevice;
use energy_results::run::Invocation;
use serde_json::{json, Value};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/h100-fma");

fn h100(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(Path::new(DATA).join(name)).unwrap()).unwrap()
}

/// `r` with every energy multiplied by `k` (the figures, the intervals, each window's).
fn scaled(mut r: Value, k: f64) -> Value {
    let scale = |e: &mut Value| {
        for key in ["mean", "ci_low", "ci_high", "std_dev"] {
            if let Some(v) = e[key].as_f64() {
                e[key] = json!(v * k);
            }
        }
    };
    scale(&mut r["energy_j"]);
    scale(&mut r["dynamic_j"]);
    scale(&mut r["power_w"]);
    if r["per_op"].is_object() {
        scale(&mut r["per_op"]["energy_j"]);
        scale(&mut r["per_op"]["dynamic_j"]);
    }
    for w in r["windows"].as_array_mut().into_iter().flatten() {
        for key in ["energy_j", "dynamic_j"] {
            w[key] = json!(w[key].as_f64().unwrap() * k);
        }
    }
    r
}

/// `r` with a provenance: commit `c` repeated, committed at `time`, dirty or not.
fn with_commit(mut r: Value, c: char, time: i64, dirty: bool) -> Value {
    r["provenance"] = json!({"commit": c.to_string().repeat(40), "commit_time_unix": time, "branch": "main", "dirty": dirty, "host": "runner-1"});
    r["temperature_range_c"] = json!({"min_c": 36, "max_c": 41});
    r
}

fn with_gpu(mut r: Value, uuid: &str) -> Value {
    r["device"]["uuid"] = json!(uuid);
    r
}

fn estimate(mean: f64) -> Value {
    json!({"mean": mean, "ci_low": mean * 0.998, "ci_high": mean * 1.002, "n": 10, "std_dev": mean * 0.002})
}

/// A small synthetic result without windows or provenance (as older versions wrote them).
fn synthetic(id: &str, energy_j: f64, uuid: &str, simulated: bool) -> Value {
    json!({
        "schema": "energy-result/1", "id": id,
        "device": {"name": "NVIDIA H100 80GB HBM3", "uuid": uuid, "driver": "580.159.04", "simulated": simulated},
        "energy_j": estimate(energy_j), "dynamic_j": estimate(energy_j * 0.6), "time_s": estimate(1e-3),
        "power_w": estimate(energy_j / 1e-3), "idle_w": 120.0, "source": "Counter",
        "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 5000, "launches_per_window": 500,
        "warnings": [], "timestamp": "2026-11-22T00:00:00Z"
    })
}

/// A complete, succeeded run of `results` in `dir`, written the way a bench run writes it.
fn write_run(dir: &Path, results: &[Value]) {
    let invocation = Invocation { key: format!("test:{}", dir.display()) };
    let writer = RunWriter::begin(dir, "synthetic", &invocation).unwrap();
    let device: ResultDevice = serde_json::from_value(results[0]["device"].clone()).unwrap();
    for r in results {
        let id = r["id"].as_str().unwrap();
        let stem = energy_results::escape::file_stem(id);
        let plot = format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text>plot-{stem}</text></svg>");
        let text = serde_json::to_string_pretty(r).unwrap();
        writer.commit(id, &stem, &device, [text.as_bytes(), b"# energy-trace v1\n", plot.as_bytes()]).unwrap();
    }
    writer.finish(0).unwrap();
}

fn cargo_energy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-energy")).args(args).env_remove("ENERGY_RUN_ID").output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn history(dirs: &[&Path], out: &Path) -> Output {
    let mut args = vec!["history".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--output".into(), out.display().to_string()]);
    cargo_energy(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

const H100_A: &str = "GPU-f35bf6a0-a7b6-0822-8e41-368d8e9f7dff";

#[test]
fn history_of_real_h100_runs_marks_the_ten_percent_rise_and_keeps_boards_apart() {
    let root = tempfile::tempdir().unwrap();
    let before = h100("before.json");
    // CI artifacts as downloaded: runs at several depths, named against their commit order.
    let artifacts = root.path().join("artifacts");
    write_run(&artifacts.join("z-job/target/energy/main"), &[with_commit(before.clone(), 'a', 1_000, false)]);
    write_run(&artifacts.join("y-job/energy/main"), &[with_commit(scaled(before.clone(), 1.10), 'b', 2_000, true)]);
    write_run(&artifacts.join("x-job"), &[with_commit(scaled(before.clone(), 1.1002), 'c', 3_000, false)]);
    // The same benchmark on another board, given as a run directory of its own.
    let other = root.path().join("other-board");
    write_run(&other, &[with_gpu(with_commit(h100("after.json"), 'd', 4_000, false), "GPU-bbbbbbbb-0000")]);
    let out = root.path().join("out");
    let o = history(&[&artifacts, &other], &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    // Ordered by commit time, labelled by short commit, dirt marked.
    let (a, b, c) = (t.find("aaaaaaaa ").unwrap(), t.find("bbbbbbbb* ").unwrap(), t.find("cccccccc ").unwrap());
    assert!(a < b && b < c, "{t}");
    assert!(t.contains("REGRESSION") && t.contains("1 regression(s) from one run to the next"), "{t}");
    assert!(t.contains(&format!("on NVIDIA H100 80GB HBM3 ({H100_A})")) && t.contains("(GPU-bbbbbbbb-0000)"), "{t}");
    let svg = std::fs::read_to_string(out.join("fma_loop_energy.svg")).unwrap();
    assert_eq!(svg.matches("class=\"point\"").count(), 4, "{svg}");
    assert_eq!(svg.matches("class=\"interval\"").count(), 4, "{svg}");
    assert_eq!(svg.matches("class=\"regression\"").count(), 1, "{svg}");
    // One line through the first board's three runs; the other board's lone point joins nothing.
    assert_eq!(svg.matches("class=\"series-line\"").count(), 1, "{svg}");
    assert!(svg.contains("GPU-f35bf6a0") && svg.contains("GPU-bbbbbbbb"), "{svg}");
    assert!(svg.contains("energy per launch (mJ)"), "{svg}");
    assert!(!svg.contains("NaN") && !svg.contains("inf") && !svg.contains("simulated"), "{svg}");
    // The regression ring sits on the second run (the +10 %), whose label is `bbbbbbbb*`.
    let ring = svg.find("class=\"regression\"").unwrap();
    let tip_of_ring = svg[..ring].rfind("<title>").unwrap();
    assert!(svg[tip_of_ring..ring].contains("bbbbbbbb*") && svg[tip_of_ring..ring].contains("+10.00 %"), "{svg}");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("<h3>fma_loop/energy</h3>") && index.contains(&svg), "the page embeds the chart");
    assert!(index.contains("runner-1") && !index.contains(root.path().to_str().unwrap()), "{index}");
}

/// One board's history (`--gpu`), and a benchmark measured in only some runs drawn over
/// those runs alone, each labelled with its date and commit (issue 61).
#[test]
fn one_boards_history_and_each_benchmark_over_the_runs_that_measured_it() {
    let root = tempfile::tempdir().unwrap();
    let before = h100("before.json");
    let later = |r: Value, id: &str| {
        let mut r = r;
        r["id"] = Value::from(id);
        r
    };
    write_run(&root.path().join("r1"), &[with_commit(before.clone(), 'a', 1_000, false)]);
    write_run(
        &root.path().join("r2"),
        &[
            with_commit(before.clone(), 'b', 2_000, false),
            with_commit(later(before.clone(), "added/energy"), 'b', 2_000, false),
        ],
    );
    write_run(
        &root.path().join("r3"),
        &[with_gpu(with_commit(h100("after.json"), 'c', 3_000, false), "GPU-bbbbbbbb-0000")],
    );
    let out = root.path().join("out");
    let mut args: Vec<String> = ["history", root.path().to_str().unwrap(), "--output", out.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let o = cargo_energy(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The benchmark added in the second run: one slot, its own run's, dated by the run's own
    // start (two runs of one commit stay apart), not by its commit's time (2,000 s after the
    // epoch: 01-01 00:33).
    let svg = std::fs::read_to_string(out.join("added_energy.svg")).unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.path().join("r2/run.json")).unwrap()).unwrap();
    let started = manifest["started"].as_str().unwrap();
    let label = format!("{} bbbbbbbb", started[5..16].replace('T', " "));
    assert!(svg.contains(&label) && !svg.contains("01-01 00:33") && !svg.contains("aaaaaaaa"), "{label}: {svg}");
    // The first board alone.
    args.extend(["--gpu".to_string(), H100_A[..12].to_string()]);
    let o = cargo_energy(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(!t.contains("GPU-bbbbbbbb") && t.contains("aaaaaaaa") && t.contains("bbbbbbbb"), "{t}");
    let svg = std::fs::read_to_string(out.join("fma_loop_energy.svg")).unwrap();
    assert_eq!(svg.matches("class=\"point\"").count(), 2, "{svg}");
    // A GPU no run holds: exit 2, naming those found.
    let last = args.len() - 1;
    args[last] = "GPU-ffff".into();
    let o = cargo_energy(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--gpu GPU-ffff: no result") && text(&o).contains("GPU-bbbbbbbb-0000"), "{}", text(&o));
}

#[test]
fn simulated_runs_without_provenance_are_ordered_by_start_and_escaped() {
    let root = tempfile::tempdir().unwrap();
    let id = "a<b>&\"c/energy";
    write_run(
        &root.path().join("first"),
        &[synthetic(id, 1e-3, "GPU-sim", true), synthetic("n=10", 2e-6, "GPU-sim", true)],
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    write_run(
        &root.path().join("second"),
        &[synthetic(id, 1.2e-3, "GPU-sim", true), synthetic("n=2", 2e-6, "GPU-sim", true)],
    );
    let out = root.path().join("out");
    let o = history(&[root.path()], &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(t.contains("(simulated)"), "{t}");
    assert!(t.find("    first ").unwrap() < t.find("    second ").unwrap(), "{t}");
    assert!(t.find("n=2").unwrap() < t.find("n=10").unwrap(), "natural order: {t}");
    let stem = energy_results::escape::file_stem(id);
    let svg = std::fs::read_to_string(out.join(format!("{stem}.svg"))).unwrap();
    assert!(svg.contains("a&lt;b&gt;&amp;&quot;c/energy (simulated)"), "{svg}");
    assert!(!svg.contains("a<b>"), "{svg}");
    assert_eq!(svg.matches("class=\"regression\"").count(), 1, "+20 %: {svg}");
    // A benchmark of a few µJ gets µJ.
    let small_stem = energy_results::escape::file_stem("n=2");
    let small = std::fs::read_to_string(out.join(format!("{small_stem}.svg"))).unwrap();
    assert!(small.contains("(µJ)"), "{small}");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("<h3>a&lt;b&gt;&amp;&quot;c/energy</h3>"), "{index}");
    assert!(index.find("<h3>n=2</h3>").unwrap() < index.find("<h3>n=10</h3>").unwrap());
}

#[test]
fn bad_history_inputs_exit_2_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    // Nothing there.
    let empty = root.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = history(&[&empty], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no run found under") && text(&o).contains("run.json"), "{}", text(&o));
    let o = history(&[&root.path().join("missing")], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is not a directory"), "{}", text(&o));
    // Simulated and measured together.
    let mixed = root.path().join("mixed");
    write_run(&mixed.join("real"), &[synthetic("k", 1e-3, "GPU-a", false)]);
    write_run(&mixed.join("sim"), &[synthetic("k", 1e-3, "GPU-sim", true)]);
    let o = history(&[&mixed], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("simulated and measured runs cannot share a history"), "{}", text(&o));
    assert!(text(&o).contains("real") && text(&o).contains("sim"), "{}", text(&o));
    // A corrupt run: a result altered after its run wrote it, and one with a bad commit.
    let corrupt = root.path().join("corrupt");
    write_run(&corrupt.join("main"), &[synthetic("k", 1e-3, "GPU-a", false)]);
    std::fs::write(corrupt.join("main/k.json"), "{}").unwrap();
    let o = history(&[&corrupt], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("k.json") && text(&o).contains("history reads only complete runs"), "{}", text(&o));
    let bad_commit = root.path().join("bad-commit");
    let mut r = synthetic("k", 1e-3, "GPU-a", false);
    r["provenance"] = json!({"commit": "12345"});
    write_run(&bad_commit.join("main"), &[r]);
    let o = history(&[&bad_commit], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("k.json") && text(&o).contains("not a full commit hash"), "{}", text(&o));
    assert!(!out.exists(), "nothing is written on bad input");
}

#[test]
fn the_html_report_overlays_windows_and_colours_rows_and_markdown_has_no_absolute_path() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ci/target/energy");
    let before = h100("before.json");
    let extra = |id: &str, k: f64| synthetic(id, 1e-3 * k, H100_A, false);
    write_run(
        &dir.join("main"),
        &[before.clone(), extra("saxpy/10ms", 1.0), extra("saxpy/1ms", 1.0), extra("saxpy/2ms", 1.0)],
    );
    write_run(
        &dir.join("new"),
        &[scaled(before, 1.10), extra("saxpy/10ms", 0.9), extra("saxpy/1ms", 1.0), extra("saxpy/2ms", 1.0)],
    );
    let report = |format: &str| {
        cargo_energy(&["report", "--dir", dir.to_str().unwrap(), "--baseline", "main", "--format", format])
    };
    let o = report("html");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let page = String::from_utf8_lossy(&o.stdout).into_owned();
    // One baseline run: the +10 % row is inconclusive (amber), not a regression.
    assert_eq!(page.matches("<tr class=\"inconclusive\">").count(), 1, "{page}");
    assert_eq!(page.matches("<tr class=\"improvement\">").count(), 1, "{page}");
    // The overlay: the H100 run's 10 windows in each run, two colours with a legend.
    assert_eq!(page.matches("class=\"point\"").count(), 20, "{page}");
    assert!(page.contains("main (mean") && page.contains("new (mean"), "{page}");
    assert!(!page.contains("NaN"), "{page}");
    let order = |text: &str| {
        let p = |id: &str| text.find(id).unwrap_or_else(|| panic!("{id} in {text}"));
        assert!(p("saxpy/1ms") < p("saxpy/2ms") && p("saxpy/2ms") < p("saxpy/10ms"), "{text}");
    };
    order(&page);
    let o = report("markdown");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout).into_owned();
    order(&md);
    assert!(md.contains("target/energy/new") && md.contains("target/energy/main"), "{md}");
    assert!(!md.contains(root.path().to_str().unwrap()), "{md}");
    // No absolute path of any kind: no `/` after a space, backtick, parenthesis or line start.
    for (i, _) in md.match_indices('/') {
        let before = md[..i].chars().next_back();
        assert!(!matches!(before, None | Some(' ' | '`' | '(' | '\n' | '|')), "an absolute path at {i}: {md}");
    }
    let compare = cargo_energy(&["compare", "--dir", dir.to_str().unwrap(), "--baseline", "main", "--within-run"]);
    assert_eq!(compare.status.code(), Some(1), "{}", text(&compare));
    order(&String::from_utf8_lossy(&compare.stdout));
}
