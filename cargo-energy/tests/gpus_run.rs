//! `cargo energy run --gpus …` end to end with a stand-in cargo and bench executable (no GPU
//! needed): each GPU gets its own process with its UUID in CUDA_VISIBLE_DEVICES, the queue (or its shard),
//! its own result folder and the bench arguments; a GPU whose run fails makes the exit 1,
//! saying why (exit code or signal and the end of stderr, a time limit, no run written);
//! exit 0 with nothing measured is a failure; a GPU named twice and an `--exe` that is a
//! directory are refused (docs/RELIABILITY.md).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use energy_harness::unstable::report::RunWriter;
use energy_harness::ResultDevice;
use energy_results::run::Invocation;

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A complete run as a bench writes it, with `results` results, made once under `dir`. A
/// stand-in bench "measures" by copying it into its folder and stamping it with its
/// `ENERGY_RUN_ID` (the manifest itself is not hashed): see [`MEASURE`].
fn template_run(dir: &Path, results: usize) -> PathBuf {
    let template = dir.join(format!("template-{results}"));
    let writer = RunWriter::begin(&template, "fake", &Invocation { key: "env:TEMPLATE".into() }).unwrap();
    let device =
        ResultDevice { name: "GPU".into(), uuid: "GPU-x".into(), driver: None, simulated: false, power_limit_w: None };
    for i in 0..results {
        writer.commit(&format!("fake{i}/energy"), &format!("fake{i}_energy"), &device, [b"{}", b"t", b"p"]).unwrap();
    }
    writer.finish(0).unwrap();
    template
}

