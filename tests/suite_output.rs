//! What the research suites print without a GPU, as `cargo bench` runs them: one summary
//! line per suite (the per-kernel "checked, not measured" lines only with `--verbose`), a
//! missing ptxas said once with how to get one, a failed check printed in full with a
//! non-zero exit, and `--list` / `--test` as before.
//!
//! This file has its own `main` (`harness = false`): the child is this same binary with
//! `SUITE_OUTPUT_CHILD` naming what it runs (a suite's `main`, or a small suite with one
//! kernel that fails), and it takes criterion's options, which libtest would reject.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::{Command, ExitCode, Output};

use energy_harness::unstable::bench::BenchSpec;
use energy_harness::{Error, ErrorKind, KernelCode, Stream};
use kernel_energy::common::run_benchmarks;

/// Runs the child `what` with criterion's `args` on the simulated GPU; `ptxas`: whether
/// the child may find one (`PTXAS` as this process has it), else none on any path.
fn run_child(what: &str, args: &[&str], ptxas: bool, target: &Path) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    // `--bench`, as `cargo bench` passes it.
    cmd.arg("--bench").args(args);
    cmd.env("SUITE_OUTPUT_CHILD", what).env("CARGO_TARGET_DIR", target).env("ENERGY_DEVICE", "sim");
    cmd.env_remove("ENERGY_REQUIRE_GPU").env_remove("ENERGY_RUN_ID").env_remove("ENERGY_SHARD");
    if !ptxas {
        cmd.env_remove("PTXAS").env("PATH", "/nonexistent");
    }
    cmd.output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn lines_with(out: &str, needle: &str) -> usize {
    out.lines().filter(|l| l.contains(needle)).count()
}

fn the_memory_suite_says_one_line_and_lists_each_point_with_verbose() {
    let target = tempfile::tempdir().unwrap();
    for ptxas in [true, false] {
        let out = run_child("memory", &[], ptxas, target.path());
        let all = text(&out);
        assert!(out.status.success(), "{all}");
        let summary = "memory: 98 points checked on the checked device (";
        assert_eq!(lines_with(&all, summary), 1, "{all}");
        assert!(all.contains("nothing measured without a GPU — --verbose lists each"), "{all}");
        assert_eq!(lines_with(&all, "checked, not measured"), 0, "{all}");
        // No line says "nothing is measured" nor gives the plan: the summary is the suite's line.
        assert!(!all.contains("nothing is measured") && !all.contains("configurations"), "{all}");
        // ptxas present: the summary alone. Missing: one note with the fix, and the summary.
        let found = energy_harness::unstable::cuda::find_ptxas().is_some();
        if ptxas && found {
            assert_eq!(all.lines().count(), 1, "{all}");
            assert!(all.contains("PTX assembled by ptxas for sm_90"), "{all}");
        } else if !ptxas {
            assert_eq!(all.lines().count(), 2, "{all}");
            assert_eq!(lines_with(&all, "no ptxas found"), 2, "the note and the summary: {all}");
            assert_eq!(lines_with(&all, "pip install nvidia-cuda-nvcc-cu12"), 1, "{all}");
            assert!(all.contains("PTX read, not assembled: no ptxas found"), "{all}");
        }
        println!(
            "  memory, ptxas {}: {} line(s)",
            if ptxas && found { "found" } else { "missing" },
            all.lines().count()
        );
    }
    // --verbose: a line per point, the plan, and the summary saying they are above.
    let out = run_child("memory", &["--verbose"], false, target.path());
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert_eq!(lines_with(&all, ": checked, not measured: setup and 3 launches ran on the checked"), 98, "{all}");
    assert!(all.contains("memory/load/shared/1024t_sm/p0: checked, not measured: "), "{all}");
    assert!(all.contains("memory: 30 configurations, 98 points"), "{all}");
    assert!(all.contains("memory: 98 points checked on the checked device") && all.contains("each listed above"));
    // The fix for a missing ptxas once, not once per point.
    assert_eq!(lines_with(&all, "pip install nvidia-cuda-nvcc-cu12"), 1, "{all}");
}

