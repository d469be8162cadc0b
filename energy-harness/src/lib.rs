//! Energy of GPU kernels, measured the way criterion measures their time.
//!
//! The harness reads a GPU's on-board sensors from a sampler thread while the kernel
//! under test runs in marked windows, all on one clock ([`sampling`]); sources are NVML,
//! a simulated GPU that knows the truth ([`sim`]) or a recorded trace ([`sensors`]).
//! Traces are written and read as `energy-trace v1` CSV ([`trace`]).
#![deny(missing_docs)]

pub mod bench;
pub mod budget;
pub mod clock;
pub mod cuda;
pub mod device;
pub mod engine;
pub mod error;
pub mod gpu;
pub mod kernel_code;
pub mod report;
pub mod sampling;
pub mod sensors;
pub mod sim;
pub mod trace;
pub mod workload;

/// Joules and watts, their SI formatting and parsing (the `energy-units` crate).
pub use energy_units as units;

pub use clock::{Clock, MonotonicClock, SharedClock, VirtualClock};
pub use error::{Error, ErrorKind, Result};
pub use gpu::DeviceFacts;
pub use sampling::{Sampler, SamplerConfig, WindowMarker};
pub use sensors::{SensorModel, SensorSource, SourceKind};
pub use trace::{Channel, Reading, Trace, Window, WindowEdge, WindowMark};
pub use units::{Joules, Watts};

pub use bench::{BenchSpec, Energy};
pub use cuda::{CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, PtxModule, Stream};
/// cudarc, for code that needs raw CUDA on a real GPU ([`Stream::cuda`], [`DeviceBuffer::cuda_slice`]).
pub use cudarc;
pub use energy_macros::{energy_bench, energy_test};
pub use kernel_code::KernelCode;

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
/// argument is a [`budget::EnergyBudget`] of a [`budget::KernelUnderTest`] whose code is a
/// [`KernelCode`] (a setup and a launch function, as `#[energy_test]` takes them). Without
/// a GPU the code runs on the checked device and the figures come from the simulated
/// model; without one either it is "checked, not measured" (one line on stderr).
///
/// ```ignore
/// let kernel = KernelUnderTest::new("saxpy").code(KernelCode::with_setup(setup, launch)).sim(76e-6, 400.0);
/// energy_harness::assert_energy!(EnergyBudget::new(kernel, Limit::PerLaunch(Joules(0.04))));
/// ```
///
/// The [`kernel_code`] module documents a complete example.
#[macro_export]
macro_rules! assert_energy {
    ($budget:expr) => {
        $crate::budget::assert_budget(&$budget)
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
