//! The model suite's run read back with its ncu exports ([`SuiteRun`]): the results, each
//! benchmark's profiled launches or why it has none, and the observations a fit takes.

use std::collections::BTreeMap;
use std::path::Path;

use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_report::ResultSet;
use energy_report::{explain_as_fitted, read_ncu_csv, EnergyModel, Explanation, NcuKernel};

use super::fitting::{clock_range, measured_launches, observe_with, FitSelection, Observation};
use crate::protocol::Protocol;

/// The first error line (`==ERROR==`) in the standard error that ncu's run left beside an
/// export (`None` when it holds none, or does not exist); an error line in the export itself
/// is refused by the export's reader.
pub fn ncu_error(stderr: &Path) -> Option<String> {
    let text = std::fs::read_to_string(stderr).ok()?;
    text.lines().find(|l| l.starts_with("==ERROR==")).map(|l| l.trim().to_string())
}

/// The model suite's run read back: results by benchmark and each one's ncu launches
/// (`ncu_dir/<benchmark>.csv`).
pub struct SuiteRun {
    /// Results by benchmark name (`train_ffma`).
    pub results: BTreeMap<String, ResultFile>,
    /// ncu launches by benchmark name.
    pub launches: BTreeMap<String, Vec<NcuKernel>>,
    /// Benchmarks measured but without a readable ncu export, with why (a profile cut by
    /// its time limit, or not taken): any use of one is an error naming the reason.
    pub unprofiled: BTreeMap<String, String>,
    /// The classes observations are counted in and the training kernels of each regime
    /// ([`FitSelection::every_training_kernel`] as read; [`SuiteRun::under`] sets a protocol's).
    pub selection: FitSelection,
}

impl SuiteRun {
    /// Reads the run directory (a `cargo bench --bench model` run) and the ncu exports. A
    /// benchmark whose export is missing, unreadable or partial (an `==ERROR==` line in the
    /// export, or in `<benchmark>.err` beside it) is listed in [`SuiteRun::unprofiled`]: the
    /// fit refuses it if it is a training kernel.
    pub fn read_run_and_ncu(run_dir: &Path, ncu_dir: &Path) -> Result<SuiteRun> {
        let set = ResultSet::read_run(run_dir)?;
        // The profiling script's summary (`summary.txt`): `<benchmark> not profiled: <why>`.
        let summary = std::fs::read_to_string(ncu_dir.join("summary.txt")).unwrap_or_default();
        let skipped = |name: &str| {
            summary.lines().find_map(|l| {
                l.strip_prefix(&format!("{name} not profiled: "))
                    .map(|why| format!("not profiled: {why} (the profiling script's summary, ncu-*/summary.txt)"))
            })
        };
        let mut results = BTreeMap::new();
        let mut launches = BTreeMap::new();
        let mut unprofiled = BTreeMap::new();
        for (id, result) in set.results {
            let name = id.split('/').next().unwrap_or(&id).to_string();
            let path = ncu_dir.join(format!("{name}.csv"));
            // ncu writes what it profiled before an error (a launch it failed to profile, a
            // run cut by a time limit): such an export is partial, whatever it holds. The
            // reader refuses an error in the export; one on ncu's stderr is checked here.
            if let Some(error) = ncu_error(&ncu_dir.join(format!("{name}.err"))) {
                unprofiled.insert(
                    name.clone(),
                    format!("the ncu export of `{name}` is partial: its ncu run printed `{}`", error.trim()),
                );
                results.insert(name, result);
                continue;
            }
            match read_ncu_csv(&path) {
                Ok(read) => {
                    launches.insert(name.clone(), read);
                }
                // Skipped by the profiling script, which says why in its summary; else the
                // reader's error.
                Err(e) => {
                    let why =
                        skipped(&name).unwrap_or_else(|| e.context(format!("the ncu export of `{name}`")).to_string());
                    unprofiled.insert(name.clone(), why);
                }
            }
            results.insert(name, result);
        }
        Ok(SuiteRun { results, launches, unprofiled, selection: FitSelection::every_training_kernel() })
    }

