//! Energy of GPU kernels, measured the way criterion measures their time.
//!
//! A sampler thread reads the GPU's on-board sensors while the kernel runs back to back in
//! marked windows, all on one clock (**window-synchronized**); active idle measured around
//! the busy stretch is subtracted (**baseline-subtracted**); each sensor's lag or averaging
//! is undone with a model calibrated per GPU (**capacitor-corrected**). The README of the
//! repository is the guide: how to write `#[energy_bench]` and `#[energy_test]`, the
//! `cargo energy` command, the result files, and what was measured on real GPUs.
//!
//! Bench and test authors need one import, [`prelude`]:
//!
//! ```ignore
//! use energy_harness::prelude::*;
//!
//! #[energy_bench(setup = setup, bytes = 12 * N, sim(seconds = 67e-6, watts = 400.0))]
//! fn saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
//!     s.kernel.launch(stream, s.config, &s.args)
//! }
//! energy_main!();
//! ```
//!
//! Everything else is one flat list of names below, grouped by what it serves: the
//! measurement and its options, the devices and sensors, traces and result files, and what
//! `cargo energy` and the suites build on. The modules are private; `docs/ARCHITECTURE.md`
//! maps them.
#![deny(missing_docs)]

mod bench;
mod budget;
mod clock;
mod cuda;
mod device;
mod engine;
mod error;
mod explain;
mod gpu;
mod kernel_code;
mod ncu;
mod report;
mod sampling;
mod selftest;
mod sensors;
mod sim;
mod trace;
mod workload;

/// cudarc, for code that needs raw CUDA on a real GPU ([`Stream::cuda`], [`DeviceBuffer::cuda_slice`]).
pub use cudarc;
pub use energy_macros::{energy_bench, energy_test};
/// Joules and watts, their SI formatting and parsing (the `energy-units` crate).
pub use energy_units as units;
pub use units::{format_si, Joules, Watts};

// Errors.
pub use error::{Error, ErrorKind, Result};

// Benchmarks and budgets: what the macros build, and the same by hand.
pub use bench::{run_collect, BenchSpec, Collected, CollectedBench, Energy, EnergyFormatter, RunSettings};
pub use budget::{
    assert_budget, EnergyBudget, KernelUnderTest, Limit, Report as BudgetReport, Verdict, REQUIRE_GPU_ENV,
};
pub use kernel_code::{CodeCheck, KernelCode, Launcher, CHECK_LAUNCHES};
// Where a kernel's energy goes: the model file, its fit, `cargo energy explain`.
pub use explain::nnls::{nnls, NnlsFit};
pub use explain::{
    explain, render_markdown as render_explanation, render_svg as explanation_svg, EnergyModel, ExplainedTerm,
    Explanation, ModelClass, MODEL_FORMAT,
};
// Nsight Compute's CSV exports (the suites' hit rates, `cargo energy explain`).
pub use ncu::{parse_ncu_csv, read_ncu_csv, NcuKernel};

// The CUDA layer (a real GPU, or the checked device without one).
pub use cuda::checked::find_ptxas;
pub use cuda::{
    fma_busy_workload, CudaGpu, DeviceBuffer, FmaLoop, GpuProperties, JitOptLevel, Kernel, KernelArgs, LaunchConfig,
    PtxModule, Stream, FMA_LOOP_PTX,
};

// The measurement: options, the session, its result.
pub use engine::analyze::{analyze_windows, GENERIC_POWER_CEILING_W, POWER_CEILING_FACTOR};
pub use engine::options::default_window_s;
pub use engine::run::{record, virtual_sim_device};
pub use engine::{
    analyze_trace, measure, AnalysisOptions, Drift, Estimate, MeasureOptions, MeasureRequest, Measurement, ModelChoice,
    PerUnit, ResolvedOptions, Session, SimWorkload, TraceAnalysis, Warning, WarningKind, WindowEnergy, WindowResult,
};
// Calibration: the cached models, the step response, its fit.
pub use engine::calibration::{
    busy_intervals, calibrate, default_calibration_dir, fit_calibration, Calibration, StepPlan, CALIBRATION_SCHEMA,
    MAX_DELAY_S,
};
// The engine's building blocks, for tools and tests that take a trace apart.
pub use engine::clean::{clean_buffered, clean_polled, sorted_finite};
pub use engine::counter::{counter_ticks, interpolated_energy_j};
pub use engine::curve::{counter_curve, power_curve};
pub use engine::stats::{linear_fit, student_t_975};

