//! Unit tests of a run's sweeps: grouping and order, the SVG, the optimum across runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use energy_results::ResultFile;
use energy_results::SweepPoint;

fn est(mean: f64, rel_half: f64) -> Estimate {
    let half = mean * rel_half;
    Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: 10, std_dev: half }
}

/// The result of `sweep/arg` with energy `energy_j` and time `time_s` (±0.5 %), or of a
/// benchmark outside any sweep when `arg` is `None`.
fn result(sweep: &str, arg: Option<&str>, energy_j: f64, time_s: f64) -> ResultFile {
    let id = arg.map_or_else(|| format!("{sweep}/energy"), |a| format!("{sweep}/{a}/energy"));
    let e = |mean: f64| serde_json::json!({"mean": mean, "ci_low": mean * 0.99, "ci_high": mean * 1.01, "n": 10, "std_dev": mean * 0.01});
    let text = serde_json::json!({
        "schema": "energy-result/1", "id": id,
        "device": {"name": "H100", "uuid": "GPU-a", "driver": null, "simulated": false},
        "energy_j": e(1.0), "dynamic_j": e(0.5), "time_s": e(1e-3), "power_w": e(1e3), "idle_w": 100.0,
        "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1}, "launches": 100,
        "warnings": [], "timestamp": "2026-11-24T00:00:00Z"
    })
    .to_string();
    let mut r = ResultFile::parse(&text, Path::new("k.json")).unwrap();
    r.energy_j = est(energy_j, 0.005);
    r.time_s = est(time_s, 0.005);
    r.sweep = arg.map(|a| SweepPoint { sweep: sweep.into(), param: "block".into(), arg: a.into() });
    r
}

fn set(dir: &str, results: Vec<ResultFile>) -> ResultSet {
    ResultSet {
        dir: PathBuf::from(dir),
        results: results.into_iter().map(|r| (r.id.clone(), r)).collect::<BTreeMap<_, _>>(),
        not_run: Default::default(),
    }
}

/// block 1024 fastest, 512 least energy (2 % apart, beyond ±0.5 % intervals).
fn blocks(dir: &str, least_energy: &str) -> ResultSet {
    let energy = |a: &str| if a == least_energy { 0.98 } else { 1.0 + a.len() as f64 * 0.01 };
    let mut rs: Vec<ResultFile> = ["64", "128", "256", "512", "1024"]
        .iter()
        .map(|a| result("saxpy", Some(a), energy(a), if *a == "1024" { 0.9e-3 } else { 1e-3 }))
        .collect();
    rs.push(result("plain", None, 1.0, 1e-3));
    set(dir, rs)
}

#[test]
fn results_are_grouped_by_sweep_in_natural_order_of_the_arguments() {
    let s = sweeps(&blocks("main", "512"));
    assert_eq!(s.len(), 1, "the benchmark without arguments is in no sweep");
    let args: Vec<&str> = s[0].rows.iter().map(|r| r.arg.as_str()).collect();
    assert_eq!(args, ["64", "128", "256", "512", "1024"]);
    let v = s[0].verdict().unwrap();
    assert_eq!((s[0].rows[v.least_energy].arg.as_str(), s[0].rows[v.least_time].arg.as_str()), ("512", "1024"));
    assert!(s[0].text().contains("verdict: block 1024 is fastest; block 512 costs"), "{}", s[0].text());
}

#[test]
fn the_svg_has_both_charts_every_argument_and_no_non_finite_coordinate() {
    let svg = sweep_svg(&sweeps(&blocks("main", "512"))[0]);
    assert!(svg.contains("energy per launch against block") && svg.contains("time per launch against block"));
    assert!(svg.contains("least at block 512") && svg.contains("least at block 1024"), "{svg}");
    for a in ["64", "128", "256", "512", "1024"] {
        assert!(svg.contains(&format!(">{a}</text>")), "argument {a} not labelled");
    }
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn a_moved_optimum_is_said_and_an_unmoved_one_is_not() {
    let (main, same, moved) = (blocks("main", "512"), blocks("same", "512"), blocks("new", "256"));
    assert!(optimum_moves(&main, &same, "main", "same").is_empty());
    let lines = optimum_moves(&main, &moved, "main", "new");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("least energy moved from block 512 (main) to block 256 (new)"), "{}", lines[0]);
    assert!(!lines[0].contains("least time moved"), "the fastest stayed at 1024: {}", lines[0]);
    assert!(lines[0].contains("beyond the intervals"), "{}", lines[0]);
}

#[test]
fn the_svg_plots_each_figure_in_its_unit() {
    // 28.6 mJ and 71.35 µs per launch: plotted as 28.6 (mJ) and 71.35 (µs).
    let mut r = result("saxpy", Some("512"), 28.6e-3, 71.35e-6);
    r.energy_j = est(28.6e-3, 0.01);
    r.time_s = est(71.35e-6, 0.01);
    let other = result("saxpy", Some("1024"), 29.2e-3, 69.25e-6);
    let svg = sweep_svg(&sweeps(&set("main", vec![r, other]))[0]);
    assert!(svg.contains("energy per launch (mJ)") && svg.contains("time per launch (µs)"), "{svg}");
    assert!(svg.contains("block 512: 28.6000 [28.3140, 28.8860]"), "{svg}");
    assert!(svg.contains("block 512: 71.3500 [70.6365, 72.0635]"), "{svg}");
}
