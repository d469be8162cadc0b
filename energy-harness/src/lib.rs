//! Energy of GPU kernels, measured the way criterion measures their time.
//!
//! The harness reads a GPU's on-board sensors from a sampler thread while the kernel
//! under test runs in marked windows, all on one clock ([`sampling`]); sources are NVML,
//! a simulated GPU that knows the truth ([`sim`]) or a recorded trace ([`sensors`]).
//! Traces are written and read as `energy-trace v1` CSV ([`trace`]).
#![deny(missing_docs)]

pub mod cli;
pub mod clock;
pub mod cuda;
pub mod device;
pub mod error;
pub mod measurement;
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
