//! `cargo energy ab --baseline EXE --candidate EXE [-- ARGS]`: the two sides' bench
//! executables run interleaved on one GPU in ABBA order, the verdict from paired differences
//! (`energy_results::ab`). `cargo energy gate` builds both sides from two revisions and
//! runs the same sequence ([`run_sequence`]).
//!
//! A side is one bench executable or several (`--baseline A1 --baseline A2`: a crate's bench
//! targets). Each run of a side runs each of its executables in turn, one process each (as
//! `cargo energy run` runs them: its own process group, a time limit, SIGINT and SIGTERM
//! passed on; `gpus::run_executable`), with `CARGO_TARGET_DIR=<output>/run-NN-A` and one
//! `ENERGY_RUN_ID` of its own (and `ENERGY_EXPECTED_TARGETS`), so they write one run,
//! `run-NN-A/energy/new`, read back with `ResultSet::read_run` after checking that the run
//! there is this one's and complete. A `--max-minutes` budget stops the sequence after the
//! last pair that fits. Both executables get the same GPU: `--gpu` (a CUDA ordinal or a
//! UUID, passed as `CUDA_VISIBLE_DEVICES=<UUID>` as `run --gpus` does), else whatever
//! `ENERGY_DEVICE` and `CUDA_VISIBLE_DEVICES` choose; every run's results must name the same
//! GPU, and simulated and measured figures are never mixed. After each pair from
//! `--min-pairs` on, a benchmark settles once its detectable change is at most `--target`
//! (for `gate` also once its verdict is clear: a regression, or clearly within the
//! threshold; `energy_results::ab::settles`) and later runs leave it out; the sequence stops
//! when none is left, or at `--max-pairs`. The report (`energy-ab/1`) is written atomically
//! to `<output>/ab.json`.
//! Exit 1 on a regression, 0 otherwise, 2 when nothing could be decided (bad arguments, an
//! executable that failed, runs on different GPUs, a benchmark missing).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use energy_harness::unstable::bench::PAIRED_WINDOWS_ENV;
use energy_harness::{Error, ErrorKind, Result};
use energy_report::paired::run_figures;
use energy_report::{ab_markdown, ab_text, progress_line, ResultSet};
use energy_results::ab::{stop_reason, AbReport, AbSequence, PairedChange, Settling, Side, AB_SCHEMA};
use energy_results::run::{BENCHMARKS_ENV, EXPECTED_TARGETS_ENV, PAIRED_LEAN_ENV, PAIRED_RUN_ENV};
use energy_results::trace::format::write_atomically;

use crate::gpus::{self, BenchExe, ExeEnd, Launch};

/// `--format` of `ab`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum AbFormat {
    /// Lines for the terminal.
    Text,
    /// The `energy-ab/1` report.
    Json,
    /// A table for a pull-request comment.
    Markdown,
}

/// What `cargo energy ab` was asked.
#[derive(Clone, Debug)]
pub(super) struct AbArgs {
    pub baseline: Vec<PathBuf>,
    pub candidate: Vec<PathBuf>,
    pub sequence: SequenceArgs,
    pub format: AbFormat,
}

/// How a paired sequence runs and judges (`ab` and `gate` alike).
#[derive(Clone, Debug)]
pub(super) struct SequenceArgs {
    pub gpu: Option<String>,
    pub min_pairs: usize,
    pub max_pairs: usize,
    pub target_pct: f64,
    pub threshold_pct: f64,
    pub timeout: Option<Duration>,
    /// The longest the whole sequence may take: no pair is started that would end after it.
    pub budget: Option<Duration>,
    /// Windows per benchmark in each run (`ENERGY_PAIRED_WINDOWS`), when set.
    pub windows: Option<usize>,
    pub output_dir: Option<PathBuf>,
    pub removed: Vec<String>,
    pub args: Vec<String>,
    /// The command running the sequence.
    pub command: PairedCommand,
}

/// The command a paired sequence runs for: its name in the lines it prints, and when its
/// benchmarks settle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PairedCommand {
    /// `cargo energy ab`: a measurement of the change, each benchmark to its target.
    Ab,
    /// `cargo energy gate`: a verdict, a benchmark settled on a clear one too.
    Gate,
}

