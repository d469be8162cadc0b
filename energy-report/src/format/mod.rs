//! Every output format of a report, one file each behind one trait, [`ReportFormat`]:
//! [`markdown`] and [`html`] (the table of [`table`], the HTML page with the plots),
//! [`json`], [`bmf`] (Bencher), [`github_action_benchmark`]; a new format is one file and its
//! line in [`FORMATS`]. Beside them
//! [`compare_text`] (what `cargo energy compare` prints), [`merge`] (several
//! directories, one per GPU, in one report) and [`partial`] (the line of a partial run).
//! Every text taken from a file or a bench is escaped by [`energy_results::escape`], the one
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
pub mod table;

use std::path::{Path, PathBuf};

use super::compare::{compare_runs, Comparison, DriftBasis, ResultSet};
use energy_results::echo;
use energy_results::Estimate;
use energy_results::PartialRun;
use energy_results::ResultFile;
use energy_results::{Error, ErrorKind, Result};

/// One output format of a report, as criterion's `Report` is one of its outputs: each format
/// is a unit struct in a file of this module implementing it, named once in [`FORMATS`].
/// What differs between formats lives in that file alone: the report of one directory, of
/// several (one per GPU), the lines for directories that measured nothing, the line of a
/// partial run.
pub trait ReportFormat: Sync {
    /// The name `--format` takes (`markdown`).
    fn name(&self) -> &'static str;
    /// Other names `--format` takes (`md`).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether it is a tracker's input (Bencher, github-action-benchmark): one series per
    /// benchmark and GPU, no place for lines of text.
    fn is_tracker(&self) -> bool {
        false
    }
    /// The report of `current`; against a baseline, `baseline` holds it and its comparison.
    fn render(&self, current: &ResultSet, baseline: Option<(&ResultSet, &Comparison)>) -> Result<String>;
    /// The report of two or more directories (one per GPU or runner), each against its own
    /// baseline when given. By default each directory's report, one after the other.
    fn render_several(&self, sets: &[(ResultSet, Option<ResultSet>)], threshold_pct: f64) -> Result<String> {
        let mut out = String::new();
        for (current, base) in sets {
            out.push_str(&render_in(self, current, base.as_ref(), threshold_pct)?);
            out.push('\n');
        }
        Ok(out)
    }
    /// `report` with `lines`, one per directory of `empty` whose run measured nothing.
    fn add_measured_nothing(&self, report: String, empty: &[PathBuf], lines: &[String]) -> Result<String>;
    /// `report` with the line of each run of `partial` (not empty).
    fn mark_partial(&self, report: String, partial: &[PartialRun]) -> Result<String>;
}

/// Every format `--format` takes, in the order `--help` lists them.
pub const FORMATS: &[&dyn ReportFormat] =
    &[&markdown::Markdown, &json::Json, &html::Html, &bmf::Bmf, &github_action_benchmark::GithubActionBenchmark];

/// A report format chosen by name (`"markdown".parse::<Format>()`): one of [`FORMATS`].
#[derive(Clone, Copy)]
pub struct Format(&'static dyn ReportFormat);

impl Format {
    /// The format named `name` (or one of its aliases).
    pub fn named(name: &str) -> Option<Format> {
        FORMATS.iter().find(|f| f.name() == name || f.aliases().contains(&name)).map(|f| Format(*f))
    }
}

impl std::ops::Deref for Format {
    type Target = dyn ReportFormat;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.0.name() == other.0.name()
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        Format::named(text).ok_or_else(|| {
            let names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
            format!("unknown format `{}`: use {}", echo(text), names.join(", "))
        })
    }
}

/// Renders the report of `current`, against `baseline` when given.
pub fn render(current: &ResultSet, baseline: Option<&ResultSet>, threshold_pct: f64, format: Format) -> Result<String> {
    render_in(format.0, current, baseline, threshold_pct)
}

/// [`render`] in `format`.
fn render_in<F: ReportFormat + ?Sized>(
    format: &F,
    current: &ResultSet,
    baseline: Option<&ResultSet>,
    threshold_pct: f64,
) -> Result<String> {
    match baseline {
        // One baseline run: a rise the unknown drift between the runs could explain is said
        // to be inconclusive, as `compare` says it.
        Some(b) => {
            let comparison = compare_runs(std::slice::from_ref(b), current, threshold_pct, &DriftBasis::Unknown)?;
            format.render(current, Some((b, &comparison)))
        }
        None => format.render(current, None),
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
