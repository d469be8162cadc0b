//! The `cargo-energy` binary: exit codes, messages, and traces it writes.

use std::process::{Command, Output};

use energy_results::trace::format::read_trace;
use energy_results::trace::Channel;

fn cargo_energy(args: &[&str], device: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-energy"));
    cmd.args(args);
    match device {
        Some(d) => cmd.env("ENERGY_DEVICE", d),
        None => cmd.env_remove("ENERGY_DEVICE"),
    };
    cmd.output().expect("cargo-energy runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn has_gpu() -> bool {
    energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0)
}

#[test]
fn info_without_a_gpu_says_why_and_fails() {
    if has_gpu() {
        eprintln!("skipped: this machine has an NVIDIA GPU");
        return;
    }
    let out = cargo_energy(&["info"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("no NVIDIA GPU can be used here"), "{err}");
    assert!(err.contains("libnvidia-ml") || err.contains("driver"), "{err}");
    assert!(err.contains("ENERGY_DEVICE=sim"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn info_on_the_simulated_h100_lists_every_source() {
    // Called as cargo calls a subcommand: `cargo-energy energy info`.
    let out = cargo_energy(&["energy", "info"], Some("sim"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("[simulated]"), "{stdout}");
    for source in ["counter", "instant", "average", "power", "samples"] {
        let sources = stdout.split("Sources:").nth(1).unwrap();
        let line = sources.lines().find(|l| l.trim_start().starts_with(source)).unwrap();
        assert!(line.contains(" ok "), "{line}");
    }
}

#[test]
fn info_json_reports_missing_sources_as_not_supported() {
    let out = cargo_energy(&["info", "--json"], Some("sim:k20"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["device"]["simulated"], true);
    let sources = report["sources"].as_array().unwrap();
    let counter = sources.iter().find(|s| s["source"] == "counter").unwrap();
    assert_eq!(counter["supported"], false);
    assert!(counter["problem"].as_str().unwrap().contains("not supported"));
    let power = sources.iter().find(|s| s["source"] == "power").unwrap();
    assert_eq!(power["supported"], true);
}

#[test]
fn bad_arguments_exit_with_2() {
    for (args, device) in [
        (vec!["info"], Some("bogus")),
        (vec!["trace", "--seconds", "-1"], Some("sim")),
        (vec!["trace"], Some("sim")),
        (vec!["frobnicate"], None),
    ] {
        let out = cargo_energy(&args, device);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).is_empty());
    }
}

#[test]
fn trace_records_the_simulated_gpu_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.csv");
    let out = cargo_energy(&["trace", "--seconds", "0.6", "-o", path.to_str().unwrap()], Some("sim"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = read_trace(&path).unwrap();
    assert_eq!(trace.metadata("simulated"), Some("true"));
    assert!(trace.metadata("recorded_at").is_some());
    // The counter is read back to back (~2.4 ms per read): well over 100 reads in 0.6 s.
    assert!(trace.series(&Channel::CounterMj).len() > 100);
    assert!(!trace.series(&Channel::AverageMw).is_empty());
}

#[test]
fn trace_without_a_gpu_fails_clearly() {
    if has_gpu() {
        eprintln!("skipped: this machine has an NVIDIA GPU");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.csv");
    let out = cargo_energy(&["trace", "--seconds", "1", "-o", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("ENERGY_DEVICE=sim"));
    assert!(!path.exists(), "no file is written when recording fails");
}

fn recorded(name: &str) -> String {
    format!("{}/../energy-harness/tests/data/h100/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn analyze_reports_each_window_of_a_recorded_h100_trace() {
    let out = cargo_energy(&["analyze", &recorded("trace_b2b.csv"), "--json"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["source"], "counter");
    assert_eq!(report["sensor_model"]["model"], "counter");
    let windows = report["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 3);
    for w in windows {
        let energy = w["energy_j"].as_f64().unwrap();
        let duration = w["end_s"].as_f64().unwrap() - w["start_s"].as_f64().unwrap();
        assert!((265.0..280.0).contains(&(energy / duration)), "{w}");
        assert!(w["dynamic_j"].as_f64().unwrap() < energy);
        assert!(w["index"].is_u64());
    }
    assert!((118.0..124.0).contains(&report["idle_w"].as_f64().unwrap()));
    let text_out = cargo_energy(&["analyze", &recorded("trace_step3s.csv"), "--source", "average"], None);
    assert!(text_out.status.success());
    assert!(text(&text_out.stdout).contains("boxcar:1"), "{}", text(&text_out.stdout));
}

#[test]
fn analyze_rejects_bad_input_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let malformed = dir.path().join("bad.csv");
    std::fs::write(&malformed, "# energy-trace v1\ntime_s,channel,value\n0.1,counter_mj,12\n0.2,counter_mj\n").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["analyze".into(), "/nonexistent/trace.csv".into()], "could not read"),
        (vec!["analyze".into(), malformed.display().to_string()], "bad.csv:4:"),
        (vec!["analyze".into(), recorded("trace_idle.csv")], "no kernel windows"),
        (
            vec!["analyze".into(), recorded("trace_b2b.csv"), "--sensor-model".into(), "kalman".into()],
            "unknown sensor model",
        ),
        (vec!["analyze".into(), recorded("trace_b2b.csv"), "--source".into(), "thermometer".into()], "unknown source"),
        (
            vec![
                "analyze".into(),
                recorded("trace_b2b.csv"),
                "--source".into(),
                "counter".into(),
                "--sensor-model".into(),
                "boxcar:1".into(),
            ],
            "takes no sensor model",
        ),
        (
            vec!["analyze".into(), recorded("trace_b2b.csv"), "--sensor-model".into(), "calibrated".into()],
            "cargo energy calibrate",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-energy"));
        cmd.args(&args).env("ENERGY_CALIBRATION_DIR", dir.path());
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(expected), "{args:?}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("panicked"));
    }
}

#[test]
fn calibrate_on_the_simulated_gpu_caches_per_uuid_and_analyze_uses_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("step.csv");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-energy"));
    cmd.args(["calibrate", "--json", "--trace", trace.to_str().unwrap()])
        .env("ENERGY_DEVICE", "sim")
        .env("ENERGY_CALIBRATION_DIR", dir.path());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cal: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cal["schema"], "energy-calibration/1");
    assert_eq!(cal["simulated"], true);
    assert_eq!(cal["sources"]["average"]["model"]["model"], "boxcar");
    let cached = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "json"))
        .count();
    assert_eq!(cached, 1);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-energy"));
    cmd.args(["analyze", trace.to_str().unwrap(), "--source", "average", "--sensor-model", "calibrated", "--json"])
        .env("ENERGY_CALIBRATION_DIR", dir.path());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["model_origin"].as_str().unwrap().starts_with("calibrated for SIM-h100"), "{report}");
    assert_eq!(report["simulated"], true);
}
