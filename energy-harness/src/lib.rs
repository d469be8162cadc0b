//! Energy of GPU kernels, measured the way criterion measures their time.
//!
//! The harness reads a GPU's on-board sensors from a sampler thread while the kernel
//! under test runs in marked windows, all on one clock ([`sampling`]); sources are NVML,
//! a simulated GPU that knows the truth ([`sim`]) or a recorded trace ([`sensors`]).
//! Traces are written and read as `energy-trace v1` CSV ([`trace`]).
#![deny(missing_docs)]

pub mod bench;
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
pub mod units;

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
pub use energy_macros::energy_bench;

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

/// What `#[energy_bench]` and `energy_main!` expand to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use cudarc::driver::CudaStream;
    pub use inventory;

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
