//! `energy-trace v1` (parsed, then analyzed with every source and model choice) and
//! `energy-result/1` (parsed, then compared): the seeds and mutations the other campaigns
//! use too.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use energy_harness::unstable::engine::{analyze_trace, AnalysisOptions, ModelChoice};
use energy_harness::ResultFile;
use energy_harness::SourceKind;
use energy_report::{compare, ResultSet};
use energy_results::archive::read_archived;
use energy_results::source::model::SensorModel;
use energy_results::trace::format::parse_trace;

use super::{cases, seed, Rng};

const NASTY_NUMBERS: [&str; 16] = [
    "0",
    "-1",
    "-60000",
    "1e308",
    "1.7976931348623157e308",
    "-1e308",
    "NaN",
    "inf",
    "-inf",
    "1e-320",
    "4294967295",
    "18446744073709551616",
    "3.0",
    "",
    "0x10",
    "1e300",
];
const CHANNELS: [&str; 9] =
    ["counter_mj", "power_mw", "average_mw", "instant_mw", "sample_mw", "window_start", "window_end", "x", ""];

/// Small seed traces: a counter window, a power window, two close windows on the average
/// field, and an excerpt of a real H100 recording.
pub(crate) fn trace_seeds() -> Vec<String> {
    let mut seeds = Vec::new();
    let header = "# energy-trace v1\n# device: fuzz\ntime_s,channel,value\n";
    let mut counter = String::from(header);
    let mut e = 1_000_000.0;
    for i in 0..160 {
        let t = i as f64 * 0.025;
        if i % 4 == 0 {
            e += if (1.0..3.0).contains(&t) { 30_000.0 } else { 12_000.0 };
        }
        counter.push_str(&format!("{t:.4},counter_mj,{e}\n"));
    }
    counter.push_str("1.0,window_start,0\n3.0,window_end,0\n");
    seeds.push(counter);
    let mut power = String::from(header);
    for i in 0..120 {
        let t = i as f64 * 0.05;
        let p = if (2.0..4.0).contains(&t) { 300_000 } else { 120_000 };
        power.push_str(&format!("{t:.3},power_mw,{p}\n{t:.3},sample_mw,{p}\n{t:.3},average_mw,{p}\n"));
    }
    power.push_str("2.0,window_start,0\n3.0,window_end,0\n3.2,window_start,1\n4.0,window_end,1\n");
    seeds.push(power);
    // A recorded H100 trace's first 400 lines (tests/data/, stored gzipped).
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trace_short_head.csv");
    let text = String::from_utf8(read_archived(&recorded).unwrap()).unwrap();
    let excerpt: Vec<&str> = text.lines().take(400).collect();
    assert_eq!(excerpt.len(), 400, "{}", recorded.display());
    seeds.push(format!("{}\n0.1,window_start,0\n0.3,window_end,0\n", excerpt.join("\n")));
    seeds
}

pub(crate) fn mutate_lines(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(2) {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len());
        match rng.below(9) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let line = lines[i].clone();
                lines.insert(rng.below(lines.len() + 1), line);
            }
            2 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            3 | 4 => {
                // Replace one field with a nasty number.
                let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
                let f = rng.below(fields.len());
                fields[f] = NASTY_NUMBERS[rng.below(NASTY_NUMBERS.len())].to_string();
                lines[i] = fields.join(",");
            }
            5 => {
                let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
                if fields.len() == 3 {
                    fields[1] = CHANNELS[rng.below(CHANNELS.len())].to_string();
                }
                lines[i] = fields.join(",");
            }
            6 => {
                // Scale a value: a counter reset, a jump, a negative.
                let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
                if let Some(v) = fields.get(2).and_then(|v| v.parse::<f64>().ok()) {
                    let factor = [0.0, -1.0, 0.5, 1e-6, 1e6, 1e200][rng.below(6)];
                    fields[2] = format!("{}", v * factor);
                }
                lines[i] = fields.join(",");
            }
            7 => {
                let keep = rng.below(lines.len() + 1);
                lines.truncate(keep);
            }
            _ => {
                // Flip a byte.
                let mut bytes = lines[i].clone().into_bytes();
                if !bytes.is_empty() {
                    let b = rng.below(bytes.len());
                    bytes[b] ^= 1 << rng.below(7);
                }
                lines[i] = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
    }
    lines.join("\n")
}

