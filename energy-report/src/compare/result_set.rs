//! A run's result set read back from `target/energy/<run>/`: its manifest checked (complete,
//! partial or pinned), its results, what it did not run, and whether two sets compare.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use energy_results::echo;
use energy_results::ResultFile;
use energy_results::{Error, ErrorKind, Result};
use energy_results::{PartialRun, RunManifest, RunPin};

/// The results of one run, by benchmark id.
#[derive(Clone, Debug)]
pub struct ResultSet {
    /// The directory they were read from.
    pub dir: PathBuf,
    /// The results, by id.
    pub results: BTreeMap<String, ResultFile>,
    /// The benchmarks the run did not run, by id, with why (its manifest's `not_run`).
    pub not_run: BTreeMap<String, String>,
}

impl ResultSet {
    /// The run's name as a legend or a line shows it: its directory's last component (the
    /// whole path when it has none).
    pub fn run_name(&self) -> String {
        self.dir.file_name().map_or_else(|| self.dir.display().to_string(), |n| n.to_string_lossy().into_owned())
    }

    /// Reads the results of the run in `dir`, after checking its manifest
    /// ([`RunManifest::check`]: complete, succeeded, exactly the files it lists). Errors
    /// (exit 2 material) on a missing directory (naming the runs that exist), a missing,
    /// incomplete or failed run, a stray or altered file, a corrupt result, a foreign
    /// schema, two results with one id, or no result at all.
    pub fn read_run(dir: &Path) -> Result<ResultSet> {
        ResultSet::read_run_pinned(dir, None)
    }

    /// [`ResultSet::read_run`], after checking that the run is the one `pin` names
    /// ([`RunManifest::check_pin`]) when given.
    pub fn read_run_pinned(dir: &Path, pin: Option<&RunPin>) -> Result<ResultSet> {
        ResultSet::read_run_pinned_or_empty(dir, pin)?.with_results()
    }

    /// The set, or the error for a run that holds no result (its benchmarks were filtered
    /// out, skipped, or run with `--test`), naming those it did not run.
    pub fn with_results(self) -> Result<ResultSet> {
        if self.results.is_empty() {
            let dir = &self.dir;
            let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "run `{}` in `{}` holds no energy results (its benchmarks were filtered out, skipped, or run with --test){}",
                    echo(&name),
                    dir.display(),
                    self.not_run_note("not run", self.not_run.keys().map(String::as_str))
                ),
            ));
        }
        Ok(self)
    }

    /// [`ResultSet::read_run_pinned`], except that a complete run with no result is read as
    /// an empty set: a GPU of `cargo energy run --gpus` that measured nothing (the other
    /// GPUs took every benchmark from the queue), read beside the others.
    pub fn read_run_pinned_or_empty(dir: &Path, pin: Option<&RunPin>) -> Result<ResultSet> {
        let manifest = ResultSet::pinned_manifest(dir, pin)?;
        let paths = manifest.check(dir)?;
        ResultSet::read_listed(dir, &manifest, paths)
    }

    /// The run's manifest, after checking that the run is the one `pin` names when given.
    fn pinned_manifest(dir: &Path, pin: Option<&RunPin>) -> Result<RunManifest> {
        let manifest = RunManifest::read_manifest(dir)?;
        if let Some(pin) = pin {
            manifest.check_pin(dir, pin)?;
        }
        Ok(manifest)
    }

    /// [`ResultSet::read_run_pinned_or_empty`], except that a partial run (bench targets
    /// that never finished: [`RunManifest::partial`]) is read too: the results its targets
    /// committed, each checked as in a complete run, and the [`PartialRun`] that says what
    /// never finished, for `report` to say so. A partial run that committed no result is
    /// refused ([`PartialRun::refusal`]), as are a failed run, a stray or altered file.
    pub fn read_run_pinned_or_partial(dir: &Path, pin: Option<&RunPin>) -> Result<(ResultSet, Option<PartialRun>)> {
        let manifest = ResultSet::pinned_manifest(dir, pin)?;
        let Some(partial) = manifest.partial(dir) else {
            let paths = manifest.check(dir)?;
            return Ok((ResultSet::read_listed(dir, &manifest, paths)?, None));
        };
        let paths = manifest.check_partial(dir)?;
        let set = ResultSet::read_listed(dir, &manifest, paths)?;
        if set.results.is_empty() {
            return Err(partial.refusal());
        }
        Ok((set, Some(partial)))
    }

    /// Reads the results at `paths` (those `manifest` lists, checked) and its `not_run`.
    fn read_listed(dir: &Path, manifest: &RunManifest, paths: Vec<PathBuf>) -> Result<ResultSet> {
        let mut results = BTreeMap::new();
        for path in paths {
            let result = ResultFile::read_json(&path)?;
            if let Some(previous) = results.insert(result.id.clone(), result) {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("two results for benchmark `{}` in `{}`", previous.id, dir.display()),
                ));
            }
        }
        let not_run: BTreeMap<String, String> = manifest.not_run().map(|n| (n.id.clone(), n.reason.clone())).collect();
        // A benchmark is measured or not run, never both: a manifest saying both was edited or
        // is corrupt, and no reading of it is the right one.
        if let Some(id) = not_run.keys().find(|id| results.contains_key(*id)) {
            return Err(Error::new(
                ErrorKind::Format,
                format!(
                    "run `{}` lists benchmark `{}` as not run but holds its result: the manifest contradicts itself \
                     (edited, or two runs mixed); run `cargo bench` again",
                    dir.display(),
                    echo(id)
                ),
            ));
        }
        Ok(ResultSet { dir: dir.to_path_buf(), results, not_run })
    }

    /// `; HEAD: ID (why), …` for those of `ids` this run did not run; empty when none.
    pub(super) fn not_run_note<'i>(&self, head: &str, ids: impl Iterator<Item = &'i str>) -> String {
        let listed: Vec<String> =
            ids.filter_map(|id| self.not_run.get(id).map(|why| format!("{} ({})", echo(id), echo(why)))).collect();
        if listed.is_empty() {
            String::new()
        } else {
            format!("; {head}: {}", listed.join(", "))
        }
    }

    /// Checks that every result of both sets comes from one kind of device: all simulated or
    /// all real, and one GPU (UUID).
    pub fn check_comparable(&self, other: &ResultSet) -> Result<()> {
        let all: Vec<(&Path, &ResultFile)> = self
            .results
            .values()
            .map(|r| (self.dir.as_path(), r))
            .chain(other.results.values().map(|r| (other.dir.as_path(), r)))
            .collect();
        let Some(&(first_dir, first)) = all.first() else { return Ok(()) };
        for (dir, r) in &all[1..] {
            if r.device.simulated != first.device.simulated {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "cannot compare simulated and measured results: `{}` in {} is {}, `{}` in {} is {}",
                        first.id,
                        first_dir.display(),
                        if first.device.simulated { "simulated" } else { "measured" },
                        r.id,
                        dir.display(),
                        if r.device.simulated { "simulated" } else { "measured" }
                    ),
                ));
            }
            if r.device.uuid != first.device.uuid {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "results come from different GPUs: {} ({}) and {} ({}); energy is only comparable on one GPU",
                        first.device.name, first.device.uuid, r.device.name, r.device.uuid
                    ),
                ));
            }
        }
        Ok(())
    }
}
