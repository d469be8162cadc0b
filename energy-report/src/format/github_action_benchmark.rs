//! github-action-benchmark's `customSmallerIsBetter` input
//! (<https://github.com/benchmark-action/github-action-benchmark>).

use super::super::compare::ResultSet;
use super::merge::{merge_tracker_lists, render_tracker};
use super::{tracker_name, Report, ReportFormat};
use energy_results::Result;

/// github-action-benchmark's `customSmallerIsBetter` (`--format github-action-benchmark`).
pub struct GithubActionBenchmark;

impl ReportFormat for GithubActionBenchmark {
    fn name(&self) -> &'static str {
        "github-action-benchmark"
    }

    fn is_tracker(&self) -> bool {
        true
    }

    /// One run: its series. Several: one list, each benchmark named with its GPU
    /// (`id @ GPU-xxxxxxxx`). Directories that measured nothing add nothing (a tracker's file
    /// has no place for lines: the caller says them on stderr); a partial run is refused (a
    /// tracker would file it as a complete one).
    fn render(&self, report: &Report<'_>) -> Result<String> {
        render_tracker(report, github_action_benchmark_on, merge_tracker_lists)
    }
}

/// The three measures of [`github_action_benchmark`], in the order written: what ends
/// each entry's name (after ` - `), its unit.
pub const GITHUB_ACTION_BENCHMARK_MEASURES: [(&str, &str); 3] =
    [("energy per launch", "J"), ("dynamic energy per launch", "J"), ("time per launch", "s")];

/// A list of entries with name, unit, value, range (the 95 % half-width, as text) and
/// extra (the GPU and interval). Each name is `<id> - <measure>`, the measure one of
/// [`GITHUB_ACTION_BENCHMARK_MEASURES`] and always last.
pub fn github_action_benchmark(current: &ResultSet) -> serde_json::Value {
    github_action_benchmark_on(current, None)
}

/// [`github_action_benchmark`] with names `<id> @ <gpu> - <measure>` when `gpu` is given
/// (one directory of several, one per GPU). The name is built from its parts, never by
/// editing another name, so an id holding ` - ` stays whole; the measure is always the
/// last ` - ` part and one of three fixed texts.
pub fn github_action_benchmark_on(current: &ResultSet, gpu: Option<&str>) -> serde_json::Value {
    let mut out = Vec::new();
    for r in current.results.values() {
        let board = format!("{} {}", r.device.name, r.device.uuid);
        let name = tracker_name(r, gpu);
        for ((what, unit), e) in
            GITHUB_ACTION_BENCHMARK_MEASURES.into_iter().zip([&r.energy_j, &r.dynamic_j, &r.time_s])
        {
            let half = 0.5 * (e.ci_high - e.ci_low);
            out.push(serde_json::json!({
                "name": format!("{name} - {what}"),
                "unit": unit,
                "value": e.mean,
                "range": format!("± {half:.6e}"),
                "extra": format!(
                    "GPU: {board}\n95 % interval: [{:.6e}, {:.6e}] {unit}\nwindows: {}",
                    e.ci_low,
                    e.ci_high,
                    e.n
                ),
            }));
        }
    }
    serde_json::Value::Array(out)
}
