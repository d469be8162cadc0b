//! The contract between `energy-harness`, which measures GPU kernels' energy and writes
//! result files, and whatever reads them (`energy-report`, `cargo energy`, tools in other
//! languages through the JSON Schemas of `docs/schemas/`): the types of those files, the
//! error type, and what reading needs. No CUDA, NVML or criterion: a reader compiles this
//! crate alone. `energy-harness` re-exports every item under its old path.
//!
//! Reading a result file (`target/energy/new/<stem>.json`, the stem the benchmark's id
//! made a file name), its schema and every figure checked:
//!
//! ```no_run
//! use energy_results::ResultFile;
//!
//! let r = ResultFile::read_json("target/energy/new/saxpy_energy__simulated_.json".as_ref())?;
//! let e = &r.energy_j; // energy per launch, J: mean and 95 % interval over the windows
//! println!("{}: {:.4e} J [{:.4e} … {:.4e}] on {}", r.id, e.mean, e.ci_low, e.ci_high, r.device.name);
//! # Ok::<(), energy_results::Error>(())
//! ```
//!
//! A run's manifest (`run.json`) reads with [`RunManifest::read_manifest`], a trace with
//! [`trace::format::read_trace`], an ab report (`ab.json` of `cargo energy ab` and `gate`)
//! with [`ab::AbReport::parse`] (every verdict computed again, by the statistics of
//! [`detect`]); the files' JSON Schemas are in the repository's `docs/schemas/`.

pub mod ab;
pub mod archive;
pub mod axis;
pub mod campaign;
pub mod detect;
pub mod dirs;
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

pub use archive::{archived_exists, open_archived, read_archived};
pub use axis::{axis_label, nice_ceiling};
pub use dirs::{energy_dir, target_dir};
pub use error::{echo, Error, ErrorKind, Result};
pub use escape::{file_stem, MAX_STEM_BYTES};
pub use measured::{
    extrapolation_note, validate_normalized, CrossCheck, Drift, NetEnergy, PerUnit, RailEnergy, ThermalNormalized,
    TimeBasis, WindowEnergy, WindowResult,
};
pub use options::ResolvedOptions;
pub use provenance::{Provenance, TemperatureRange};
pub use result::{ResultDevice, ResultFile, GENERIC_POWER_CEILING_W, MAX_ENERGY_PER_LAUNCH_J, RESULT_SCHEMA};
pub use run::{PartialRun, RunManifest, RunPin, MANIFEST_FILE, RUN_SCHEMA};
pub use source::{SensorModel, SourceKind};
pub use stats::{solve_linear, student_t_975, Estimate};
pub use sweep::{render_sweep, sweep_cells, sweep_verdict, verdict_line, SweepPoint, SweepRow, SweepVerdict};
pub use trace::format::write_atomically;
pub use warning::{Warning, WarningKind};
