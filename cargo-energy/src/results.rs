//! `cargo energy report` and `cargo energy compare`: result sets under target/energy.

use std::path::{Path, PathBuf};

use energy_report::{compare_across_boards, compare_runs, DriftBasis, ResultSet};
use energy_report::{compare_text, measured_nothing_line, render_report, Compared, Format, Report};
use energy_report::{optimum_moves, partial_line};
use energy_results::campaign::CampaignManifest;
use energy_results::write_atomically;
use energy_results::{Error, ErrorKind, Result};
use energy_results::{RunManifest, RunPin};

pub(super) fn check_threshold(threshold: f64) -> Result<()> {
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
    /// What the verdicts rest on as to the drift between runs.
    pub drift: DriftBasis,
    /// Folders of saved runs of main: the baseline runs are the newest of them on the
    /// candidate's GPU (instead of `--baseline`).
    pub history: Vec<PathBuf>,
    /// How many of them.
    pub history_runs: usize,
}

/// What `compare` found over every directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Outcome {
    /// Some benchmark regressed (exit 1).
    pub regressed: bool,
    /// Some rise was inconclusive for want of a drift estimate (exit 3 when none regressed).
    pub inconclusive: bool,
}

/// `cargo energy report` over one directory or several (one per GPU or runner), merged
/// as `report::format::merge` does. A partial run (a bench target that never finished) is
/// reported with what it committed under a line saying so, and then is an error (exit 2),
/// as `compare` refuses it; the tracker formats refuse it outright.
pub(super) fn report(
    runs: &Runs,
    run: &str,
    baseline: Option<&str>,
    format: Format,
    threshold: f64,
    output: Option<&Path>,
) -> Result<()> {
    check_threshold(threshold)?;
    let several = runs.dirs.len() > 1;
    let tracker = format.is_tracker();
    let mut sets = Vec::new();
    let mut empty = Vec::new();
    let mut partial = Vec::new();
    for dir in &runs.dirs {
        let (current, part) = ResultSet::read_run_pinned_or_partial(&dir.join(run), runs.pin.as_ref())?;
        warn_if_stale(&current, runs.pin.as_ref());
        if let Some(part) = part {
            // A tracker's series must never take a partial run's figures: no place for the line.
            if tracker {
                return Err(part.refusal());
            }
            partial.push(part);
        } else if current.results.is_empty() {
            // Alone, a run that holds nothing is an error naming why; beside others, a GPU
            // that measured nothing is a line.
            if !several {
                return current.with_results().map(drop);
            }
            // The tracker formats are pure JSON: the line goes to stderr; the others carry it.
            if tracker {
                eprintln!("{}", measured_nothing_line(dir));
            }
            empty.push(dir.clone());
            continue;
        }
        let base = baseline.map(|b| ResultSet::read_run(&dir.join(b))).transpose()?;
        sets.push((current, base));
    }
    if sets.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "none of the {} directories' run `{run}` holds an energy result: nothing to report",
                runs.dirs.len()
            ),
        ));
    }
    let text = render_report(&Report::new(&sets, &empty, &partial, threshold)?, format)?;
    match output {
        Some(path) => write_atomically(path, text.as_bytes())?,
        None => crate::output::emit(&text)?,
    }
    if partial.is_empty() {
        return Ok(());
    }
    let shown = output.map_or_else(|| "above".to_string(), |p| format!("in `{}`", p.display()));
    let lines: Vec<String> = partial.iter().map(partial_line).collect();
    Err(Error::new(ErrorKind::InvalidInput, format!("{} (the report {shown} says so first)", lines.join(". "))))
}

/// The run folders of the directories `--dir` names, a campaign of `cargo energy slurm`
/// (`campaign.json` there) standing for its shards' runs: refused while a shard is missing
/// unless `partial`. Each folder holds `new`.
pub(super) fn expand_campaigns(dirs: Vec<PathBuf>, partial: bool) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for dir in dirs {
        if !is_campaign(&dir) {
            out.push(dir);
            continue;
        }
        let campaign = CampaignManifest::read(&dir)?;
        let (runs, _) = campaign.runs_to_report(&dir, partial)?;
        out.extend(runs.into_iter().map(|(_, run)| run.parent().map(Path::to_path_buf).unwrap_or(run)));
    }
    Ok(out)
}