fn check_trace(text: &str, rng: &mut Rng) -> Result<bool, String> {
    let Ok(trace) = parse_trace(text, Path::new("fuzz.csv")) else { return Ok(false) };
    let source =
        [None, Some(SourceKind::Counter), Some(SourceKind::AverageField), Some(SourceKind::SampleBuffer)][rng.below(4)];
    let model = [
        ModelChoice::Auto,
        ModelChoice::Explicit(SensorModel::Identity),
        ModelChoice::Explicit(SensorModel::Boxcar { width_s: 1.0 }),
        ModelChoice::Explicit(SensorModel::FirstOrder { tau_s: 0.83 }),
    ][rng.below(4)]
    .clone();
    let options = AnalysisOptions { source, model, ..AnalysisOptions::default() };
    let Ok(analysis) = analyze_trace(&trace, &options) else { return Ok(false) };
    if !(analysis.idle_w.is_finite() && analysis.idle_w >= 0.0) {
        return Err(format!("accepted with idle {} W", analysis.idle_w));
    }
    for w in &analysis.windows {
        if !(w.energy_j.is_finite() && w.energy_j >= 0.0 && w.dynamic_j.is_finite()) {
            return Err(format!("accepted window {} with {} J (dynamic {} J)", w.index, w.energy_j, w.dynamic_j));
        }
    }
    Ok(true)
}

pub(crate) fn result_seed(id: &str, mean: f64) -> serde_json::Value {
    let est =
        |m: f64| serde_json::json!({"mean": m, "ci_low": m * 0.99, "ci_high": m * 1.01, "n": 10, "std_dev": m * 0.01});
    serde_json::json!({
        "schema": "energy-result/1", "id": id,
        "device": {"name": "H100", "uuid": "GPU-1", "driver": "580", "simulated": false},
        "energy_j": est(mean), "dynamic_j": est(mean * 0.5), "time_s": est(1e-3), "power_w": est(mean * 1e3),
        "idle_w": 120.0, "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1},
        "launches": 100, "launches_per_window": 10, "warnings": [], "timestamp": "2026-11-23T00:00:00Z",
        "per_op": {"unit": "op", "units_per_launch": 1e6, "energy_j": est(mean * 1e-6), "dynamic_j": est(mean * 5e-7)},
        "windows": [window(0, mean), window(1, mean)]
    })
}

/// A window of 10 launches of `mean` J each, 1 ms apart.
fn window(index: u32, mean: f64) -> serde_json::Value {
    serde_json::json!({
        "index": index, "start_s": 1.0 + index as f64, "end_s": 1.01 + index as f64, "energy_j": 10.0 * mean,
        "dynamic_j": 5.0 * mean, "idle_before_w": 120.0, "idle_after_w": 120.0, "idle_w": 120.0, "busy_w": mean * 1e3,
        "points_inside": 1, "edge_energy_j": mean, "launches": 10, "gpu_time_s": 0.01, "sm_clock_mhz": 1980,
        "temperature_c": 40
    })
}

/// Whether an accepted result's windows are possible: spans forward, the board's energy,
/// GPU time and powers finite and non-negative, the energy above idle within the whole.
pub(crate) fn windows_possible(r: &ResultFile) -> Result<(), String> {
    for w in &r.windows {
        let e = &w.energy;
        let non_negative = [e.energy_j, w.gpu_time_s, e.idle_w]
            .into_iter()
            .chain(e.idle_before_w)
            .chain(e.idle_after_w)
            .chain(e.busy_w)
            .all(|v| v.is_finite() && v >= 0.0);
        if !(non_negative && e.end_s > e.start_s && e.dynamic_j.is_finite() && e.dynamic_j <= e.energy_j * (1.0 + 1e-9))
        {
            return Err(format!("accepted an impossible window: {w:?}"));
        }
    }
    Ok(())
}

