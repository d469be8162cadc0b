//! The HTML report's overlay, for each benchmark compared with a baseline: the baseline's
//! and the candidate's energy per launch window by window, two colours and a legend
//! ([`super::super::chart`]).

use super::super::chart::{energy_unit, render_chart, Chart, ChartPoint, ChartSeries, PALETTE};
use energy_results::ResultFile;

/// Each window's energy per launch, J (windows without launches left out).
pub fn window_energies(result: &ResultFile) -> Vec<f64> {
    result
        .windows
        .iter()
        .filter(|w| w.launches > 0)
        .map(|w| w.energy.energy_j / w.launches as f64)
        .filter(|e| e.is_finite())
        .collect()
}

/// The overlay of `baseline`'s and `candidate`'s windows (one benchmark), as SVG; `None`
/// when neither recorded its windows.
pub fn overlay(
    baseline: &ResultFile,
    candidate: &ResultFile,
    baseline_name: &str,
    candidate_name: &str,
) -> Option<String> {
    let (b, c) = (window_energies(baseline), window_energies(candidate));
    if b.is_empty() && c.is_empty() {
        return None;
    }
    let (factor, unit) = energy_unit(b.iter().chain(&c).copied());
    let series = |name: &str, values: &[f64], color: &'static str, mean: f64| ChartSeries {
        label: format!("{name} (mean {:.4} {unit})", mean / factor),
        color,
        points: values
            .iter()
            .enumerate()
            .map(|(i, e)| ChartPoint {
                x: i,
                y: e / factor,
                interval: None,
                regression: false,
                tip: format!("{name}, window {}: {:.4} {unit}", i + 1, e / factor),
            })
            .collect(),
    };
    let windows = b.len().max(c.len());
    Some(render_chart(&Chart {
        title: format!("{}: energy per launch in each window", candidate.id),
        x_title: "window".into(),
        y_title: format!("energy per launch ({unit})"),
        x_labels: (1..=windows).map(|i| i.to_string()).collect(),
        series: vec![
            series(baseline_name, &b, PALETTE[0], baseline.energy_j.mean),
            series(candidate_name, &c, PALETTE[1], candidate.energy_j.mean),
        ],
    }))
}
