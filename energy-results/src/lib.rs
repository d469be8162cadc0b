//! The contract between `energy-harness`, which measures GPU kernels' energy and writes
//! result files, and whatever reads them (`energy-report`, `cargo energy`, tools in other
//! languages through the JSON Schemas of `docs/schemas/`): the types of those files, the
//! error type, and what reading needs. No CUDA, NVML or criterion: a reader compiles this
//! crate alone. `energy-harness` re-exports every item under its old path.

pub mod archive;
pub mod error;
pub mod escape;
pub mod hash;
pub mod measured;
pub mod options;
pub mod provenance;
pub mod result;
pub mod run;
pub mod source;
pub mod stats;
pub mod sweep;
pub mod trace;
pub mod warning;

pub use error::{Error, ErrorKind, Result};
pub use result::{ResultDevice, ResultFile};
pub use source::{SensorModel, SourceKind};
pub use stats::Estimate;
