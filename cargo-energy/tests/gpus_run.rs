//! `cargo energy run --gpus …` end to end with a stand-in cargo and bench executable (no GPU
//! needed): each GPU gets its own process with its UUID in CUDA_VISIBLE_DEVICES, its shard,
//! its own result folder and the bench arguments; a GPU whose run fails makes the exit 1.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn every_gpu_runs_its_own_shard_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("fakebench");
    script(
        &bench,
        r#"echo "$CUDA_VISIBLE_DEVICES|$ENERGY_SHARD|$ENERGY_RUN_ID|$*|$(pwd)" > "$CARGO_TARGET_DIR/seen.txt"
[ "$CUDA_VISIBLE_DEVICES" = "GPU-bad" ] && exit 1
exit 0"#,
    );
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
            .args(["run", "--gpus", gpus, "--", "--bench", "fma", "--", "fma_loop/"])
            .env("CARGO", &cargo)
            .env("CARGO_TARGET_DIR", &target)
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
    script(&bench, r#"echo "$CUDA_VISIBLE_DEVICES|$ENERGY_SHARD|$*|$(pwd)" > "$CARGO_TARGET_DIR/seen.txt""#);
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
            .output()
            .unwrap()
    };
    let out = run(&["--", "--", "instructions/int/"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let seen = std::fs::read_to_string(target.join("energy-gpus/gpu1-GPU-bbbb0000/seen.txt")).unwrap();
    let fields: Vec<&str> = seen.trim().split('|').collect();
    assert_eq!(&fields[..3], ["GPU-bbbb0000-2", "2/2", "--bench instructions/int/"], "{seen}");
    assert_eq!(Path::new(fields[3]), work, "{seen}");
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
