//! `cargo energy ab --baseline EXE --candidate EXE [-- ARGS]`: the two bench executables run
//! interleaved on one GPU in ABBA order, the verdict from paired differences
//! (`energy_report::paired`).
//!
//! Each run is one process of one executable (run as `cargo energy run` runs them: its own
//! process group, a time limit, SIGINT and SIGTERM passed on; `gpus::run_executable`), with
//! `CARGO_TARGET_DIR=<output>/run-NN-A` and an `ENERGY_RUN_ID` of its own, so its results are
//! `run-NN-A/energy/new`, read back with `ResultSet::read_run` after checking that the run
//! there is this one's. Both executables get the same GPU: `--gpu` (a CUDA ordinal or a
//! UUID, passed as `CUDA_VISIBLE_DEVICES=<UUID>` as `run --gpus` does), else whatever
//! `ENERGY_DEVICE` and `CUDA_VISIBLE_DEVICES` choose; every run's results must name the same
//! GPU, and simulated and measured figures are never mixed. After `--min-pairs` pairs the
//! sequence stops when every benchmark's detectable change is at most `--target`, or at
//! `--max-pairs`. The report (`energy-ab/1`) is written atomically to `<output>/ab.json`.
//! Exit 1 on a regression, 0 otherwise, 2 when nothing could be decided (bad arguments, an
//! executable that failed, runs on different GPUs, a benchmark missing).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use energy_harness::unstable::trace::write_atomically;
use energy_harness::{Error, ErrorKind, Result};
use energy_report::paired::{stop_reason, AbReport, AbSequence, RunFigures, Side, AB_SCHEMA};
use energy_report::{ab_markdown, ab_text, progress_line, ResultSet};

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
    pub baseline: PathBuf,
    pub candidate: PathBuf,
    pub gpu: Option<String>,
    pub min_pairs: usize,
    pub max_pairs: usize,
    pub target_pct: f64,
    pub threshold_pct: f64,
    pub timeout: Option<Duration>,
    pub output_dir: Option<PathBuf>,
    pub format: AbFormat,
    pub removed: Vec<String>,
    pub args: Vec<String>,
}

fn bad(why: String) -> Error {
    Error::new(ErrorKind::InvalidInput, why)
}

/// Refuses numbers that make no sequence.
fn check_args(a: &AbArgs) -> Result<()> {
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
            let base = energy_harness::unstable::report::energy_dir().join("ab");
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

/// Runs the sequence; `Ok(true)` when a benchmark regressed.
pub(super) fn run(a: &AbArgs) -> Result<bool> {
    check_args(a)?;
    let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
    let exe_a = gpus::check_executable("--baseline", &a.baseline, &here)?;
    let exe_b = gpus::check_executable("--candidate", &a.candidate, &here)?;
    let same = std::fs::canonicalize(&exe_a.path).ok() == std::fs::canonicalize(&exe_b.path).ok()
        || std::fs::read(&exe_a.path).ok().zip(std::fs::read(&exe_b.path).ok()).is_some_and(|(x, y)| x == y);
    if same {
        eprintln!(
            "note: --baseline and --candidate are the same executable (one file, or identical contents): an A/A run, no change is expected. Two `cargo bench --no-run` builds write to one path: copy the first away before building the second"
        );
    }
    let sim = std::env::var("ENERGY_DEVICE").is_ok_and(|v| v.trim().to_ascii_lowercase().starts_with("sim"));
    let visible = gpu_env(a.gpu.as_deref(), sim)?;
    let out = output_dir(a.output_dir.as_deref())?;
    let start = Instant::now();
    let stamp =
        format!("energy-ab-{}-{}", std::process::id(), humantime::format_rfc3339_seconds(std::time::SystemTime::now()));
    eprintln!(
        "energy ab: {} against {} in ABBA order, {}-{} pairs, on {}; runs in {}",
        a.candidate.display(),
        a.baseline.display(),
        a.min_pairs,
        a.max_pairs,
        visible.as_deref().map_or("the GPU ENERGY_DEVICE / CUDA_VISIBLE_DEVICES choose".to_string(), |u| u.to_string()),
        out.display()
    );
    gpus::catch_interrupts();
    let mut sequence = AbSequence::new(a.removed.clone());
    let mut stop = None;
    for index in 0..2 * a.max_pairs {
        let side = sequence.next_side();
        let exe = if side == Side::A { &exe_a } else { &exe_b };
        let started_s = start.elapsed().as_secs_f64();
        let set = run_once(a, exe, side, index + 1, &out, &stamp, visible.as_deref())?;
        let figures =
            RunFigures::from_set(&set, index + 1, side, started_s, start.elapsed().as_secs_f64() - started_s)?;
        sequence.add(figures)?;
        if !sequence.runs.len().is_multiple_of(2) {
            continue;
        }
        let pairs = sequence.pairs();
        let changes = if pairs >= 2 { sequence.changes(a.threshold_pct)? } else { Vec::new() };
        let simulated = sequence.runs[0].device.simulated;
        for (id, figures) in sequence.pair_figures() {
            let change = changes.iter().find(|c| c.id == id);
            if let Some(last) = figures.last() {
                eprintln!("{}", progress_line(pairs, a.max_pairs, &id, last, change, simulated));
            }
        }
        if pairs >= 2 {
            stop = stop_reason(&changes, pairs, a.min_pairs, a.max_pairs, a.target_pct);
            if stop.is_some() {
                break;
            }
        }
    }
    let report = AbReport {
        schema: AB_SCHEMA.to_string(),
        baseline: a.baseline.display().to_string(),
        candidate: a.candidate.display().to_string(),
        args: a.args.clone(),
        device: sequence.runs[0].device.clone(),
        threshold_pct: a.threshold_pct,
        target_pct: a.target_pct,
        min_pairs: a.min_pairs,
        max_pairs: a.max_pairs,
        pairs: sequence.pairs(),
        stop: stop.unwrap_or_else(|| format!("--max-pairs {} reached", a.max_pairs)),
        wall_s: start.elapsed().as_secs_f64(),
        changes: sequence.changes(a.threshold_pct)?,
        runs: sequence.runs,
        added: sequence.added,
        removed: sequence.removed,
    };
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| Error::new(ErrorKind::Format, format!("could not write the report as JSON: {e}")))?;
    write_atomically(&out.join("ab.json"), format!("{json}\n").as_bytes())?;
    let text = match a.format {
        AbFormat::Text => ab_text(&report),
        AbFormat::Markdown => ab_markdown(&report),
        AbFormat::Json => format!("{json}\n"),
    };
    crate::output::emit(&text)?;
    eprintln!("energy ab: report in {}", out.join("ab.json").display());
    Ok(!report.regressions().is_empty())
}

