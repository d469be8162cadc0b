//! `cargo energy report` and `cargo energy compare`: result sets under target/energy.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use energy_harness::units::format_si;
use energy_harness::unstable::report::escape::visible;
use energy_harness::unstable::report::{compare as compare_sets, ResultSet, RunPin, Verdict};
use energy_harness::unstable::report::{render, Format};
use energy_harness::unstable::trace::write_atomically;
use energy_harness::{Error, ErrorKind, Result};

fn check_threshold(threshold: f64) -> Result<()> {
    if threshold.is_finite() && threshold >= 0.0 {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::InvalidInput, format!("--threshold {threshold} must be a non-negative percentage")))
    }
}

/// Where the runs are, and which run the reported or compared one must be.
pub(super) struct Runs {
    /// The `--dir` values (or the one found as cargo finds it).
    pub dirs: Vec<PathBuf>,
    /// `--run-id` or ENERGY_RUN_ID: the candidate (or reported run) must have been written
    /// with it.
    pub pin: Option<RunPin>,
}

/// How `compare` judges.
pub(super) struct CompareOptions {
    /// Regression threshold, percent.
    pub threshold: f64,
    /// Dynamic energy across boards of one model.
    pub across_boards: bool,
    /// Baseline benchmarks removed on purpose: their absence is not a failure.
    pub removed: Vec<String>,
}

/// `cargo energy report` over one directory or several (one per GPU or runner). Several
/// give one section per directory, headed by its GPU; the tracker formats name each
/// benchmark with its GPU (`id @ GPU-xxxxxxxx`), so two boards are never one series and
/// never averaged.
pub(super) fn report(
    runs: &Runs,
    run: &str,
    baseline: Option<&str>,
    format: Format,
    threshold: f64,
    output: Option<&Path>,
) -> Result<()> {
    check_threshold(threshold)?;
    let mut sets = Vec::new();
    for dir in &runs.dirs {
        let current = ResultSet::read_pinned(&dir.join(run), runs.pin.as_ref())?;
        let base = baseline.map(|b| ResultSet::read(&dir.join(b))).transpose()?;
        sets.push((current, base));
    }
    let text = if let [(current, base)] = sets.as_slice() {
        render(current, base.as_ref(), threshold, format)?
    } else {
        render_several(&sets, threshold, format)?
    };
    match output {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => super::emit(&text),
    }
}

/// The GPU of a result set, as a short tag: `GPU-xxxxxxxx` (the UUID's first group).
fn gpu_tag(set: &ResultSet) -> String {
    let uuid = set.results.values().next().map(|r| r.device.uuid.as_str()).unwrap_or("GPU-unknown");
    uuid.split('-').take(2).collect::<Vec<_>>().join("-")
}

fn render_several(sets: &[(ResultSet, Option<ResultSet>)], threshold: f64, format: Format) -> Result<String> {
    let encode = |v: &serde_json::Value| {
        serde_json::to_string_pretty(v).map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))
    };
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
                    energy_harness::unstable::report::bmf_on(current, Some(&tag))
                } else {
                    energy_harness::unstable::report::github_action_benchmark_on(current, Some(&tag))
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
                encode(&serde_json::Value::Object(merged_object))
            } else {
                let mut names: Vec<&str> = merged_list.iter().filter_map(|e| e["name"].as_str()).collect();
                names.sort_unstable();
                if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
                    return Err(bad(format!(
                        "`{}` is in two of the directories (the same benchmark on the same GPU): report them one at a time",
                        w[0]
                    )));
                }
                encode(&serde_json::Value::Array(merged_list))
            }
        }
        Format::Json => {
            let mut reports = Vec::new();
            for (current, base) in sets {
                let one: serde_json::Value = serde_json::from_str(&render(current, base.as_ref(), threshold, format)?)
                    .map_err(|e| Error::new(ErrorKind::Io, format!("could not re-read the report: {e}")))?;
                reports.push(one);
            }
            encode(&serde_json::json!({ "schema": "energy-report-set/1", "reports": reports }))
        }
        Format::Markdown | Format::Html => {
            let mut out = String::new();
            for (current, base) in sets {
                out.push_str(&render(current, base.as_ref(), threshold, format)?);
                out.push('\n');
            }
            Ok(out)
        }
    }
}

