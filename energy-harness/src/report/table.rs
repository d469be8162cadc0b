//! `cargo energy report`: one table of all benchmarks of a run, optionally against a
//! baseline, as markdown (for a pull-request comment), JSON or HTML (with the plots).

use std::fmt::Write as _;

use serde::Serialize;

use super::compare::{compare, Change, Comparison, ResultSet, Verdict};
use super::escape::{html, markdown_cell_code, markdown_code_span, markdown_text};
use super::{file_stem, ResultFile};
use crate::error::{Error, ErrorKind, Result};
use energy_units::format_si;

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A markdown table, ready for a pull-request comment.
    Markdown,
    /// One JSON object.
    Json,
    /// A standalone HTML page with the SVG power traces.
    Html,
    /// Bencher Metric Format: benchmark → measure → value, lower_value, upper_value
    /// (measures `energy` and `dynamic-energy` in J, `latency` in ns, `power` in W).
    Bmf,
    /// github-action-benchmark's `customSmallerIsBetter` entries: name, unit, value, range,
    /// extra (energy, dynamic energy and time per launch; power is not smaller-is-better).
    GithubActionBenchmark,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        match text {
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            "html" => Ok(Format::Html),
            "bmf" => Ok(Format::Bmf),
            "github-action-benchmark" => Ok(Format::GithubActionBenchmark),
            other => Err(format!(
                "unknown format `{other}`: use markdown, json, html, bmf (Bencher) or github-action-benchmark"
            )),
        }
    }
}

fn interval_pct(e: &crate::engine::Estimate) -> String {
    if e.n < 2 || e.mean == 0.0 {
        return "—".into();
    }
    format!("±{:.2} %", e.relative_half_width() * 100.0)
}

fn per_unit(r: &ResultFile) -> String {
    match (&r.per_op, &r.per_byte) {
        (Some(op), _) => format!("{}/op", format_si(op.energy_j.mean, "J", 4)),
        (None, Some(b)) => format!("{}/B", format_si(b.energy_j.mean, "J", 4)),
        (None, None) => "—".into(),
    }
}

/// How a table's cells are written: each writes code and emphasis its own way and escapes
/// the text it did not write itself ([`super::escape`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cells {
    Markdown,
    Html,
}

impl Cells {
    /// An id (or other name from a file) as code in a cell.
    fn code(self, text: &str) -> String {
        match self {
            Cells::Markdown => markdown_cell_code(text),
            Cells::Html => format!("<code>{}</code>", html(text)),
        }
    }

    /// Text this module wrote (figures, verdicts), emphasized.
    fn strong(self, text: &str) -> String {
        match self {
            Cells::Markdown => format!("**{text}**"),
            Cells::Html => format!("<strong>{text}</strong>"),
        }
    }
}

/// Net energy per op against the baseline kernel (Arafa: `(E_with − E_without) / ops`).
fn net_per_op(r: &ResultFile, cells: Cells) -> String {
    match &r.net {
        Some(net) => format!(
            "{}/{} {} vs {}",
            format_si(net.energy_j.mean, "J", 4),
            if net.ops_per_launch == 1.0 { "launch" } else { "op" },
            interval_pct(&net.energy_j),
            cells.code(&net.baseline_id)
        ),
        None => "—".into(),
    }
}

fn verdict_text(v: Verdict, cells: Cells) -> String {
    match v {
        Verdict::Regression => cells.strong("regression"),
        Verdict::Improvement => "improvement".into(),
        Verdict::WithinThreshold => "rise within threshold".into(),
        Verdict::NotSignificant => "no significant change".into(),
    }
}

fn change_text(c: &Change, cells: Cells) -> String {
    let warmth = match (c.temperature_note.as_ref(), c.temperature_c) {
        (Some(_), (Some(b), Some(t))) => format!(" (ran {:+.0} °C from the baseline)", t - b),
        _ => String::new(),
    };
    format!(
        "{:+.2} % [{:+.2}, {:+.2}] {}{warmth}",
        c.change_pct,
        c.change_low_pct,
        c.change_high_pct,
        verdict_text(c.verdict, cells)
    )
}

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    dir: String,
    benchmarks: Vec<&'a ResultFile>,
    comparison: Option<&'a Comparison>,
}

fn tracker_json(value: &serde_json::Value) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))
}

/// The name a tracker files a result under: its id, marked when simulated (ids of the
/// simulated GPU already end in "(simulated)") so that a simulated run never joins a real
/// series, and followed by ` @ GPU-xxxxxxxx` when `gpu` names the board (reports over
/// several directories). The tag is appended, never spliced in: an id holding ` - ` or
/// ` @ ` is kept whole.
fn tracker_name(r: &ResultFile, gpu: Option<&str>) -> String {
    let mut name = r.id.clone();
    if r.device.simulated && !r.id.contains("simulated") {
        name.push_str(" [simulated]");
    }
    if let Some(tag) = gpu {
        name.push_str(" @ ");
        name.push_str(tag);
    }
    name
}

/// The three measures of [`github_action_benchmark`], in the order written: what ends
/// each entry's name (after ` - `), its unit.
pub const GITHUB_ACTION_BENCHMARK_MEASURES: [(&str, &str); 3] =
    [("energy per launch", "J"), ("dynamic energy per launch", "J"), ("time per launch", "s")];

/// Bencher Metric Format (<https://bencher.dev/docs/reference/bencher-metric-format/>): one
/// object per benchmark, one per measure, each value with its 95 % interval's ends.
pub fn bmf(current: &ResultSet) -> serde_json::Value {
    bmf_on(current, None)
}

