//! The report as one JSON object (`energy-report/1`): the run's directory, every result,
//! the benchmarks not run (`not_run`: id and reason, absent when none), and the comparison
//! with the baseline when there is one.

use serde::Serialize;

use super::super::compare::{Comparison, ResultSet};
use super::super::ResultFile;
use super::encode_json;
use crate::error::Result;

/// The schema tag of a JSON report.
pub const REPORT_SCHEMA: &str = "energy-report/1";

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    dir: String,
    benchmarks: Vec<&'a ResultFile>,
    /// Benchmarks the run did not run, with why; left out when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_run: Vec<NotRun<'a>>,
    comparison: Option<&'a Comparison>,
}

#[derive(Serialize)]
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
