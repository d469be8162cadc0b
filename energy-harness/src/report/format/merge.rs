//! One report over several directories (one per GPU or runner): a section per directory
//! for markdown and HTML, one `energy-report-set/1` object for JSON, and one tracker file
//! whose names carry each benchmark's GPU (`id @ GPU-xxxxxxxx`), so two boards are never
//! one series and never averaged.

use super::super::compare::ResultSet;
use super::bmf::bmf_on;
use super::github_action_benchmark::github_action_benchmark_on;
use super::{encode_json, render, Format};
use crate::error::{Error, ErrorKind, Result};

/// The schema tag of a JSON report over several directories.
pub const REPORT_SET_SCHEMA: &str = "energy-report-set/1";

/// The GPU of a result set, as a short tag: `GPU-xxxxxxxx` (the UUID's first group).
pub fn gpu_tag(set: &ResultSet) -> String {
    let uuid = set.results.values().next().map(|r| r.device.uuid.as_str()).unwrap_or("GPU-unknown");
    uuid.split('-').take(2).collect::<Vec<_>>().join("-")
}

/// The report of each directory's run (against its own baseline when given), merged; one
/// directory's is its report as [`render`] writes it. A benchmark on the same GPU in two
/// directories is refused for the trackers.
pub fn render_several(sets: &[(ResultSet, Option<ResultSet>)], threshold_pct: f64, format: Format) -> Result<String> {
    if let [(current, base)] = sets {
        return render(current, base.as_ref(), threshold_pct, format);
    }
    let bad = |why: String| Error::new(ErrorKind::InvalidInput, why);
    match format {
        Format::Bmf | Format::GithubActionBenchmark => {
            let mut merged_object = serde_json::Map::new();
            let mut merged_list = Vec::new();
            for (current, _) in sets {
                // Each name is built with its GPU (`id @ GPU-xxxxxxxx`, then ` - measure` for
                // github-action-benchmark), never edited afterwards: an id with ` - ` stays whole.
                let tag = gpu_tag(current);
                let value = if format == Format::Bmf {
                    bmf_on(current, Some(&tag))
                } else {
                    github_action_benchmark_on(current, Some(&tag))
                };
                match value {
                    serde_json::Value::Object(map) => {
                        for (key, measures) in map {
                            if merged_object.insert(key.clone(), measures).is_some() {
                                return Err(bad(format!(
                                    "`{key}` is in two of the directories (the same benchmark on the same GPU): report them one at a time"
                                )));
                            }
                        }
                    }
                    serde_json::Value::Array(list) => merged_list.extend(list),
                    _ => {
                        return Err(Error::new(ErrorKind::Io, "a tracker report that is neither an object nor a list"))
                    }
                }
            }
            if format == Format::Bmf {
                encode_json(&serde_json::Value::Object(merged_object))
            } else {
                let mut names: Vec<&str> = merged_list.iter().filter_map(|e| e["name"].as_str()).collect();
                names.sort_unstable();
                if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
                    return Err(bad(format!(
                        "`{}` is in two of the directories (the same benchmark on the same GPU): report them one at a time",
                        w[0]
                    )));
                }
                encode_json(&serde_json::Value::Array(merged_list))
            }
        }
        Format::Json => {
            let mut reports = Vec::new();
            for (current, base) in sets {
                let one: serde_json::Value =
                    serde_json::from_str(&render(current, base.as_ref(), threshold_pct, format)?)
                        .map_err(|e| Error::new(ErrorKind::Io, format!("could not re-read the report: {e}")))?;
                reports.push(one);
            }
            encode_json(&serde_json::json!({ "schema": REPORT_SET_SCHEMA, "reports": reports }))
        }
        Format::Markdown | Format::Html => {
            let mut out = String::new();
            for (current, base) in sets {
                out.push_str(&render(current, base.as_ref(), threshold_pct, format)?);
                out.push('\n');
            }
            Ok(out)
        }
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

/// [`render_several`] over the directories that measured something, with a line for each
/// that measured nothing (`empty`: their directories): in markdown and HTML after the
/// tables, in JSON as `measured_nothing` of an `energy-report-set/1` object. The tracker
/// formats get nothing for them (the caller says the lines on stderr).
pub fn render_with_empty(
    sets: &[(ResultSet, Option<ResultSet>)],
    empty: &[std::path::PathBuf],
    threshold_pct: f64,
    format: Format,
) -> Result<String> {
    if sets.is_empty() {
        return Err(Error::new(ErrorKind::InvalidInput, "no directory's run holds an energy result"));
    }
    let mut out = render_several(sets, threshold_pct, format)?;
    if empty.is_empty() {
        return Ok(out);
    }
    let lines: Vec<String> = empty.iter().map(|d| measured_nothing_line(d)).collect();
    match format {
        Format::Markdown => {
            for line in &lines {
                out.push_str(&format!("{}\n\n", crate::report::escape::markdown_text(line)));
            }
        }
        Format::Html => {
            for line in &lines {
                out.push_str(&format!("<p>{}</p>\n", crate::report::escape::html(line)));
            }
        }
        Format::Json => {
            let mut value: serde_json::Value = serde_json::from_str(&out)
                .map_err(|e| Error::new(ErrorKind::Io, format!("could not re-read the report: {e}")))?;
            if value["schema"] != REPORT_SET_SCHEMA {
                value = serde_json::json!({ "schema": REPORT_SET_SCHEMA, "reports": [value] });
            }
            let nothing: Vec<serde_json::Value> = empty
                .iter()
                .zip(&lines)
                .map(|(d, l)| serde_json::json!({ "dir": super::shown_dir(d), "line": l }))
                .collect();
            value["measured_nothing"] = serde_json::Value::Array(nothing);
            out = encode_json(&value)?;
        }
        Format::Bmf | Format::GithubActionBenchmark => {}
    }
    Ok(out)
}
