//! Run identity: which result files make up one `cargo bench`, and whether it finished.
//!
//! A run directory (`<target>/energy/new/`, or a saved baseline's) holds the results of
//! one `cargo bench` invocation and its manifest, `run.json` (`energy-run/1`):
//!
//! - The first bench binary of an invocation starts a **new run**: the directory is emptied
//!   (the previous run's files) and a manifest is written naming the run, its start and the
//!   invocation. Later binaries of the same invocation (same parent `cargo` process, or the
//!   same `ENERGY_RUN_ID`) join it. Either way, the temporary files of writes killed midway
//!   (`.run.json.tmp-<pid>-<n>`) are removed first, unless their writer may still run.
//! - Each bench target records itself as `running`; each result is committed as a unit
//!   (trace, plot, then JSON, each through a temporary file and a rename) and only then
//!   listed in the manifest with the hash of each file.
//! - At the end the target records its exit status (`succeeded`, or `failed` with the
//!   number of failed benchmarks) and its end time. The manifest is written last.
//!
//! [`RunManifest::check`] is what `report` and `compare` trust: a run is usable only when
//! every target finished and succeeded, and the JSON files in the directory are exactly
//! those listed, unchanged. A target interrupted (Ctrl-C, a crash) stays `running`
//! forever, so its run is refused; so is a failed run, and a stray or altered file.

pub use energy_results::run::*;

mod command;
mod writer;
pub use command::{
    bench_artifacts, is_energy_bench, mark_energy_bench, source_state_of, target_name_of, BenchArtifact,
};
pub(crate) use writer::DirLock;
pub use writer::{current_target_name, RunStart, RunWriter};

#[cfg(test)]
mod tests;