/// Whether `dir` holds a campaign of `cargo energy slurm` (its `campaign.json`).
pub(super) fn is_campaign(dir: &Path) -> bool {
    dir.join(energy_results::campaign::CAMPAIGN_FILE).is_file()
}

/// The report of the campaign in `dir` (`cargo energy report --dir CAMPAIGN`, and `cargo
/// energy slurm` at its end): its shards' runs, refused while a shard is missing unless
/// `partial`, those of one board (GPU UUID) merged into one table (hash shards hold disjoint
/// benchmarks), under lines naming the campaign and any shard missing.
pub(super) fn report_campaign(
    dir: &Path,
    campaign: &CampaignManifest,
    partial: bool,
    pin: Option<&RunPin>,
    format: Format,
    threshold: f64,
    output: Option<&Path>,
) -> Result<()> {
    check_threshold(threshold)?;
    let (runs, missing) = campaign.runs_to_report(dir, partial)?;
    if !missing.is_empty() && format.is_tracker() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("campaign {} is partial: a tracker's series never takes a partial campaign", campaign.id),
        ));
    }
    let mut boards: Vec<(String, ResultSet)> = Vec::new();
    // Shards whose run holds no benchmark (more shards than benchmarks): complete, said once.
    let mut empty_shards: Vec<String> = Vec::new();
    for (index, run) in &runs {
        let set = ResultSet::read_run_pinned_or_empty(run, pin)?;
        if set.results.is_empty() {
            empty_shards.push(index.to_string());
            continue;
        }
        let board = set.results.values().next().map(|r| r.device.uuid.clone()).unwrap_or_default();
        match boards.iter_mut().find(|(b, _)| *b == board) {
            Some((_, merged)) => {
                for (id, result) in set.results {
                    if merged.results.insert(id.clone(), result).is_some() {
                        return Err(Error::new(
                            ErrorKind::InvalidInput,
                            format!(
                                "`{id}` is in two shards' runs of campaign {} on {board}: not a campaign of hash \
                                 shards (altered?)",
                                campaign.id
                            ),
                        ));
                    }
                }
                merged.not_run.extend(set.not_run);
            }
            None => boards.push((board, set)),
        }
    }
    // A benchmark another shard measured is not "not run" in this one.
    let measured: std::collections::BTreeSet<String> =
        boards.iter().flat_map(|(_, s)| s.results.keys().cloned()).collect();
    let sets: Vec<(ResultSet, Option<ResultSet>)> = boards
        .into_iter()
        .map(|(_, mut set)| {
            set.not_run.retain(|id, _| !measured.contains(id));
            (set, None)
        })
        .collect();
    let body = render_report(&Report::new(&sets, &[], &[], threshold)?, format)?;
    let text = if format.name() == "markdown" {
        let mut head = format!(
            "## Campaign {}

{} shard(s) of {}, on {} board(s), one table each.\n\n",
            campaign.id,
            campaign.shards - missing.len() as u32,
            campaign.shards,
            sets.len()
        );
        // Which board ran which shards, and where: the tables name boards by UUID only.
        let mut boards: Vec<(String, Vec<String>, Vec<u32>)> = Vec::new();
        for s in campaign.shard_states.iter().filter(|s| s.gpu_uuid.is_some()) {
            let uuid = energy_results::result::short_uuid(s.gpu_uuid.as_deref().unwrap_or_default());
            let at = boards.iter().position(|b| b.0 == uuid).unwrap_or_else(|| {
                boards.push((uuid, Vec::new(), Vec::new()));
                boards.len() - 1
            });
            if let Some(node) = s.node.as_ref().filter(|n| !boards[at].1.contains(n)) {
                boards[at].1.push(node.clone());
            }
            boards[at].2.push(s.index);
        }
        for (uuid, nodes, shards) in &boards {
            let shards: Vec<String> = shards.iter().map(u32::to_string).collect();
            head.push_str(&format!("- `{uuid}` on {}: shard(s) {}\n", nodes.join(", "), shards.join(", ")));
        }
        if !boards.is_empty() {
            head.push('\n');
        }
        if !empty_shards.is_empty() {
            head.push_str(&format!(
                "Shard(s) {} measured nothing: no benchmark fell in them (more shards than benchmarks).\n\n",
                empty_shards.join(", ")
            ));
        }
        for line in missing {
            head.push_str(&format!("> **MISSING:** {line}\n\n"));
        }
        head + &body
    } else {
        body
    };
    match output {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => crate::output::emit(&text),
    }
}

