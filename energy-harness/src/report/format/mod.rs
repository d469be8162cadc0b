//! Every output format of a report, one file each: [`markdown`] and [`html`] (the table of
//! [`table`], the HTML page with the plots), [`json`], [`bmf`] (Bencher),
//! [`github_action_benchmark`], the [`summary`] printed under criterion's lines,
//! [`compare_text`] (what `cargo energy compare` prints), [`merge`] (several
//! directories, one per GPU, in one report) and [`partial`] (the line of a partial run).
//! Every text taken from a file or a bench is escaped by [`super::escape`], the one
//! escaping module.

pub mod bmf;
pub mod compare_text;
pub mod github_action_benchmark;
pub mod html;
pub mod json;
pub mod markdown;
pub mod merge;
pub mod overlay;
pub mod paired_text;
pub mod partial;
pub mod summary;
pub mod table;

use std::path::{Path, PathBuf};

use super::compare::{compare, ResultSet};
use super::ResultFile;
use crate::engine::stats::Estimate;
use crate::error::{Error, ErrorKind, Result};

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

/// Renders the report of `current`, against `baseline` when given.
pub fn render(current: &ResultSet, baseline: Option<&ResultSet>, threshold_pct: f64, format: Format) -> Result<String> {
    let comparison = match baseline {
        Some(b) => Some(compare(b, current, threshold_pct)?),
        None => None,
    };
    match format {
        Format::Bmf => encode_json(&bmf::bmf(current)),
        Format::GithubActionBenchmark => encode_json(&github_action_benchmark::github_action_benchmark(current)),
        Format::Json => json::json(current, comparison.as_ref()),
        Format::Markdown => {
            Ok(markdown::markdown(&table::Table::new(table::Cells::Markdown, current, baseline, comparison.as_ref())))
        }
        Format::Html => Ok(html::html(
            &table::Table::new(table::Cells::Html, current, baseline, comparison.as_ref()),
            current,
            baseline,
        )),
    }
}

/// A run directory as a report shows it, never an absolute path (a pull-request comment
/// must not carry `/home/runner/work/…`): relative to the current directory when inside
/// it; else from its last `target` component on (`target/energy/new`); else its last two
/// components (`energy/new`). A relative path is shown as given.
pub fn shown_dir(dir: &Path) -> String {
    shown_dir_from(dir, std::env::current_dir().ok().as_deref())
}

/// [`shown_dir`] against the directory `cwd` (none: no current directory).
pub fn shown_dir_from(dir: &Path, cwd: Option<&Path>) -> String {
    if !dir.has_root() && !dir.is_absolute() {
        return dir.display().to_string();
    }
    if let Some(rest) = cwd.and_then(|cwd| dir.strip_prefix(cwd).ok()) {
        return if rest.as_os_str().is_empty() { ".".into() } else { rest.display().to_string() };
    }
    let parts: Vec<&std::ffi::OsStr> = dir
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    let from = parts.iter().rposition(|p| *p == "target").unwrap_or(parts.len().saturating_sub(2));
    let shown: PathBuf = parts[from..].iter().collect();
    if shown.as_os_str().is_empty() {
        ".".into()
    } else {
        shown.display().to_string()
    }
}

/// Pretty JSON of a value built by a format.
pub(super) fn encode_json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))
}

/// The 95 % interval's half-width relative to the mean, `±x.xx %`; a dash for one window.
fn interval_pct(e: &Estimate) -> String {
    if e.n < 2 || e.mean == 0.0 {
        return "—".into();
    }
    format!("±{:.2} %", e.relative_half_width() * 100.0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_shown_without_their_absolute_part() {
        let cwd = Some(Path::new("/home/runner/work/repo"));
        let shown = |dir: &str| shown_dir_from(Path::new(dir), cwd);
        assert_eq!(shown("/home/runner/work/repo/target/energy/new"), "target/energy/new");
        assert_eq!(shown("/home/runner/work/repo"), ".");
        assert_eq!(shown("/tmp/ci/artifacts/target/energy/main"), "target/energy/main");
        assert_eq!(shown("/tmp/xyz/energy/new"), "energy/new");
        assert_eq!(shown("/"), ".");
        assert_eq!(shown("target/energy/new"), "target/energy/new");
        assert_eq!(shown_dir_from(Path::new("/a/b/c"), None), "b/c");
    }
}
