//! Energy of GPU kernels, measured the way criterion measures their time.
//!
//! A sampler thread reads the GPU's on-board sensors while the kernel runs back to back in
//! marked windows, all on one clock (**window-synchronized**); active idle measured around
//! the busy stretch is subtracted (**baseline-subtracted**); each sensor's lag or averaging
//! is undone with a model calibrated per GPU (**capacitor-corrected**). Without an NVIDIA
//! GPU the kernel code is checked (PTX assembled, launches checked) and the figures come
//! from a simulated H100, labelled `simulated`.
//!
//! A bench file (`benches/saxpy.rs`, with `harness = false` for its `[[bench]]` target)
//! needs one import, [`prelude`]; `cargo bench` then prints joules beside time:
//!
//! ```no_run
//! use energy_harness::prelude::*;
//!
//! const N: usize = 1 << 24;
//! # const SAXPY_PTX: &str = "";
//! // SAXPY_PTX: your PTX text, e.g. kernels/saxpy.ptx through include_str!
//!
//! struct Saxpy { kernel: Kernel, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }
//!
//! fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
//!     let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
//!     let (x, y) = (gpu.upload(&vec![1.0f32; N])?, gpu.upload(&vec![2.0f32; N])?);
//!     let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
//!     Ok(Saxpy { kernel, args, _x: x, _y: y })
//! }
//!
//! /// One launch, on the stream the harness hands in.
//! #[energy_bench(setup = setup, bytes = 12 * N, sim(seconds = 67e-6, watts = 400.0))]
//! fn saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
//!     s.kernel.launch(stream, LaunchConfig::linear(N.div_ceil(256) as u32, 256), &s.args)
//! }
//!
//! energy_main!();
//! ```
//!
//! Without a GPU the setup and launch functions still run, on the checked device, and the
//! figures are the `sim(…)` model put through the simulated H100's sensors: 67 µs at 400 W
//! gives about 26.8 mJ (millijoules) per launch whatever the kernel does. They test the
//! harness, your CI and your launches, not your kernel's energy.
//!
//! # An energy budget in a test
//!
//! A file in `tests/` is an ordinary test target (no `harness = false`, no `energy_main!()`).
//! [`energy_test`] turns a launch function into a `#[test]` that fails when the kernel breaks
//! its budget; [`assert_energy!`] checks a budget built by hand ([`EnergyBudget`] of a
//! [`KernelUnderTest`] and a [`Limit`]) inside any test. Both, in `tests/saxpy_budget.rs`:
//!
//! ```no_run
//! use energy_harness::prelude::*;
//!
//! const N: usize = 1 << 24;
//! # const SAXPY_PTX: &str = "";
//! // SAXPY_PTX: your PTX text, as in the benchmark above
//!
//! struct Saxpy { kernel: Kernel, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }
//!
//! fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
//!     let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
//!     let (x, y) = (gpu.upload(&vec![1.0f32; N])?, gpu.upload(&vec![2.0f32; N])?);
//!     let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
//!     Ok(Saxpy { kernel, args, _x: x, _y: y })
//! }
//!
//! fn launch(s: &mut Saxpy, stream: &Stream) -> Result<()> {
//!     s.kernel.launch(stream, LaunchConfig::linear(N.div_ceil(256) as u32, 256), &s.args)
//! }
//!
//! /// At most 40 mJ per launch.
//! #[energy_test(setup = setup, max = "40 mJ", sim(seconds = 76e-6, watts = 400.0))]
//! fn saxpy_stays_under_40_mj(s: &mut Saxpy, stream: &Stream) -> Result<()> {
//!     launch(s, stream)
//! }
//!
//! /// At most 200 pJ per byte moved (12 bytes per element), written by hand.
//! #[test]
//! fn saxpy_stays_under_200_pj_per_byte() {
//!     let kernel = KernelUnderTest::new("saxpy_per_byte")
//!         .code(KernelCode::with_setup(setup, launch))
//!         .sim(76e-6, 400.0);
//!     let options = MeasureOptions { bytes: Some(12.0 * N as f64), ..MeasureOptions::DEFAULT };
//!     assert_energy!(EnergyBudget::new(kernel, Limit::PerByte(Joules(200e-12))).options(options));
//! }
//! ```
//!
//! A budget passes when the upper end of the 95 % interval of the measured quantity is
//! within it and fails when the lower end exceeds it; an interval that straddles it is
//! measured again (by default 3 rounds at most), then the test fails as *inconclusive*. A
//! GPU that throttled, windows too short for the energy counter or dropped sensor readings
//! make a result inconclusive; an NVML or CUDA error fails the test. Without a GPU the
//! setup and launch functions run on the checked device (a wrong kernel name, argument
//! list, launch configuration or PTX fails the test), and the budget is checked on the
//! simulated H100 against its `sim(…)` model: 76 µs at 400 W is about 30.4 mJ per launch
//! and 151 pJ per byte, so both pass there, which says nothing about the kernel. A budget
//! without a model passes without a GPU with one line on stderr, "checked, not measured";
//! with `ENERGY_REQUIRE_GPU=1` it fails.
//!
//! # The API reference
//!
//! `cargo doc -p energy-harness --open`, run in a crate that depends on the harness, builds
//! this documentation for the version in that crate's `Cargo.lock` and opens it in a
//! browser. It holds the stable API (the crate root and [`prelude`], each prelude item with
//! an example) and the options of [`energy_bench`] and [`energy_test`]. The launch details
//! are with their types: [`LaunchConfig`] for 2-D and 3-D grids and dynamic shared memory,
//! [`KernelArgs`] for which Rust type fills which PTX parameter.
//!
//! The crate root holds what bench and test authors use: the macros, the CUDA types a
//! kernel's code needs ([`CudaGpu`], [`Stream`], [`PtxModule`] from PTX or CUDA C, …), budgets
//! ([`EnergyBudget`]), the options ([`MeasureOptions`]), the result file ([`ResultFile`]) and
//! the errors. A crate's own cudarc code uses the re-exported [`cudarc`]. What `cargo energy`
//! and the suites build on is in [`unstable`], outside the stable API.
//!
//! # The prelude
//!
//! `use energy_harness::prelude::*;` brings:
//!
//! - [`energy_bench`]: turns a function that enqueues one launch into a benchmark.
//! - [`energy_main!`]: the `main` of a bench target (`harness = false`), once per file.
//! - [`energy_test`]: turns such a function into a `#[test]` that checks an energy budget.
//! - [`assert_energy!`]: checks an [`EnergyBudget`] inside any test, and panics unless it passes.
//! - [`EnergyBudget`]: a budget written by hand: the kernel, a [`Limit`], options, rounds.
//! - [`Limit`]: what a budget limits: joules per launch, per op or per byte, watts, or a
//!   ratio to a reference kernel.
//! - [`KernelUnderTest`]: a kernel as a hand-written budget runs it: name, code, simulated model.
//! - [`KernelCode`]: a kernel's setup and launch functions (and a library's wait).
//! - [`CudaGpu`]: the device a setup function gets: loads PTX or CUDA C, allocates buffers.
//! - [`PtxModule`]: a compiled module; [`PtxModule::kernel`] takes one of its entries.
//! - [`Kernel`]: an entry ready to launch; [`Kernel::launch`] enqueues one launch.
//! - [`JitOptLevel`]: the level the driver's JIT compiles PTX at (`O0` to `O4`).
//! - [`KernelArgs`]: a launch's arguments, in the entry's parameter order.
//! - [`LaunchConfig`]: a launch's grid, block and dynamic shared memory.
//! - [`DeviceBuffer`]: device memory (host memory on the checked device) that arguments point to.
//! - [`Stream`]: the stream a launch function is given, which the harness times and windows.
//! - [`MeasureOptions`]: a measurement's options (ops, bytes, GPU, sensor source, precision,
//!   windows) for a budget written by hand.
//! - [`SourceKind`]: a sensor source (`counter`, `samples`, …).
//! - [`Joules`], [`Watts`]: energy and power, with the unit in the type.
//! - [`Error`], [`Result`]: the harness's error (a kind, and a message that says what to do)
//!   and its result type.
//!
//! # Where the book goes further
//!
//! The source repository's `README.md` is a quick start; its user guide is a book in
//! `docs/book/` (`mdbook serve docs/book`), a chapter per task:
//!
//! - "candle, burn, cubecl, wgpu": work that a library enqueues on its own streams or queue,
//!   measured with `any_stream` or `wait = …` ([`KernelCode::any_stream`],
//!   [`KernelCode::with_wait`]), with complete bench files.
//! - "Budgets in tests": the budgets beside the benchmark they share a setup with.
//! - "Energy in CI": the pull request's gate (`cargo energy gate`), a GitHub Actions workflow
//!   that builds on an ordinary runner and runs on a GPU runner.
//! - "Your own cudarc code", "CUDA C and the PTX tools", "Every option", "Troubleshooting by
//!   message".
//!
//! Every option of the two attribute macros, the result files and the `cargo energy`
//! command are in its `docs/GUIDE.md`.
#![deny(missing_docs)]

