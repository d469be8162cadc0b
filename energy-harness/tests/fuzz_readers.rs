//! A mutation fuzzer for the readers untrusted files reach: `energy-trace v1` (parsed,
//! then analyzed with every source and model choice) and `energy-result/1` (parsed, then
//! compared); and, in two more campaigns, `cargo energy analyze` (traces with clock steps,
//! wrong sensor models, every printed figure and the plot) and `cargo energy explain`'s
//! inputs (an `energy-model/1` file and an ncu export). Properties: nothing panics, and
//! whatever is accepted is physically possible (finite, non-negative total energies and
//! idle power; compare's changes finite; no window below its idle by more than noise
//! allows; no negative or infinite µJ in an explanation; no non-finite SVG coordinate). A
//! further campaign feeds pairs of results with corrupt energy and dynamic figures to
//! `compare` and `compare_across_boards`; another sends benchmark names through every writer.
//!
//! CI runs a short campaign; `FUZZ_CASES=1000000 cargo test --release -p energy-harness
//! --test fuzz_readers -- --nocapture` runs the long one (docs/RELIABILITY.md has the
//! counts). `FUZZ_SEED` changes the sequence.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use energy_harness::unstable::device::SensorModel;
use energy_harness::unstable::engine::{
    analyze_trace, AnalysisOptions, ModelChoice, ENERGY_RESOLUTION_J, GENERIC_POWER_CEILING_W, IDLE_NOISE_FRACTION,
};
use energy_harness::unstable::explain::{
    explain, parse_ncu_launches, render_markdown, render_svg, EnergyModel, KernelChoice,
};
use energy_harness::unstable::report::{compare, compare_across_boards, power_plot, ResultSet};
use energy_harness::unstable::trace::parse_trace;
use energy_harness::ResultFile;
use energy_harness::SourceKind;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn cases() -> u64 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500)
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_1234_abcd_ef01)
}

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
fn trace_seeds() -> Vec<String> {
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
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h100/trace_short.csv");
    if let Ok(text) = std::fs::read_to_string(recorded) {
        let excerpt: Vec<&str> = text.lines().take(400).collect();
        seeds.push(format!("{}\n0.1,window_start,0\n0.3,window_end,0\n", excerpt.join("\n")));
    }
    seeds
}

