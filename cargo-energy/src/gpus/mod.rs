//! `cargo energy run --gpus all -- CARGO_BENCH_ARGS [-- BENCH_ARGS]`: one bench process per
//! GPU of the node, each its own sampler and device, the benchmarks split between them.
//!
//! The benches are built once (`cargo bench --no-run`); then for each GPU `i` of `N`, in
//! parallel, every bench executable runs with `CUDA_VISIBLE_DEVICES` set to that GPU's UUID
//! (so its kernels and its measurement are that GPU's) and
//! `CARGO_TARGET_DIR=<target>/energy-gpus/<label>` (its results in a directory of its own:
//! `<target>/energy-gpus/<label>/energy/new`). Its output goes to `bench.log` there. The
//! benchmarks are split by one queue (`--split queue`, the default: `ENERGY_QUEUE`, see
//! [`queue`]): each GPU's process takes the next benchmark when it is done with one, longest
//! first when the previous run's durations are known, so the GPUs end within about one
//! benchmark of each other; or by hash shards (`--split hash`: `ENERGY_SHARD=i/N`, a
//! benchmark on the same GPU run after run). At the end one line per GPU, and the `report`
//! command that puts the results side by side, never averaged, over the GPUs whose run can
//! be read (a GPU that measured nothing is a line of that report).
//!
//! A GPU's run succeeds only when every executable exits 0 **and** the run they wrote in
//! its folder is this invocation's (its `ENERGY_RUN_ID`), complete and intact; a run that
//! measured nothing on every GPU is a failure too (`/bin/true` exits 0 and measures
//! nothing). A failure names its reason: the exit code or signal and the end of the
//! executable's stderr, or what is wrong with its run. Each executable has a time limit
//! (`--timeout`, two hours by default): one still running then gets SIGTERM, 5 s later
//! SIGKILL, its whole process group, and the GPU's run fails saying so. Each executable
//! runs in a process group of its own; Ctrl-C (SIGINT) or SIGTERM to `cargo energy run` is
//! passed on to every one of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use energy_harness::unstable::bench::{QUEUE_ENV, QUEUE_WORKER_ENV};
use energy_harness::unstable::device::NO_GPU_HINT;
use energy_harness::unstable::report::{bench_artifacts, is_energy_bench, target_name_of};
use energy_harness::{Error, ErrorKind, Result};
use energy_results::run::RunManifest;
use energy_results::run::EXPECTED_TARGETS_ENV;
use energy_results::run::MANIFEST_FILE;

pub(crate) mod process;
mod queue;

pub(crate) use queue::Split;

pub(crate) use process::{catch_interrupts, run_executable, signal_name, ExeEnd, Launch, INTERRUPT};

/// The default of `--timeout`: the longest one bench executable may run on one GPU.
pub(super) const DEFAULT_TIMEOUT: &str = "2h";

/// `--timeout`: the longest one executable may run, or `None` for no limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct TimeLimit(pub Option<Duration>);

/// `--timeout`: a duration (`90m`, `2h`, `600s`) or a number of seconds; `0` or `none`
/// for no limit.
pub(super) fn parse_timeout(text: &str) -> std::result::Result<TimeLimit, String> {
    parse_limit(text).map(TimeLimit)
}

fn parse_limit(text: &str) -> std::result::Result<Option<Duration>, String> {
    let text = text.trim();
    if text == "0" || text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let limit = match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 => Duration::from_secs_f64(seconds),
        Ok(_) => return Err(format!("`{text}` is not a time limit: give a positive number of seconds, or 0 for none")),
        Err(_) => humantime::parse_duration(text)
            .map_err(|e| format!("`{text}` is not a duration ({e}): give seconds, `90m`, `2h`, or 0 for none"))?,
    };
    if limit.is_zero() {
        return Ok(None);
    }
    Ok(Some(limit))
}

/// One GPU's share of the run.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct GpuRun {
    /// The GPU's UUID (`GPU-…`), what `CUDA_VISIBLE_DEVICES` gets.
    pub uuid: String,
    /// `gpu<i>-GPU-xxxxxxxx`: the folder and the label in messages.
    pub label: String,
    /// `i/N` for `ENERGY_SHARD`.
    pub shard: String,
    /// Its `CARGO_TARGET_DIR` (results under `energy/` there).
    pub target_dir: PathBuf,
}