mod bench;
mod budget;
mod clock;
mod cuda;
mod device;

mod dl;
mod engine;
mod gpu;
mod kernel;
mod report;
mod sampling;
mod selftest;
mod sensors;
mod sim;
mod workload;

/// cudarc (with its `driver` and `nvrtc` features, loaded at run time), for a crate's own
/// CUDA code on a real GPU ([`Stream::cuda`], [`CudaGpu::cuda_context`],
/// [`DeviceBuffer::cuda_slice`]): make it your only cudarc, or depend on the same cudarc
/// version with the same CUDA feature.
pub use cudarc;
/// Turns a function that enqueues one launch into an energy benchmark, which
/// [`energy_main!`] runs under criterion: `cargo bench` prints joules (J) beside time.
///
/// # Examples
///
/// The function takes the [`Stream`] to launch on and, with `setup = …`, first the state
/// the setup function made (`&mut S`). Here the options also give the bytes each launch
/// moves (for joules per byte), a precision of ±0.5 % and the model the simulated GPU runs
/// where there is no GPU:
///
/// ```no_run
/// use energy_harness::prelude::*;
///
/// const N: usize = 1 << 24;
/// # const COPY_PTX: &str = "";
/// // COPY_PTX: PTX with `.entry copy(.param .u32 n, .param .u64 src, .param .u64 dst)`
///
/// struct Memcpy { kernel: Kernel, args: KernelArgs, _src: DeviceBuffer<f32>, _dst: DeviceBuffer<f32> }
///
/// fn setup(gpu: &CudaGpu) -> Result<Memcpy> {
///     let kernel = gpu.load_ptx(COPY_PTX, "copy.ptx", JitOptLevel::O4)?.kernel("copy")?;
///     let src = gpu.upload(&vec![1.0f32; N])?;
///     let dst = gpu.alloc_zeros::<f32>(N)?;
///     let args = KernelArgs::new().u32(N as u32).buffer(&src).buffer(&dst);
///     Ok(Memcpy { kernel, args, _src: src, _dst: dst })
/// }
///
/// #[energy_bench(setup = setup, bytes = 8 * N, precision = 0.005, sim(seconds = 50e-6, watts = 380.0))]
/// fn copy(s: &mut Memcpy, stream: &Stream) -> Result<()> {
///     s.kernel.launch(stream, LaunchConfig::linear(N.div_ceil(256) as u32, 256), &s.args)
/// }
///
/// energy_main!();
/// ```
///
/// What `#[energy_bench]` expands to: the function itself, a builder of its
/// `BenchSpec` and its registration, which `energy_main!()` runs. The same, written out
/// (the hidden `__private` module is the macros' alone, not an API):
///
/// ```no_run
/// use energy_harness::prelude::*;
/// use energy_harness::__private as p;
///
/// // #[energy_bench(bytes = 4096, sim(seconds = 20e-6, watts = 350.0))]
/// fn copy_kernel(_stream: &Stream) -> Result<()> {
///     Ok(())
/// }
///
/// fn __energy_bench_spec_copy_kernel() -> Vec<p::BenchSpec> {
///     let spec = p::BenchSpec::new("copy_kernel", file!(), line!());
///     let spec = spec.code(p::code_launch(copy_kernel));
///     let spec = spec.sim(20e-6, 350.0);
///     vec![spec.options(p::MeasureOptions { bytes: Some(4096.0), ..p::MeasureOptions::DEFAULT })]
/// }
/// p::inventory::submit! { p::BenchDef { build: __energy_bench_spec_copy_kernel } }
///
/// energy_main!();
/// ```
///
/// It also emits a `#[test]` function that exists only where the target is built with the
/// test harness, which stops such a binary at start (a bench target needs
/// `harness = false`), and a compile error when the target's root file has no
/// `energy_main!()`.
///
/// # Options
///
#[doc(inline)]
pub use energy_macros::energy_bench;
/// Turns a function that enqueues one launch into a `#[test]` that checks an energy
/// budget: `cargo test` fails when the kernel breaks it.
///
/// # Examples
///
/// A budget in `tests/`: the test passes when the upper end of the 95 % interval of the
/// energy per launch is within 40 mJ (millijoules), and fails when its lower end exceeds it.
///
/// ```no_run
/// use energy_harness::prelude::*;
///
/// struct Saxpy { kernel: Kernel, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }
/// # const SAXPY_PTX: &str = "";
///
/// fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
///     let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
///     let (x, y) = (gpu.upload(&vec![1.0f32; 1 << 24])?, gpu.upload(&vec![2.0f32; 1 << 24])?);
///     let args = KernelArgs::new().u32(1 << 24).f32(1e-3).buffer(&x).buffer(&y);
///     Ok(Saxpy { kernel, args, _x: x, _y: y })
/// }
///
/// #[energy_test(setup = setup, max = "40 mJ", sim(seconds = 67e-6, watts = 400.0))]
/// fn saxpy_stays_under_40_mj(s: &mut Saxpy, stream: &Stream) -> Result<()> {
///     s.kernel.launch(stream, LaunchConfig::linear(1 << 16, 256), &s.args)
/// }
/// ```
///
/// A relative budget: the new launch may cost at most 1.10 × the reference launch (here the
/// old kernel, loaded by the same setup), each with its own model on the simulated GPU:
///
/// ```no_run
/// use energy_harness::prelude::*;
///
/// struct Versions { old: Kernel, new: Kernel, args: KernelArgs, _x: DeviceBuffer<f32> }
/// # const REDUCE_PTX: &str = "";
///
/// fn setup(gpu: &CudaGpu) -> Result<Versions> {
///     let module = gpu.load_ptx(REDUCE_PTX, "reduce.ptx", JitOptLevel::O4)?;
///     let x = gpu.upload(&vec![1.0f32; 1 << 24])?;
///     let args = KernelArgs::new().u32(1 << 24).buffer(&x);
///     Ok(Versions { old: module.kernel("reduce_v1")?, new: module.kernel("reduce_v2")?, args, _x: x })
/// }
///
/// fn reduce_v1(s: &mut Versions, stream: &Stream) -> Result<()> {
///     s.old.launch(stream, LaunchConfig::linear(1024, 256), &s.args)
/// }
///
/// #[energy_test(setup = setup, relative_to = reduce_v1, max_ratio = 1.10,
///               sim(seconds = 40e-6, watts = 380.0), reference_sim(seconds = 42e-6, watts = 380.0))]
/// fn reduce_v2_costs_at_most_1_10_times_v1(s: &mut Versions, stream: &Stream) -> Result<()> {
///     s.new.launch(stream, LaunchConfig::linear(1024, 256), &s.args)
/// }
/// ```
///
/// # Options
///
#[doc(inline)]
pub use energy_macros::energy_test;
/// Joules and watts, their SI formatting and parsing (the `energy-units` crate).
pub use energy_units as units;
pub use units::{Joules, Watts};

