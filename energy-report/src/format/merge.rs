//! One report over several directories (one per GPU or runner): a section per directory
//! for markdown and HTML, one `energy-report-set/1` object for JSON, and one tracker file
//! whose names carry each benchmark's GPU (`id @ GPU-xxxxxxxx`), so two boards are never
//! one series and never averaged.

use super::super::compare::ResultSet;
use super::{encode_json, Report};
use energy_results::{Error, ErrorKind, Result};

/// The schema tag of a JSON report over several directories.
pub const REPORT_SET_SCHEMA: &str = "energy-report-set/1";

/// The GPU of a result set, as a short tag: `GPU-xxxxxxxx` (the UUID's first group;
/// [`energy_results::result::short_uuid`]).
pub fn gpu_tag(set: &ResultSet) -> String {
    let uuid = set.results.values().next().map(|r| r.device.uuid.as_str()).unwrap_or("GPU-unknown");
    energy_results::result::short_uuid(uuid)
}

/// The refusal of a benchmark on the same GPU in two directories (one tracker series).
fn same_benchmark_twice(name: &str) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!(
            "`{name}` is in two of the directories (the same benchmark on the same GPU): report them one at a time"
        ),
    )
}

/// A tracker's object (benchmark → measures) over several directories: each benchmark named
/// with its GPU by `on` (`id @ GPU-xxxxxxxx`), built with it, never edited afterwards (an id
/// with ` - ` stays whole); a benchmark on the same GPU in two directories refused.
pub(super) fn merge_tracker_objects(sets: &[&ResultSet], on: TrackerSeries) -> Result<String> {
    let mut merged = serde_json::Map::new();
    for current in sets {
        let serde_json::Value::Object(map) = on(current, Some(&gpu_tag(current))) else {
            return Err(Error::new(ErrorKind::Io, "a tracker report that is not an object"));
        };
        for (key, measures) in map {
            if merged.insert(key.clone(), measures).is_some() {
                return Err(same_benchmark_twice(&key));
            }
        }
    }
    encode_json(&serde_json::Value::Object(merged))
}

/// A tracker's list of entries over several directories, as [`merge_tracker_objects`]: each
/// entry's name carries its GPU; two entries of one name refused.
pub(super) fn merge_tracker_lists(sets: &[&ResultSet], on: TrackerSeries) -> Result<String> {
    let mut merged = Vec::new();
    for current in sets {
        let serde_json::Value::Array(list) = on(current, Some(&gpu_tag(current))) else {
            return Err(Error::new(ErrorKind::Io, "a tracker report that is not a list"));
        };
        merged.extend(list);
    }
    let mut names: Vec<&str> = merged.iter().filter_map(|e| e["name"].as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(same_benchmark_twice(w[0]));
    }
    encode_json(&serde_json::Value::Array(merged))
}

/// A tracker format's series of one directory, each benchmark named with `gpu` when given.
pub(super) type TrackerSeries = fn(&ResultSet, Option<&str>) -> serde_json::Value;

/// A tracker format's report (Bencher, github-action-benchmark): one run's series; over
/// several, `merge` of each run's series, each benchmark named with its GPU
/// (`id @ GPU-xxxxxxxx`). Directories that measured nothing add nothing (a tracker's file
/// has no place for lines: the caller says them on stderr); a partial run is refused (a
/// tracker would file it as a complete one).
pub(super) fn render_tracker(
    report: &Report<'_>,
    series: TrackerSeries,
    merge: fn(&[&ResultSet], TrackerSeries) -> Result<String>,
) -> Result<String> {
    if let Some(p) = report.partial.first() {
        return Err(p.refusal());
    }
    match report.runs.as_slice() {
        [run] => encode_json(&series(run.current, None)),
        runs => merge(&runs.iter().map(|r| r.current).collect::<Vec<_>>(), series),
    }
}

/// The line said for a directory whose run measured nothing: its GPU named from the folder
/// `cargo energy run` gave it (`…/gpu1-GPU-xxxxxxxx/energy` → `GPU 1 (GPU-xxxxxxxx)`),
/// else the directory as reports show it.
pub fn measured_nothing_line(dir: &std::path::Path) -> String {
    let gpu = dir
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|_| dir.file_name().is_some_and(|n| n == "energy"))
        .and_then(|label| {
            let (index, uuid) = label.strip_prefix("gpu")?.split_once('-')?;
            index.parse::<u32>().ok().map(|i| format!("GPU {i} ({uuid})"))
        });
    let who = gpu.unwrap_or_else(|| super::shown_dir(dir));
    format!(
        "{who}: measured nothing (its run is complete and holds no result: the other GPUs took every benchmark from \
         the queue, or its filter or shard left it none)"
    )
}
