//! Energy of GPU kernels, measured the way criterion measures their time.
//!
//! The harness reads a GPU's on-board sensors from a sampler thread while the kernel
//! under test runs in marked windows, all on one clock ([`sampling`]); sources are NVML,
//! a simulated GPU that knows the truth ([`sim`]) or a recorded trace ([`sensors`]).
//! Traces are written and read as `energy-trace v1` CSV ([`trace`]).
#![deny(missing_docs)]

pub mod bench;
pub mod budget;
pub mod cli;
pub mod clock;
pub mod cuda;
pub mod device;
pub mod error;
pub mod measurement;
pub mod report;
pub mod sampling;
pub mod sensors;
pub mod sim;
pub mod trace;

/// Joules and watts, their SI formatting and parsing (the `energy-units` crate).
pub use energy_units as units;

pub use clock::{Clock, MonotonicClock, SharedClock, VirtualClock};
pub use device::DeviceFacts;
pub use error::{Error, ErrorKind, Result};
pub use sampling::{Sampler, SamplerConfig, WindowMarker};
pub use sensors::{SensorModel, SensorSource, SourceKind};
pub use trace::{Channel, Reading, Trace, Window, WindowEdge, WindowMark};
pub use units::{Joules, Watts};

pub use bench::{BenchSpec, Energy};
pub use cuda::{CudaGpu, JitOptLevel, Kernel, KernelArgs, LaunchConfig, PtxModule};
pub use cudarc::driver::{CudaSlice, CudaStream};
pub use energy_macros::{energy_bench, energy_test};

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

/// Checks an energy budget inside an ordinary test and panics unless it passes (a skip
/// without a GPU prints one line to stderr). The argument is a
/// [`budget::EnergyBudget`].
///
/// ```ignore
/// let budget = EnergyBudget::new(KernelUnderTest::new("saxpy").sim(76e-6, 400.0), Limit::PerLaunch(Joules(0.04)));
/// energy_harness::assert_energy!(budget);
/// ```
#[macro_export]
macro_rules! assert_energy {
    ($budget:expr) => {
        $crate::budget::assert_budget(&$budget)
    };
}

/// What `#[energy_bench]`, `#[energy_test]` and `energy_main!` expand to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use cudarc::driver::CudaStream;
    pub use inventory;

    pub use crate::budget::{assert_budget, EnergyBudget, KernelUnderTest, Limit};
    pub use crate::units::{Joules, Watts};

    pub use crate::bench::{stateful_workload, stateless_workload, BenchSpec};
    pub use crate::cuda::CudaGpu;
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