fn mutate_lines(text: &str, rng: &mut Rng) -> String {
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

fn result_seed(id: &str, mean: f64) -> serde_json::Value {
    let est =
        |m: f64| serde_json::json!({"mean": m, "ci_low": m * 0.99, "ci_high": m * 1.01, "n": 10, "std_dev": m * 0.01});
    serde_json::json!({
        "schema": "energy-result/1", "id": id,
        "device": {"name": "H100", "uuid": "GPU-1", "driver": "580", "simulated": false},
        "energy_j": est(mean), "dynamic_j": est(mean * 0.5), "time_s": est(1e-3), "power_w": est(mean * 1e3),
        "idle_w": 120.0, "source": "Counter", "sensor_model": {"model": "counter", "period_s": 0.1},
        "launches": 100, "launches_per_window": 10, "warnings": [], "timestamp": "2026-11-23T00:00:00Z",
        "per_op": {"unit": "op", "units_per_launch": 1e6, "energy_j": est(mean * 1e-6), "dynamic_j": est(mean * 5e-7)}
    })
}

fn mutate_json(value: &mut serde_json::Value, rng: &mut Rng, depth: usize) {
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
    let Some(Some(base)) = parsed.first().cloned() else { return Ok(false) };
    let Some(Some(cand)) = parsed.get(1).cloned() else { return Ok(false) };
    let mut cand = cand;
    cand.id = base.id.clone();
    let set = |r: ResultFile| ResultSet { dir: PathBuf::from("fuzz"), results: BTreeMap::from([(r.id.clone(), r)]) };
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

// ---------------------------------------------------------------------------------------
// `cargo energy analyze`: clock steps, sensor models, every figure it prints, the plot.

/// Moves every reading and mark after a random line by a step of the clock (an NTP jump,
/// a suspended machine, a corrupt timestamp).
fn step_clock(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let step = [3600.0, -3600.0, 30.0, 1e6, 1e15, 1e300][rng.below(6)];
    let from = rng.below(lines.len() + 1);
    for line in lines.iter_mut().skip(from) {
        let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
        if let Some(t) = fields.first().and_then(|t| t.parse::<f64>().ok()) {
            // Marks stay put half the time (a step between the sampler's clock and the marker's).
            if fields.get(1).is_some_and(|c| c.starts_with("window_")) && rng.below(2) == 0 {
                continue;
            }
            fields[0] = format!("{}", t + step);
            *line = fields.join(",");
        }
    }
    lines.join("\n")
}

/// What `cargo energy analyze` prints is possible: every figure finite; windows longer than
/// nothing; energy, idle (around, before, after) and busy power not negative; mean power
/// under 5 kW; no window below its lowest idle by more than noise allows; no non-finite
/// coordinate in the plot.
fn analyze_figures_are_possible(seed: &str, rng: &mut Rng) -> Result<bool, String> {
    // A quarter of the seeds as they are (sources and models vary), a quarter with a clock
    // step only, half mutated line by line (a third of those with a step as well).
    let text = match rng.below(4) {
        0 => seed.to_string(),
        1 => step_clock(seed, rng),
        _ => {
            let text = mutate_lines(seed, rng);
            if rng.below(3) == 0 {
                step_clock(&text, rng)
            } else {
                text
            }
        }
    };
    let Ok(trace) = parse_trace(&text, Path::new("fuzz.csv")) else { return Ok(false) };
    let source = [
        None,
        None,
        Some(SourceKind::Counter),
        Some(SourceKind::AverageField),
        Some(SourceKind::SampleBuffer),
        Some(SourceKind::PowerUsage),
    ][rng.below(6)];
    // The counter takes no model to invert: it is given one only now and then (refused).
    let models = if source == Some(SourceKind::Counter) && rng.below(8) != 0 { 3 } else { 6 };
    let model = [
        ModelChoice::Auto,
        ModelChoice::Default,
        ModelChoice::Explicit(SensorModel::Identity),
        ModelChoice::Explicit(SensorModel::Boxcar { width_s: [1.0, 0.01, 20.0][rng.below(3)] }),
        ModelChoice::Explicit(SensorModel::FirstOrder { tau_s: [0.83, 1e-6, 50.0][rng.below(3)] }),
        ModelChoice::Explicit(SensorModel::Gated { gate_s: 0.025, period_s: 0.1 }),
    ][rng.below(models)]
    .clone();
    let options = AnalysisOptions { source, model, ..AnalysisOptions::default() };
    let Ok(analysis) = analyze_trace(&trace, &options) else { return Ok(false) };
    if !(analysis.idle_w.is_finite() && analysis.idle_w >= 0.0 && analysis.delay_s.is_finite()) {
        return Err(format!("accepted with idle {} W, delay {} s", analysis.idle_w, analysis.delay_s));
    }
    if let Some(fit) = &analysis.tick_fit {
        if !(fit.period_s.is_finite() && fit.period_s > 0.0 && fit.residual_rms_s.is_finite()) {
            return Err(format!("accepted a tick fit of {fit:?}"));
        }
    }
    for w in &analysis.windows {
        let d = w.end_s - w.start_s;
        let idles = [Some(w.idle_w), w.idle_before_w, w.idle_after_w];
        let all =
            [Some(w.start_s), Some(w.end_s), Some(w.energy_j), Some(w.dynamic_j), Some(w.edge_energy_j), w.busy_w];
        let finite = all.iter().chain(&idles).flatten().all(|v| v.is_finite()) && d.is_finite() && d > 0.0;
        let signs = w.energy_j >= 0.0 && idles.iter().chain(&[w.busy_w]).flatten().all(|v| *v >= 0.0);
        let lowest = idles.iter().flatten().fold(f64::INFINITY, |m, v| m.min(*v));
        let noise = w.edge_energy_j.abs() + ENERGY_RESOLUTION_J;
        let above_floor = w.energy_j >= (1.0 - IDLE_NOISE_FRACTION) * lowest * d - noise;
        if !(finite && signs && above_floor && w.energy_j / d <= GENERIC_POWER_CEILING_W) {
            return Err(format!("accepted window {w:?}"));
        }
    }
    if rng.below(4) == 0 {
        let svg = power_plot(&trace, &options, "fuzz");
        if let Some(bad) = svg.split('"').find(|v| v.contains("inf") || v.contains("NaN")) {
            return Err(format!("the plot has a coordinate `{bad}`"));
        }
    }
    Ok(true)
}

/// Runs `check` on `n` cases, counting what it accepts, rejects, panics on and lets through.
fn campaign(name: &str, n: u64, mut check: impl FnMut(&mut Rng) -> Result<bool, String>) {
    let mut rng = Rng(seed());
    let (mut accepted, mut rejected, mut panics, mut violations) = (0u64, 0u64, 0u64, Vec::new());
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..n {
        match catch_unwind(AssertUnwindSafe(|| check(&mut rng))) {
            Ok(Ok(true)) => accepted += 1,
            Ok(Ok(false)) => rejected += 1,
            Ok(Err(violation)) => violations.push(format!("case {case}: {violation}")),
            Err(_) => panics += 1,
        }
    }
    std::panic::set_hook(previous_hook);
    println!("{name}: {n} inputs (seed {:#x}): {accepted} accepted, {rejected} rejected with an error, {panics} panics, {} impossible figures accepted", seed(), violations.len());
    // Printed as well as asserted: the panic hook is process-wide, and another campaign
    // running beside this one may have silenced it.
    for violation in violations.iter().take(10) {
        println!("{name}: {violation}");
    }
    assert_eq!(panics, 0, "{name} panicked");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(accepted > n / 20, "the mutations are too destructive to test acceptance: {accepted} of {n}");
}

#[test]
fn analyze_never_prints_an_impossible_figure() {
    let seeds = trace_seeds();
    campaign("fuzz_analyze", cases(), |rng| analyze_figures_are_possible(&seeds[rng.below(seeds.len())], rng));
}

// ---------------------------------------------------------------------------------------
// `cargo energy explain`: the model file, the ncu export, the result.

fn model_seed() -> serde_json::Value {
    serde_json::json!({
        "format": "energy-model/1", "gpu": "H100", "fitted_on": ["GPU-1"], "sm_clock_mhz": 1980.0,
        "source": "fuzz seed", "active_idle_w": 128.0, "notes": ["a note"],
        "classes": [
            {"name": "DRAM reads", "kind": "data movement", "unit": "32 B sector",
             "ncu_metrics": ["dram__bytes_read.sum"], "scale": 0.03125, "j_per_unit": 3.0e-9, "ci_j": [2.0e-9, 4.0e-9]},
            {"name": "stores", "kind": "data movement", "unit": "32 B sector",
             "ncu_metrics": ["lts__t_sectors_op_write.sum"], "subtract_metrics": ["lts__t_sectors_op_atom.sum"],
             "scale": 1.0, "j_per_unit": 2.0e-9, "ci_j": [-1.0e-9, 5.0e-9]},
            {"name": "kernel time", "kind": "time", "unit": "second",
             "ncu_metrics": ["gpu__time_duration.sum"], "scale": 1e-9, "j_per_unit": 7.0, "ci_j": null}
        ]
    })
}

/// Changes one figure of a model: a class's cost, scale, interval, metrics, kind or name,
/// or the clock, idle power, GPU or class list (most are impossible values).
fn mutate_model(model: &mut serde_json::Value, rng: &mut Rng) {
    use serde_json::json;
    const NUMBERS: [f64; 11] = [-1.0, 0.0, -3e-9, 1e300, 1e308, 1e-300, 5e3, f64::MAX, 1e6, 3e-9, 2.5e-9];
    let number = |rng: &mut Rng| json!(NUMBERS[rng.below(NUMBERS.len())]);
    let classes = model["classes"].as_array().map_or(0, Vec::len);
    let c = rng.below(classes.max(1));
    let choice = rng.below(12);
    if choice <= 6 && classes > 0 {
        let class = &mut model["classes"][c];
        match choice {
            0 => class["j_per_unit"] = number(rng),
            1 => class["scale"] = number(rng),
            2 => {
                let (lo, hi) = (number(rng), number(rng));
                class["ci_j"] = [json!([lo, hi]), json!(null), json!([hi])][rng.below(3)].clone();
            }
            3 => {
                if let Some(bound) = class["ci_j"].get_mut(rng.below(2)) {
                    *bound = number(rng);
                }
            }
            4 => {
                let metric =
                    ["dram__bytes_read.sum", "gpu__time_duration.sum", "lts__t_sectors_op_write.sum", "missing.sum"]
                        [rng.below(4)];
                let field = ["ncu_metrics", "subtract_metrics"][rng.below(2)];
                class[field] = [json!([]), json!([metric]), json!([metric, metric])][rng.below(3)].clone();
            }
            5 => class["kind"] = json!(["compute", "time", "memory", ""][rng.below(4)]),
            _ => class["name"] = json!(["a<b>&c", "", "DRAM reads"][rng.below(3)]),
        }
        return;
    }
    match choice {
        7 => model["sm_clock_mhz"] = number(rng),
        8 => model["active_idle_w"] = number(rng),
        9 => model["classes"] = json!([]),
        10 => model["gpu"] = json!("H200"),
        _ => mutate_json(model, rng, 0),
    }
}

/// Two exports of three launches (two of saxpy), the raw page and the details page.
fn ncu_seeds() -> Vec<String> {
    let metrics =
        ["dram__bytes_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum", "gpu__time_duration.sum"];
    let units = ["Mbyte", "sector", "sector", "nsecond"];
    let values = [
        ["134.23", "2,097,152", "1,024", "76,320"],
        ["134.22", "2,097,152", "0", "76,288"],
        ["1.5", "64", "0", "3,200"],
    ];
    let names = ["saxpy(float, float*)", "saxpy(float, float*)", "fill"];
    let quote = |f: &[&str]| f.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(",");
    let mut raw = format!(
        "==PROF== Connected to process 1\n{}\n",
        quote(&[&["ID", "Kernel Name", "Block Size", "Grid Size"][..], &metrics[..]].concat())
    );
    raw.push_str(&format!("{}\n", quote(&[&["", "", "", ""][..], &units[..]].concat())));
    let mut details =
        quote(&["ID", "Kernel Name", "Block Size", "Grid Size", "Metric Name", "Metric Unit", "Metric Value"]) + "\n";
    for (id, (name, row)) in names.iter().zip(&values).enumerate() {
        let id = id.to_string();
        raw.push_str(&format!(
            "{}\n",
            quote(&[&[id.as_str(), name, "(256, 1, 1)", "(65536, 1, 1)"][..], &row[..]].concat())
        ));
        for ((metric, unit), value) in metrics.iter().zip(&units).zip(row) {
            details.push_str(&format!(
                "{}\n",
                quote(&[id.as_str(), name, "(256, 1, 1)", "(65536, 1, 1)", metric, unit, value])
            ));
        }
    }
    vec![raw, details]
}

/// What `cargo energy explain` prints is possible: units, terms and their intervals finite
/// and not negative; the prediction at most 5 kW over the launch; static energy not
/// negative; every figure finite; the SVG with finite coordinates and the id escaped.
fn explain_figures_are_possible(
    model_seed: &serde_json::Value,
    ncu_seeds: &[String],
    rng: &mut Rng,
) -> Result<bool, String> {
    let mut model = model_seed.clone();
    for _ in 0..rng.below(3) {
        mutate_model(&mut model, rng);
    }
    let mut model_text = model.to_string();
    if rng.below(10) == 0 {
        model_text = mutate_lines(&model_text, rng);
    }
    let export = &ncu_seeds[rng.below(ncu_seeds.len())];
    let export = if rng.below(4) == 0 { export.clone() } else { mutate_lines(export, rng) };
    let id = ["saxpy/energy", "saxpy<f32> & co/energy"][rng.below(2)];
    let mut result = result_seed(id, 0.05);
    if rng.below(4) == 0 {
        mutate_json(&mut result, rng, 0);
    }
    let Ok(model) = EnergyModel::parse(&model_text, Path::new("model.json")) else { return Ok(false) };
    let Ok(result) = ResultFile::parse(&result.to_string(), Path::new("result.json")) else { return Ok(false) };
    let metrics = model.metric_names();
    let choice = [KernelChoice::First, KernelChoice::Named("saxpy"), KernelChoice::Named("fill"), KernelChoice::All]
        [rng.below(4)];
    let filter = if rng.below(2) == 0 { Some(metrics.as_slice()) } else { None };
    let Ok(launches) = parse_ncu_launches(&export, choice, filter) else { return Ok(false) };
    let launches: Vec<_> = launches.iter().collect();
    let Ok(e) = explain(&model, &result, &launches) else { return Ok(false) };
    let finite_non_negative = |v: f64| v.is_finite() && v >= 0.0;
    for t in &e.terms {
        let ci_ok = t.ci_j.is_none_or(|(lo, hi)| finite_non_negative(lo) && hi.is_finite() && lo <= hi);
        if !(finite_non_negative(t.units) && finite_non_negative(t.j) && ci_ok) {
            return Err(format!("accepted term {t:?}"));
        }
    }
    let (m, lo, hi) = e.measured_dynamic_j;
    if !(finite_non_negative(e.predicted_dynamic_j)
        && e.predicted_dynamic_j <= GENERIC_POWER_CEILING_W * result.time_s.mean
        && finite_non_negative(e.static_j)
        && e.measured_total_j.is_finite()
        && e.measured_total_j > 0.0
        && [m, lo, hi, e.unexplained_j].iter().all(|v| v.is_finite()))
    {
        return Err(format!("accepted explanation {e:?}"));
    }
    let md = render_markdown(&e, &model);
    if md.contains("inf |") || md.contains("NaN") {
        return Err(format!("markdown with a non-finite figure:\n{md}"));
    }
    let svg = render_svg(&e);
    if let Some(bad) = svg.split('"').find(|v| v.contains("inf") || v.contains("NaN")) {
        return Err(format!("the SVG has a coordinate `{bad}`"));
    }
    let entities = svg.matches("&amp;").count() + svg.matches("&lt;").count() + svg.matches("&gt;").count();
    if svg.matches('&').count() != entities || svg.contains("<f32>") {
        return Err(format!("the SVG is not escaped:\n{svg}"));
    }
    Ok(true)
}

#[test]
fn explain_inputs_never_print_an_impossible_figure() {
    let (model, exports) = (model_seed(), ncu_seeds());
    campaign("fuzz_explain", cases(), |rng| explain_figures_are_possible(&model, &exports, rng));
}

// ---------------------------------------------------------------------------------------
// Benchmark names: every writer escapes (docs/RELIABILITY.md, "Names").
//
// Random names (control and invisible characters, `|`, backticks, backslashes, markup,
// entities, path segments, ` - `, non-Latin scripts, up to ~700 characters) go through
// every output: the markdown report (a GFM table with 9 cells per row, the id reading back
// from its cell), the HTML report and both SVGs (well-formed XML, the id reading back from
// its element), the terminal summary (no control character), explain's markdown and SVG,
// the tracker formats (names built, never spliced) and file stems (short, safe, inside the
// run directory). `FUZZ_CASES` and `FUZZ_SEED` as above; the by-hand campaign:
// `FUZZ_CASES=1000000 cargo test --release -p energy-harness --test fuzz_readers names -- --nocapture`.

mod names {
    use std::collections::{BTreeMap, HashMap};
    use std::path::{Path, PathBuf};

    use energy_harness::unstable::engine::AnalysisOptions;
    use energy_harness::unstable::explain::{render_markdown, render_svg, EnergyModel, Explanation};
    use energy_harness::unstable::report::escape::visible;
    use energy_harness::unstable::report::{
        file_stem, github_action_benchmark_on, power_plot, render, render_summary, Format, ResultSet,
        GITHUB_ACTION_BENCHMARK_MEASURES, MAX_STEM_BYTES,
    };
    use energy_harness::unstable::trace::Trace;
    use energy_harness::ResultFile;

    use super::{result_seed, Rng};

    const PIECES: &[&str] = &[
        "saxpy",
        "a",
        "/",
        "..",
        ".",
        "../",
        " ",
        "|",
        "`",
        "``",
        "\\",
        "\\|",
        "\\\\",
        "*",
        "_",
        "[",
        "](",
        ")",
        "<",
        ">",
        "&",
        "&amp;",
        "&#0;",
        "&#x1b;",
        "\"",
        "'",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "\0",
        "\u{1b}[31m",
        "\u{7f}",
        "\u{85}",
        "\u{2028}",
        "\u{2029}",
        "\u{202e}",
        "\u{200b}",
        "\u{feff}",
        "\u{fffe}",
        "\u{ffff}",
        "é",
        "e\u{301}",
        "能量",
        "⚡",
        "🦀",
        " - ",
        " @ ",
        "~~",
        "$",
        "#1",
        "@me",
        "!",
        "<!--",
        "-->",
        "]]>",
        "<script>",
        "</svg>",
        "</code>",
        "http://x.y",
        "---",
        "|---|",
        "{}",
        "%",
        "+",
        "-",
        ":",
        "=",
        ";",
    ];

    fn random_name(rng: &mut Rng) -> String {
        let mut name = String::new();
        for _ in 0..1 + rng.below(8) {
            match rng.below(4) {
                0 => {
                    // Any scalar value, weighted towards the small ones.
                    let limit = [0x80, 0x800, 0x1_0000, 0x11_0000][rng.below(4)];
                    if let Some(c) = char::from_u32(rng.below(limit) as u32) {
                        name.push(c);
                    }
                }
                _ => name.push_str(PIECES[rng.below(PIECES.len())]),
            }
        }
        if rng.below(20) == 0 {
            let piece = PIECES[rng.below(PIECES.len())];
            name.push_str(&piece.repeat(1 + rng.below(700 / piece.chars().count().max(1))));
        }
        match rng.below(3) {
            0 => name,
            1 => format!("{name}/energy"),
            _ => format!("{name}/energy (simulated)"),
        }
    }

    /// A GFM table row's cells as cmark-gfm splits them: `\` and the ASCII punctuation after
    /// it are one unit, an unescaped `|` ends a cell, `\|` becomes `|`, cells are trimmed.
    fn gfm_cells(line: &str) -> Vec<String> {
        let body = line.trim().strip_prefix('|').unwrap_or(line.trim());
        let (mut cells, mut cell, mut chars) = (Vec::new(), String::new(), body.chars().peekable());
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                    let next = chars.next().unwrap();
                    if next != '|' {
                        cell.push('\\');
                    }
                    cell.push(next);
                }
                '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
                c => cell.push(c),
            }
        }
        if !cell.trim().is_empty() {
            cells.push(cell.trim().to_string());
        }
        cells
    }

    /// What a cell (or inline markdown) shows: a code span's content (CommonMark's rules:
    /// the fence is the opening run, one space stripped from each end when both are
    /// spaces), or escaped text (every character that could start markup escaped). `None`
    /// when it is neither: markup would be interpreted.
    fn shown(markdown: &str) -> Option<String> {
        if markdown.starts_with('`') {
            let n = markdown.chars().take_while(|&c| c == '`').count();
            let fence = "`".repeat(n);
            let inner = markdown.strip_prefix(&fence)?.strip_suffix(&fence)?;
            // No run of exactly n backticks inside (it would close the span early).
            let mut run = 0;
            for c in inner.chars().chain(std::iter::once(' ')) {
                if c == '`' {
                    run += 1;
                } else {
                    if run == n {
                        return None;
                    }
                    run = 0;
                }
            }
            let strip = inner.len() >= 2 && inner.starts_with(' ') && inner.ends_with(' ') && inner.trim() != "";
            return Some(if strip { inner[1..inner.len() - 1].to_string() } else { inner.to_string() });
        }
        let mut out = String::new();
        let mut chars = markdown.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => out.push(chars.next().unwrap()),
                // `|` is left bare by the table's own unescaping.
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '$' | '!' | '#' | '@' => return None,
                c => out.push(c),
            }
        }
        Some(out)
    }

    /// A tiny XML well-formedness check: one root element (after an optional `<!DOCTYPE …>`),
    /// tags balanced, attributes quoted, every `&` a known reference, every character one
    /// XML 1.0 allows, no control character but a newline. `void` names the HTML elements
    /// that have no end tag. Returns the decoded text of each element named `want`.
    pub fn check_xml(doc: &str, void: &[&str], want: &str) -> Result<Vec<String>, String> {
        if let Some(c) = doc.chars().find(|&c| (c.is_control() && c != '\n') || c == '\u{fffe}' || c == '\u{ffff}') {
            return Err(format!("character U+{:04X}", u32::from(c)));
        }
        let mut rest = doc.strip_prefix("<!DOCTYPE html>").unwrap_or(doc);
        let (mut stack, mut roots, mut texts, mut current): (Vec<String>, usize, Vec<String>, Option<String>) =
            (Vec::new(), 0, Vec::new(), None);
        let decode = |text: &str| -> Result<String, String> {
            let mut out = String::new();
            let mut parts = text.split('&');
            out.push_str(parts.next().unwrap_or(""));
            for part in parts {
                let (entity, after) = part.split_once(';').ok_or_else(|| format!("a bare & before {part:.20}"))?;
                let c = match entity {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    e if e.starts_with("#x") => {
                        char::from_u32(u32::from_str_radix(&e[2..], 16).map_err(|_| e)?).ok_or_else(|| e.to_string())?
                    }
                    e if e.starts_with('#') => {
                        char::from_u32(e[1..].parse().map_err(|_| e)?).ok_or_else(|| e.to_string())?
                    }
                    e => return Err(format!("unknown entity &{e};")),
                };
                if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                    return Err(format!("a reference to U+{:04X}", u32::from(c)));
                }
                out.push(c);
                out.push_str(after);
            }
            Ok(out)
        };
        while !rest.is_empty() {
            let (text, after) = rest.split_once('<').unwrap_or((rest, ""));
            let text = decode(text)?;
            if stack.is_empty() && !text.trim().is_empty() {
                return Err(format!("text outside the root: {text:.40}"));
            }
            if let Some(t) = current.as_mut() {
                t.push_str(&text);
            }
            if after.is_empty() && !rest.contains('<') {
                break;
            }
            let (tag, after) = after.split_once('>').ok_or("a tag that never closes")?;
            rest = after;
            if let Some(name) = tag.strip_prefix('/') {
                match stack.pop() {
                    Some(open) if open == name => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
                if name == want {
                    texts.extend(current.take());
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let tag = tag.strip_suffix('/').unwrap_or(tag);
            let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
            let name = &tag[..name_end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c)) {
                return Err(format!("a bad element name <{name:.40}"));
            }
            // Attributes: name="value" (or '…'), values decoded.
            let mut attrs = tag[name_end..].trim_start();
            while !attrs.is_empty() {
                let (attr, value) =
                    attrs.split_once('=').ok_or_else(|| format!("attribute without a value in <{name}"))?;
                if !attr.trim().chars().all(|c| c.is_ascii_alphanumeric() || "-_:".contains(c)) {
                    return Err(format!("a bad attribute name {attr:.40}"));
                }
                let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'').ok_or("an unquoted attribute")?;
                let (v, after) = value[1..].split_once(quote).ok_or("an attribute that never ends")?;
                if v.contains('<') {
                    return Err("< in an attribute".into());
                }
                decode(v)?;
                attrs = after.trim_start();
            }
            if stack.is_empty() {
                roots += 1;
            }
            if self_closing || void.contains(&name) {
                continue;
            }
            stack.push(name.to_string());
            if name == want {
                current = Some(String::new());
            }
        }
        if !stack.is_empty() {
            return Err(format!("unclosed elements {stack:?}"));
        }
        if roots != 1 {
            return Err(format!("{roots} root elements"));
        }
        Ok(texts)
    }

    fn result(id: &str) -> ResultFile {
        let mut v = result_seed(id, 0.01);
        v["device"]["name"] = serde_json::json!(format!("H100 {}", id.chars().take(12).collect::<String>()));
        ResultFile::parse(&v.to_string(), Path::new("fuzz.json")).expect("a valid seed")
    }

    /// One name through every writer; `Err` names the broken property.
    pub fn check_name(id: &str, other: &str, stems: &mut HashMap<String, String>) -> Result<(), String> {
        let shown_id = visible(id).into_owned();
        // File stems: short, plain, never hidden, never a path, distinct when hashed.
        for name in [id, other] {
            let stem = file_stem(name);
            let plain = stem.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            if stem.is_empty() || stem.len() > MAX_STEM_BYTES || !plain || stem.starts_with(['.', '-']) {
                return Err(format!("stem {stem:?}"));
            }
            let run = Path::new("run");
            if run.join(format!("{stem}.trace.csv")).parent() != Some(run) {
                return Err(format!("stem {stem:?} leaves the run directory"));
            }
            if stems.len() < 300_000 {
                if let Some(before) = stems.insert(stem.clone(), name.to_string()) {
                    if before != name && stem.len() > 17 && stem.as_bytes()[stem.len() - 17] == b'-' {
                        return Err(format!("{before:?} and {name:?} share the hashed stem {stem}"));
                    }
                }
            }
        }
        let (a, b) = (result(id), result(other));
        if a.id == b.id {
            return Ok(());
        }
        let set = ResultSet {
            dir: PathBuf::from(format!("target/energy/{other}")),
            results: BTreeMap::from([(a.id.clone(), a.clone()), (b.id.clone(), b.clone())]),
        };
        // Markdown: the title one line, each row 9 cells, the id read back from its cell.
        let md = render(&set, Some(&set), 5.0, Format::Markdown).map_err(|e| e.to_string())?;
        let lines: Vec<&str> = md.lines().collect();
        if !lines[0].starts_with("### Energy report") || !lines[1].is_empty() {
            return Err(format!("the title is not one line: {md}"));
        }
        let rows: Vec<&str> = lines[2..].iter().copied().take_while(|l| l.starts_with('|')).collect();
        if rows.len() != 4 {
            return Err(format!("{} table lines, 4 expected:\n{md}", rows.len()));
        }
        for row in &rows {
            if gfm_cells(row).len() != 9 {
                return Err(format!("{} cells in {row:?}", gfm_cells(row).len()));
            }
        }
        let first_cells: Vec<String> = rows[2..].iter().map(|r| gfm_cells(r)[0].clone()).collect();
        let read: Vec<Option<String>> = first_cells.iter().map(|c| shown(c)).collect();
        let expected = visible(&a.id).into_owned();
        let matches = |r: &Option<String>| r.as_deref().is_some_and(|s| s == expected || s == expected.trim());
        if !read.iter().any(matches) {
            return Err(format!("the id {expected:?} does not read back from {first_cells:?}"));
        }
        if md.lines().count() != 2 + 4 + 2 {
            return Err(format!("a note or the table spans several lines:\n{md}"));
        }
        // HTML: well-formed, the id read back from its <code>.
        let html = render(&set, None, 5.0, Format::Html).map_err(|e| e.to_string())?;
        let codes = check_xml(&html, &["meta"], "code").map_err(|e| format!("HTML: {e}"))?;
        if !codes.contains(&shown_id) {
            return Err(format!("HTML: {shown_id:?} is not among {codes:?}"));
        }
        // The power plot's SVG: well-formed, the title read back.
        let svg = power_plot(&Trace::new(), &AnalysisOptions::default(), id);
        let texts = check_xml(&svg, &[], "text").map_err(|e| format!("SVG: {e}"))?;
        if texts.first() != Some(&shown_id) {
            return Err(format!("SVG: the title reads {:?}, not {shown_id:?}", texts.first()));
        }
        // The terminal summary: no control character but the newlines ending its lines.
        let summary = render_summary(&a, None);
        if summary.chars().any(|c| c.is_control() && c != '\n') || !summary.starts_with(&format!("{shown_id} on ")) {
            return Err(format!("summary {summary:?}"));
        }
        // Trackers: each name is the id, its GPU, then the measure.
        let gab = github_action_benchmark_on(&set, Some("GPU-aaaaaaaa"));
        for entry in gab.as_array().unwrap() {
            let name = entry["name"].as_str().unwrap();
            let ok = GITHUB_ACTION_BENCHMARK_MEASURES.iter().any(|(what, _)| {
                name.strip_suffix(&format!(" - {what}"))
                    .and_then(|n| n.strip_suffix(" @ GPU-aaaaaaaa"))
                    .is_some_and(|n| n == a.id || n == b.id)
            });
            if !ok {
                return Err(format!("tracker name {name:?}"));
            }
        }
        // explain: markdown table cells and a well-formed SVG.
        let model: EnergyModel = serde_json::from_value(serde_json::json!({
            "format": "energy-model/1", "gpu": id, "fitted_on": [other], "sm_clock_mhz": 1980.0, "source": id,
            "classes": [], "notes": [other]
        }))
        .map_err(|e| e.to_string())?;
        let e: Explanation = serde_json::from_value(serde_json::json!({
            "id": id, "gpu": other, "uuid": "GPU-1", "kernel": other, "launches": 1,
            "terms": [{"name": id, "kind": other, "units": 1.0, "j": 1e-6, "ci_j": null},
                      {"name": other, "kind": "compute", "units": 1.0, "j": 2e-6, "ci_j": [1e-6, 3e-6]}],
            "predicted_dynamic_j": 3e-6, "measured_dynamic_j": [4e-6, 3e-6, 5e-6], "measured_total_j": 1e-5,
            "static_j": 6e-6, "unexplained_j": 1e-6
        }))
        .map_err(|e| e.to_string())?;
        let md = render_markdown(&e, &model);
        let lines: Vec<&str> = md.lines().collect();
        if !lines[0].starts_with("# Where ") || !lines[1].is_empty() || !lines[3].is_empty() {
            return Err(format!("explain: the heading or the paragraph spans lines:\n{md}"));
        }
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        if rows.len() != 2 + 2 + 5 || rows.iter().any(|r| gfm_cells(r).len() != 5) {
            return Err(format!("explain: a broken table:\n{md}"));
        }
        if shown(&gfm_cells(rows[2])[0]).is_none_or(|s| s != shown_id.trim()) {
            return Err(format!("explain: {shown_id:?} does not read back from {:?}", gfm_cells(rows[2])[0]));
        }
        let svg = render_svg(&e);
        let texts = check_xml(&svg, &[], "text").map_err(|e| format!("explain SVG: {e}"))?;
        if !texts.first().is_some_and(|t| t.starts_with(&format!("{shown_id}: "))) {
            return Err(format!("explain SVG: the title reads {:?}", texts.first()));
        }
        Ok(())
    }

    #[test]
    fn the_checker_finds_what_the_old_writers_did() {
        // The checks can fail: raw control characters and bare markup are caught.
        assert!(check_xml("<svg><text>a\u{1b}b</text></svg>", &[], "text").is_err());
        assert!(check_xml("<svg><text>a<b</text></svg>", &[], "text").is_err());
        assert!(check_xml("<svg><text>a & b</text></svg>", &[], "text").is_err());
        assert_eq!(check_xml("<svg><text>a &lt;b&gt;</text></svg>", &[], "text").unwrap(), ["a <b>"]);
        assert_eq!(gfm_cells("| `a|b` | c |").len(), 3, "an unescaped pipe splits even a code span");
        assert_eq!(gfm_cells("| `a\\|b` | c |"), ["`a|b`", "c"]);
        assert_eq!(gfm_cells("| a\\\\|b | c |").len(), 3, "cmark-gfm: an escaped backslash, then a cell boundary");
        assert_eq!(shown("*x*"), None);
        assert_eq!(shown("`` a`b ``").as_deref(), Some("a`b"));
    }

    #[test]
    fn names_through_every_writer_stay_well_formed() {
        let mut rng = Rng(super::seed() ^ 0x6e61_6d65);
        let n = super::cases();
        let (mut failures, mut panics, mut stems) = (Vec::new(), 0u64, HashMap::new());
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        for case in 0..n {
            let (id, other) = (random_name(&mut rng), random_name(&mut rng));
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_name(&id, &other, &mut stems))) {
                Ok(Ok(())) => {}
                Ok(Err(why)) => failures.push(format!("case {case} ({id:?}, {other:?}): {why}")),
                Err(_) => {
                    panics += 1;
                    failures.push(format!("case {case} ({id:?}, {other:?}): panicked"));
                }
            }
        }
        std::panic::set_hook(previous_hook);
        println!(
            "fuzz names: {n} name pairs (seed {:#x}): {} broke an output, {panics} panics",
            super::seed(),
            failures.len()
        );
        assert!(failures.is_empty(), "{:#?}", &failures[..failures.len().min(5)]);
    }
}
/// Figures a corrupt or hand-edited result may hold: below and at zero, tiny, huge, near
/// the largest float.
const NASTY_FIGURES: [f64; 14] =
    [0.0, -1e-3, -0.5, 5e-324, 1e-300, 1e-10, 0.5, 500.0, 1e300, 1e308, -1e308, f64::MAX, -f64::MAX, 1.0000001];