/// The runs for `uuids` under the target directory `target`.
pub(super) fn plan(uuids: &[String], target: &Path) -> Vec<GpuRun> {
    uuids
        .iter()
        .enumerate()
        .map(|(i, uuid)| {
            let label = format!("gpu{i}-{}", energy_results::result::short_uuid(uuid));
            GpuRun {
                uuid: uuid.clone(),
                shard: format!("{}/{}", i + 1, uuids.len()),
                target_dir: target.join("energy-gpus").join(&label),
                label,
            }
        })
        .collect()
}

/// The GPUs `--gpus` names: `all` (every GPU CUDA sees here), CUDA ordinals (`0,2`), or
/// UUIDs (`GPU-…,GPU-…`).
pub(super) fn select(spec: &str) -> Result<Vec<String>> {
    let bad = |why: String| Error::new(ErrorKind::InvalidInput, format!("--gpus `{spec}`: {why}"));
    let parts: Vec<&str> = spec.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Err(bad("empty: give all, CUDA ordinals (0,1) or UUIDs".into()));
    }
    if parts.iter().all(|p| p.to_ascii_uppercase().starts_with("GPU-")) {
        let uuids: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
        return refuse_duplicates(spec, uuids);
    }
    let gpus = energy_harness::unstable::device::list_gpus().map_err(|e| {
        let sim = std::env::var("ENERGY_DEVICE").is_ok_and(|v| v.trim().to_ascii_lowercase().starts_with("sim"));
        advice_for_run(e, sim)
    })?;
    let visible: Vec<&energy_harness::unstable::device::GpuListing> =
        gpus.iter().filter(|g| g.cuda_ordinal.is_some()).collect();
    if spec.trim() == "all" {
        if visible.is_empty() {
            return Err(Error::new(ErrorKind::NoGpu, "no GPU is visible to CUDA here (CUDA_VISIBLE_DEVICES?)"));
        }
        let mut ordered = visible.clone();
        ordered.sort_by_key(|g| g.cuda_ordinal);
        return Ok(ordered.iter().map(|g| g.uuid.clone()).collect());
    }
    let uuids = parts
        .iter()
        .map(|p| {
            let ordinal: u32 =
                p.parse().map_err(|_| bad(format!("`{p}` is neither all, a CUDA ordinal nor a UUID")))?;
            visible
                .iter()
                .find(|g| g.cuda_ordinal == Some(ordinal))
                .map(|g| g.uuid.clone())
                .ok_or_else(|| bad(format!("there is no CUDA device {ordinal} here ({} visible)", visible.len())))
        })
        .collect::<Result<Vec<String>>>()?;
    refuse_duplicates(spec, uuids)
}

/// Refuses a GPU named twice (`GPU-a,GPU-b,GPU-a`, `0,0`, UUIDs in another case): two
/// processes on one GPU would disturb each other's kernels and read each other's energy.
fn refuse_duplicates(spec: &str, uuids: Vec<String>) -> Result<Vec<String>> {
    for (i, uuid) in uuids.iter().enumerate() {
        if uuids[..i].iter().any(|u| u.eq_ignore_ascii_case(uuid)) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "--gpus `{spec}`: {uuid} is named twice; two processes on one GPU would disturb each other's \
                     kernels and read each other's energy: name each GPU once"
                ),
            ));
        }
    }
    Ok(uuids)
}

/// The error of listing the GPUs with advice that fits `run`: it shares out the real GPUs
/// NVML lists, so setting ENERGY_DEVICE=sim (the advice of the other commands) does not
/// help it, and when that is set already it says so.
fn advice_for_run(e: Error, sim: bool) -> Error {
    let why = e.message().replace(&format!("; {NO_GPU_HINT}"), "");
    if why == e.message() {
        return e;
    }
    let advice = if sim {
        "ENERGY_DEVICE=sim is set, but `cargo energy run` shares out the real GPUs NVML lists, one process each, and \
         finds none here: on the simulated GPU, run `cargo bench` itself (one process)"
    } else {
        "`cargo energy run` shares out the real GPUs NVML lists, one process each: run it on a machine with NVIDIA \
         GPUs and their driver; to try the benches on the simulated GPU, run `ENERGY_DEVICE=sim cargo bench` instead"
    };
    Error::new(e.kind(), format!("{why}; {advice}"))
}