/// What a stand-in bench runs to leave the run in `$TEMPLATE` as its own (a new run
/// replaces the folder, as a bench's first target does).
const MEASURE: &str = r#"rm -rf "$CARGO_TARGET_DIR/energy/new" && mkdir -p "$CARGO_TARGET_DIR/energy/new" && cp "$TEMPLATE"/* "$CARGO_TARGET_DIR/energy/new/" && sed -i "s/env:TEMPLATE/env:$ENERGY_RUN_ID/" "$CARGO_TARGET_DIR/energy/new/run.json""#;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_gpu_runs_its_own_shard_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("fakebench");
    script(
        &bench,
        &format!(
            r#"echo "$CUDA_VISIBLE_DEVICES|$ENERGY_SHARD|$ENERGY_RUN_ID|$*|$(pwd)" > "$CARGO_TARGET_DIR/seen.txt"
[ "$CUDA_VISIBLE_DEVICES" = "GPU-bad" ] && exit 1
{MEASURE}"#
        ),
    );
    let template = template_run(dir.path(), 1);
    let cargo = dir.path().join("fakecargo");
    script(
        &cargo,
        &format!(
            r#"echo '{{"reason":"compiler-artifact","target":{{"kind":["bench"]}},"executable":"{}","manifest_path":"{}/Cargo.toml"}}'"#,
            bench.display(),
            dir.path().display()
        ),
    );
    let target = dir.path().join("target");
    let run = |gpus: &str| {
        Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
            .args(["run", "--gpus", gpus, "--split", "hash", "--", "--bench", "fma", "--", "fma_loop/"])
            .env("CARGO", &cargo)
            .env("CARGO_TARGET_DIR", &target)
            .env("TEMPLATE", &template)
            .output()
            .unwrap()
    };
    let out = run("GPU-aaaa0000-1,GPU-c7440000-2");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for (label, uuid, shard) in
        [("gpu0-GPU-aaaa0000", "GPU-aaaa0000-1", "1/2"), ("gpu1-GPU-c7440000", "GPU-c7440000-2", "2/2")]
    {
        let seen = std::fs::read_to_string(target.join("energy-gpus").join(label).join("seen.txt")).unwrap();
        let fields: Vec<&str> = seen.trim().split('|').collect();
        assert_eq!(fields[0], uuid, "{seen}");
        assert_eq!(fields[1], shard, "{seen}");
        assert!(fields[2].ends_with(label), "one run id per GPU: {seen}");
        assert_eq!(fields[3], "--bench fma_loop/", "the bench binary's own arguments: {seen}");
        assert_eq!(Path::new(fields[4]), dir.path(), "run in the package's folder: {seen}");
    }
    assert!(
        stderr.contains("cargo energy report --dir") && stderr.contains("energy-gpus/gpu1-GPU-c7440000/energy"),
        "{stderr}"
    );
    // One GPU's failure fails the whole, and says which.
    let out = run("GPU-aaaa0000-1,GPU-bad");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("GPU-bad") && stderr.contains("FAILED"), "{stderr}");
    // A list that is neither all, ordinals nor UUIDs is refused (exit 2 material).
    let out = run(" , ");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn prebuilt_executables_run_without_cargo_in_the_current_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("prebuilt-bench");
    script(
        &bench,
        &format!(
            r#"echo "$CUDA_VISIBLE_DEVICES|$ENERGY_SHARD|$*|$(pwd)|$ENERGY_QUEUE|$ENERGY_QUEUE_WORKER" > "$CARGO_TARGET_DIR/seen.txt"
{MEASURE}"#
        ),
    );
    let template = template_run(dir.path(), 1);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let target = dir.path().join("target");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--gpus", "GPU-aaaa0000-1,GPU-bbbb0000-2", "--exe", bench.to_str().unwrap()];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
            .args(&args)
            .current_dir(&work)
            // No cargo anywhere: a runner without a toolchain.
            .env("CARGO", dir.path().join("no-cargo-here"))
            .env("CARGO_TARGET_DIR", &target)
            .env("TEMPLATE", &template)
            .output()
            .unwrap()
    };
    let out = run(&["--", "--", "instructions/int/"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let seen = std::fs::read_to_string(target.join("energy-gpus/gpu1-GPU-bbbb0000/seen.txt")).unwrap();
    let fields: Vec<&str> = seen.trim().split('|').collect();
    // The default split is one queue: no hash shard, the queue's folder and the GPU's label.
    assert_eq!(&fields[..3], ["GPU-bbbb0000-2", "", "--bench instructions/int/"], "{seen}");
    assert_eq!(Path::new(fields[3]), work, "{seen}");
    assert_eq!(Path::new(fields[4]), target.join("energy-gpus/queue"), "{seen}");
    assert_eq!(fields[5], "gpu1-GPU-bbbb0000", "{seen}");
    // cargo arguments with --exe have nowhere to go; a missing executable is named.
    let out = run(&["--release"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no cargo to pass `--release`"));
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
        .args(["run", "--gpus", "GPU-aaaa0000-1", "--exe", "/nonexistent/bench"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/bench: no such file"));
}

/// `cargo energy run --gpus GPUS --exe EXE… EXTRA` with a template run in `$TEMPLATE`.
fn run_exes(dir: &Path, gpus: &str, exes: &[&Path], extra: &[&str], template: &Path) -> (Output, f64) {
    let mut args: Vec<String> = vec!["run".into(), "--gpus".into(), gpus.into()];
    for exe in exes {
        args.push("--exe".into());
        args.push(exe.display().to_string());
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
        .args(&args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("TEMPLATE", template)
        .env_remove("ENERGY_DEVICE")
        .output()
        .unwrap();
    (out, start.elapsed().as_secs_f64())
}

#[test]
fn an_exe_that_is_a_directory_or_cannot_run_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let template = template_run(dir.path(), 1);
    let (out, _) = run_exes(dir.path(), "GPU-a", &[dir.path()], &[], &template);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(": is a directory, not a bench executable"), "{}", stderr(&out));
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "not a program").unwrap();
    let (out, _) = run_exes(dir.path(), "GPU-a", &[&plain], &[], &template);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("plain: is not executable"), "{}", stderr(&out));
}

#[test]
fn a_failed_executable_says_its_exit_code_or_signal_and_the_end_of_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let template = template_run(dir.path(), 1);
    let exit3 = dir.path().join("exit3");
    script(&exit3, "echo 'loading kernels' >&2\necho 'error: CUDA_ERROR_ILLEGAL_ADDRESS in saxpy' >&2\nexit 3");
    let (out, _) = run_exes(dir.path(), "GPU-a", &[&exit3], &[], &template);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("FAILED") && err.contains("exit3 exited with code 3; the end of its stderr:"), "{err}");
    assert!(err.contains("        error: CUDA_ERROR_ILLEGAL_ADDRESS in saxpy"), "{err}");
    let crash = dir.path().join("crash");
    script(&crash, "printf 'segfault ahead \\033[2J\\n' >&2\nkill -SEGV $$");
    let (out, _) = run_exes(dir.path(), "GPU-a", &[&crash], &[], &template);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("crash was killed by signal 11 (SIGSEGV)"), "{err}");
    assert!(err.contains("segfault ahead \\u{1b}[2J") && !err.contains('\u{1b}'), "escapes shown, not sent: {err}");
    // The log keeps everything it wrote.
    let log = std::fs::read_to_string(dir.path().join("target/energy-gpus/gpu0-GPU-a/bench.log")).unwrap();
    assert!(log.contains("segfault ahead"), "{log}");
}