// The selftest: does this GPU's sensor deliver what the harness assumes?
pub use selftest::checks as selftest_checks;
pub use selftest::{
    render as render_selftest, run_selftest, HarnessFigure, SelftestPlan, SelftestReport, SelftestWindow,
    SourceVerdict, SELFTEST_SCHEMA,
};

// Devices, sensors, the sampler and the simulated GPU.
pub use clock::{Clock, MonotonicClock, SharedClock, VirtualClock};
pub use device::{Device, DeviceRequest, GpuChoice};
pub use gpu::{cuda_ordinal_for_named_gpu, gpu_count, list_gpus, DeviceFacts, GpuListing};
pub use sampling::{record_until, Sampler, SamplerConfig, WindowMarker, STATE_SM_CLOCK, STATE_TEMPERATURE};
pub use sensors::model::MAX_MODEL_SECONDS;
pub use sensors::replay::ReplaySource;
pub use sensors::{SensorModel, SensorSource, SourceError, SourceKind};
pub use sim::{ActiveIdleTail, SensorFault, SimGpu, SimKernel, SimPreset};
pub use workload::Workload;

// Traces and result files.
pub use report::compare::{
    change as compare_change, compare, compare_across_boards, ResultSet, Verdict as CompareVerdict,
    ACROSS_BOARDS_MIN_THRESHOLD_PCT,
};
pub use report::run::{content_hash, Invocation, RunManifest, RunWriter, TargetStatus, RUN_SCHEMA};
pub use report::svg::power_plot;
pub use report::table::{bmf, github_action_benchmark, render as render_table, Format as TableFormat};
pub use report::{energy_dir, file_stem, ResultDevice, ResultFile, RESULT_SCHEMA};
pub use trace::format::{parse_trace, read_trace, render_trace, write_atomically, write_trace};
pub use trace::legacy::convert_h100_file;
pub use trace::{Channel, Reading, Trace, Window, WindowEdge, WindowMark, AUXILIARY_WINDOW};

/// What a bench or test file of a GPU crate needs, in one import:
/// `use energy_harness::prelude::*;`.
pub mod prelude {
    pub use crate::budget::{EnergyBudget, KernelUnderTest, Limit};
    pub use crate::cuda::{CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, PtxModule, Stream};
    pub use crate::engine::options::MeasureOptions;
    pub use crate::error::Result;
    pub use crate::kernel_code::KernelCode;
    pub use crate::sensors::SourceKind;
    pub use crate::units::{Joules, Watts};
    pub use crate::{assert_energy, energy_main};
    pub use energy_macros::{energy_bench, energy_test};
}

/// The `main` of a bench target (`harness = false`) holding `#[energy_bench]` functions:
/// runs all of them under criterion.
///
/// ```ignore
/// energy_harness::energy_main!();
/// ```
#[macro_export]
macro_rules! energy_main {
    () => {
        fn main() -> ::std::process::ExitCode {
            $crate::__private::main()
        }
    };
}

/// Checks an energy budget inside an ordinary test and panics unless it passes. The
/// argument is an [`EnergyBudget`] of a [`KernelUnderTest`] whose code is a
/// [`KernelCode`] (a setup and a launch function, as `#[energy_test]` takes them). Without
/// a GPU the code runs on the checked device and the figures come from the simulated
/// model; without one either it is "checked, not measured" (one line on stderr).
///
/// ```ignore
/// let kernel = KernelUnderTest::new("saxpy").code(KernelCode::with_setup(setup, launch)).sim(76e-6, 400.0);
/// energy_harness::assert_energy!(EnergyBudget::new(kernel, Limit::PerLaunch(Joules(0.04))));
/// ```
///
/// [`KernelCode`] documents a complete example.
#[macro_export]
macro_rules! assert_energy {
    ($budget:expr) => {
        $crate::assert_budget(&$budget)
    };
}