/// Sets one number of an estimate of `energy_j` or `dynamic_j` (most often the dynamic
/// one, which `--across-boards` compares) to a nasty figure, or an interval to ±1e308.
fn inject_figure(v: &mut serde_json::Value, rng: &mut Rng) {
    let field = ["dynamic_j", "dynamic_j", "energy_j"][rng.below(3)];
    let figure = NASTY_FIGURES[rng.below(NASTY_FIGURES.len())];
    let e = &mut v[field];
    match rng.below(6) {
        0 => {
            e["mean"] = serde_json::json!(figure);
            e["ci_low"] = serde_json::json!(figure * 0.99);
            e["ci_high"] = serde_json::json!(figure * 1.01);
        }
        1 => e["mean"] = serde_json::json!(figure),
        2 => e["ci_low"] = serde_json::json!(figure),
        3 => e["ci_high"] = serde_json::json!(figure),
        4 => {
            e["ci_low"] = serde_json::json!(-1e308);
            e["ci_high"] = serde_json::json!(1e308);
        }
        _ => e["std_dev"] = serde_json::json!(figure.abs()),
    }
}

/// One pair of results of one benchmark: across boards (two UUIDs of one model) and on
/// one board, both comparisons run. Whatever is accepted must be possible: both compared
/// figures positive and finite, a change that is a finite percentage of at least −100 %
/// with an interval that holds it.
fn check_pair(rng: &mut Rng) -> Result<bool, String> {
    let mut parsed = Vec::new();
    for (i, uuid) in ["GPU-1", "GPU-2"].iter().enumerate() {
        let mut v = result_seed("k/energy", 0.01 * (1.0 + 0.2 * i as f64));
        v["device"]["uuid"] = serde_json::json!(uuid);
        for _ in 0..rng.below(3) {
            inject_figure(&mut v, rng);
        }
        if rng.below(4) == 0 {
            mutate_json(&mut v, rng, 0);
        }
        match ResultFile::parse(&v.to_string(), Path::new("fuzz.json")) {
            Ok(r) => parsed.push(r),
            Err(_) => return Ok(false),
        }
    }
    let set =
        |r: &ResultFile| ResultSet { dir: PathBuf::from("fuzz"), results: BTreeMap::from([(r.id.clone(), r.clone())]) };
    let (base, cand) = (&parsed[0], &parsed[1]);
    let mut same_board = cand.clone();
    same_board.device.uuid = base.device.uuid.clone();
    let mut accepted = false;
    for (mode, outcome) in [
        ("across boards", compare_across_boards(&set(base), &set(cand), 5.0)),
        ("one board", compare(&set(base), &set(&same_board), 5.0)),
    ] {
        let Ok(comparison) = outcome else { continue };
        accepted = true;
        for c in &comparison.changes {
            let figures_ok = [c.baseline_j.mean, c.candidate_j.mean].iter().all(|m| m.is_finite() && *m > 0.0);
            let change_ok = [c.change_pct, c.change_low_pct, c.change_high_pct].iter().all(|p| p.is_finite())
                && c.change_low_pct >= -100.0
                && c.change_low_pct <= c.change_pct
                && c.change_pct <= c.change_high_pct;
            if !(figures_ok && change_ok) {
                return Err(format!("{mode}: accepted an impossible change: {c:?}"));
            }
        }
    }
    Ok(accepted)
}

#[test]
fn both_comparison_modes_never_panic_nor_accept_the_impossible() {
    let mut rng = Rng(seed() ^ 0x00b0_a7d5);
    let (n, mut accepted, mut rejected, mut panics, mut violations) = (cases(), 0u64, 0u64, 0u64, Vec::new());
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..n {
        match catch_unwind(AssertUnwindSafe(|| check_pair(&mut rng))) {
            Ok(Ok(true)) => accepted += 1,
            Ok(Ok(false)) => rejected += 1,
            Ok(Err(violation)) => violations.push(format!("case {case}: {violation}")),
            Err(_) => panics += 1,
        }
    }
    std::panic::set_hook(previous_hook);
    println!("fuzz_readers (compare, --across-boards): {n} inputs (seed {:#x}): {accepted} accepted, {rejected} rejected with an error, {panics} panics, {} impossible figures accepted", seed(), violations.len());
    assert_eq!(panics, 0, "compare panicked");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(accepted > n / 20, "the mutations are too destructive to test acceptance: {accepted} of {n}");
    assert!(rejected > n / 20, "the mutations are too gentle to test refusal: {rejected} of {n}");
}
