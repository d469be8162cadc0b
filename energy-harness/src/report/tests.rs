//! Unit tests of `report`.

use super::*;
use energy_results::escape::{file_stem, MAX_STEM_BYTES};
use energy_results::result::RESULT_SCHEMA;
use std::path::Path;

#[test]
fn stems_are_safe_file_names() {
    assert_eq!(file_stem("saxpy/energy (simulated)"), "saxpy_energy__simulated_");
}

#[test]
fn long_unsafe_and_dotted_ids_get_a_short_hashed_stem_inside_the_directory() {
    let safe = |stem: &str| {
        !stem.is_empty()
            && stem.len() <= MAX_STEM_BYTES
            && !stem.starts_with(['.', '-'])
            && stem.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    let long = format!("{}/energy", "x".repeat(550));
    let escape = "../../../../tmp/escape/energy";
    for id in [long.as_str(), escape, "..", ".", "", "-rf/energy", "a|b`c/energy", "能量/energy", "a\nb\u{0}"] {
        let stem = file_stem(id);
        assert!(safe(&stem), "{id:?} -> {stem:?}");
        let dir = Path::new("/run");
        assert_eq!(dir.join(format!("{stem}.trace.csv")).parent(), Some(dir), "{id:?}");
    }
    assert_eq!(
        file_stem(escape),
        format!("_.._.._.._tmp_escape_energy-{:016x}", energy_results::hash::fnv1a(escape.as_bytes()))
    );
    assert!(file_stem(&long).starts_with("xxxxxxxx"));
    assert_eq!(file_stem(&long).len(), MAX_STEM_BYTES);
    // Ids that map to one readable prefix still get their own files.
    assert_ne!(file_stem("a|b/energy"), file_stem("a`b/energy"));
    assert_ne!(file_stem(&format!("{long}1")), file_stem(&format!("{long}2")));
}

#[test]
fn figures_that_cannot_be_are_refused_on_read_windows_and_energies_beyond_any_gpu() {
    let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10});
    let window = serde_json::json!({
        "index": 0, "start_s": 1.0, "end_s": 1.1, "energy_j": 40.0, "dynamic_j": 20.0, "idle_before_w": 200.0,
        "idle_after_w": 200.0, "idle_w": 200.0, "busy_w": 400.0, "points_inside": 1, "edge_energy_j": 2.0,
        "launches": 100, "gpu_time_s": 0.1, "sm_clock_mhz": 1980, "temperature_c": 40
    });
    let v = serde_json::json!({
        "schema": RESULT_SCHEMA, "id": "k",
        "device": {"name": "H100", "uuid": "GPU-a", "driver": null, "simulated": false},
        "energy_j": e(0.4), "dynamic_j": e(0.2), "time_s": e(1e-3), "power_w": e(400.0), "idle_w": 200.0,
        "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 100,
        "warnings": [], "timestamp": "2026-11-24T00:00:00Z", "windows": [window.clone(), window]
    });
    assert_eq!(parse(&v).unwrap().windows.len(), 2);
    let refused = |field: &str, value: serde_json::Value, said: &str| {
        let mut bad = v.clone();
        bad["windows"][1][field] = value;
        let err = parse(&bad).unwrap_err().to_string();
        assert!(err.contains("`k` windows[0]: ") && err.contains(said), "{field}: {err}");
    };
    refused("energy_j", serde_json::json!(-40.0), "energy_j -40 is not finite and non-negative");
    refused("gpu_time_s", serde_json::json!(-0.1), "gpu_time_s -0.1");
    refused("idle_w", serde_json::json!(-1.0), "idle_w -1");
    refused("busy_w", serde_json::json!(-400.0), "busy_w -400");
    refused("end_s", serde_json::json!(0.5), "spans [1, 0.5] s");
    refused("dynamic_j", serde_json::json!(41.0), "dynamic_j 41 is above energy_j 40");
    // Finite but beyond any GPU: refused, never printed (a page in µJ would say `inf`).
    for (field, mean) in [("energy_j", 1e308_f64), ("dynamic_j", -1e300), ("dynamic_j", 2e9)] {
        let mut bad = v.clone();
        bad[field] = serde_json::json!({"mean": mean, "ci_low": mean.min(-1e-3), "ci_high": mean.max(1.0), "n": 10});
        if field == "energy_j" {
            bad["dynamic_j"] = e(0.2);
        }
        let err = parse(&bad).unwrap_err().to_string();
        assert!(err.contains(&format!("`k` {field}: ")) && err.contains("J per launch is beyond any GPU"), "{err}");
    }
}