/// A bench executable and the folder cargo runs it in (its package's).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct BenchExe {
    pub path: PathBuf,
    pub package_dir: PathBuf,
}

/// `ENERGY_EXPECTED_TARGETS` for a run of `exes`: the names of those that are energy bench
/// targets (a plain criterion bench among them never writes to the run), so that a run cut
/// before one of them started is never taken for complete.
pub(crate) fn expected_targets(exes: &[BenchExe]) -> String {
    let mut names: Vec<String> =
        exes.iter().filter(|e| is_energy_bench(&e.path) != Some(false)).map(|e| target_name_of(&e.path)).collect();
    names.sort();
    names.dedup();
    names.join(",")
}

/// The bench executables in `cargo bench --no-run --message-format=json` output, each with
/// its package's folder (one whose manifest cargo does not name is passed over).
pub(super) fn bench_executables(messages: &str) -> Vec<BenchExe> {
    bench_artifacts(messages)
        .into_iter()
        .filter_map(|a| {
            let manifest = a.manifest_path?;
            let package_dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
            Some(BenchExe { path: a.executable, package_dir })
        })
        .collect()
}

/// Builds the benches, runs them on every selected GPU in parallel, each executable for at
/// most `timeout`; `Ok(true)` when every GPU's run succeeded and something was measured.
pub(super) fn run(
    gpus: &str,
    prebuilt: &[PathBuf],
    timeout: Option<Duration>,
    split: Split,
    args: &[String],
) -> Result<bool> {
    let (cargo_args, bench_args) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let uuids = select(gpus)?;
    let exes = if prebuilt.is_empty() { build(cargo_args)? } else { given(prebuilt, cargo_args)? };
    run_executables(&uuids, &exes, bench_args, timeout, split)
}

/// Bench executables built elsewhere (a runner without a toolchain): each must exist; they
/// run in the current folder, as `cargo bench` would run them from the package's.
fn given(prebuilt: &[PathBuf], cargo_args: &[String]) -> Result<Vec<BenchExe>> {
    if !cargo_args.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "--exe runs prebuilt bench executables: there is no cargo to pass `{}` to (the bench's own arguments \
                 go after `--`)",
                cargo_args.join(" ")
            ),
        ));
    }
    let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
    prebuilt.iter().map(|p| check_executable("--exe", p, &here)).collect()
}

/// A bench executable built elsewhere, given as `flag PATH`: it must be an executable
/// file; it runs in `here`, as `cargo bench` would run it from its package's folder.
pub(crate) fn check_executable(flag: &str, p: &Path, here: &Path) -> Result<BenchExe> {
    let refuse = |why: &str| {
        Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{flag} {}: {why} (`cargo bench --no-run` prints the bench executables' paths)", p.display()),
        ))
    };
    match std::fs::metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return refuse("no such file"),
        Err(e) => return refuse(&format!("cannot be read ({e})")),
        Ok(m) if m.is_dir() => return refuse("is a directory, not a bench executable"),
        Ok(m) if !m.is_file() => return refuse("is not a regular file"),
        #[cfg(unix)]
        Ok(m) if std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 == 0 => {
            return refuse("is not executable (chmod +x it, or give the executable itself)")
        }
        Ok(_) => {}
    }
    let path = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    Ok(BenchExe { path, package_dir: here.to_path_buf() })
}

/// `cargo bench --no-run` with `cargo_args`: the bench executables it built.
pub(crate) fn build(cargo_args: &[String]) -> Result<Vec<BenchExe>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("energy run: building the benches (cargo bench --no-run {})", cargo_args.join(" "));
    let built = Command::new(&cargo)
        .arg("bench")
        .arg("--no-run")
        .arg("--message-format=json")
        .args(cargo_args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not run cargo: {e}")))?;
    if !built.status.success() {
        return Err(Error::new(ErrorKind::InvalidInput, "cargo bench --no-run failed (its errors are above)"));
    }
    let exes = bench_executables(&String::from_utf8_lossy(&built.stdout));
    if exes.is_empty() {
        return Err(Error::new(ErrorKind::InvalidInput, "cargo built no bench target: nothing to run"));
    }
    Ok(exes)
}