impl SequenceArgs {
    /// When a benchmark settles ([`Settling`]).
    pub fn settling(&self) -> Settling {
        match self.command {
            PairedCommand::Gate => Settling::Verdict { target_pct: self.target_pct, threshold_pct: self.threshold_pct },
            PairedCommand::Ab => Settling::Precise { target_pct: self.target_pct },
        }
    }

    /// `energy ab` or `energy gate`, as its lines begin.
    pub fn prefix(&self) -> &'static str {
        match self.command {
            PairedCommand::Ab => "energy ab",
            PairedCommand::Gate => "energy gate",
        }
    }
}

/// The two sides of a sequence: their executables and how the report names them.
#[derive(Clone, Debug)]
pub(super) struct Sides {
    pub baseline: Vec<BenchExe>,
    pub candidate: Vec<BenchExe>,
    pub baseline_label: String,
    pub candidate_label: String,
    /// Built by `cargo energy gate` from two revisions (not executables given by the user).
    pub from_revisions: bool,
}

fn bad(why: String) -> Error {
    Error::new(ErrorKind::InvalidInput, why)
}

/// Refuses numbers that make no sequence.
fn check_args(a: &SequenceArgs) -> Result<()> {
    if a.min_pairs < 2 {
        return Err(bad(format!(
            "--min-pairs {}: the spread of paired differences needs two pairs or more",
            a.min_pairs
        )));
    }
    if a.max_pairs < a.min_pairs {
        return Err(bad(format!("--max-pairs {} is below --min-pairs {}", a.max_pairs, a.min_pairs)));
    }
    if !(a.target_pct.is_finite() && a.target_pct > 0.0) {
        return Err(bad(format!("--target {}: give a positive percentage", a.target_pct)));
    }
    let (min, max) = (energy_units::bounds::WINDOWS_MIN, energy_units::bounds::WINDOWS_MAX);
    if let Some(n) = a.windows.filter(|n| !(min..=max).contains(n)) {
        return Err(bad(format!("--windows {n}: give a window count from {min} to {max}")));
    }
    if !(a.threshold_pct.is_finite() && a.threshold_pct >= 0.0) {
        return Err(bad(format!("--threshold {}: give a percentage of 0 or more", a.threshold_pct)));
    }
    Ok(())
}

/// The `CUDA_VISIBLE_DEVICES` both executables get: the UUID of `--gpu`, or nothing (the
/// environment's choice); `sim`: ENERGY_DEVICE asks for the simulated GPU.
fn gpu_env(gpu: Option<&str>, sim: bool) -> Result<Option<String>> {
    let Some(spec) = gpu else { return Ok(None) };
    if sim {
        return Err(bad(format!(
            "--gpu {spec} names a real GPU, but ENERGY_DEVICE asks for the simulated one: drop one of them"
        )));
    }
    if spec.trim() == "all" || spec.contains(',') {
        return Err(bad(format!("--gpu {spec}: paired runs share one GPU: give one CUDA ordinal or UUID")));
    }
    let uuids = gpus::select(spec)?;
    Ok(uuids.into_iter().next())
}

