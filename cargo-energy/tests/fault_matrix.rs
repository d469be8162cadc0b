//! The fault matrix (docs/RELIABILITY.md): bad inputs and interrupted runs against
//! `cargo-energy`, each with the exit code and the message it must give. None may panic,
//! and none may print a non-finite or negative energy with exit 0.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use energy_harness::unstable::report::RunWriter;
use energy_harness::ResultDevice;
use energy_results::run::Invocation;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// Helpers

fn cargo_energy_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-energy"));
    cmd.args(args).current_dir(dir).env_remove("CARGO_TARGET_DIR").env_remove("ENERGY_RUN_ID");
    cmd.env("ENERGY_DEVICE", "sim");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cargo-energy runs")
}

fn cargo_energy(args: &[&str]) -> Output {
    cargo_energy_in(Path::new("."), args, &[])
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Asserts the exit code and a piece of the message, and that nothing panicked.
fn expect(o: &Output, code: i32, needle: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(code), "expected exit {code} with `{needle}`:\n{t}");
    assert!(t.contains(needle), "expected `{needle}` in:\n{t}");
    assert!(!t.contains("panicked"), "{t}");
}

fn estimate(mean: f64) -> Value {
    json!({"mean": mean, "ci_low": mean * 0.998, "ci_high": mean * 1.002, "n": 10, "std_dev": mean * 0.002})
}

fn result(id: &str, energy_j: f64) -> Value {
    json!({
        "schema": "energy-result/1", "id": id,
        "device": {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-aaaa", "driver": "580.159.04", "simulated": false},
        "energy_j": estimate(energy_j), "dynamic_j": estimate(energy_j * 0.6), "time_s": estimate(1e-3),
        "power_w": estimate(energy_j / 1e-3), "idle_w": 120.0, "source": "Counter",
        "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 5000, "launches_per_window": 500,
        "warnings": [], "timestamp": "2026-11-22T00:00:00Z"
    })
}

/// The device the synthetic runs name: a measured (not simulated) H100.
fn h100() -> ResultDevice {
    ResultDevice { name: "H100".into(), uuid: "GPU-aaaa".into(), driver: None, simulated: false, power_limit_w: None }
}

/// A run of `results` as a bench target writes it; `failed` benchmarks make it a failed run.
fn write_run(dir: &Path, run: &str, results: &[Value], failed: Option<usize>) -> PathBuf {
    let invocation = Invocation { key: format!("test:{run}:{}", dir.display()) };
    let w = RunWriter::begin(&dir.join(run), "synthetic", &invocation).unwrap();
    let device = h100();
    for r in results {
        let id = r["id"].as_str().unwrap();
        let json = serde_json::to_string_pretty(r).unwrap();
        w.commit(id, &id.replace('/', "_"), &device, [json.as_bytes(), b"# energy-trace v1\n", b"<svg/>"]).unwrap();
    }
    if let Some(n) = failed {
        w.finish(n).unwrap();
    }
    dir.join(run)
}

fn compare_in(dir: &Path) -> Output {
    cargo_energy(&["compare", "--baseline", "main", "--dir", dir.to_str().unwrap()])
}

fn trace_file(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("# energy-trace v1\ntime_s,channel,value\n{body}")).unwrap();
    path
}

/// A counter trace: `watts` from 0 to `seconds`, read every 2.5 ms, one window [2, 4] s at
/// 300 W; `value` may rewrite each reading (to reset or corrupt it).
fn counter_trace(seconds: f64, value: impl Fn(f64, f64) -> f64) -> String {
    let mut body = String::new();
    let mut e = 0.0;
    let mut t = 0.0;
    let mut last_tick = 0.0;
    while t < seconds {
        let tick = (t / 0.1_f64).floor() * 0.1;
        if tick > last_tick {
            let p = if (2.0..4.0).contains(&tick) { 300.0 } else { 120.0 };
            e += p * (tick - last_tick) * 1e3;
            last_tick = tick;
        }
        body.push_str(&format!("{t:.6},counter_mj,{}\n", value(t, e.floor() + 1_000_000.0)));
        t += 0.0025;
    }
    body.push_str("2.0,window_start,0\n4.0,window_end,0\n");
    body
}