pub(crate) fn mutate_json(value: &mut serde_json::Value, rng: &mut Rng, depth: usize) {
    use serde_json::Value;
    match value {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.below(keys.len())];
            match rng.below(6) {
                0 => {
                    map.remove(key);
                }
                1 if depth < 4 => {
                    if let Some(v) = map.get_mut(key) {
                        mutate_json(v, rng, depth + 1);
                    }
                }
                _ => {
                    if let Some(v) = map.get_mut(key) {
                        mutate_json(v, rng, depth + 1);
                    }
                }
            }
        }
        Value::Number(_) | Value::Null | Value::Bool(_) => {
            *value = match rng.below(8) {
                0 => serde_json::json!(0.0),
                1 => serde_json::json!(-1.0),
                2 => serde_json::json!(1e308),
                3 => serde_json::json!(null),
                4 => serde_json::json!(-5.1e3),
                5 => serde_json::json!(1e-300),
                6 => serde_json::json!(u64::MAX),
                _ => serde_json::json!("x"),
            }
        }
        Value::String(s) => {
            *s = match rng.below(3) {
                0 => String::new(),
                1 => "energy-result/2".into(),
                _ => s.repeat(2),
            }
        }
        _ => *value = serde_json::json!(null),
    }
}

fn check_results(rng: &mut Rng) -> Result<bool, String> {
    let mut parsed: Vec<Option<ResultFile>> = Vec::new();
    for (i, id) in ["a/energy", "b/energy"].iter().enumerate() {
        let mut v = result_seed(id, 0.01 * (i + 1) as f64);
        for _ in 0..rng.below(3) {
            mutate_json(&mut v, rng, 0);
        }
        let mut text = v.to_string();
        if rng.below(10) == 0 {
            text = mutate_lines(&text, rng);
        }
        parsed.push(ResultFile::parse(&text, Path::new("fuzz.json")).ok());
    }
    for r in parsed.iter().flatten() {
        windows_possible(r)?;
    }
    let Some(Some(base)) = parsed.first().cloned() else { return Ok(false) };
    let Some(Some(cand)) = parsed.get(1).cloned() else { return Ok(false) };
    let mut cand = cand;
    cand.id = base.id.clone();
    let set = |r: ResultFile| ResultSet {
        dir: PathBuf::from("fuzz"),
        results: BTreeMap::from([(r.id.clone(), r)]),
        not_run: Default::default(),
    };
    let Ok(comparison) = compare(&set(base), &set(cand), 5.0) else { return Ok(false) };
    for c in &comparison.changes {
        if !(c.change_pct.is_finite() && c.change_low_pct.is_finite() && c.change_high_pct.is_finite()) {
            return Err(format!("a non-finite change: {c:?}"));
        }
    }
    Ok(true)
}

#[test]
fn trace_and_result_readers_never_panic_nor_accept_the_impossible() {
    let seeds = trace_seeds();
    let mut rng = Rng(seed());
    let (n, mut accepted, mut rejected, mut panics, mut violations) = (cases(), 0u64, 0u64, 0u64, Vec::new());
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..n {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if case % 4 == 3 {
                check_results(&mut rng)
            } else {
                let text = mutate_lines(&seeds[rng.below(seeds.len())], &mut rng);
                check_trace(&text, &mut rng)
            }
        }));
        match outcome {
            Ok(Ok(true)) => accepted += 1,
            Ok(Ok(false)) => rejected += 1,
            Ok(Err(violation)) => violations.push(format!("case {case}: {violation}")),
            Err(_) => panics += 1,
        }
    }
    std::panic::set_hook(previous_hook);
    println!("fuzz_readers: {n} inputs (seed {:#x}): {accepted} accepted, {rejected} rejected with an error, {panics} panics, {} impossible figures accepted", seed(), violations.len());
    assert_eq!(panics, 0, "the readers panicked");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(accepted > n / 20, "the mutations are too destructive to test acceptance: {accepted} of {n}");
}
