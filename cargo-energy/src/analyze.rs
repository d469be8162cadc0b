//! `cargo energy analyze TRACE`: window energies from a recorded trace.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use energy_harness::units::format_si;
use energy_harness::unstable::engine::{analyze_trace, AnalysisOptions, ModelChoice, TraceAnalysis};
use energy_harness::unstable::engine::{default_calibration_dir, Calibration};
use energy_harness::unstable::report::power_plot;
use energy_harness::SourceKind;
use energy_harness::{Error, ErrorKind, Result};
use energy_results::source::model::SensorModel;
use energy_results::trace::format::read_trace;
use energy_results::trace::format::write_atomically;

/// A `--source` value: a source, or `auto` (none given).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct SourceArg(pub Option<SourceKind>);

/// Parses `--source`.
pub(super) fn parse_source(text: &str) -> std::result::Result<SourceArg, String> {
    if text == "auto" {
        return Ok(SourceArg(None));
    }
    SourceKind::from_name(text).map(|k| SourceArg(Some(k))).ok_or_else(|| {
        let names: Vec<&str> = SourceKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown source `{text}`: use {} or auto", names.join(", "))
    })
}

/// `--sensor-model` values.
pub(super) fn parse_model(text: &str) -> std::result::Result<ModelChoice, String> {
    match text {
        "calibrated" => Ok(ModelChoice::Calibrated),
        "default" => Ok(ModelChoice::Default),
        other => other.parse::<SensorModel>().map(ModelChoice::Explicit),
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    trace: String,
    simulated: Option<bool>,
    launches_per_window: Option<u64>,
    #[serde(flatten)]
    analysis: &'a TraceAnalysis,
}

pub(super) fn run(
    path: &Path,
    source: Option<SourceKind>,
    model: Option<ModelChoice>,
    json: bool,
    plot: Option<&Path>,
) -> Result<()> {
    let trace = read_trace(path)?;
    let calibration = match trace.metadata("uuid") {
        Some(uuid) => Calibration::load_cached(&default_calibration_dir(), uuid)?,
        None => None,
    };
    let model = model.unwrap_or_default();
    if model == ModelChoice::Calibrated && calibration.is_none() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "--sensor-model calibrated: no calibration for {} in {}; run `cargo energy calibrate` on that GPU",
                trace.metadata("uuid").unwrap_or("this trace's GPU (the trace names no uuid)"),
                default_calibration_dir().display()
            ),
        ));
    }
    let options = AnalysisOptions { source, model, calibration, ..AnalysisOptions::default() };
    let analysis = analyze_trace(&trace, &options).map_err(|e| e.context(path.display()))?;
    if let Some(plot_path) = plot {
        let title = format!(
            "{}{}",
            path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
            if trace.metadata("simulated") == Some("true") { " [simulated]" } else { "" }
        );
        write_atomically(plot_path, power_plot(&trace, &options, &title).as_bytes())?;
    }
    let launches = trace.metadata("launches per window").and_then(|v| v.parse::<u64>().ok());
    let simulated = trace.metadata("simulated").map(|v| v == "true");
    if json {
        let report = JsonReport {
            trace: path.display().to_string(),
            simulated,
            launches_per_window: launches,
            analysis: &analysis,
        };
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))?;
        return crate::output::emit(&format!("{text}\n"));
    }
    let mut out = String::new();
    let tag = if simulated == Some(true) { " [simulated]" } else { "" };
    let _ = writeln!(out, "{}{tag}", path.display());
    let _ = writeln!(
        out,
        "  source {} ({}), sensor model {} ({}), active idle {:.1} W",
        analysis.source,
        analysis.source.nvml_call(),
        analysis.sensor_model,
        analysis.model_origin,
        analysis.idle_w
    );
    if let Some(fit) = &analysis.tick_fit {
        let _ = writeln!(
            out,
            "  counter ticks every {:.2} ms ({} ticks, {:.2} ms RMS about the grid{})",
            fit.period_s * 1e3,
            fit.ticks,
            fit.residual_rms_s * 1e3,
            if fit.grid_used { "" } else { ", grid not used" }
        );
    }
    let _ = writeln!(
        out,
        "  {:>6} {:>11} {:>11} {:>11} {:>12} {:>12} {:>9} {:>9} {:>6}",
        "window", "start s", "end s", "length", "energy", "dynamic", "idle W", "busy W", "ticks"
    );
    for w in &analysis.windows {
        let _ = writeln!(
            out,
            "  {:>6} {:>11.4} {:>11.4} {:>11} {:>12} {:>12} {:>9} {:>9} {:>6}",
            w.index,
            w.start_s,
            w.end_s,
            format_si(w.duration_s(), "s", 4),
            format_si(w.energy_j, "J", 5),
            format_si(w.dynamic_j, "J", 5),
            format!("{:.1}", w.idle_w),
            w.busy_w.map_or("-".into(), |b| format!("{b:.1}")),
            w.points_inside
        );
    }
    if let Some(n) = launches.filter(|&n| n > 0) {
        let per: Vec<String> = analysis.windows.iter().map(|w| format_si(w.energy_j / n as f64, "J", 4)).collect();
        let _ = writeln!(out, "  per launch ({n} launches per window): {}", per.join(", "));
    }
    for warning in &analysis.warnings {
        let _ = writeln!(out, "  warning: {warning}");
    }
    crate::output::emit(&out)
}