/// Prints the comparison of each directory's candidate with its own baseline; `Ok(true)`
/// when something regressed in any.
pub(super) fn compare(runs: &Runs, baseline: &str, candidate: &str, options: &CompareOptions) -> Result<bool> {
    check_threshold(options.threshold)?;
    let mut regressed = false;
    for dir in &runs.dirs {
        if runs.dirs.len() > 1 {
            super::emit(&format!("== {}\n", dir.display()))?;
        }
        regressed |= compare_one(dir, baseline, candidate, runs.pin.as_ref(), options)?;
    }
    Ok(regressed)
}

fn compare_one(
    dir: &Path,
    baseline: &str,
    candidate: &str,
    pin: Option<&RunPin>,
    options: &CompareOptions,
) -> Result<bool> {
    let (threshold, across_boards) = (options.threshold, options.across_boards);
    let cand = ResultSet::read_pinned(&dir.join(candidate), pin)?;
    let base = ResultSet::read(&dir.join(baseline))?;
    let comparison = if across_boards {
        energy_harness::unstable::report::compare_across_boards(&base, &cand, threshold)?
    } else {
        compare_sets(&base, &cand, threshold)?
    };
    comparison.check_missing(&base, &cand, &options.removed)?;
    let mut out = String::new();
    let what = if across_boards { "dynamic energy per launch" } else { "energy per launch" };
    let _ =
        writeln!(out,
        "{what}, {candidate} against {baseline} (regression: a rise above {:.1} % whose 95 % interval excludes zero)",
        comparison.threshold_pct
    );
    if let Some(rule) = &comparison.rule {
        let _ = writeln!(out, "rule: {rule}");
    }
    for c in &comparison.changes {
        let label = match c.verdict {
            Verdict::Regression => "REGRESSION",
            Verdict::Improvement => "improvement",
            Verdict::WithinThreshold => "rise within threshold",
            Verdict::NotSignificant => "no significant change",
        };
        let _ = writeln!(
            out,
            "  {:<40} {} → {}  {:+.2} % [{:+.2}, {:+.2}]  {label}",
            visible(&c.id),
            format_si(c.baseline_j.mean, "J", 4),
            format_si(c.candidate_j.mean, "J", 4),
            c.change_pct,
            c.change_low_pct,
            c.change_high_pct
        );
        if let Some(note) = &c.temperature_note {
            let _ = writeln!(out, "  {:<40} note: {note}", "");
        }
    }
    for id in &comparison.added {
        let _ = writeln!(out, "  {:<40} new in {candidate}", visible(id));
    }
    for id in &comparison.removed {
        let _ = writeln!(out, "  {:<40} removed on purpose (--removed): only in {baseline}", visible(id));
    }
    for id in options.removed.iter().filter(|id| !comparison.removed.contains(id)) {
        let why = if cand.results.contains_key(id) {
            format!("{candidate} still has it: compared as usual")
        } else {
            format!("not in {baseline}: nothing to excuse")
        };
        let _ = writeln!(out, "  {:<40} note: --removed, but {why}", visible(id));
    }
    let regressions = comparison.regressions();
    if regressions.is_empty() {
        let _ = writeln!(out, "no energy regression");
    } else {
        let ids: Vec<&str> = regressions.iter().map(|c| c.id.as_str()).collect();
        let _ = writeln!(out, "{} energy regression(s): {}", regressions.len(), ids.join(", "));
    }
    super::emit(&out)?;
    Ok(!regressions.is_empty())
}