    /// The run read under `protocol`: its terms, its training lists (each of which must have
    /// a result in the run).
    pub fn under(mut self, protocol: &Protocol) -> Result<SuiteRun> {
        let selection = FitSelection::of(protocol)?;
        if let Some((switching, constant)) = &selection.training {
            if let Some(absent) = switching.iter().chain(constant).find(|n| !self.results.contains_key(*n)) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!("the protocol's training kernel `{absent}` has no result in the run"),
                ));
            }
        }
        self.selection = selection;
        Ok(self)
    }

    /// Benchmark `name`'s result and all its profiled launches (setup launches included).
    pub fn profiled(&self, name: &str) -> Result<(&ResultFile, &[NcuKernel])> {
        if let Some(why) = self.unprofiled.get(name) {
            return Err(Error::new(ErrorKind::InvalidInput, why.clone()));
        }
        match (self.results.get(name), self.launches.get(name)) {
            (Some(result), Some(launches)) => Ok((result, launches)),
            _ => Err(Error::new(ErrorKind::InvalidInput, format!("no result or ncu export of `{name}` in the run"))),
        }
    }

    /// The observation of benchmark `name`.
    pub fn observation(&self, name: &str) -> Result<Observation> {
        let (result, launches) = self.profiled(name)?;
        observe_with(&self.selection.classes, name, result, launches)
    }

    /// The highest SM clock any training kernel's windows saw, MHz: the clock the model is
    /// fitted at (read, never set).
    pub fn reference_clock_mhz(&self) -> Option<u32> {
        self.results
            .iter()
            .filter(|(n, _)| self.selection.is_switching(n))
            .filter_map(|(_, r)| clock_range(r))
            .map(|c| c.1)
            .max()
    }

    /// The training kernels' observations, less those whose windows ran below the reference
    /// clock (a kernel at the power cap runs at a lower clock and voltage, and so at a lower
    /// energy per instruction: its costs are not the model's), each left out with its reason.
    pub fn training(&self) -> Result<(Vec<Observation>, Vec<String>)> {
        self.training_where(|s, n| s.is_switching(n))
    }

    /// The constant-data training kernels' observations (`train_*_const`), left out below
    /// the switching fit's reference clock as [`SuiteRun::training`] leaves them (none when
    /// the run has no constant-data kernel).
    pub fn constant_training(&self) -> Result<(Vec<Observation>, Vec<String>)> {
        self.training_where(|s, n| s.is_constant(n))
    }

    fn training_where(&self, regime: fn(&FitSelection, &str) -> bool) -> Result<(Vec<Observation>, Vec<String>)> {
        let reference = self.reference_clock_mhz();
        let mut kept = Vec::new();
        let mut left_out = Vec::new();
        for (name, result) in self.results.iter().filter(|(n, _)| regime(&self.selection, n)) {
            match (clock_range(result), reference) {
                (Some((low, high)), Some(reference)) if low < reference => {
                    let throttle: Vec<&str> = result
                        .warnings
                        .iter()
                        .filter(|w| w.message.contains("throttle"))
                        .map(|w| w.message.as_str())
                        .collect();
                    left_out.push(format!(
                        "{name}: SM clock {low}–{high} MHz, below the {reference} MHz of the fit{}",
                        if throttle.is_empty() { String::new() } else { format!(" ({})", throttle.join("; ")) }
                    ));
                }
                _ => kept.push(self.observation(name)?),
            }
        }
        Ok((kept, left_out))
    }

    /// `cargo energy explain`'s explanation of benchmark `name` with `model`, each class counted as
    /// the model's file defines it ([`explain_as_fitted`]: the published pages regenerate as they were).
    pub fn explain(&self, name: &str, model: &EnergyModel) -> Result<Explanation> {
        let (result, launches) = self.profiled(name)?;
        let chosen = measured_launches(launches, name)?;
        let refs: Vec<&NcuKernel> = chosen.iter().collect();
        explain_as_fitted(model, result, &refs)
    }
}
