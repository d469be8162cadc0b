//! What a report of a partial run says: a run some of whose bench targets never finished
//! ([`PartialRun`]) is reported with what it holds and, above the tables, a line saying it
//! is partial and what never finished (markdown, HTML), or `partial` in the JSON report of
//! that run. The tracker formats carry no such line: `cargo energy report` refuses a
//! partial run for them.

use super::super::escape::{html, markdown_text};
use super::super::run::PartialRun;
use super::merge::REPORT_SET_SCHEMA;
use super::shown_dir;
use super::{encode_json, Format};
use crate::error::echo;
use crate::error::{Error, ErrorKind, Result};

/// What never finished: "bench target `b` (pid 7, started …) never finished".
fn unfinished_targets(p: &PartialRun) -> String {
    let targets: Vec<String> = p
        .unfinished
        .iter()
        .map(|t| format!("`{}` (pid {}, started {})", echo(&t.name), t.pid, echo(&t.started)))
        .collect();
    let noun = if targets.len() == 1 { "bench target" } else { "bench targets" };
    format!("{noun} {} never finished: interrupted, crashed, or still running", targets.join(", "))
}

/// The line a report of a partial run carries: that it is partial, what never finished,
/// and what the report holds.
pub fn partial_line(p: &PartialRun) -> String {
    let finished = if p.finished.is_empty() {
        String::new()
    } else {
        format!(" (finished: {})", p.finished.iter().map(|n| format!("`{}`", echo(n))).collect::<Vec<_>>().join(", "))
    };
    format!(
        "run `{}` in `{}` is partial: {}. This report holds only the {} result(s) its bench targets committed{finished}, not the benchmarks the unfinished ones did not reach; `cargo energy report` exits 2 on it and `compare` refuses it. Run `cargo bench` again for a complete run",
        echo(&p.name),
        shown_dir(&p.dir),
        unfinished_targets(p),
        p.results
    )
}

/// The JSON `partial` of a report: the line, and what never finished.
fn partial_json(partial: &PartialRun) -> serde_json::Value {
    serde_json::json!({
        "line": partial_line(partial),
        "run": partial.name,
        "unfinished_targets": partial.unfinished,
        "finished_targets": partial.finished,
        "results": partial.results,
    })
}

/// `report` (one report, or several as [`super::merge::render_with_empty`] writes them)
/// with the line of each run of `partial`: in markdown and HTML before everything else, in
/// JSON as `partial` of the report of that run (`energy-report/1`, alone or in an
/// `energy-report-set/1`). Errors for the tracker formats, which have no place for it.
pub fn mark_partial(report: String, partial: &[PartialRun], format: Format) -> Result<String> {
    if partial.is_empty() {
        return Ok(report);
    }
    match format {
        Format::Markdown => {
            let mut out: String =
                partial.iter().map(|p| format!("> **PARTIAL RUN:** {}\n\n", markdown_text(&partial_line(p)))).collect();
            out.push_str(&report);
            Ok(out)
        }
        Format::Html => {
            let lines: String = partial
                .iter()
                .map(|p| format!("<p class=\"partial\" style=\"background:#fdd;color:#900;padding:4px 8px\"><strong>PARTIAL RUN:</strong> {}</p>\n", html(&partial_line(p))))
                .collect();
            // After the first page's <body>: the line comes before every table.
            Ok(match report.find("<body>") {
                Some(at) => format!("{}{lines}{}", &report[..at + "<body>".len()], &report[at + "<body>".len()..]),
                None => format!("{lines}{report}"),
            })
        }
        Format::Json => {
            let mut value: serde_json::Value = serde_json::from_str(&report)
                .map_err(|e| Error::new(ErrorKind::Io, format!("could not re-read the report: {e}")))?;
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
        Format::Bmf | Format::GithubActionBenchmark => Err(partial[0].refusal()),
    }
}