// ---------------------------------------------------------------------------------------
// Readings and models: every number checked

#[test]
fn counter_resets_split_the_trace_instead_of_giving_negative_energy() {
    let dir = tempfile::tempdir().unwrap();
    // A reset inside the window: refused, never −2.49 MJ.
    let inside = trace_file(dir.path(), "in.csv", &counter_trace(6.0, |t, v| if t > 3.0 { v - 1e6 + 5.0 } else { v }));
    expect(&cargo_energy(&["analyze", inside.to_str().unwrap()]), 2, "overlaps a reset of the energy counter");
    // A reset outside it: measured, with a warning, and the window's energy is what it is
    // without the reset.
    let energy = |path: &Path| -> f64 {
        let out = cargo_energy(&["analyze", path.to_str().unwrap(), "--json"]);
        assert!(out.status.success(), "{}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["windows"][0]["energy_j"].as_f64().unwrap()
    };
    let clean = trace_file(dir.path(), "clean.csv", &counter_trace(6.0, |_, v| v));
    let outside =
        trace_file(dir.path(), "out.csv", &counter_trace(6.0, |t, v| if t > 5.0 { v - 1e6 + 5.0 } else { v }));
    expect(&cargo_energy(&["analyze", outside.to_str().unwrap()]), 0, "reset or wrapped");
    let (e_clean, e_reset) = (energy(&clean), energy(&outside));
    assert!(e_clean > 500.0 && (e_reset / e_clean - 1.0).abs() < 1e-3, "{e_clean} J vs {e_reset} J");
}

#[test]
fn negative_and_absurd_readings_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let neg = trace_file(dir.path(), "neg.csv", "0.0,power_mw,-60000\n1.0,power_mw,-60000\n");
    expect(&cargo_energy(&["analyze", neg.to_str().unwrap()]), 2, "neg.csv:3: power_mw reading -60000 is negative");
    // A counter that jumps to 1e250 times its value: a power no board draws, never inf J.
    let huge = trace_file(dir.path(), "huge.csv", &counter_trace(6.0, |t, v| if t > 3.0 { v * 1e250 } else { v }));
    expect(&cargo_energy(&["analyze", huge.to_str().unwrap()]), 2, "the counter readings are corrupt");
    // One reading near 1e308 among good ones: a jump up and a "reset" back down.
    let spike = trace_file(
        dir.path(),
        "spike.csv",
        &counter_trace(6.0, |t, v| if (3.0..3.003).contains(&t) { 1.7e308 } else { v }),
    );
    expect(&cargo_energy(&["analyze", spike.to_str().unwrap()]), 2, "overlaps a reset");
    let inf = trace_file(dir.path(), "inf.csv", "0.0,power_mw,inf\n");
    expect(&cargo_energy(&["analyze", inf.to_str().unwrap()]), 2, "is not a finite number");
}