/// Prints the comparison of each directory's candidate with its own baseline; what it found
/// over all of them.
pub(super) fn compare(runs: &Runs, baseline: &[String], candidate: &str, options: &CompareOptions) -> Result<Outcome> {
    check_threshold(options.threshold)?;
    let mut found = Outcome::default();
    let several = runs.dirs.len() > 1;
    let mut compared = 0;
    for dir in &runs.dirs {
        // Beside others, a GPU whose candidate measured nothing is a line, not an error.
        if several && ResultSet::read_run_pinned_or_empty(&dir.join(candidate), runs.pin.as_ref())?.results.is_empty() {
            crate::output::emit(&format!("{}\n", measured_nothing_line(dir)))?;
            continue;
        }
        compared += 1;
        let one = compare_one(several.then_some(dir.as_path()), dir, baseline, candidate, runs.pin.as_ref(), options)?;
        found.regressed |= one.regressed;
        found.inconclusive |= one.inconclusive;
    }
    if compared == 0 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "none of the {} directories' run `{candidate}` holds an energy result: nothing to compare",
                runs.dirs.len()
            ),
        ));
    }
    Ok(found)
}

/// The newest `count` complete runs under `folders` measured on `candidate`'s GPU (the
/// candidate itself excluded), newest first, with their names (their folders); an error
/// naming what was found when fewer than two.
fn history_baselines(
    folders: &[PathBuf],
    count: usize,
    candidate: &ResultSet,
) -> Result<(Vec<ResultSet>, Vec<String>)> {
    if count < 2 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("--history-runs {count}: the spread between runs needs two runs or more"),
        ));
    }
    let Some(device) = candidate.results.values().next().map(|r| r.device.clone()) else {
        return Err(Error::new(ErrorKind::InvalidInput, "the candidate holds no result"));
    };
    let own = std::fs::canonicalize(&candidate.dir).ok();
    let mut found = Vec::new();
    let mut skipped = 0;
    for dir in energy_report::find_runs(folders)? {
        if own.as_deref() == Some(dir.as_path()) {
            continue;
        }
        let (Ok(set), Ok(manifest)) = (ResultSet::read_run(&dir), RunManifest::read_manifest(&dir)) else {
            skipped += 1;
            continue;
        };
        let same_gpu =
            set.results.values().all(|r| r.device.uuid == device.uuid && r.device.simulated == device.simulated);
        if same_gpu {
            found.push((manifest.started, set));
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.truncate(count);
    if found.len() < 2 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "--history: {} complete run(s) of {} ({}) under {} ({skipped} run(s) there could not be read whole): the spread between runs needs two or more; save main's runs (`cargo bench -- --save-baseline main-<commit>`) and keep them",
                found.len(),
                device.name,
                device.uuid,
                folders.iter().map(|f| format!("`{}`", f.display())).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if skipped > 0 {
        eprintln!(
            "note: --history: {skipped} run(s) under the folders given could not be read whole and were left out"
        );
    }
    let names = found.iter().map(|(_, s)| s.dir.display().to_string()).collect();
    Ok((found.into_iter().map(|(_, s)| s).collect(), names))
}

/// A run is **stale** when its results were measured at a commit other than the checkout
/// `cargo energy` runs in: every result that records a commit names another (a run left
/// from an earlier build, copied in, or kept because this job's `cargo bench` could not
/// start its own). Said on stderr, the exit status unchanged: reading an older run on
/// purpose is legitimate. A pinned run (`ENERGY_RUN_ID`) is this job's by its id, and a run
/// whose results record no commit (outside git, or files of an earlier version) cannot be
/// judged: nothing is said of either.
fn warn_if_stale(set: &ResultSet, pin: Option<&RunPin>) {
    if let Some(note) = stale_note(set, pin, &energy_results::Provenance::current().commit) {
        eprintln!("{note}");
    }
}

fn stale_note(set: &ResultSet, pin: Option<&RunPin>, checkout: &Option<String>) -> Option<String> {
    let checkout = checkout.as_deref().filter(|_| pin.is_none())?;
    let mut commits: Vec<&str> =
        set.results.values().filter_map(|r| r.provenance.as_ref()?.commit.as_deref()).collect();
    commits.sort_unstable();
    commits.dedup();
    if commits.is_empty() || commits.contains(&checkout) {
        return None;
    }
    let short = |c: &str| c.chars().take(8).collect::<String>();
    Some(format!(
        "warning: run `{}` is stale: measured at {}, this checkout is at {}. Run `cargo bench` to measure the checkout, \
         or set ENERGY_RUN_ID to pin the job's own run",
        set.dir.display(),
        commits.iter().map(|c| short(c)).collect::<Vec<_>>().join(", "),
        short(checkout)
    ))
}

/// Compares one directory's runs and prints the text (headed by the directory when
/// `heading`); what it found.
fn compare_one(
    heading: Option<&Path>,
    dir: &Path,
    baseline: &[String],
    candidate: &str,
    pin: Option<&RunPin>,
    options: &CompareOptions,
) -> Result<Outcome> {
    let cand = ResultSet::read_run_pinned(&dir.join(candidate), pin)?;
    warn_if_stale(&cand, pin);
    let (bases, baseline): (Vec<ResultSet>, Vec<String>) = if options.history.is_empty() {
        let bases = baseline.iter().map(|b| ResultSet::read_run(&dir.join(b))).collect::<Result<Vec<_>>>()?;
        (bases, baseline.to_vec())
    } else {
        history_baselines(&options.history, options.history_runs, &cand)?
    };
    let baseline = baseline.as_slice();
    let Some(base) = bases.first() else {
        return Err(Error::new(ErrorKind::InvalidInput, "--baseline: name the saved baseline run"));
    };
    if options.across_boards && bases.len() > 1 {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "--across-boards compares one baseline run: the spread of several runs is measured on one board; give one --baseline",
        ));
    }
    // `cargo bench -- --save-baseline main` writes `new` and `main` alike: a candidate that is
    // its baseline's very run compares nothing (a forgotten `cargo bench`): said first.
    let same_run = matches!(bases.as_slice(), [base] if base.results == cand.results);
    if options.across_boards && options.drift != DriftBasis::Unknown {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "--across-boards judges dynamic energy on its own rule (threshold at least 15 %): drop --within-run, --drift and --control",
        ));
    }
    let comparison = if options.across_boards {
        compare_across_boards(base, &cand, options.threshold)?
    } else {
        compare_runs(&bases, &cand, options.threshold, &options.drift)?
    };
    // Against saved history, what the newest run held is what the candidate must hold: an
    // older run may hold benchmarks removed since.
    let checked = if options.history.is_empty() { &bases[..] } else { &bases[..1] };
    for set in checked {
        comparison.check_missing(set, &cand, &options.removed)?;
    }
    let names = if options.history.is_empty() {
        baseline.join(" + ")
    } else {
        format!("the {} newest saved runs (newest: {})", bases.len(), bases[0].dir.display())
    };
    let asked = Compared {
        dir: heading,
        baseline: &names,
        candidate,
        across_boards: options.across_boards,
        removed: &options.removed,
    };
    let mut text = compare_text(&comparison, &cand, &asked);
    if same_run {
        text.insert_str(
            0,
            &format!(
                "note: `{}` and `{}` hold the very same results: one run, not two (`cargo bench -- --save-baseline NAME` writes `new` and NAME alike); run `cargo bench` for the candidate, then compare\n",
                bases[0].dir.display(),
                cand.dir.display()
            ),
        );
    }
    // A sweep (`args = [...]`) whose least-energy or least-time argument moved is said.
    for (set, name) in bases.iter().zip(baseline) {
        for line in optimum_moves(set, &cand, name, candidate) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    crate::output::emit(&text)?;
    Ok(Outcome { regressed: !comparison.regressions().is_empty(), inconclusive: !comparison.inconclusive().is_empty() })
}