/// The fewest fields a result file of `energy-result/1` holds: benchmark `k` on an H100.
fn minimal_result() -> serde_json::Value {
    let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10});
    serde_json::json!({
        "schema": RESULT_SCHEMA, "id": "k",
        "device": {"name": "H100", "uuid": "GPU-a", "driver": null, "simulated": false},
        "energy_j": e(1.0), "dynamic_j": e(0.5), "time_s": e(1e-3), "power_w": e(1e3), "idle_w": 100.0,
        "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 100,
        "warnings": [], "timestamp": "2026-11-24T00:00:00Z"
    })
}

/// `v` read as the result file `k.json`.
fn parse(v: &serde_json::Value) -> Result<ResultFile> {
    ResultFile::parse(&v.to_string(), Path::new("k.json"))
}

#[test]
fn provenance_is_optional_on_read_and_checked_when_present() {
    let mut v = minimal_result();
    // A file of an older version: no provenance, no temperature range.
    let old = parse(&v).unwrap();
    assert_eq!((old.provenance, old.temperature_range_c), (None, None));
    // Written and read back whole; an older reader's rule (unknown fields ignored) keeps it readable.
    let commit = "89abcdef".repeat(5);
    v["provenance"] = serde_json::json!({"commit": commit, "branch": "main", "dirty": true, "host": "gpu-1"});
    v["temperature_range_c"] = serde_json::json!({"min_c": 35, "max_c": 42});
    let r = parse(&v).unwrap();
    assert_eq!(r.provenance.as_ref().unwrap().short_label().as_deref(), Some("89abcdef*"));
    assert_eq!(parse(&serde_json::to_value(&r).unwrap()).unwrap(), r);
    v["temperature_range_c"] = serde_json::json!({"min_c": 45, "max_c": 42});
    let err = parse(&v).unwrap_err();
    assert!(err.message().contains("k.json: `k` temperature_range_c: min 45 °C is above max 42 °C"), "{err}");
    v["temperature_range_c"] = serde_json::json!({"min_c": -5, "max_c": 42});
    assert!(parse(&v).unwrap_err().message().contains("malformed energy result"));
    v["temperature_range_c"] = serde_json::Value::Null;
    v["provenance"]["commit"] = serde_json::json!("HEAD");
    let err = parse(&v).unwrap_err();
    assert!(err.message().contains("provenance.commit `HEAD` is not a full commit hash"), "{err}");
}

#[test]
fn an_impossible_sensor_model_is_refused_on_read() {
    let mut v = minimal_result();
    assert!(parse(&v).is_ok());
    // Issue 60: a counter period of −9.2·10¹⁸ s was read, echoed and compared.
    for bad in [
        serde_json::json!({"model": "counter", "period_s": -9.2e18}),
        serde_json::json!({"model": "boxcar", "width_s": 0.0}),
        serde_json::json!({"model": "first-order", "tau_s": 1e300}),
    ] {
        v["sensor_model"] = bad.clone();
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("`k` sensor_model: ") && err.contains("is not a sensor's"), "{bad}: {err}");
    }
}

#[test]
fn schema_is_checked_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, r#"{"schema":"energy-result/9","id":"x"}"#).unwrap();
    assert!(ResultFile::read_json(&path).unwrap_err().message().contains("energy-result/9"));
    std::fs::write(&path, r#"{"id":"x"}"#).unwrap();
    assert!(ResultFile::read_json(&path).unwrap_err().message().contains("no `schema`"));
    std::fs::write(&path, "not json").unwrap();
    assert_eq!(ResultFile::read_json(&path).unwrap_err().kind(), ErrorKind::Format);
}

#[test]
fn the_precision_is_said_as_asked_only_where_it_decided_the_windows() {
    let with = |stop: &str, fixed: bool| {
        let mut v = minimal_result();
        v["stop"] = serde_json::json!(stop);
        v["options"] = serde_json::json!({"ops": null, "bytes": null, "device": 0, "source": null, "precision": 0.01,
            "window_s": null, "min_windows": 6, "max_windows": if fixed { 6 } else { 40 }, "fixed_windows": fixed});
        render_summary(&parse(&v).unwrap(), None)
    };
    let fixed = with("window count given", true);
    assert!(fixed.contains("window count given") && !fixed.contains("asked"), "{fixed}");
    let reached = with("precision reached", false);
    assert!(reached.contains("precision reached; ±1.00 % asked"), "{reached}");
}