/// Emitted by `#[energy_bench]` inside a `#[test]` function, which exists only in a target
/// built with the test harness (libtest), where the benchmark would never run: a
/// constructor that stops the binary at start with the fix. Not a public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __refuse_libtest {
    () => {
        const _: () = {
            #[used]
            #[cfg_attr(
                any(
                    target_os = "linux",
                    target_os = "android",
                    target_os = "freebsd",
                    target_os = "netbsd",
                    target_os = "openbsd",
                    target_os = "dragonfly",
                    target_os = "illumos",
                    target_os = "solaris"
                ),
                link_section = ".init_array"
            )]
            #[cfg_attr(target_vendor = "apple", link_section = "__DATA,__mod_init_func")]
            #[cfg_attr(windows, link_section = ".CRT$XCU")]
            static REFUSE_LIBTEST: extern "C" fn() = {
                extern "C" fn refuse_libtest() {
                    $crate::__private::refuse_libtest(::core::file!())
                }
                refuse_libtest
            };
        };
    };
}

/// What `#[energy_bench]`, `#[energy_test]` and `energy_main!` expand to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use inventory;

    pub use crate::budget::{assert_budget, EnergyBudget, KernelUnderTest, Limit};
    pub use crate::units::{Joules, Watts};

    pub use crate::bench::BenchSpec;
    pub use crate::cuda::{CudaGpu, Stream};
    pub use crate::engine::options::MeasureOptions;
    pub use crate::kernel_code::KernelCode;

    /// The kernel code of a launch function with `setup` state (fn pointers, so a wrong
    /// signature is reported against the user's function).
    pub fn code_with_setup<S: 'static>(
        setup: fn(&CudaGpu) -> Result<S>,
        launch: fn(&mut S, &Stream) -> Result<()>,
    ) -> KernelCode {
        KernelCode::with_setup(setup, launch)
    }

    /// The kernel code of a launch function without state.
    pub fn code_launch(launch: fn(&Stream) -> Result<()>) -> KernelCode {
        KernelCode::launch(launch)
    }
    pub use crate::error::Result;
    pub use crate::sensors::SourceKind;

    /// Stops a binary built with the test harness that holds `#[energy_bench]` functions
    /// (see [`__refuse_libtest`](crate::__refuse_libtest)), saying what to change.
    pub fn refuse_libtest(file: &str) {
        let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("NAME");
        let in_benches = std::path::Path::new(file).components().any(|c| c.as_os_str() == "benches");
        if in_benches {
            eprintln!(
                "error: `{file}` holds #[energy_bench] functions but its bench target runs under the test harness \
                 (libtest), which would run 0 benchmarks and pass: add `harness = false` to the target in Cargo.toml:\n\n\
                 [[bench]]\nname = \"{stem}\"\nharness = false\n"
            );
        } else {
            eprintln!(
                "error: `{file}` holds #[energy_bench] functions but is built with the test harness (libtest), where \
                 they never run: benchmarks go in benches/ with `harness = false` for their target in Cargo.toml and \
                 `energy_harness::energy_main!();`; an energy budget in a test is #[energy_test]"
            );
        }
        std::process::exit(1);
    }

    /// A registered benchmark: `build` makes its spec.
    pub struct BenchDef {
        /// Builds the spec.
        pub build: fn() -> BenchSpec,
    }

    inventory::collect!(BenchDef);

    /// Runs every registered benchmark, in declaration order.
    pub fn main() -> std::process::ExitCode {
        let mut specs: Vec<BenchSpec> = inventory::iter::<BenchDef>.into_iter().map(|d| (d.build)()).collect();
        specs.sort_by(|a, b| a.location().cmp(&b.location()));
        crate::bench::run_registered(specs)
    }
}