/// What one GPU's share came to.
struct GpuOutcome {
    wall_s: f64,
    /// Why it failed, one entry per reason (empty: it succeeded).
    problems: Vec<String>,
    /// Results in its run (when the run could be read).
    results: usize,
}

/// Runs `exes` on every GPU of `uuids` in parallel, the benchmarks split by `split`.
fn run_executables(
    uuids: &[String],
    exes: &[BenchExe],
    bench_args: &[String],
    timeout: Option<Duration>,
    split: Split,
) -> Result<bool> {
    let target = energy_results::dirs::energy_dir().parent().map(Path::to_path_buf).unwrap_or_else(|| "target".into());
    let target = std::path::absolute(&target).unwrap_or(target);
    let runs = plan(uuids, &target);
    let run_id = format!(
        "energy-run-{}-{}",
        std::process::id(),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    );
    let limit = timeout.map_or("no time limit".to_string(), |l| {
        format!("at most {} each", humantime::format_duration(Duration::from_secs(l.as_secs().max(1))))
    });
    let base = target.join("energy-gpus");
    let queue = match split {
        Split::Queue => Some(queue::prepare(&base, &run_id)?),
        Split::Hash => None,
    };
    let how = if queue.is_some() { "one queue" } else { "one hash shard each" };
    eprintln!("energy run: {} bench target(s) on {} GPU(s), {how}, {limit}", exes.len(), runs.len());
    catch_interrupts();
    let outcomes: Vec<(GpuRun, Result<GpuOutcome>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .map(|gpu| {
                let (exes, bench_args, run_id, queue) = (exes, bench_args, &run_id, queue.as_deref());
                scope.spawn(move || (gpu.clone(), run_on_gpu(gpu, exes, bench_args, run_id, queue, timeout)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a GPU's runner thread")).collect()
    });
    let ended = match &queue {
        Some(dir) => Some(queue::conclude(&base, dir)?),
        None => None,
    };
    let mut all_ok = true;
    let mut measured = 0;
    let (mut dirs, mut left_out, mut readable_results) = (Vec::new(), Vec::new(), 0);
    for (gpu, outcome) in &outcomes {
        let energy = gpu.target_dir.join("energy");
        match outcome {
            Ok(o) => {
                let ok = o.problems.is_empty();
                all_ok &= ok;
                measured += o.results;
                let what = match (ok, o.results, &queue) {
                    (false, _, _) => "FAILED".to_string(),
                    (true, 0, Some(_)) => "ok, measured nothing (the queue ran out)".to_string(),
                    (true, 0, None) => "ok, nothing in its shard".to_string(),
                    (true, n, _) => format!("ok, {n} result(s)"),
                };
                let share = match &ended {
                    Some(end) => {
                        let (taken, _) = end.taken.get(&gpu.label).copied().unwrap_or((0, 0.0));
                        format!("took {taken} of {}", end.total)
                    }
                    None => format!("shard {}", gpu.shard),
                };
                eprintln!(
                    "  {}  {}  {share}  {what}  {:.1} s  results {}  log {}",
                    gpu.label,
                    gpu.uuid,
                    o.wall_s,
                    energy.join("new").display(),
                    gpu.target_dir.join("bench.log").display()
                );
                for problem in &o.problems {
                    eprintln!("      {problem}");
                }
            }
            Err(e) => {
                all_ok = false;
                eprintln!("  {}  {}  could not run: {e}", gpu.label, gpu.uuid);
            }
        }
        // The report command names the GPUs whose run it can read: this invocation's,
        // complete and intact (one that measured nothing is a line of the report).
        match check_run(&energy.join("new"), &format!("{run_id}-{}", gpu.label)) {
            Ok(n) => {
                readable_results += n;
                dirs.push(format!("--dir {}", energy.display()));
            }
            Err(_) => left_out.push(gpu.label.as_str()),
        }
    }
    if let Some(end) = &ended {
        let done: Vec<String> = end.taken.iter().map(|(w, (n, at))| format!("{w} {n} (done at {at:.1} s)")).collect();
        eprintln!("energy run: queue of {} benchmark(s): {}", end.total, done.join(", "));
        for problem in &end.problems {
            eprintln!("  FAILED: {problem}");
        }
        all_ok &= end.problems.is_empty();
    }
    let signal = INTERRUPT.load(Ordering::SeqCst);
    if signal != 0 {
        eprintln!(
            "energy run: interrupted ({}): the bench processes were stopped; no run is complete",
            signal_name(signal)
        );
        return Ok(false);
    }
    if all_ok && measured == 0 {
        eprintln!(
            "energy run: FAILED: nothing was measured on any GPU: every executable exited 0 but no run holds a result \
             (a filter that matches no benchmark? executables that are not energy benches?)"
        );
        return Ok(false);
    }
    if readable_results == 0 {
        eprintln!("energy run: no GPU's run can be read whole: there is no report to show");
        return Ok(false);
    }
    let left_out = if left_out.is_empty() {
        String::new()
    } else {
        format!(" (left out, their run is not complete: {})", left_out.join(", "))
    };
    eprintln!("side by side, one table per GPU: cargo energy report {}{left_out}", dirs.join(" "));
    Ok(all_ok)
}

/// Runs every bench executable on one GPU, one after another, each for at most `limit`,
/// taking its benchmarks from `queue` (else its hash shard), then checks the run they wrote.
fn run_on_gpu(
    gpu: &GpuRun,
    exes: &[BenchExe],
    bench_args: &[String],
    run_id: &str,
    queue: Option<&Path>,
    limit: Option<Duration>,
) -> Result<GpuOutcome> {
    std::fs::create_dir_all(&gpu.target_dir).map_err(|e| Error::io(&gpu.target_dir, "create the GPU's folder", e))?;
    let log_path = gpu.target_dir.join("bench.log");
    let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, "create the log", e))?;
    let start = Instant::now();
    let run_env = format!("{run_id}-{}", gpu.label);
    let mut problems = Vec::new();
    let expected = expected_targets(exes);
    for (i, exe) in exes.iter().enumerate() {
        if INTERRUPT.load(Ordering::SeqCst) != 0 {
            break;
        }
        let name =
            exe.path.file_name().map_or_else(|| exe.path.display().to_string(), |n| n.to_string_lossy().into_owned());
        eprintln!("  {}  running {name} ({} of {}) on {}", gpu.label, i + 1, exes.len(), gpu.uuid);
        // With a queue, a shard of this machine (ENERGY_SHARD set for `cargo energy run`)
        // passes on: the GPUs share the machine's shard.
        let queue_dir = queue.map(|q| q.display().to_string());
        let mut env = vec![
            ("CUDA_VISIBLE_DEVICES", gpu.uuid.as_str()),
            ("ENERGY_RUN_ID", run_env.as_str()),
            (QUEUE_ENV, queue_dir.as_deref().unwrap_or("")),
            (EXPECTED_TARGETS_ENV, expected.as_str()),
        ];
        if queue.is_some() {
            env.push((QUEUE_WORKER_ENV, gpu.label.as_str()));
        } else {
            env.push(("ENERGY_SHARD", gpu.shard.as_str()));
        }
        let launch = Launch {
            exe,
            bench_args,
            env: &env,
            target_dir: &gpu.target_dir,
            log: &log,
            log_path: &log_path,
            limit,
            label: &gpu.label,
            command: "cargo energy run",
        };
        match run_executable(&launch)? {
            ExeEnd::Succeeded => {}
            ExeEnd::Failed(why) => problems.push(why),
            ExeEnd::Interrupted(why) => {
                problems.push(why);
                break;
            }
        }
    }
    let mut results = 0;
    if problems.is_empty() {
        match check_run(&gpu.target_dir.join("energy").join("new"), &run_env) {
            Ok(n) => results = n,
            Err(why) => problems.push(why),
        }
    }
    Ok(GpuOutcome { wall_s: start.elapsed().as_secs_f64(), problems, results })
}

/// Checks the run the executables of one GPU wrote in `dir`: there, this invocation's
/// (`ENERGY_RUN_ID` = `run_env`), complete and intact. Returns how many results it holds.
pub(crate) fn check_run(dir: &Path, run_env: &str) -> std::result::Result<usize, String> {
    if !dir.join(MANIFEST_FILE).is_file() {
        return Err(format!(
            "every executable exited 0, but none wrote a run in {}: nothing was measured (not an energy bench \
             executable? --list or --test among the bench arguments?)",
            dir.display()
        ));
    }
    let manifest = RunManifest::read_manifest(dir).map_err(|e| e.message().to_string())?;
    let expected = format!("env:{run_env}");
    if manifest.invocation.key != expected {
        return Err(format!(
            "every executable exited 0, but the run in {} is another one (`{}`, started {}), not this one's: nothing \
             was measured (not an energy bench executable?)",
            dir.display(),
            manifest.invocation.key,
            manifest.started
        ));
    }
    let paths = manifest.check(dir).map_err(|e| e.message().to_string())?;
    Ok(paths.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gpu_gets_its_shard_and_folder() {
        let uuids = vec!["GPU-c7440000-1111".to_string(), "GPU-aaaa0000-2222".to_string()];
        let runs = plan(&uuids, Path::new("/t"));
        assert_eq!(runs[0].shard, "1/2");
        assert_eq!(runs[1].shard, "2/2");
        assert_eq!(runs[0].label, "gpu0-GPU-c7440000");
        assert_eq!(runs[1].target_dir, Path::new("/t/energy-gpus/gpu1-GPU-aaaa0000"));
    }

    #[test]
    fn uuids_are_taken_as_given_and_bad_lists_are_refused() {
        assert_eq!(select("GPU-a, GPU-b").unwrap(), vec!["GPU-a".to_string(), "GPU-b".to_string()]);
        assert!(select(" , ").unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn a_gpu_named_twice_is_refused() {
        for spec in ["GPU-a,GPU-b,GPU-a", "GPU-a,GPU-a", "GPU-a,gpu-A"] {
            let err = select(spec).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{spec}");
            assert!(err.message().contains("is named twice"), "{err}");
        }
    }

    #[test]
    fn without_gpus_the_advice_fits_run_and_knows_energy_device_sim_is_set() {
        let no_driver =
            || Error::new(ErrorKind::NoDriver, format!("libnvidia-ml.so could not be loaded; {NO_GPU_HINT}"));
        let set = advice_for_run(no_driver(), true).to_string();
        assert!(set.contains("ENERGY_DEVICE=sim is set") && !set.contains("or set ENERGY_DEVICE=sim"), "{set}");
        let unset = advice_for_run(no_driver(), false).to_string();
        assert!(
            unset.contains("`ENERGY_DEVICE=sim cargo bench` instead") && !unset.contains("or set ENERGY"),
            "{unset}"
        );
        assert_eq!(advice_for_run(no_driver(), true).kind(), ErrorKind::NoDriver);
        // Other errors are left as they are.
        assert_eq!(advice_for_run(Error::new(ErrorKind::Nvml, "other"), true).to_string(), "other");
    }

    #[test]
    fn time_limits_read_seconds_durations_and_none() {
        assert_eq!(parse_limit("90").unwrap(), Some(Duration::from_secs(90)));
        assert_eq!(parse_limit("1.5").unwrap(), Some(Duration::from_millis(1500)));
        assert_eq!(parse_limit("2h").unwrap(), Some(Duration::from_secs(7200)));
        assert_eq!(parse_limit(DEFAULT_TIMEOUT).unwrap(), Some(Duration::from_secs(7200)));
        assert_eq!(parse_limit("0").unwrap(), None);
        assert_eq!(parse_limit("none").unwrap(), None);
        for bad in ["-1", "nan", "inf", "x", "", "1e300"] {
            assert!(parse_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bench_executables_come_from_cargos_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"kind":["lib"]},"executable":null,"manifest_path":"/w/Cargo.toml"}
{"reason":"compiler-artifact","target":{"kind":["bench"]},"executable":"/w/target/release/deps/fma-1","manifest_path":"/w/Cargo.toml"}
not json
{"reason":"build-finished","success":true}"#;
        let exes = bench_executables(messages);
        assert_eq!(exes, vec![BenchExe { path: "/w/target/release/deps/fma-1".into(), package_dir: "/w".into() }]);
    }
}