/// [`bmf`] with each benchmark named `<id> @ <gpu>` when `gpu` is given (one directory of
/// several, one per GPU).
pub fn bmf_on(current: &ResultSet, gpu: Option<&str>) -> serde_json::Value {
    let measure = |e: &crate::engine::Estimate, scale: f64| serde_json::json!({ "value": e.mean * scale, "lower_value": e.ci_low * scale, "upper_value": e.ci_high * scale });
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

/// github-action-benchmark's `customSmallerIsBetter` input
/// (<https://github.com/benchmark-action/github-action-benchmark>): a list of entries with
/// name, unit, value, range (the 95 % half-width, as text) and extra (the GPU and interval).
/// Each name is `<id> - <measure>`, the measure one of [`GITHUB_ACTION_BENCHMARK_MEASURES`]
/// and always last.
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

/// Renders the report of `current`, against `baseline` when given.
pub fn render(current: &ResultSet, baseline: Option<&ResultSet>, threshold_pct: f64, format: Format) -> Result<String> {
    let comparison = match baseline {
        Some(b) => Some(compare(b, current, threshold_pct)?),
        None => None,
    };
    let change_of = |id: &str| comparison.as_ref().and_then(|c| c.changes.iter().find(|x| x.id == id));
    let first = current.results.values().next().expect("a result set is never empty");
    let simulated = first.device.simulated;
    match format {
        Format::Bmf => tracker_json(&bmf(current)),
        Format::GithubActionBenchmark => tracker_json(&github_action_benchmark(current)),
        Format::Json => serde_json::to_string_pretty(&JsonReport {
            schema: "energy-report/1",
            dir: current.dir.display().to_string(),
            benchmarks: current.results.values().collect(),
            comparison: comparison.as_ref(),
        })
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}"))),
        Format::Markdown | Format::Html => {
            let cells = if format == Format::Markdown { Cells::Markdown } else { Cells::Html };
            let mut rows = Vec::new();
            for r in current.results.values() {
                rows.push(vec![
                    cells.code(&r.id),
                    format_si(r.time_s.mean, "s", 4),
                    format!("{} {}", format_si(r.energy_j.mean, "J", 4), interval_pct(&r.energy_j)),
                    format_si(r.dynamic_j.mean, "J", 4),
                    format_si(r.power_w.mean, "W", 4),
                    per_unit(r),
                    net_per_op(r, cells),
                    change_of(&r.id).map_or_else(
                        || if baseline.is_some() { "new".into() } else { "—".into() },
                        |c| change_text(c, cells),
                    ),
                    r.warnings.len().to_string(),
                ]);
            }
            let header = [
                "benchmark",
                "time/launch",
                "energy/launch (95 % CI)",
                "dynamic",
                "power",
                "energy/unit",
                "net vs baseline kernel (95 % CI)",
                "change vs baseline [95 % CI]",
                "warnings",
            ];
            // The device's name, its driver and the directory come from files and the
            // command line: escaped as text.
            let title = |text: fn(&str) -> String| {
                format!(
                    "Energy report{}: {} ({}), {}",
                    if simulated { " [SIMULATED]" } else { "" },
                    text(&first.device.name),
                    text(first.device.driver.as_deref().unwrap_or("driver ?")),
                    text(&current.dir.display().to_string())
                )
            };
            let code = |text: &str| match cells {
                Cells::Markdown => markdown_code_span(text),
                Cells::Html => format!("<code>{}</code>", html(text)),
            };
            let mut notes = Vec::new();
            if let (Some(b), Some(c)) = (baseline, &comparison) {
                notes.push(format!(
                    "Baseline {}; a regression is a rise above {:.1} % whose 95 % interval excludes zero.",
                    code(&b.dir.display().to_string()),
                    c.threshold_pct
                ));
                for id in &c.removed {
                    notes.push(format!("{} is in the baseline only.", code(id)));
                }
            }
            if format == Format::Markdown {
                let mut out = format!(
                    "### {}\n\n| {} |\n|{}\n",
                    title(markdown_text),
                    header.join(" | "),
                    "---|".repeat(header.len())
                );
                for row in rows {
                    let _ = writeln!(out, "| {} |", row.join(" | "));
                }
                for note in notes {
                    let _ = write!(out, "\n{note}\n");
                }
                Ok(out)
            } else {
                let t = title(html);
                let mut out = format!(
                    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child{{text-align:left}}</style></head><body><h2>{t}</h2>\n<table><tr>"
                );
                for h in header {
                    let _ = write!(out, "<th>{}</th>", html(h));
                }
                out.push_str("</tr>\n");
                for row in rows {
                    out.push_str("<tr>");
                    for cell in row {
                        let _ = write!(out, "<td>{cell}</td>");
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table>\n");
                for note in notes {
                    let _ = writeln!(out, "<p>{note}</p>");
                }
                for r in current.results.values() {
                    let svg_path = current.dir.join(format!("{}.svg", file_stem(&r.id)));
                    let _ = writeln!(out, "<h3>{}</h3>", html(&r.id));
                    match std::fs::read_to_string(&svg_path) {
                        Ok(svg) => out.push_str(&svg),
                        Err(_) => {
                            let _ =
                                writeln!(out, "<p>(no plot: {} is missing)</p>", html(&svg_path.display().to_string()));
                        }
                    }
                }
                out.push_str("</body></html>\n");
                Ok(out)
            }
        }
    }
}