// Errors.
pub use energy_results::{Error, ErrorKind, Result};

// A kernel under test: the CUDA layer (a real GPU, or the checked device without one).
pub use cuda::{
    same_pci_bus_id, CudaGpu, DeviceBuffer, GpuProperties, JitOptLevel, Kernel, KernelArgs, LaunchConfig, PtxModule,
    Stream,
};
pub use kernel::{KernelCode, KernelUnderTest, Launcher};

// Budgets in tests, and the options every measurement takes.
pub use budget::{EnergyBudget, Limit, Report as BudgetReport, Verdict};
pub use engine::MeasureOptions;
/// A sensor source: the on-board reading (NVML's energy counter, its power readings or its
/// sample buffer) that a measurement takes its energy from.
///
/// # Examples
///
/// A source by its name, as `#[energy_bench(source = "…")]`, `#[energy_test(source = "…")]`
/// and `cargo energy` take it, and in the options of a budget written by hand:
///
/// ```
/// use energy_harness::prelude::*;
///
/// assert_eq!(SourceKind::from_name("samples"), Some(SourceKind::SampleBuffer));
/// assert_eq!(SourceKind::Counter.name(), "counter");
///
/// // Measure with the driver's power samples instead of the energy counter.
/// let options = MeasureOptions { source: Some(SourceKind::SampleBuffer), ..MeasureOptions::DEFAULT };
/// # let _ = options;
/// ```
///
/// A measurement reads the whole board's power or energy; the `memory` rail
/// ([`SourceKind::MemoryRail`]) is recorded beside the board's source whenever the GPU
/// has it, and the macros refuse it as `source`.
///
/// # The sources
///
pub use sensors::SourceKind;

