//! The report as one JSON object (`energy-report/1`): the run's directory, every result,
//! the benchmarks not run (`not_run`: id and reason, absent when none), and the comparison
//! with the baseline when there is one.

use serde::Serialize;

use super::super::compare::{Comparison, ResultSet};
use super::merge::REPORT_SET_SCHEMA;
use super::partial::partial_json;
use super::{encode_json, shown_dir, Report, ReportFormat, RunReport};
use energy_results::PartialRun;
use energy_results::{Error, ErrorKind, Result, ResultFile};

/// One JSON object (`--format json`): `energy-report/1`, or `energy-report-set/1` over
/// several directories.
pub struct Json;

impl ReportFormat for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    /// One run alone: its report (`energy-report/1`). Several runs, or a directory that
    /// measured nothing: a report set (`energy-report-set/1`) of each run's report, with
    /// `measured_nothing`. A partial run's report carries `partial`.
    fn render(&self, report: &Report<'_>) -> Result<String> {
        if report.is_single() {
            let run = &report.runs[0];
            return encode_json(&json_report(run.current, run.comparison()));
        }
        let mut reports = Vec::new();
        for run in &report.runs {
            let mut value = serde_json::to_value(json_report(run.current, run.comparison()))
                .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the report: {e}")))?;
            if let Some(p) = report.partial.iter().find(|p| same_dir(p, run)) {
                value["partial"] = partial_json(p);
            }
            reports.push(value);
        }
        if let Some(p) = report.partial.iter().find(|p| !report.runs.iter().any(|r| same_dir(p, r))) {
            return Err(Error::new(
                ErrorKind::Io,
                format!("the JSON report has no report of `{}` to mark partial", p.dir.display()),
            ));
        }
        let value = if report.runs.len() == 1 && report.measured_nothing.is_empty() {
            reports.remove(0)
        } else {
            let mut set = serde_json::json!({ "schema": REPORT_SET_SCHEMA, "reports": reports });
            if !report.measured_nothing.is_empty() {
                let nothing: Vec<serde_json::Value> = report
                    .measured_nothing
                    .iter()
                    .map(|(d, l)| serde_json::json!({ "dir": shown_dir(d), "line": l }))
                    .collect();
                set["measured_nothing"] = serde_json::Value::Array(nothing);
            }
            set
        };
        encode_json(&value)
    }
}

/// Whether `partial` is the run of `run`: its directory as the report writes it (`dir`).
fn same_dir(partial: &PartialRun, run: &RunReport<'_>) -> bool {
    partial.dir.display().to_string() == run.current.dir.display().to_string()
}

/// The schema tag of a JSON report.
pub const REPORT_SCHEMA: &str = "energy-report/1";

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct JsonReport<'a> {
    schema: &'static str,
    dir: String,
    benchmarks: Vec<&'a ResultFile>,
    /// Benchmarks the run did not run, with why; left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    not_run: Vec<NotRun<'a>>,
    comparison: Option<&'a Comparison>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct NotRun<'a> {
    id: &'a str,
    reason: &'a str,
}

/// The JSON report of `current`, with its comparison against a baseline when given.
pub fn json(current: &ResultSet, comparison: Option<&Comparison>) -> Result<String> {
    encode_json(&json_report(current, comparison))
}

/// The typed report of `current` ([`json`]'s).
fn json_report<'a>(current: &'a ResultSet, comparison: Option<&'a Comparison>) -> JsonReport<'a> {
    JsonReport {
        schema: REPORT_SCHEMA,
        dir: current.dir.display().to_string(),
        benchmarks: current.results.values().collect(),
        not_run: current.not_run.iter().map(|(id, reason)| NotRun { id, reason }).collect(),
        comparison,
    }
}