/// The output folder: `--output-dir`, else `<target>/energy/ab/<UTC time>` (a suffix when
/// taken).
fn output_dir(given: Option<&Path>) -> Result<PathBuf> {
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => {
            let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string().replace(':', "");
            let base = energy_results::dirs::energy_dir().join("ab");
            let mut dir = base.join(&stamp);
            let mut n = 2;
            while dir.exists() {
                dir = base.join(format!("{stamp}-{n}"));
                n += 1;
            }
            dir
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create the output folder", e))?;
    Ok(std::path::absolute(&dir).unwrap_or(dir))
}

/// Runs `cargo energy ab`; `Ok(true)` when a benchmark regressed.
pub(super) fn run(a: &AbArgs) -> Result<bool> {
    check_args(&a.sequence)?;
    let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
    let side = |flag: &str, paths: &[PathBuf]| -> Result<Vec<BenchExe>> {
        paths.iter().map(|p| gpus::check_executable(flag, p, &here)).collect()
    };
    let label = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
    let sides = Sides {
        baseline: side("--baseline", &a.baseline)?,
        candidate: side("--candidate", &a.candidate)?,
        baseline_label: label(&a.baseline),
        candidate_label: label(&a.candidate),
        from_revisions: false,
    };
    let (report, out) = run_sequence(&a.sequence, &sides)?;
    let text = match a.format {
        AbFormat::Text => ab_text(&report),
        AbFormat::Markdown => ab_markdown(&report),
        AbFormat::Json => {
            std::fs::read_to_string(out.join("ab.json")).map_err(|e| Error::io(&out, "read ab.json", e))?
        }
    };
    crate::output::emit(&text)?;
    eprintln!("{}: report in {}", a.sequence.prefix(), out.join("ab.json").display());
    Ok(!report.regressions().is_empty())
}

/// Whether the two sides are the same executables (one file, or identical contents).
fn same_executables(a: &[BenchExe], b: &[BenchExe]) -> bool {
    let bytes = |exes: &[BenchExe]| -> Option<Vec<Vec<u8>>> {
        let mut all: Vec<Vec<u8>> = exes.iter().map(|e| std::fs::read(&e.path).ok()).collect::<Option<_>>()?;
        all.sort();
        Some(all)
    };
    a.len() == b.len() && bytes(a).is_some_and(|x| bytes(b) == Some(x))
}

/// Runs the paired sequence of `sides` as `s` asks and writes `ab.json` in its output folder;
/// the report and that folder.
pub(super) fn run_sequence(s: &SequenceArgs, sides: &Sides) -> Result<(AbReport, PathBuf)> {
    check_args(s)?;
    if sides.baseline.is_empty() || sides.candidate.is_empty() {
        return Err(bad("each side needs a bench executable".into()));
    }
    if same_executables(&sides.baseline, &sides.candidate) {
        eprintln!(
            "note: the baseline's and the candidate's executables are the same (one file, or identical contents): an A/A run, no change is expected{}",
            if sides.from_revisions {
                ""
            } else {
                ". Two `cargo bench --no-run` builds write to one path: copy the first away before building the second"
            }
        );
    }
    let sim = std::env::var("ENERGY_DEVICE").is_ok_and(|v| v.trim().to_ascii_lowercase().starts_with("sim"));
    let visible = gpu_env(s.gpu.as_deref(), sim)?;
    let out = output_dir(s.output_dir.as_deref())?;
    let start = Instant::now();
    let stamp =
        format!("energy-ab-{}-{}", std::process::id(), humantime::format_rfc3339_seconds(std::time::SystemTime::now()));
    // Each side's expected targets, read from its executables once for the whole sequence.
    let expected = (gpus::expected_targets(&sides.baseline), gpus::expected_targets(&sides.candidate));
    eprintln!(
        "{}: {} against {} in ABBA order, {}-{} pairs{}, {}, on {}; runs in {}",
        s.prefix(),
        sides.candidate_label,
        sides.baseline_label,
        s.min_pairs,
        s.max_pairs,
        s.budget.map_or(String::new(), |b| format!(" within {:.1} min", b.as_secs_f64() / 60.0)),
        s.windows.map_or("each benchmark's own windows".to_string(), |w| {
            format!("{w} windows per benchmark and run (a benchmark that fixes its own keeps them)")
        }),
        visible
            .as_deref()
            .map_or("the GPU that ENERGY_DEVICE or CUDA_VISIBLE_DEVICES chooses".to_string(), |u| u.to_string()),
        out.display()
    );
    gpus::catch_interrupts();
    let mut sequence = AbSequence::new(s.removed.clone());
    let mut stop = None;
    for index in 0..2 * s.max_pairs {
        let side = sequence.next_side();
        let exes = match side {
            Side::A => SideExes { exes: &sides.baseline, expected: &expected.0 },
            Side::B => SideExes { exes: &sides.candidate, expected: &expected.1 },
        };
        let started_s = start.elapsed().as_secs_f64();
        // Once a benchmark has settled, later runs measure the others only.
        let only = (!sequence.settled.is_empty()).then(|| sequence.running().join("\n"));
        let set = run_once(s, &exes, side, index + 1, &out, &stamp, visible.as_deref(), only.as_deref())?;
        let figures = run_figures(&set, index + 1, side, started_s, start.elapsed().as_secs_f64() - started_s)?;
        sequence.add(figures)?;
        if !sequence.runs.len().is_multiple_of(2) {
            continue;
        }
        let pairs = sequence.pairs();
        let changes = if pairs >= 2 { sequence.changes(s.threshold_pct)? } else { Vec::new() };
        let simulated = sequence.runs[0].device.simulated;
        for (id, figures) in sequence.pair_figures() {
            if figures.len() < pairs {
                continue; // settled before this pair
            }
            let change = changes.iter().find(|c| c.id == id);
            if let Some(last) = figures.last() {
                eprintln!("{}", progress_line(pairs, s.max_pairs, &id, last, change, simulated));
            }
        }
        if pairs >= 2 {
            // Benchmarks whose detectable change reached the target are judged on the pairs
            // they ran; the sequence goes on for the others (and stops when none is left).
            if pairs >= s.min_pairs {
                let now = sequence.settle(&changes, s.settling());
                if !now.is_empty() {
                    let left_out = !sequence.running().is_empty() && pairs < s.max_pairs;
                    eprintln!(
                        "{}: settled after {pairs} pairs{}: {}",
                        s.prefix(),
                        if left_out { ", left out of the next" } else { "" },
                        now.iter()
                            .map(|(id, why)| format!("{} ({})", energy_results::error::echo(id), why.describe()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
            let running: Vec<PairedChange> =
                changes.into_iter().filter(|c| !sequence.settled.contains_key(&c.id)).collect();
            stop = stop_reason(&running, pairs, s.min_pairs, s.max_pairs, s.target_pct);
            if stop.is_some() {
                break;
            }
        }
        if let Some(budget) = s.budget {
            let elapsed = start.elapsed().as_secs_f64();
            let per_pair = elapsed / pairs as f64;
            if elapsed + per_pair > budget.as_secs_f64() {
                if pairs < 2 {
                    return Err(bad(format!(
                        "--max-minutes {:.1}: one pair took {per_pair:.0} s, and a verdict needs two (about {:.1} min): give the gate more time or fewer benchmarks (a filter after `--`, or --bench)",
                        budget.as_secs_f64() / 60.0,
                        (2.0 * per_pair / 60.0 * 10.0).ceil() / 10.0
                    )));
                }
                stop = Some(format!(
                    "--max-minutes {:.1} reached after {pairs} pairs (another would take about {per_pair:.0} s){}",
                    budget.as_secs_f64() / 60.0,
                    if pairs < s.min_pairs {
                        format!(", fewer than --min-pairs {}", s.min_pairs)
                    } else {
                        String::new()
                    }
                ));
                break;
            }
        }
    }
    let report = AbReport {
        schema: AB_SCHEMA.to_string(),
        baseline: sides.baseline_label.clone(),
        candidate: sides.candidate_label.clone(),
        args: s.args.clone(),
        device: sequence.runs[0].device.clone(),
        threshold_pct: s.threshold_pct,
        target_pct: s.target_pct,
        min_pairs: s.min_pairs,
        max_pairs: s.max_pairs,
        pairs: sequence.pairs(),
        stop: stop.unwrap_or_else(|| format!("--max-pairs {} reached", s.max_pairs)),
        wall_s: start.elapsed().as_secs_f64(),
        changes: sequence.changes(s.threshold_pct)?,
        runs: sequence.runs,
        added: sequence.added,
        removed: sequence.removed,
        settled: sequence.settled,
        settled_because: sequence.settled_because,
    };
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| Error::new(ErrorKind::Format, format!("could not write the report as JSON: {e}")))?;
    write_atomically(&out.join("ab.json"), format!("{json}\n").as_bytes())?;
    Ok((report, out))
}

/// One side's executables and their `ENERGY_EXPECTED_TARGETS`.
struct SideExes<'a> {
    exes: &'a [BenchExe],
    expected: &'a str,
}

/// Runs the executables of one side in turn as run `number` of the sequence (one run id,
/// one run) and reads the run they wrote.
#[allow(clippy::too_many_arguments)]
fn run_once(
    a: &SequenceArgs,
    side_exes: &SideExes<'_>,
    side: Side,
    number: usize,
    out: &Path,
    stamp: &str,
    visible: Option<&str>,
    only: Option<&str>,
) -> Result<ResultSet> {
    let dir = out.join(format!("run-{number:02}-{side:?}"));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create the run's folder", e))?;
    let log_path = dir.join("bench.log");
    let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, "create the log", e))?;
    let run_env = format!("{stamp}-{number}");
    let windows = a.windows.map(|n| n.to_string());
    let mut env =
        vec![("ENERGY_RUN_ID", run_env.as_str()), (EXPECTED_TARGETS_ENV, side_exes.expected), (PAIRED_RUN_ENV, "1")];
    if let Some(n) = &windows {
        env.push((PAIRED_WINDOWS_ENV, n.as_str()));
    }
    // The first pair's runs measure an idle tail (the idle, and work outliving its windows
    // refused); later runs are lean: no tail, the idle carried from each process's lead-in.
    if number > 2 {
        env.push((PAIRED_LEAN_ENV, "1"));
    }
    if let Some(uuid) = visible {
        env.push(("CUDA_VISIBLE_DEVICES", uuid));
    }
    if let Some(ids) = only {
        env.push((BENCHMARKS_ENV, ids));
    }
    let label = format!("run {number} ({})", side.role());
    let failed =
        |why: String| bad(format!("{label}: {why}; its output is in {}; nothing is compared", log_path.display()));
    for exe in side_exes.exes {
        let launch = Launch {
            exe,
            bench_args: &a.args,
            env: &env,
            target_dir: &dir,
            log: &log,
            log_path: &log_path,
            limit: a.timeout,
            label: &label,
            command: "cargo energy ab",
        };
        match gpus::run_executable(&launch)? {
            ExeEnd::Succeeded => {}
            ExeEnd::Failed(why) | ExeEnd::Interrupted(why) => return Err(failed(why)),
        }
    }
    let new = dir.join("energy").join("new");
    gpus::check_run(&new, &run_env).map_err(failed)?;
    ResultSet::read_run(&new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence() -> SequenceArgs {
        SequenceArgs {
            gpu: None,
            min_pairs: 2,
            max_pairs: 2,
            target_pct: 1.0,
            threshold_pct: 5.0,
            timeout: Some(Duration::from_secs(30)),
            budget: None,
            windows: None,
            output_dir: None,
            removed: vec![],
            args: vec![],
            command: PairedCommand::Ab,
        }
    }

    fn args(baseline: &Path, candidate: &Path) -> AbArgs {
        AbArgs {
            baseline: vec![baseline.into()],
            candidate: vec![candidate.into()],
            sequence: sequence(),
            format: AbFormat::Text,
        }
    }

    fn script(path: &Path, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn numbers_that_make_no_sequence_are_refused() {
        let p = Path::new("/bin/true");
        for (change, needle) in [
            (SequenceArgs { min_pairs: 1, ..sequence() }, "two pairs or more"),
            (SequenceArgs { max_pairs: 1, ..sequence() }, "is below --min-pairs"),
            (SequenceArgs { target_pct: 0.0, ..sequence() }, "--target"),
            (SequenceArgs { threshold_pct: f64::NAN, ..sequence() }, "--threshold"),
        ] {
            let err = run(&AbArgs { sequence: change, ..args(p, p) }).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(err.message().contains(needle), "{needle}: {err}");
        }
        let err = run(&args(Path::new("/nonexistent/a"), p)).unwrap_err();
        assert!(err.message().contains("--baseline /nonexistent/a: no such file"), "{err}");
    }

    #[test]
    fn an_executable_that_fails_names_its_exit_reason() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("failing");
        script(&exe, "echo 'kernel exploded' >&2; exit 3");
        let a = AbArgs {
            sequence: SequenceArgs { output_dir: Some(dir.path().join("out")), ..sequence() },
            ..args(&exe, &exe)
        };
        let err = run(&a).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        let m = err.message();
        assert!(m.contains("run 1 (baseline)") && m.contains("exited with code 3"), "{m}");
        assert!(m.contains("kernel exploded") && m.contains("nothing is compared"), "{m}");
        // One that exits 0 but measures nothing is refused too.
        script(&exe, "exit 0");
        let err = run(&a).unwrap_err();
        assert!(err.message().contains("none wrote a run"), "{err}");
    }

    #[test]
    fn gpu_is_one_gpu() {
        assert!(gpu_env(Some("GPU-a,GPU-b"), false).unwrap_err().message().contains("share one GPU"));
        assert_eq!(gpu_env(Some("GPU-abc"), false).unwrap().as_deref(), Some("GPU-abc"));
        assert_eq!(gpu_env(None, true).unwrap(), None);
        assert!(gpu_env(Some("0"), true).unwrap_err().message().contains("asks for the simulated one"));
    }
}
