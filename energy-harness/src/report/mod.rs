//! What a measurement leaves behind: the `energy-result/1` JSON file, the trace, the
//! SVG plot, and the summary printed under criterion's lines.

pub use energy_results::escape;
pub use energy_results::escape::file_stem;
pub use energy_results::provenance;
pub mod run;
mod summary;
pub mod svg;

pub use energy_results::dirs::energy_dir;
pub use summary::render_summary;

use std::path::PathBuf;

use crate::engine::analyze::AnalysisOptions;
pub use crate::engine::result::NetEnergy;
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::format::render_trace;
use energy_results::trace::Trace;
use energy_units::format_si;
pub use provenance::Provenance;

pub use energy_results::result::{ResultDevice, ResultFile};

/// The files written for one benchmark.
#[derive(Clone, Debug)]
pub struct WrittenFiles {
    /// The result JSON.
    pub result: PathBuf,
    /// The trace.
    pub trace: PathBuf,
    /// The plot.
    pub plot: PathBuf,
}

/// Commits the result, its trace and its plot to a run as one unit (see [`run`]).
pub fn write_outputs(
    run: &run::RunWriter,
    result: &ResultFile,
    trace: &Trace,
    options: &AnalysisOptions,
) -> Result<WrittenFiles> {
    result
        .validate()
        .map_err(|problem| Error::new(ErrorKind::Analysis, format!("the result is not written: {problem}")))?;
    let json = serde_json::to_string_pretty(result)
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the result: {e}")))?;
    let title = format!(
        "{}{}: {} per launch, {} windows",
        result.id,
        if result.device.simulated { " [simulated]" } else { "" },
        format_si(result.energy_j.mean, "J", 4),
        result.windows.len()
    );
    let plot = svg::power_plot(trace, options, &title);
    let csv = render_trace(trace);
    let entry = run.commit(
        &result.id,
        &file_stem(&result.id),
        &result.device,
        [json.as_bytes(), csv.as_bytes(), plot.as_bytes()],
    )?;
    Ok(WrittenFiles {
        result: run.dir().join(entry.json),
        trace: run.dir().join(entry.trace),
        plot: run.dir().join(entry.plot),
    })
}

#[cfg(test)]
mod tests;
