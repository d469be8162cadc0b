//! What `cargo energy ab` and `gate` read from a run directory: each run's figures for the
//! paired verdict (`energy_results::ab`, which holds the report, its statistics and its
//! reading).

use std::collections::BTreeMap;

use energy_results::ab::{BenchFigure, RunFigures, Side, WithinRun};
use energy_results::{Error, ErrorKind, Result};

use crate::compare::{check_comparable_figure, Figure, ResultSet};

/// The figures of `set` (read with [`ResultSet::read_run`]), run `run` of `side`. Every
/// result must come from one GPU and pass [`check_comparable_figure`] on its energy.
pub fn run_figures(set: &ResultSet, run: usize, side: Side, started_s: f64, wall_s: f64) -> Result<RunFigures> {
    set.check_comparable(set)?;
    let mut benchmarks = BTreeMap::new();
    let mut device = None;
    for (id, result) in &set.results {
        check_comparable_figure(&set.dir, result, Figure::Energy)?;
        device.get_or_insert_with(|| result.device.clone());
        benchmarks.insert(
            id.clone(),
            BenchFigure {
                energy_j: result.energy_j.mean,
                temperature_c: result.mean_temperature_c(),
                within_run: Some(WithinRun {
                    ci_low_j: result.energy_j.ci_low,
                    ci_high_j: result.energy_j.ci_high,
                    windows: result.energy_j.n,
                }),
            },
        );
    }
    let device = device.ok_or_else(|| {
        Error::new(ErrorKind::InvalidInput, format!("run {run} in `{}` holds no result", set.dir.display()))
    })?;
    Ok(RunFigures { run, side, dir: set.dir.display().to_string(), started_s, wall_s, device, benchmarks })
}
