//! `cargo energy explain`: the model file, the ncu export, the result.

use std::path::Path;

use energy_harness::ResultFile;
use energy_report::{explain, parse_ncu_launches, render_markdown, render_svg, EnergyModel, KernelChoice};
use energy_results::result::GENERIC_POWER_CEILING_W;

use super::{campaign, cases, mutate_json, mutate_lines, result_seed, Rng};

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
    // `inf`, `-inf` or `NaN` anywhere as a word (`[0.0, inf]`, `| inf |`), not inside one.
    if md.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| word == "inf" || word == "NaN") {
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
