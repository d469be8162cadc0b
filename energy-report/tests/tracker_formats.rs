//! `cargo energy report --format bmf | github-action-benchmark` on a real H100 result: the
//! output has the shape each tracker's published format gives (Bencher Metric Format:
//! benchmark → measure → value, lower_value, upper_value; github-action-benchmark's
//! `customSmallerIsBetter`: a list of name, unit, value and the optional range and extra,
//! range a string), the figures are the result's, and a simulated result is marked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use energy_harness::ResultFile;
use energy_report::{render as render_table, Format as TableFormat, ResultSet};

/// A real H100 result of the FMA-loop bench (`tests/data/`, stored gzipped and read as
/// written; its README says where it was copied from).
fn h100_result() -> ResultFile {
    ResultFile::read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run1-fma_loop_energy.json")).unwrap()
}

fn set(r: ResultFile) -> ResultSet {
    ResultSet {
        dir: PathBuf::from("target/energy/new"),
        results: BTreeMap::from([(r.id.clone(), r)]),
        not_run: Default::default(),
    }
}

#[test]
fn bmf_is_benchmark_measure_value_with_the_interval() {
    let r = h100_result();
    let text = render_table(&set(r.clone()), None, 5.0, "bmf".parse::<TableFormat>().unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let benchmarks = v.as_object().expect("BMF is one object keyed by benchmark name");
    assert_eq!(benchmarks.len(), 1);
    let measures = benchmarks[&r.id].as_object().expect("each benchmark is an object keyed by measure");
    let mut names: Vec<&str> = measures.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["dynamic-energy", "energy", "latency", "power"]);
    for (name, m) in measures {
        let m = m.as_object().unwrap();
        let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["lower_value", "upper_value", "value"], "{name}");
        let (lo, x, hi) =
            (m["lower_value"].as_f64().unwrap(), m["value"].as_f64().unwrap(), m["upper_value"].as_f64().unwrap());
        assert!(lo <= x && x <= hi, "{name}: {lo} {x} {hi}");
    }
    assert_eq!(measures["energy"]["value"].as_f64().unwrap(), r.energy_j.mean);
    assert_eq!(measures["latency"]["value"].as_f64().unwrap(), r.time_s.mean * 1e9, "Bencher's latency is in ns");
}

#[test]
fn github_action_benchmark_entries_are_custom_smaller_is_better() {
    let r = h100_result();
    let format = "github-action-benchmark".parse::<TableFormat>().unwrap();
    let text = render_table(&set(r.clone()), None, 5.0, format).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entries = v.as_array().expect("a list of entries");
    assert_eq!(entries.len(), 3, "energy, dynamic energy and time per launch");
    for e in entries {
        let e = e.as_object().unwrap();
        assert!(e["name"].as_str().unwrap().starts_with(&r.id));
        assert!(e["unit"].is_string() && e["value"].is_f64());
        assert!(e["range"].is_string(), "the tool's range is a string");
        assert!(e["extra"].as_str().unwrap().contains(&r.device.uuid), "the GPU is in the tooltip");
        assert!(e.keys().all(|k| ["name", "unit", "value", "range", "extra"].contains(&k.as_str())));
    }
    assert_eq!(entries[0]["unit"], "J");
    assert_eq!(entries[0]["value"].as_f64().unwrap(), r.energy_j.mean);
    // A simulated result never joins a real series.
    let mut sim = r;
    sim.device.simulated = true;
    let text = render_table(&set(sim), None, 5.0, format).unwrap();
    assert!(text.contains("[simulated]"));
    let mut named = h100_result();
    named.device.simulated = true;
    named.id = "fma_loop/energy (simulated)".into();
    let text = render_table(&set(named), None, 5.0, format).unwrap();
    assert!(text.contains("(simulated)") && !text.contains("[simulated]"), "marked once");
    assert!("csv".parse::<TableFormat>().unwrap_err().contains("github-action-benchmark"));
}