#[test]
fn exit_0_with_nothing_measured_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let template = template_run(dir.path(), 1);
    let (out, _) = run_exes(dir.path(), "GPU-a", &[Path::new("/bin/true")], &[], &template);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("every executable exited 0, but none wrote a run in"), "{err}");
    // A run left in the folder by an earlier invocation is not this one's.
    let measures = dir.path().join("measures");
    script(&measures, MEASURE);
    let (out, _) = run_exes(dir.path(), "GPU-a", &[&measures], &[], &template);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("ok, 1 result(s)"), "{}", stderr(&out));
    let (out, _) = run_exes(dir.path(), "GPU-a", &[Path::new("/bin/true")], &[], &template);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is another one"), "{}", stderr(&out));
    // A shard with no benchmark is fine when another GPU measured; nothing anywhere is not.
    let empty = template_run(dir.path(), 0);
    let split = dir.path().join("split");
    script(&split, &format!("[ \"$CUDA_VISIBLE_DEVICES\" = GPU-b ] && TEMPLATE={}\n{MEASURE}", empty.display()));
    let (out, _) = run_exes(dir.path(), "GPU-a,GPU-b", &[&split], &[], &template);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("ok, measured nothing (the queue ran out)"), "{}", stderr(&out));
    let (out, _) = run_exes(dir.path(), "GPU-a,GPU-b", &[&measures], &[], &empty);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing was measured on any GPU"), "{}", stderr(&out));
}

#[test]
fn a_hanging_executable_is_stopped_at_its_time_limit_with_its_processes() {
    let dir = tempfile::tempdir().unwrap();
    let template = template_run(dir.path(), 1);
    let hang = dir.path().join("hang");
    let pid_file = dir.path().join("sleep.pid");
    script(&hang, &format!("echo 'warming up' >&2\nsleep 600 &\necho $! > {}\nwait", pid_file.display()));
    let (out, seconds) = run_exes(dir.path(), "GPU-a", &[&hang], &["--timeout", "2"], &template);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(seconds < 30.0, "stopped at its limit, not after its sleep: {seconds} s");
    assert!(err.contains("running hang (1 of 1) on GPU-a"), "it says what runs: {err}");
    assert!(err.contains("hang: still running after 1 s (time limit 2 s)"), "progress: {err}");
    assert!(err.contains("hang was still running after the time limit of 2 s (--timeout): stopped"), "{err}");
    assert!(err.contains("        warming up"), "{err}");
    // The whole process group went: the sleep it started is gone too.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    let deadline = Instant::now() + Duration::from_secs(5);
    while stat.exists() && !std::fs::read_to_string(&stat).unwrap_or_default().contains(") Z") {
        assert!(Instant::now() < deadline, "sleep {pid} outlived its bench");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A bad limit is refused before anything runs.
    let (out, _) = run_exes(dir.path(), "GPU-a", &[&hang], &["--timeout", "soon"], &template);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_gpu_named_twice_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let template = template_run(dir.path(), 1);
    let marker = dir.path().join("ran");
    let bench = dir.path().join("bench");
    script(&bench, &format!("touch {}\n{MEASURE}", marker.display()));
    for gpus in ["GPU-a,GPU-b,GPU-a", "GPU-a,gpu-A"] {
        let (out, _) = run_exes(dir.path(), gpus, &[&bench], &[], &template);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("is named twice"), "{}", stderr(&out));
    }
    assert!(!marker.exists(), "no process ran");
}

#[test]
fn with_energy_device_sim_set_the_advice_is_not_to_set_it() {
    if energy_harness::unstable::device::list_gpus().is_ok() {
        eprintln!("NVML lists GPUs here: `--gpus all` finds them; the advice without GPUs is tested in gpus/mod.rs");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
        .args(["run", "--exe", "/bin/true"])
        .env("ENERGY_DEVICE", "sim")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ENERGY_DEVICE=sim is set, but `cargo energy run`"), "{err}");
    assert!(!err.contains("or set ENERGY_DEVICE=sim"), "{err}");
}
