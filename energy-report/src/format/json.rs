//! The report as one JSON object (`energy-report/1`): the run's directory, every result,
//! the benchmarks not run (`not_run`: id and reason, absent when none), and the comparison
//! with the baseline when there is one.

use serde::Serialize;

use super::super::compare::{Comparison, ResultSet};
use super::merge::REPORT_SET_SCHEMA;
use super::partial::partial_json;
use super::{encode_json, render_in, shown_dir, ReportFormat};
use energy_results::PartialRun;
use energy_results::{Error, ErrorKind, Result, ResultFile};

/// One JSON object (`--format json`): `energy-report/1`, or `energy-report-set/1` over
/// several directories.
pub struct Json;

/// `text`, a report this format wrote, read back.
fn reread(text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| Error::new(ErrorKind::Io, format!("could not re-read the report: {e}")))
}

impl ReportFormat for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn render(&self, current: &ResultSet, baseline: Option<(&ResultSet, &Comparison)>) -> Result<String> {
        json(current, baseline.map(|b| b.1))
    }

    /// One `energy-report-set/1` object holding each directory's report.
    fn render_several(&self, sets: &[(ResultSet, Option<ResultSet>)], threshold_pct: f64) -> Result<String> {
        let mut reports = Vec::new();
        for (current, base) in sets {
            reports.push(reread(&render_in(self, current, base.as_ref(), threshold_pct)?)?);
        }
        encode_json(&serde_json::json!({ "schema": REPORT_SET_SCHEMA, "reports": reports }))
    }

    /// `measured_nothing` of an `energy-report-set/1` object (a single report is put in one).
    fn add_measured_nothing(&self, report: String, empty: &[std::path::PathBuf], lines: &[String]) -> Result<String> {
        let mut value = reread(&report)?;
        if value["schema"] != REPORT_SET_SCHEMA {
            value = serde_json::json!({ "schema": REPORT_SET_SCHEMA, "reports": [value] });
        }
        let nothing: Vec<serde_json::Value> =
            empty.iter().zip(lines).map(|(d, l)| serde_json::json!({ "dir": shown_dir(d), "line": l })).collect();
        value["measured_nothing"] = serde_json::Value::Array(nothing);
        encode_json(&value)
    }

    /// `partial` of the report of each partial run's directory.
    fn mark_partial(&self, report: String, partial: &[PartialRun]) -> Result<String> {
        let mut value = reread(&report)?;
        for p in partial {
            let dir = p.dir.display().to_string();
            let of_dir = |v: &serde_json::Value| v["dir"].as_str() == Some(dir.as_str());
            let target = if value["schema"] == REPORT_SET_SCHEMA {
                value["reports"].as_array_mut().and_then(|reports| reports.iter_mut().find(|r| of_dir(r)))
            } else {
                Some(&mut value).filter(|v| of_dir(v))
            };
            match target {
                Some(report) => report["partial"] = partial_json(p),
                None => {
                    return Err(Error::new(
                        ErrorKind::Io,
                        format!("the JSON report has no report of `{dir}` to mark partial"),
                    ))
                }
            }
        }
        encode_json(&value)
    }
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
    encode_json(&JsonReport {
        schema: REPORT_SCHEMA,
        dir: current.dir.display().to_string(),
        benchmarks: current.results.values().collect(),
        not_run: current.not_run.iter().map(|(id, reason)| NotRun { id, reason }).collect(),
        comparison,
    })
}
