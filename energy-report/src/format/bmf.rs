//! Bencher Metric Format (<https://bencher.dev/docs/reference/bencher-metric-format/>).

use super::super::compare::ResultSet;
use super::merge::{merge_tracker_objects, render_tracker};
use super::{tracker_name, Report, ReportFormat};
use energy_results::{Estimate, Result};

/// Bencher Metric Format (`--format bmf`).
pub struct Bmf;

impl ReportFormat for Bmf {
    fn name(&self) -> &'static str {
        "bmf"
    }

    fn is_tracker(&self) -> bool {
        true
    }

    /// One run: its series. Several: one object, each benchmark named with its GPU
    /// (`id @ GPU-xxxxxxxx`). Directories that measured nothing add nothing (a tracker's file
    /// has no place for lines: the caller says them on stderr); a partial run is refused (a
    /// tracker would file it as a complete one).
    fn render(&self, report: &Report<'_>) -> Result<String> {
        render_tracker(report, bmf_on, merge_tracker_objects)
    }
}

/// One object per benchmark, one per measure, each value with its 95 % interval's ends.
pub fn bmf(current: &ResultSet) -> serde_json::Value {
    bmf_on(current, None)
}

/// [`bmf`] with each benchmark named `<id> @ <gpu>` when `gpu` is given (one directory of
/// several, one per GPU).
pub fn bmf_on(current: &ResultSet, gpu: Option<&str>) -> serde_json::Value {
    let measure = |e: &Estimate, scale: f64| serde_json::json!({ "value": e.mean * scale, "lower_value": e.ci_low * scale, "upper_value": e.ci_high * scale });
    let mut out = serde_json::Map::new();
    for r in current.results.values() {
        out.insert(
            tracker_name(r, gpu),
            serde_json::json!({
                "energy": measure(&r.energy_j, 1.0),
                "dynamic-energy": measure(&r.dynamic_j, 1.0),
                "latency": measure(&r.time_s, 1e9),
                "power": measure(&r.power_w, 1.0),
            }),
        );
    }
    serde_json::Value::Object(out)
}
