//! Synthetic result sets written as a bench run writes them, and the command line that
//! reads them, for the tests of `report` and `compare` (`report_compare`, `compare_drift`).

use std::path::Path;
use std::process::{Command, Output};

use energy_harness::unstable::report::RunWriter;
use energy_harness::ResultDevice;
use energy_results::run::Invocation;
use serde_json::{json, Value};

/// The GPU of the sets' results.
pub const GPU: &str = "GPU-aaaa";

/// An estimate with a relative half-width `rel_half`.
pub fn estimate(mean: f64, rel_half: f64) -> Value {
    json!({"mean": mean, "ci_low": mean * (1.0 - rel_half), "ci_high": mean * (1.0 + rel_half), "n": 10, "std_dev": mean * rel_half})
}

/// A measured result of benchmark `id` on `uuid`.
pub fn result(id: &str, energy_j: f64, uuid: &str, simulated: bool) -> Value {
    json!({
        "schema": "energy-result/1",
        "id": id,
        "device": {"name": "NVIDIA H100 80GB HBM3", "uuid": uuid, "driver": "580.159.04", "simulated": simulated},
        "energy_j": estimate(energy_j, 0.002),
        "dynamic_j": estimate(energy_j * 0.6, 0.003),
        "time_s": estimate(1e-3, 0.0005),
        "power_w": estimate(energy_j / 1e-3, 0.002),
        "idle_w": 120.0,
        "source": "Counter",
        "sensor_model": {"model": "counter", "period_s": 0.1},
        "launches": 5000,
        "launches_per_window": 500,
        "warnings": [],
        "timestamp": "2026-11-22T00:00:00Z",
        "future_field": {"ignored": true}
    })
}

/// A complete, succeeded run of `results`, written the way a bench run writes it.
pub fn write_set(dir: &Path, run: &str, results: &[Value]) {
    write_set_with_not_run(dir, run, results, &[]);
}

/// [`write_set`], with benchmarks listed as not run, each with why.
pub fn write_set_with_not_run(dir: &Path, run: &str, results: &[Value], not_run: &[(&str, &str)]) {
    let invocation = Invocation { key: format!("test:{run}") };
    let writer = RunWriter::begin(&dir.join(run), "synthetic", &invocation).unwrap();
    let device: ResultDevice = serde_json::from_value(results.first().map_or(json!(null), |r| r["device"].clone()))
        .unwrap_or(ResultDevice {
            name: "x".into(),
            uuid: "x".into(),
            driver: None,
            simulated: false,
            power_limit_w: None,
        });
    for r in results {
        let id = r["id"].as_str().unwrap();
        let stem = id.replace('/', "_");
        let plot = format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text>plot-{stem}</text></svg>");
        let json = serde_json::to_string_pretty(r).unwrap();
        writer.commit(id, &stem, &device, [json.as_bytes(), b"# energy-trace v1\n", plot.as_bytes()]).unwrap();
    }
    for (id, why) in not_run {
        writer.record_not_run(id, why).unwrap();
    }
    writer.finish(0).unwrap();
}

/// `cargo-energy ARGS`, outside any pinned run (measured results: no ENERGY_DEVICE).
pub fn cargo_energy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-energy")).args(args).env_remove("ENERGY_RUN_ID").output().unwrap()
}

/// `cargo energy compare --baseline main --dir DIR EXTRA…`.
pub fn compare(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["compare", "--baseline", "main", "--dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    cargo_energy(&args)
}
