//! The reading side of `energy-harness`: what reads result files back and judges them.
//!
//! `cargo energy` is built on it; a crate that only measures (`#[energy_bench]`,
//! `#[energy_test]`) depends on `energy-harness` alone and never compiles this. What it
//! takes from the harness is the on-disk contract (the result file
//! [`energy_results::ResultFile`], run manifests, the escaping of text from files) and the
//! statistics the harness computes with (`energy_results::unstable`).
//!
//! - [`compare()`]: two sets of results figure by figure, the change with its interval and a
//!   [`Verdict`](energy_results::detect::Verdict) (a one-sided test at
//!   [`FALSE_ALARM_RATE`](energy_results::detect::FALSE_ALARM_RATE);
//!   [`energy_results::detect`]: the smallest change a set can detect);
//! - [`paired`]: a run directory's figures for interleaved A/B runs (`cargo energy ab`; the
//!   report and its verdicts are [`energy_results::ab`]);
//! - [`sweeps()`]: a run's parameterized benchmarks (`args = [...]`), their table, verdict and
//!   SVG, and [`optimum_moves`] across two runs;
//! - [`History`]: runs found and ordered, series per GPU, regressions marked;
//! - [`mod@format`]: every report format, each one file behind one trait ([`ReportFormat`]);
//! - [`explain()`]: where a kernel's energy goes, from an [`EnergyModel`] and Nsight
//!   Compute's counts ([`NcuKernel`]).
//!
//! **Charts and pages are written by hand, on purpose** (SVG in [`chart`] and the overview,
//! HTML with `format!`): reading a result compiles no criterion, so plotters (in the graph
//! only through criterion) would come in for the charts alone, and its SVG backend writes
//! neither the per-point `<title>` tooltips nor the classes the tests count. A templating
//! crate (askama, tera) would add a proc-macro or a runtime template language to the reading
//! build, where every text from a file already goes through one escaping module
//! ([`energy_results::escape`], fuzzed by `tests/fuzz_readers`).
//!
//! **Not a stable API:** it moves with `energy-harness`'s `unstable` module, release for
//! release.
#![deny(missing_docs)]

pub mod chart;
mod compare;
mod explain;
pub mod format;
mod history;
mod natural;
mod ncu;
mod overview;
pub mod paired;
#[cfg(feature = "schema")]
pub mod schemas;
mod sweep;

pub use compare::{
    change, check_comparable_figure, compare, compare_across_boards, compare_runs, compare_with_baselines,
    compare_with_controls, Change, Comparison, DriftBasis, DriftNote, Figure, ResultSet,
    ACROSS_BOARDS_MIN_THRESHOLD_PCT, TEMPERATURE_NOTE_C,
};
pub use explain::nnls::{nnls, NnlsFit};
pub use explain::{
    explain, explain_as_fitted, operand_bracket, outside_prediction, regime_totals, render_markdown, render_svg,
    shipped_model_for, unpriced_work, EnergyModel, ExplainedTerm, Explanation, ModelClass, OperandBracket, PowerBound,
    Priced, RegimeCost, ShippedModel, UnpricedWork, CLASS_KINDS, FP16_PIPE, MAX_POWER_LIMIT_TOLERANCE,
    MAX_SM_CLOCK_MHZ, MODEL_SCHEMA, PRICED_BY, SHIPPED_MODELS, TENSOR_PIPE, TENSOR_PIPE_HFMA2, UNPRICED_WORK,
};
pub use format::bmf::{bmf, bmf_on};
pub use format::compare_text::{compare_text, Compared};
pub use format::github_action_benchmark::{
    github_action_benchmark, github_action_benchmark_on, GITHUB_ACTION_BENCHMARK_MEASURES,
};
pub use format::merge::measured_nothing_line;
pub use format::paired_text::{ab_markdown, ab_text, progress_line};
pub use format::partial::partial_line;
pub use format::{render, render_report, shown_dir, Format, Report, ReportFormat, RunReport, FORMATS};
pub use history::render::{text_table, write_history};
pub use history::{find_runs, read_history, History};
pub use natural::{natural_cmp, sort_natural};
pub use ncu::{
    launches_per_call, one_call, one_call_of, parse_ncu_csv, parse_ncu_launches, read_ncu_csv, read_ncu_launches,
    short_kernel_name, KernelChoice, NcuKernel, TEST_CALLS,
};
pub use sweep::{optimum_moves, sweep_svg, sweeps, sweeps_markdown, Sweep};

/// What the unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    /// The CPU time this thread has used, s: unlike the wall clock, it does not grow while
    /// the thread waits for a core on a loaded host (a test beside a build, a CPU hog).
    pub fn thread_cpu_s() -> f64 {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is a valid timespec for clock_gettime to write.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    }

    /// The least CPU time of five runs of `f`, s.
    pub fn least_cpu_s(mut f: impl FnMut()) -> f64 {
        (0..5)
            .map(|_| {
                let start = thread_cpu_s();
                f();
                thread_cpu_s() - start
            })
            .fold(f64::INFINITY, f64::min)
    }
}
