//! Kernel-code mistakes under `#[energy_test]`, as `cargo test` runs them: each mistake is an
//! ignored test that fails on purpose; the driver tests run each in a child process and
//! check that it fails with a message naming the test, the kernel and the fix. Without a
//! GPU the code runs on the checked device; with one, on the GPU: the messages are the same.

#[path = "common/kernel_mistakes.rs"]
mod mistakes;

use energy_harness::{energy_test, Result, Stream};
use mistakes::*;

#[energy_test(setup = setup_correct, max = "1 J", sim(seconds = 1e-5, watts = 300.0))]
fn correct_saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[ignore = "fails on purpose (kernel_mistakes_budgets.rs)"]
#[energy_test(setup = setup_misspelled_kernel, max = "1 J", sim(seconds = 1e-5, watts = 300.0))]
fn misspelled_kernel(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[ignore = "fails on purpose (kernel_mistakes_budgets.rs)"]
#[energy_test(setup = setup_one_argument_too_few, max = "1 J", sim(seconds = 1e-5, watts = 300.0))]
fn one_argument_too_few(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[ignore = "fails on purpose (kernel_mistakes_budgets.rs)"]
#[energy_test(setup = setup_u32_for_u64, max = "1 J", sim(seconds = 1e-5, watts = 300.0))]
fn u32_for_u64(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[ignore = "fails on purpose (kernel_mistakes_budgets.rs)"]
#[energy_test(setup = setup_2048_threads, max = "1 J", sim(seconds = 1e-5, watts = 300.0))]
fn threads_2048(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

/// No simulated model: without a GPU, still checked (and still failing).
#[ignore = "fails on purpose (kernel_mistakes_budgets.rs)"]
#[energy_test(setup = setup_ptx_syntax_error, max = "1 J")]
fn ptx_syntax_error(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

/// A correct kernel without a model: checked, not measured, and it passes.
#[energy_test(setup = setup_correct, max = "1 J")]
fn correct_saxpy_without_a_model(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

fn run_child(test: &str) -> (bool, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--include-ignored", "--exact", test, "--test-threads", "1"])
        .env_remove("ENERGY_REQUIRE_GPU")
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn each_mistake_fails_its_test_naming_the_test_the_kernel_and_the_fix() {
    for (name, expected, needs_ptxas) in MISTAKES {
        if !checkable(*needs_ptxas) {
            eprintln!("skipped: {name}: no GPU and no ptxas (set PTXAS) to catch it");
            continue;
        }
        let (passed, out) = run_child(name);
        assert!(!passed, "{name} passed:\n{out}");
        assert!(out.contains(&format!("energy budget {name} failed")), "{name}:\n{out}");
        for e in *expected {
            assert!(out.contains(e), "{name}: `{e}` missing:\n{out}");
        }
    }
}

#[test]
fn a_correct_kernel_without_a_model_is_checked_not_measured() {
    if energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0) {
        eprintln!("skipped: this machine has a GPU (the budget is measured there)");
        return;
    }
    let (passed, out) = run_child("correct_saxpy_without_a_model");
    assert!(passed, "{out}");
    assert!(out.contains("checked, not measured: energy budget correct_saxpy_without_a_model"), "{out}");
    assert!(out.contains("setup and 3 launches ran on the checked"), "{out}");
    assert!(out.contains("3 launch(es) checked"), "{out}");
}

fn run_child_with(test: &str, env: &[(&str, &str)]) -> (bool, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args(["--include-ignored", "--exact", test, "--test-threads", "1"]).env_remove("ENERGY_REQUIRE_GPU");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn strict_mode_fails_a_budget_whose_ptx_was_not_assembled_and_without_it_a_line_says_so() {
    if energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0) {
        eprintln!("skipped: this machine has a GPU (nothing is checked without one there)");
        return;
    }
    // No ptxas anywhere: PTXAS empty, PATH empty.
    let no_ptxas = [("PTXAS", ""), ("PATH", "")];
    let (passed, out) = run_child_with("correct_saxpy", &[no_ptxas[0], no_ptxas[1], ("ENERGY_STRICT", "1")]);
    assert!(!passed, "strict mode passed a budget whose PTX was not assembled:\n{out}");
    for expected in ["energy budget correct_saxpy failed", "ENERGY_STRICT=1", "missing ptxas", "nvidia-cuda-nvcc-cu12"]
    {
        assert!(out.contains(expected), "`{expected}` missing:\n{out}");
    }
    let (passed, out) = run_child_with("correct_saxpy", &no_ptxas);
    assert!(passed, "{out}");
    assert!(out.contains("note: energy budget correct_saxpy: not everything was checked without a GPU"), "{out}");
    assert!(out.contains("0 of them assembled by ptxas"), "{out}");
    // With ptxas, strict mode passes the correct kernel.
    if checkable(true) {
        let (passed, out) = run_child_with("correct_saxpy", &[("ENERGY_STRICT", "1")]);
        assert!(passed, "{out}");
        assert!(!out.contains("not everything was checked"), "{out}");
    }
}
