//! The report as one JSON object (`energy-report/1`): the run's directory, every result,
//! and the comparison with the baseline when there is one.

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
    comparison: Option<&'a Comparison>,
}

/// The JSON report of `current`, with its comparison against a baseline when given.
pub fn json(current: &ResultSet, comparison: Option<&Comparison>) -> Result<String> {
    encode_json(&JsonReport {
        schema: REPORT_SCHEMA,
        dir: current.dir.display().to_string(),
        benchmarks: current.results.values().collect(),
        comparison,
    })
}
