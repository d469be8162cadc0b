//! Kernel-code mistakes under `#[energy_bench]`, as `cargo bench` runs them: this file has
//! its own `main` (`harness = false`); the child is this same binary with
//! `KERNEL_MISTAKES_CHILD=1`, which runs the benchmarks as `energy_main!()` does, filtered to
//! one. Each mistake must fail the run with a message naming the benchmark, the kernel and
//! the fix; the correct benchmark must pass.

#[path = "common/kernel_mistakes.rs"]
mod mistakes;

use std::process::ExitCode;

use energy_harness::{energy_bench, Result, Stream};
use mistakes::*;

#[energy_bench(setup = setup_correct, sim(seconds = 1e-5, watts = 300.0))]
fn correct_saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = setup_misspelled_kernel, sim(seconds = 1e-5, watts = 300.0))]
fn misspelled_kernel(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = setup_one_argument_too_few, sim(seconds = 1e-5, watts = 300.0))]
fn one_argument_too_few(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = setup_u32_for_u64, sim(seconds = 1e-5, watts = 300.0))]
fn u32_for_u64(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = setup_2048_threads, sim(seconds = 1e-5, watts = 300.0))]
fn threads_2048(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

/// No simulated model: without a GPU it is still checked (and still fails).
#[energy_bench(setup = setup_ptx_syntax_error)]
fn ptx_syntax_error(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

fn run_child(name: &str, target: &std::path::Path) -> (bool, String) {
    // `--test`: each kernel runs three launches, as `cargo bench -- --test` runs them.
    run_child_with(&["--bench", "--test", &format!("^{name}/")], target)
}

fn run_child_with(args: &[&str], target: &std::path::Path) -> (bool, String) {
    run_child_env(args, target, &[])
}

fn run_child_env(args: &[&str], target: &std::path::Path, env: &[(&str, &str)]) -> (bool, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(args)
        .envs(env.iter().copied())
        .env("KERNEL_MISTAKES_CHILD", "1")
        .env("CARGO_TARGET_DIR", target)
        .env_remove("ENERGY_REQUIRE_GPU")
        .env_remove("ENERGY_RUN_ID")
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn main() -> ExitCode {
    if std::env::var_os("KERNEL_MISTAKES_CHILD").is_some() {
        return energy_harness::__private::main();
    }
    let target = std::env::temp_dir().join(format!("kernel-mistakes-{}", std::process::id()));
    let mut failures = 0;
    let (passed, out) = run_child("correct_saxpy", &target);
    if !passed || out.contains("error:") {
        eprintln!("FAIL correct_saxpy: the correct benchmark did not pass:\n{out}");
        failures += 1;
    } else {
        println!("ok   correct_saxpy passes");
    }
    // `--list` lists every benchmark without running (or checking) any of them.
    let (listed, out) = run_child_with(&["--bench", "--list"], &target);
    let expected = ["correct_saxpy/energy (simulated): benchmark", "ptx_syntax_error/time (simulated): benchmark"];
    if !listed || expected.iter().any(|e| !out.contains(e)) || out.contains("error:") {
        eprintln!("FAIL --list: listed={listed}:\n{out}");
        failures += 1;
    } else {
        println!("ok   --list lists the benchmarks");
    }
    for (name, expected, needs_ptxas) in MISTAKES {
        if !checkable(*needs_ptxas) {
            println!("skip {name}: no GPU and no ptxas (set PTXAS) to catch it");
            continue;
        }
        let (passed, out) = run_child(name, &target);
        let missing: Vec<&&str> = expected.iter().filter(|e| !out.contains(**e)).collect();
        let named = out.contains(&format!("error: benchmark {name} ("));
        if passed || !named || !missing.is_empty() {
            eprintln!("FAIL {name}: passed={passed}, names the benchmark={named}, missing {missing:?}:\n{out}");
            failures += 1;
        } else {
            println!("ok   {name} fails with a clear error");
        }
    }
    // Strict mode (ENERGY_STRICT=1) without ptxas: the correct benchmark fails, naming the tool
    // and its wheel; without strict mode it passes, saying what was not assembled.
    if energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0) {
        println!("skip strict mode: this machine has a GPU (nothing is checked without one there)");
    } else {
        let args = ["--bench", "--test", "^correct_saxpy/"];
        let no_ptxas = [("PTXAS", ""), ("PATH", "")];
        let (passed, out) = run_child_env(&args, &target, &[no_ptxas[0], no_ptxas[1], ("ENERGY_STRICT", "1")]);
        let expected =
            ["error: benchmark correct_saxpy (", "ENERGY_STRICT=1", "missing ptxas", "nvidia-cuda-nvcc-cu12"];
        let missing: Vec<&&str> = expected.iter().filter(|e| !out.contains(**e)).collect();
        if passed || !missing.is_empty() {
            eprintln!("FAIL strict mode without ptxas: passed={passed}, missing {missing:?}:\n{out}");
            failures += 1;
        } else {
            println!("ok   strict mode without ptxas fails naming ptxas and its wheel");
        }
        let (passed, out) = run_child_env(&args, &target, &no_ptxas);
        if !passed || !out.contains("no ptxas found") {
            eprintln!(
                "FAIL without strict mode and ptxas: passed={passed}, or no line saying ptxas is missing:\n{out}"
            );
            failures += 1;
        } else {
            println!("ok   without strict mode a missing ptxas is said, not an error");
        }
    }
    let _ = std::fs::remove_dir_all(&target);
    if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
