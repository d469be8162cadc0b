//! `cargo energy run --gpus all -- CARGO_BENCH_ARGS [-- BENCH_ARGS]`: one bench process per
//! GPU of the node, each its own sampler and device, the benchmarks split between them.
//!
//! The benches are built once (`cargo bench --no-run`); then for each GPU `i` of `N`, in
//! parallel, every bench executable runs with `CUDA_VISIBLE_DEVICES` set to that GPU's UUID
//! (so its kernels and its measurement are that GPU's), `ENERGY_SHARD=i/N` (each benchmark in
//! exactly one shard), and `CARGO_TARGET_DIR=<target>/energy-gpus/<label>` (its results in a
//! directory of its own: `<target>/energy-gpus/<label>/energy/new`). Its output goes to
//! `bench.log` there. At the end one line per GPU, and the `report` command that puts the
//! results side by side, never averaged.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use energy_harness::{Error, ErrorKind, Result};

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
            let short = uuid.split('-').take(2).collect::<Vec<_>>().join("-");
            let label = format!("gpu{i}-{short}");
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
        let mut uuids: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
        uuids.dedup();
        return Ok(uuids);
    }
    let gpus = energy_harness::unstable::device::list_gpus()?;
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
    parts
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
        .collect()
}

/// A bench executable and the folder cargo runs it in (its package's).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct BenchExe {
    pub path: PathBuf,
    pub package_dir: PathBuf,
}

/// The bench executables in `cargo bench --no-run --message-format=json` output.
pub(super) fn bench_executables(messages: &str) -> Vec<BenchExe> {
    let mut out = Vec::new();
    for line in messages.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if v["reason"] != "compiler-artifact" {
            continue;
        }
        let is_bench = v["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|x| x == "bench"));
        let (Some(exe), Some(manifest)) = (v["executable"].as_str(), v["manifest_path"].as_str()) else { continue };
        if is_bench {
            let package_dir = Path::new(manifest).parent().unwrap_or(Path::new(".")).to_path_buf();
            out.push(BenchExe { path: PathBuf::from(exe), package_dir });
        }
    }
    out
}

/// Builds the benches, runs them on every selected GPU in parallel; `Ok(true)` when every
/// GPU's run succeeded.
pub(super) fn run(gpus: &str, prebuilt: &[PathBuf], args: &[String]) -> Result<bool> {
    let (cargo_args, bench_args) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let uuids = select(gpus)?;
    let exes = if prebuilt.is_empty() { build(cargo_args)? } else { given(prebuilt, cargo_args)? };
    run_executables(&uuids, &exes, bench_args)
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
    prebuilt
        .iter()
        .map(|p| {
            if !p.is_file() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "--exe {}: no such file (`cargo bench --no-run` prints the bench executables' paths)",
                        p.display()
                    ),
                ));
            }
            let path = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            Ok(BenchExe { path, package_dir: here.clone() })
        })
        .collect()
}

/// `cargo bench --no-run` with `cargo_args`: the bench executables it built.
fn build(cargo_args: &[String]) -> Result<Vec<BenchExe>> {
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

/// Runs `exes` on every GPU of `uuids` in parallel, one shard each.
fn run_executables(uuids: &[String], exes: &[BenchExe], bench_args: &[String]) -> Result<bool> {
    let target = energy_harness::unstable::report::energy_dir()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| "target".into());
    let target = std::path::absolute(&target).unwrap_or(target);
    let runs = plan(uuids, &target);
    let run_id = format!(
        "energy-run-{}-{}",
        std::process::id(),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    );
    eprintln!("energy run: {} bench target(s) on {} GPU(s), one shard each", exes.len(), runs.len());
    let outcomes: Vec<(GpuRun, Result<(bool, f64)>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .map(|gpu| {
                let (exes, bench_args, run_id) = (exes, bench_args, &run_id);
                scope.spawn(move || (gpu.clone(), run_on_gpu(gpu, exes, bench_args, run_id)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a GPU's runner thread")).collect()
    });
    let mut all_ok = true;
    let mut dirs = Vec::new();
    for (gpu, outcome) in &outcomes {
        let energy = gpu.target_dir.join("energy");
        match outcome {
            Ok((ok, wall_s)) => {
                all_ok &= ok;
                eprintln!(
                    "  {}  {}  shard {}  {}  {:.0} s  results {}  log {}",
                    gpu.label,
                    gpu.uuid,
                    gpu.shard,
                    if *ok { "ok" } else { "FAILED" },
                    wall_s,
                    energy.join("new").display(),
                    gpu.target_dir.join("bench.log").display()
                );
            }
            Err(e) => {
                all_ok = false;
                eprintln!("  {}  {}  could not run: {e}", gpu.label, gpu.uuid);
            }
        }
        dirs.push(format!("--dir {}", energy.display()));
    }
    eprintln!("side by side, one table per GPU: cargo energy report {}", dirs.join(" "));
    Ok(all_ok)
}

/// Runs every bench executable on one GPU, one after another; (all succeeded, wall time).
fn run_on_gpu(gpu: &GpuRun, exes: &[BenchExe], bench_args: &[String], run_id: &str) -> Result<(bool, f64)> {
    std::fs::create_dir_all(&gpu.target_dir).map_err(|e| Error::io(&gpu.target_dir, "create the GPU's folder", e))?;
    let log_path = gpu.target_dir.join("bench.log");
    let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, "create the log", e))?;
    let start = std::time::Instant::now();
    let mut ok = true;
    for exe in exes {
        let status = Command::new(&exe.path)
            .arg("--bench")
            .args(bench_args)
            .current_dir(&exe.package_dir)
            .env("CUDA_VISIBLE_DEVICES", &gpu.uuid)
            .env("ENERGY_SHARD", &gpu.shard)
            .env("CARGO_TARGET_DIR", &gpu.target_dir)
            .env("ENERGY_RUN_ID", format!("{run_id}-{}", gpu.label))
            .stdout(log.try_clone().map_err(|e| Error::io(&log_path, "share the log", e))?)
            .stderr(log.try_clone().map_err(|e| Error::io(&log_path, "share the log", e))?)
            .status()
            .map_err(|e| Error::io(&exe.path, "run the bench executable", e))?;
        ok &= status.success();
    }
    Ok((ok, start.elapsed().as_secs_f64()))
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
    fn bench_executables_come_from_cargos_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"kind":["lib"]},"executable":null,"manifest_path":"/w/Cargo.toml"}
{"reason":"compiler-artifact","target":{"kind":["bench"]},"executable":"/w/target/release/deps/fma-1","manifest_path":"/w/Cargo.toml"}
not json
{"reason":"build-finished","success":true}"#;
        let exes = bench_executables(messages);
        assert_eq!(exes, vec![BenchExe { path: "/w/target/release/deps/fma-1".into(), package_dir: "/w".into() }]);
    }
}