fn the_instruction_suite_says_one_line_for_the_kernels_a_filter_selects() {
    let target = tempfile::tempdir().unwrap();
    let out = run_child("instructions", &["^instructions/int/add_u32/O4/"], true, target.path());
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains(
            "instructions: 5 kernels checked on the checked device (PTX assembled by ptxas for sm_90, launches \
             checked, host references evaluated), nothing measured without a GPU — --verbose lists each"
        ) || (energy_harness::unstable::cuda::find_ptxas().is_none()
            && all.contains("instructions: 5 kernels checked")),
        "{all}"
    );
    assert!(all.lines().count() <= 2, "{all}");
    // --test runs the same checks: the same one line.
    let out = run_child("instructions", &["--test", "^instructions/int/add_u32/O4/"], true, target.path());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(lines_with(&text(&out), "instructions: 5 kernels checked"), 1, "{}", text(&out));
    // --list lists every kernel as before, checking none.
    let out = run_child("instructions", &["--list"], true, target.path());
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("instructions/int/add_u32/O4/k8/energy (simulated): benchmark"), "{all}");
    assert_eq!(lines_with(&all, ": benchmark"), 860, "{all}");
    assert_eq!(lines_with(&all, "checked on the checked device"), 0, "{all}");
}

fn a_kernel_that_fails_its_check_is_printed_in_full_and_fails_the_run() {
    let target = tempfile::tempdir().unwrap();
    let out = run_child("failing", &[], true, target.path());
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("error: benchmark demo/broken ("), "{all}");
    assert!(all.contains("its kernel code failed on the checked device") && all.contains("a deliberate mistake"));
    assert_eq!(lines_with(&all, "checked, not measured"), 0, "the kernel that passed has no line: {all}");
    assert!(
        all.contains("demo: 1 kernel checked on the checked device, nothing measured without a GPU; 1 failed (each error above) — --verbose lists each"),
        "{all}"
    );
}

/// The failing child: a kernel that passes its check and one whose setup fails.
fn failing_suite() -> ExitCode {
    let passing = KernelCode::launch(|_: &Stream| Ok(()));
    let broken = KernelCode::from_fn(|_| Err(Error::new(ErrorKind::InvalidInput, "a deliberate mistake")));
    let specs = vec![
        BenchSpec::new("demo/passing", file!(), line!()).code(passing).without_time_bench(),
        BenchSpec::new("demo/broken", file!(), line!()).code(broken).without_time_bench(),
    ];
    run_benchmarks(specs, |_| Ok(false)).finish("demo", "kernel", &[], || Ok(()))
}

fn main() -> ExitCode {
    match std::env::var("SUITE_OUTPUT_CHILD").as_deref() {
        Ok("memory") => return kernel_energy::memory::suite::main(),
        Ok("instructions") => return kernel_energy::instructions::suite::main(),
        Ok("failing") => return failing_suite(),
        _ => {}
    }
    // `cargo test -- --list` and filters: this binary's cases are not filterable.
    if std::env::args().any(|a| a == "--list") {
        return ExitCode::SUCCESS;
    }
    let cases: [(&str, fn()); 3] = [
        (
            "the_memory_suite_says_one_line_and_lists_each_point_with_verbose",
            the_memory_suite_says_one_line_and_lists_each_point_with_verbose,
        ),
        (
            "the_instruction_suite_says_one_line_for_the_kernels_a_filter_selects",
            the_instruction_suite_says_one_line_for_the_kernels_a_filter_selects,
        ),
        (
            "a_kernel_that_fails_its_check_is_printed_in_full_and_fails_the_run",
            a_kernel_that_fails_its_check_is_printed_in_full_and_fails_the_run,
        ),
    ];
    let mut failed = 0;
    for (name, case) in cases {
        match catch_unwind(AssertUnwindSafe(case)) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("suite_output: {} passed, {failed} failed", cases.len() - failed);
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