#[test]
fn sensor_models_and_cached_calibrations_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::new();
    for i in 0..600 {
        let t = i as f64 * 0.01;
        body.push_str(&format!("{t:.3},power_mw,{}\n", if (2.0..4.0).contains(&t) { 300000 } else { 120000 }));
    }
    body.push_str("2.0,window_start,0\n4.0,window_end,0\n");
    let path = trace_file(dir.path(), "p.csv", &format!("# uuid: GPU-bad\n{body}"));
    let p = path.to_str().unwrap();
    expect(&cargo_energy(&["analyze", p, "--sensor-model", "first-order:1e300"]), 2, "at most 100");
    expect(&cargo_energy(&["analyze", p, "--sensor-model", "boxcar:-1"]), 2, "positive number of seconds");
    // A cached calibration with τ = −5 s: refused on read.
    let cal_dir = dir.path().join("cal");
    std::fs::create_dir_all(&cal_dir).unwrap();
    let cal = json!({
        "schema": "energy-calibration/1", "device_name": "H100", "uuid": "GPU-bad", "driver": null,
        "simulated": false, "created_at": "2026-11-22T00:00:00Z", "idle_before_w": 120.0, "idle_after_w": 120.0,
        "busy_w": 300.0, "busy_s": 3.0, "counter": null,
        "sources": {"PowerUsage": {"model": {"model": "first-order", "tau_s": -5.0}, "delay_s": 0.0,
            "rms_residual_w": 1.0, "update_period_s": 0.1, "alternatives": {}}}
    });
    std::fs::write(cal_dir.join("GPU-bad.json"), cal.to_string()).unwrap();
    let out =
        cargo_energy_in(Path::new("."), &["analyze", p], &[("ENERGY_CALIBRATION_DIR", cal_dir.to_str().unwrap())]);
    expect(&out, 2, "time constant -5");
    // `none` for the counter: the counter needs nothing inverted.
    let c = trace_file(dir.path(), "c.csv", &counter_trace(6.0, |_, v| v));
    expect(&cargo_energy(&["analyze", c.to_str().unwrap(), "--sensor-model", "none"]), 0, "window");
}

#[test]
fn huge_fields_are_not_echoed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let field = "9".repeat(16 << 20);
    let path = trace_file(dir.path(), "big.csv", &format!("{field}x,counter_mj,1\n"));
    let out = cargo_energy(&["analyze", path.to_str().unwrap()]);
    expect(&out, 2, "is not a finite number");
    assert!(out.stderr.len() < 1000, "{} bytes of error", out.stderr.len());
}

