//! `cargo energy analyze`: clock steps, sensor models, every figure it prints, the plot.

use std::path::Path;

use energy_harness::unstable::engine::{
    analyze_trace, AnalysisOptions, ModelChoice, ENERGY_RESOLUTION_J, IDLE_NOISE_FRACTION,
};
use energy_harness::unstable::report::power_plot;
use energy_harness::SourceKind;
use energy_results::result::GENERIC_POWER_CEILING_W;
use energy_results::source::model::SensorModel;
use energy_results::trace::format::parse_trace;

use super::{campaign, cases, mutate_lines, trace_seeds, Rng};

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

#[test]
fn analyze_never_prints_an_impossible_figure() {
    let seeds = trace_seeds();
    campaign("fuzz_analyze", cases(), |rng| analyze_figures_are_possible(&seeds[rng.below(seeds.len())], rng));
}