// What a measurement leaves: the result file and its estimates.
pub use engine::Estimate;
pub use report::{ResultDevice, ResultFile};

pub mod unstable;

/// What a bench or test file of a GPU crate needs, in one import:
/// `use energy_harness::prelude::*;`.
pub mod prelude {
    pub use crate::budget::{EnergyBudget, Limit};
    pub use crate::cuda::{CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, PtxModule, Stream};
    pub use crate::engine::options::MeasureOptions;
    pub use crate::kernel::{KernelCode, KernelUnderTest};
    pub use crate::units::{Joules, Watts};
    pub use energy_results::error::{Error, Result};
    // Through the crate root, whose re-exports carry their examples.
    #[doc(inline)]
    pub use crate::SourceKind;
    pub use crate::{assert_energy, energy_bench, energy_main, energy_test};
}

/// The `main` of a bench target (`harness = false`) holding `#[energy_bench]` functions:
/// runs all of them under criterion. Invoke it once, at the end of the target's root file.
///
/// # Examples
///
/// ```no_run
/// use energy_harness::prelude::*;
///
/// #[energy_bench(sim(seconds = 1e-3, watts = 300.0))]
/// fn nothing_yet(_stream: &Stream) -> Result<()> {
///     Ok(())
/// }
///
/// energy_main!();
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
/// # Examples
///
/// ```no_run
/// use energy_harness::prelude::*;
///
/// fn launch(_stream: &Stream) -> Result<()> {
///     Ok(()) // enqueue one launch of the kernel under test
/// }
///
/// let kernel = KernelUnderTest::new("saxpy").code(KernelCode::launch(launch)).sim(76e-6, 400.0);
/// assert_energy!(EnergyBudget::new(kernel, Limit::PerLaunch(Joules(0.04))));
/// ```
///
/// [`KernelCode`] documents a complete example.
#[macro_export]
macro_rules! assert_energy {
    ($budget:expr) => {
        $crate::__private::assert_budget(&$budget)
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

    pub use crate::budget::{assert_budget, EnergyBudget, Limit};
    pub use crate::units::{Joules, Watts};

    pub use crate::bench::BenchSpec;
    pub use crate::cuda::{CudaGpu, Stream};
    pub use crate::engine::options::MeasureOptions;
    pub use crate::kernel::{KernelCode, KernelUnderTest};

    /// The kernel code of a launch function with `setup` state (fn pointers, so a wrong
    /// signature is reported against the user's function).
    pub fn code_with_setup<S: 'static>(
        setup: fn(&CudaGpu) -> Result<S>,
        launch: fn(&mut S, &Stream) -> Result<()>,
    ) -> KernelCode {
        KernelCode::with_setup(setup, launch)
    }

    /// The kernel code of library work with state: the launch makes one call, `wait` waits
    /// for the library.
    pub fn code_with_wait<S: 'static>(
        setup: fn(&CudaGpu) -> Result<S>,
        launch: fn(&mut S, &Stream) -> Result<()>,
        wait: fn(&mut S) -> Result<()>,
    ) -> KernelCode {
        KernelCode::with_wait(setup, launch, wait)
    }

    /// The kernel code of a launch function without state.
    pub fn code_launch(launch: fn(&Stream) -> Result<()>) -> KernelCode {
        KernelCode::launch(launch)
    }

    /// [`code_with_setup`] for one argument of `args`: both functions get it last.
    pub fn code_with_setup_arg<S: 'static, A: Send + Sync + 'static>(
        setup: fn(&CudaGpu, &A) -> Result<S>,
        launch: fn(&mut S, &Stream, &A) -> Result<()>,
        arg: A,
    ) -> KernelCode {
        let (setup, launch) = with_arg(setup, launch, arg);
        KernelCode::with_setup(setup, launch)
    }

    /// [`code_with_wait`] for one argument of `args`: setup and launch get it last.
    pub fn code_with_wait_arg<S: 'static, A: Send + Sync + 'static>(
        setup: fn(&CudaGpu, &A) -> Result<S>,
        launch: fn(&mut S, &Stream, &A) -> Result<()>,
        wait: fn(&mut S) -> Result<()>,
        arg: A,
    ) -> KernelCode {
        let (setup, launch) = with_arg(setup, launch, arg);
        KernelCode::with_wait(setup, launch, wait)
    }

    /// `setup` and `launch` with `arg` bound last, one copy shared by both.
    #[allow(clippy::type_complexity)]
    fn with_arg<S: 'static, A: Send + Sync + 'static>(
        setup: fn(&CudaGpu, &A) -> Result<S>,
        launch: fn(&mut S, &Stream, &A) -> Result<()>,
        arg: A,
    ) -> (
        impl Fn(&CudaGpu) -> Result<S> + Send + Sync + 'static,
        impl Fn(&mut S, &Stream) -> Result<()> + Send + Sync + 'static,
    ) {
        let arg = std::sync::Arc::new(arg);
        let for_launch = arg.clone();
        (move |gpu: &CudaGpu| setup(gpu, &arg), move |s: &mut S, stream: &Stream| launch(s, stream, &for_launch))
    }

    /// [`code_launch`] for one argument of `args`.
    pub fn code_launch_arg<A: Send + Sync + 'static>(launch: fn(&Stream, &A) -> Result<()>, arg: A) -> KernelCode {
        KernelCode::launch(move |stream: &Stream| launch(stream, &arg))
    }

    /// `graph = N` of the attributes as the launches a CUDA graph captures: any integer
    /// (a literal, a `usize` constant); one that is no `u32` becomes `u32::MAX`, which the
    /// measurement refuses as out of bounds (a function, not a cast: no lint on the
    /// user's literal).
    pub fn graph_launches<N: TryInto<u32>>(launches: N) -> u32 {
        launches.try_into().unwrap_or(u32::MAX)
    }

    /// An argument of `args` as its benchmark's id shows it.
    pub fn arg_label<A: std::fmt::Display>(arg: &A) -> String {
        arg.to_string()
    }

    /// The id of one argument's benchmark or budget: `name/arg` (criterion's convention),
    /// or `name` with its `{}` replaced by the argument (`name = "reduce_{}"`: `reduce_own`).
    pub fn arg_id(name: &str, label: &str) -> String {
        if name.contains("{}") {
            name.replacen("{}", label, 1)
        } else {
            format!("{name}/{label}")
        }
    }

    pub use crate::budget::assert_budgets;
    pub use crate::sensors::SourceKind;
    pub use energy_results::error::{Error, Result};

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

    /// A registered benchmark: `build` makes its spec, or one per argument of `args`.
    pub struct BenchDef {
        /// Builds the specs.
        pub build: fn() -> Vec<BenchSpec>,
    }

    inventory::collect!(BenchDef);

    /// Runs every registered benchmark, in declaration order.
    pub fn main() -> std::process::ExitCode {
        crate::report::run::mark_energy_bench();
        let mut specs: Vec<BenchSpec> = inventory::iter::<BenchDef>.into_iter().flat_map(|d| (d.build)()).collect();
        specs.sort_by(|a, b| a.location().cmp(&b.location()));
        crate::bench::run_registered(specs)
    }
}