#[test]
fn the_boxcar_inversion_of_many_windows_stays_bounded() {
    // 16,000 windows of 50 ms every 100 ms on the 1 s average field (updates every 100 ms):
    // the dense solve took 52 s and 8 GB; the banded one is linear (timing in RELIABILITY.md).
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::with_capacity(64 << 20);
    let n = 16_000;
    for i in 0..(n + 20) * 2 {
        let t = i as f64 * 0.05;
        body.push_str(&format!("{t:.4},average_mw,{}\n", 120000 + (i % 7) * 1000));
    }
    for w in 0..n {
        let start = 1.5 + w as f64 * 0.1;
        body.push_str(&format!("{start:.4},window_start,{w}\n{:.4},window_end,{w}\n", start + 0.05));
    }
    let path = trace_file(dir.path(), "many.csv", &body);
    let out = cargo_energy(&["analyze", path.to_str().unwrap(), "--source", "average", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let windows = v["windows"].as_array().unwrap();
    assert_eq!(windows.len(), n);
    assert!(windows.iter().all(|w| w["energy_j"].as_f64().is_some_and(|e| e.is_finite() && e >= 0.0)));
    // 50 ms windows between 50 ms updates of a 1 s average: resolved only by the
    // regularization, and flagged as such.
    assert!(v["warnings"].as_array().unwrap().iter().any(|w| w["kind"] == "too_few_ticks"), "{v:#}");
}

// ---------------------------------------------------------------------------------------
// Result sets: compare validates every estimate and every run

/// Every figure `analyze` prints is possible, or the window is refused (exit 2) with the
/// reason: a clock step inside a window (−434.98 kJ dynamic before), a sensor model that
/// makes the idle negative or the window far below idle (only warnings before); no plot
/// is written for a refused trace.
#[test]
fn clock_steps_and_wrong_sensor_models_never_print_an_impossible_window() {
    let dir = tempfile::tempdir().unwrap();
    // The clock jumps by `step` after 3 s, in the readings and the window's end mark.
    let stepped = |step: f64| -> String {
        counter_trace(6.0, |_, v| v)
            .lines()
            .map(|line| {
                let (t, rest) = line.split_once(',').unwrap();
                let t: f64 = t.parse().unwrap();
                format!("{},{rest}\n", if t > 3.0 { t + step } else { t })
            })
            .collect()
    };
    let hour = trace_file(dir.path(), "hour.csv", &stepped(3600.0));
    let plot = dir.path().join("hour.svg");
    expect(
        &cargo_energy(&["analyze", hour.to_str().unwrap(), "--plot", plot.to_str().unwrap()]),
        2,
        "hour.csv: window 0 (2.000-3604.000 s): the counter readings jump by 3600.003 s from 3.000 s to 3603.003 s \
         inside it, where they come every 2.50 ms: the clock stepped (or the recording stalled), so the window's \
         length and energy are unknown; record it again",
    );
    assert!(!plot.exists(), "a refused trace is not plotted");
    let far = trace_file(dir.path(), "far.csv", &stepped(1e15));
    expect(
        &cargo_energy(&["analyze", far.to_str().unwrap(), "--json"]),
        2,
        "window 0 (2.000 s to 1.0000e15 s): the counter readings jump by 1.0000e15 s",
    );
    // Sample-buffer readings every 20 ms: 300 W in the window, 120 W idle with a 300 W spike
    // that ends inside the second before it.
    let samples = |spike: (f64, f64), busy: (f64, f64), window: (f64, f64)| -> String {
        let mut body = String::new();
        for i in 0..200 {
            let t = f64::from(i) * 0.02;
            let busy = (spike.0..spike.1).contains(&t) || (busy.0..busy.1).contains(&t);
            body.push_str(&format!("{t:.3},sample_mw,{}\n", if busy { 300_000 } else { 120_000 }));
        }
        body + &format!("{},window_start,0\n{},window_end,0\n", window.0, window.1)
    };
    let spike = trace_file(dir.path(), "spike.csv", &samples((0.8, 1.1), (2.019, 3.019), (2.01, 3.01)));
    let s = spike.to_str().unwrap();
    // The default model: a measurement (dynamic 175 J: 180 J less the spike's share of the idle).
    let out = cargo_energy(&["analyze", s, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((v["windows"][0]["dynamic_j"].as_f64().unwrap() - 180.0).abs() < 10.0, "{v}");
    // τ = 1 s over-corrects the spike's fall into a negative idle (a warning, exit 0, before).
    expect(
        &cargo_energy(&["analyze", s, "--sensor-model", "first-order:1"]),
        2,
        "window 0 (2.010-3.010 s): the active idle before it is negative (-50.82 W): no board draws less than nothing; \
         the samples readings are corrupt or were reset, or the sensor model does not fit them, so nothing is \
         reported; the sensor model `first-order:1` was given: try the source's default (--sensor-model default) \
         or calibrate the GPU (cargo energy calibrate)",
    );
    // τ = 1.5 s, the window's edges on the readings: the window reads 28 W against 120 W of idle.
    let inside = trace_file(dir.path(), "inside.csv", &samples((0.8, 1.1), (1.999, 2.999), (2.0, 3.0)));
    expect(
        &cargo_energy(&["analyze", inside.to_str().unwrap(), "--sensor-model", "first-order:1.5"]),
        2,
        "window 0 (2.000-3.000 s): its mean power, 28.20 W over 1.000 s, is 76 % below the 120.0 W of active idle \
         around it (dynamic energy -100.8 J)",
    );
}

#[test]
fn compare_refuses_impossible_estimates() {
    type Breaker = Box<dyn Fn(&mut Value)>;
    let cases: [(&str, Breaker); 6] = [
        (
            "mean 0 is not positive",
            Box::new(|r| r["energy_j"] = json!({"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 10})),
        ),
        ("n = 0", Box::new(|r| r["energy_j"]["n"] = json!(0))),
        (
            "is not positive",
            Box::new(|r| r["energy_j"] = json!({"mean": -1.0, "ci_low": -1.1, "ci_high": -0.9, "n": 10})),
        ),
        ("does not hold the mean", Box::new(|r| r["energy_j"]["ci_low"] = json!(2.0))),
        ("malformed energy result", Box::new(|r| r["energy_j"]["mean"] = json!(null))),
        ("idle_w", Box::new(|r| r["idle_w"] = json!(-5.0))),
    ];
    for (needle, break_it) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut bad = result("a/energy", 1.0);
        break_it(&mut bad);
        write_run(dir.path(), "main", &[bad], Some(0));
        write_run(dir.path(), "new", &[result("a/energy", 1.0)], Some(0));
        expect(&compare_in(dir.path()), 2, needle);
    }
}

#[test]
fn minimal_result_files_are_read() {
    // Only the fields the result format promised: no std_dev, no launches_per_window.
    let dir = tempfile::tempdir().unwrap();
    let mut r = result("a/energy", 1.0);
    for key in ["energy_j", "dynamic_j", "time_s", "power_w"] {
        r[key].as_object_mut().unwrap().remove("std_dev");
    }
    r.as_object_mut().unwrap().remove("launches_per_window");
    write_run(dir.path(), "main", &[r.clone()], Some(0));
    write_run(dir.path(), "new", &[r], Some(0));
    expect(&compare_in(dir.path()), 0, "no energy regression");
}

#[test]
fn failed_interrupted_and_stale_runs_never_pass_compare() {
    let good = |d: &Path| write_run(d, "main", &[result("a/energy", 1.0)], Some(0));
    // A failed run.
    let dir = tempfile::tempdir().unwrap();
    good(dir.path());
    write_run(dir.path(), "new", &[result("a/energy", 1.0)], Some(1));
    expect(&compare_in(dir.path()), 2, "failed benchmark");
    // An interrupted one (never finished).
    let dir = tempfile::tempdir().unwrap();
    good(dir.path());
    write_run(dir.path(), "new", &[result("a/energy", 1.0)], None);
    expect(&compare_in(dir.path()), 2, "never finished");
    // A result left by another run beside this one's.
    let dir = tempfile::tempdir().unwrap();
    good(dir.path());
    let new = write_run(dir.path(), "new", &[result("a/energy", 1.0)], Some(0));
    std::fs::write(new.join("old_energy.json"), result("old/energy", 1.0).to_string()).unwrap();
    expect(&compare_in(dir.path()), 2, "does not list");
    // A new JSON beside an old trace (an interrupt between the writes of one result).
    let dir = tempfile::tempdir().unwrap();
    good(dir.path());
    let new = write_run(dir.path(), "new", &[result("a/energy", 1.0)], Some(0));
    std::fs::write(new.join("a_energy.trace.csv"), "# energy-trace v1\n# an older run\n").unwrap();
    expect(&compare_in(dir.path()), 2, "not the one its run wrote");
    // Result files without any manifest (written by hand or an older version).
    let dir = tempfile::tempdir().unwrap();
    good(dir.path());
    std::fs::create_dir_all(dir.path().join("new")).unwrap();
    std::fs::write(dir.path().join("new/a.json"), result("a/energy", 1.0).to_string()).unwrap();
    expect(&compare_in(dir.path()), 2, "no run manifest");
    // A missing run names the ones that exist.
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "new", &[result("a/energy", 1.0)], Some(0));
    expect(&compare_in(dir.path()), 2, "the runs under");
}

/// A complete run written by bench processes whose invocation is `key` (`env:ID` for
/// `ENERGY_RUN_ID=ID`).
fn write_run_as(dir: &Path, run: &str, results: &[Value], key: &str) -> PathBuf {
    let w = RunWriter::begin(&dir.join(run), "saxpy", &Invocation { key: key.into() }).unwrap();
    let device = h100();
    for r in results {
        let id = r["id"].as_str().unwrap();
        let json = serde_json::to_string_pretty(r).unwrap();
        w.commit(id, &id.replace('/', "_"), &device, [json.as_bytes(), b"# energy-trace v1\n", b"<svg/>"]).unwrap();
    }
    w.finish(0).unwrap();
    dir.join(run)
}

#[test]
fn a_partial_run_fails_compare_unless_the_benchmark_was_removed_on_purpose() {
    let dir = tempfile::tempdir().unwrap();
    let both = [result("a/energy", 1.0), result("b/energy", 1.0)];
    write_run(dir.path(), "main", &both, Some(0));
    // `cargo bench --bench a --bench crash --bench b`: crash dies at start, cargo stops,
    // the run holds a's results only, complete. It was "b/energy only in main", exit 0.
    write_run(dir.path(), "new", &[result("a/energy", 1.0)], Some(0));
    let out = compare_in(dir.path());
    expect(&out, 2, "lacks 1 benchmark(s) of the baseline `main`: b/energy");
    expect(&out, 2, "(bench targets of `main`: synthetic; of `new`: synthetic)");
    expect(&out, 2, "--removed 'b/energy'");
    assert!(!text(&out).contains("no energy regression"), "{}", text(&out));
    // Removed on purpose: compared, the removal listed.
    let d = dir.path().to_str().unwrap();
    let ok = cargo_energy(&["compare", "--baseline", "main", "--dir", d, "--removed", "b/energy"]);
    expect(&ok, 0, "b/energy                                 removed on purpose (--removed): only in main");
    // A --removed that names nothing missing excuses nothing: b is still required.
    let typo = cargo_energy(&["compare", "--baseline", "main", "--dir", d, "--removed", "b"]);
    expect(&typo, 2, "lacks 1 benchmark(s)");
    // Across boards, the same rule.
    let across = cargo_energy(&["compare", "--baseline", "main", "--dir", d, "--across-boards"]);
    expect(&across, 2, "lacks 1 benchmark(s)");
}

#[test]
fn a_pinned_compare_refuses_every_run_but_its_own() {
    let results = [result("a/energy", 1.0)];
    let compare_pinned = |dir: &Path, extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["compare", "--baseline", "main", "--dir", dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        cargo_energy_in(Path::new("."), &args, env)
    };
    let dir = tempfile::tempdir().unwrap();
    write_run_as(dir.path(), "main", &results, "env:push-7");
    // This job's own run: accepted, by the flag or by ENERGY_RUN_ID in the environment.
    write_run_as(dir.path(), "new", &results, "env:job-a");
    expect(&compare_pinned(dir.path(), &["--run-id", "job-a"], &[]), 0, "no energy regression");
    expect(&compare_pinned(dir.path(), &[], &[("ENERGY_RUN_ID", "job-a")]), 0, "no energy regression");
    // Another job's run (job B's `cargo bench` ran between A's bench and A's compare).
    write_run_as(dir.path(), "new", &results, "env:job-b");
    let out = compare_pinned(dir.path(), &["--run-id", "job-a"], &[]);
    expect(&out, 2, "is not the run asked for: it was written with ENERGY_RUN_ID=job-b");
    expect(&out, 2, "--run-id asks for ENERGY_RUN_ID=job-a");
    expect(&out, 2, "Set ENERGY_RUN_ID=job-a for this job's `cargo bench`");
    // A stale complete run, left when this job's bench could not start its own (a
    // read-only target/energy: exit 1), the id taken from the job's environment.
    write_run_as(dir.path(), "new", &results, "cargo:4242@17");
    let out = compare_pinned(dir.path(), &[], &[("ENERGY_RUN_ID", "job-a")]);
    expect(&out, 2, "written by a `cargo bench` without ENERGY_RUN_ID (invocation `cargo:4242@17`, started");
    expect(&out, 2, "ENERGY_RUN_ID (set in this environment; unset it to compare any run) asks for");
    // A complete `new/` copied in from another target directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let copied = write_run_as(elsewhere.path(), "new", &results, "env:laptop");
    std::fs::remove_dir_all(dir.path().join("new")).unwrap();
    std::fs::create_dir_all(dir.path().join("new")).unwrap();
    for entry in std::fs::read_dir(&copied).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join("new").join(entry.file_name())).unwrap();
    }
    expect(&compare_pinned(dir.path(), &["--run-id", "job-a"], &[]), 2, "written with ENERGY_RUN_ID=laptop");
    // Without a pin the copy is a complete run and compares; `report` pins the same way.
    expect(&compare_pinned(dir.path(), &[], &[("ENERGY_RUN_ID", "")]), 0, "no energy regression");
    let report =
        cargo_energy_in(Path::new("."), &["report", "--dir", dir.path().to_str().unwrap(), "--run-id", "job-a"], &[]);
    expect(&report, 2, "is not the run asked for");
    expect(&compare_pinned(dir.path(), &["--run-id", " "], &[]), 2, "--run-id is empty");
}

#[test]
fn report_and_compare_find_the_runs_the_benches_wrote() {
    // A workspace with a member: benches run in the member's folder, cargo energy at the
    // root or in a subfolder; and with CARGO_TARGET_DIR set, as CI runners do.
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\nmembers = [\"gpu\"]\n").unwrap();
    std::fs::create_dir_all(root.join("gpu/src")).unwrap();
    std::fs::write(root.join("gpu/Cargo.toml"), "[package]\nname = \"gpu\"\n").unwrap();
    let energy = root.join("target/energy");
    write_run(&energy, "main", &[result("a/energy", 1.0)], Some(0));
    write_run(&energy, "new", &[result("a/energy", 1.0)], Some(0));
    for cwd in [root.to_path_buf(), root.join("gpu"), root.join("gpu/src")] {
        expect(&cargo_energy_in(&cwd, &["compare", "--baseline", "main"], &[]), 0, "no energy regression");
    }
    let ci_target = tempfile::tempdir().unwrap();
    write_run(&ci_target.path().join("energy"), "main", &[result("a/energy", 1.0)], Some(0));
    write_run(&ci_target.path().join("energy"), "new", &[result("a/energy", 1.2)], Some(0));
    let env = [("CARGO_TARGET_DIR", ci_target.path().to_str().unwrap())];
    // One baseline run: the drift between runs is unknown, and the rise is inconclusive
    // (exit 3); judged on the within-run intervals alone, it is a regression.
    expect(&cargo_energy_in(&root.join("gpu"), &["compare", "--baseline", "main"], &env), 3, "INCONCLUSIVE");
    expect(
        &cargo_energy_in(&root.join("gpu"), &["compare", "--baseline", "main", "--within-run"], &env),
        1,
        "REGRESSION",
    );
    expect(&cargo_energy_in(&root.join("gpu"), &["report"], &env), 0, "a/energy");
}

// ---------------------------------------------------------------------------------------
// Output errors

#[test]
fn a_closed_pipe_keeps_the_exit_code_and_a_full_disk_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "main", &[result("a/energy", 1.0)], Some(0));
    write_run(dir.path(), "new", &[result("a/energy", 1.5)], Some(0));
    let d = dir.path().to_str().unwrap();
    let exe = env!("CARGO_BIN_EXE_cargo-energy");
    // `| head -c 0`-like reader that exits at once: compare still says 1 (a regression).
    let script =
        format!("\"{exe}\" compare --within-run --baseline main --dir \"{d}\" | (exec 0<&-); echo \"status=${{PIPESTATUS[0]}}\"");
    let out = Command::new("bash").args(["-c", &script]).env("ENERGY_DEVICE", "sim").output().unwrap();
    let t = text(&out);
    assert!(t.contains("status=1"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    // Standard output on a full disk.
    if Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = Command::new(exe)
            .args(["report", "--dir", d])
            .stdout(Stdio::from(full))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        expect(&out, 2, "could not write to standard output");
    }
    // An output file that cannot be written.
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "x").unwrap();
    let target = blocker.join("report.md");
    expect(&cargo_energy(&["report", "--dir", d, "-o", target.to_str().unwrap()]), 2, "could not create");
}