/// Runs `exe` once as run `number` of the sequence and reads the run it wrote.
fn run_once(
    a: &AbArgs,
    exe: &BenchExe,
    side: Side,
    number: usize,
    out: &Path,
    stamp: &str,
    visible: Option<&str>,
) -> Result<ResultSet> {
    let dir = out.join(format!("run-{number:02}-{side:?}"));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create the run's folder", e))?;
    let log_path = dir.join("bench.log");
    let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, "create the log", e))?;
    let run_env = format!("{stamp}-{number}");
    let mut env = vec![("ENERGY_RUN_ID", run_env.as_str())];
    if let Some(uuid) = visible {
        env.push(("CUDA_VISIBLE_DEVICES", uuid));
    }
    let label = format!("run {number} ({})", side.role());
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
    let failed =
        |why: String| bad(format!("{label}: {why}; its output is in {}; nothing is compared", log_path.display()));
    match gpus::run_executable(&launch)? {
        ExeEnd::Succeeded => {}
        ExeEnd::Failed(why) | ExeEnd::Interrupted(why) => return Err(failed(why)),
    }
    let new = dir.join("energy").join("new");
    gpus::check_run(&new, &run_env).map_err(failed)?;
    ResultSet::read_run(&new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(baseline: &Path, candidate: &Path) -> AbArgs {
        AbArgs {
            baseline: baseline.into(),
            candidate: candidate.into(),
            gpu: None,
            min_pairs: 2,
            max_pairs: 2,
            target_pct: 1.0,
            threshold_pct: 5.0,
            timeout: Some(Duration::from_secs(30)),
            output_dir: None,
            format: AbFormat::Text,
            removed: vec![],
            args: vec![],
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
            (AbArgs { min_pairs: 1, ..args(p, p) }, "two pairs or more"),
            (AbArgs { max_pairs: 1, ..args(p, p) }, "is below --min-pairs"),
            (AbArgs { target_pct: 0.0, ..args(p, p) }, "--target"),
            (AbArgs { threshold_pct: f64::NAN, ..args(p, p) }, "--threshold"),
        ] {
            let err = run(&change).unwrap_err();
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
        let a = AbArgs { output_dir: Some(dir.path().join("out")), ..args(&exe, &exe) };
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
