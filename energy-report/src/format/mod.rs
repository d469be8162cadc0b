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

/// One run's part of a report: its results and, against a baseline, the baseline's and
/// their comparison.
pub struct RunReport<'a> {
    /// The run reported.
    pub current: &'a ResultSet,
    /// The baseline run and the comparison against it, when one was given.
    pub baseline: Option<(&'a ResultSet, Comparison)>,
}

impl RunReport<'_> {
    /// The baseline run, when one was given.
    pub fn baseline_set(&self) -> Option<&ResultSet> {
        self.baseline.as_ref().map(|(b, _)| *b)
    }

    /// The comparison against the baseline, when one was given.
    pub fn comparison(&self) -> Option<&Comparison> {
        self.baseline.as_ref().map(|(_, c)| c)
    }
}

/// Everything a report shows, as typed values, handed whole to a format as criterion hands
/// its `Report` hooks measurements: the runs (one per directory: GPU or runner), the
/// directories whose run measured nothing, and the runs that are partial. No format reads
/// another's output.
pub struct Report<'a> {
    /// One or more runs, in the order given.
    pub runs: Vec<RunReport<'a>>,
    /// Each directory whose run is complete and holds no result, with the line saying so.
    pub measured_nothing: Vec<(PathBuf, String)>,
    /// The runs some of whose bench targets never finished.
    pub partial: &'a [PartialRun],
}

impl<'a> Report<'a> {
    /// The report of `sets` (each run against its own baseline when given, compared with
    /// `threshold_pct`), the directories of `empty` that measured nothing, and the runs of
    /// `partial`. Errors when no run holds a result.
    pub fn new(
        sets: &'a [(ResultSet, Option<ResultSet>)],
        empty: &[PathBuf],
        partial: &'a [PartialRun],
        threshold_pct: f64,
    ) -> Result<Report<'a>> {
        if sets.is_empty() {
            return Err(Error::new(ErrorKind::InvalidInput, "no directory's run holds an energy result"));
        }
        let runs = sets
            .iter()
            .map(|(current, base)| run_report(current, base.as_ref(), threshold_pct))
            .collect::<Result<_>>()?;
        let measured_nothing = empty.iter().map(|d| (d.clone(), merge::measured_nothing_line(d))).collect();
        Ok(Report { runs, measured_nothing, partial })
    }

    /// Whether it is the report of one run with nothing said beside it.
    pub fn is_single(&self) -> bool {
        self.runs.len() == 1 && self.measured_nothing.is_empty() && self.partial.is_empty()
    }
}

/// One run's part of a report: against a baseline, compared as `compare` compares one saved
/// run (a rise the unknown drift between the runs could explain is inconclusive).
fn run_report<'a>(
    current: &'a ResultSet,
    baseline: Option<&'a ResultSet>,
    threshold_pct: f64,
) -> Result<RunReport<'a>> {
    let baseline = match baseline {
        Some(b) => Some((b, compare_runs(std::slice::from_ref(b), current, threshold_pct, &DriftBasis::Unknown)?)),
        None => None,
    };
    Ok(RunReport { current, baseline })
}

/// One output format of a report, as criterion's `Report` is one of its outputs: each format
/// is a unit struct in a file of this module implementing it, named once in [`FORMATS`].
/// What differs between formats lives in that file alone; it receives the whole report as
/// typed values ([`Report`]).
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
    /// The report: of one run or of several (one per GPU or runner, each against its own
    /// baseline), with the lines for directories that measured nothing and for partial runs
    /// where the format has a place for them (a tracker refuses a partial run).
    fn render(&self, report: &Report<'_>) -> Result<String>;
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
    let report = Report {
        runs: vec![run_report(current, baseline, threshold_pct)?],
        measured_nothing: Vec::new(),
        partial: &[],
    };
    format.0.render(&report)
}

/// Renders `report` in `format`.
pub fn render_report(report: &Report<'_>, format: Format) -> Result<String> {
    format.0.render(report)
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
