//! The criterion plugin: `#[energy_bench]` functions registered at link time, run by
//! `energy_main!()` as criterion benchmarks.
//!
//! Each benchmark (a kernel under test, [`crate::kernel::Subject`], with its options) runs
//! through the steps of [`pipeline`]: select, check or skip, plan, measure the kernel and
//! its baseline, hand to criterion, summarize, write.
//!
//! Each benchmark is measured once by the session engine
//! ([`crate::engine::session`]): idle, a warm-up, back-to-back windows of launches
//! until the asked precision (at least 10 windows, criterion's minimum; 4 for launches
//! of a second), idle; one progress line on stderr while it runs. Then criterion gets up
//! to three benchmarks from those windows, with no second pass on the GPU:
//! - `NAME/energy`: [`Energy`] measurement; sample k is window k's energy per launch
//!   (corrected, window-synchronized), so criterion's statistics, reports, filters and
//!   `--baseline` comparisons work on measured joules;
//! - `NAME/baseline`, when a baseline kernel is given: the same for it (measured with its
//!   own `baseline_ops`/`baseline_bytes`);
//! - `NAME/time`: sample k is window k's CUDA-event GPU time per launch.
//!
//! Criterion's own progress lines (a replay has no warm-up to speak of) and its gnuplot
//! probe are kept off stderr unless `--verbose` is given; its HTML plots are off unless
//! `--plotting-backend` is (our SVG plot is written for every benchmark). With `--test`,
//! each kernel runs three launches and nothing is measured.
//!
//! After them the engine's own summary is printed (time, energy and dynamic energy per
//! launch with intervals, power, per-op/per-byte and net figures, source, model, ticks,
//! drift, warnings) and the result, trace and plot are written under `target/energy/new/`
//! (and `target/energy/NAME/` with `--save-baseline NAME`).
//!
//! On a machine without an NVIDIA GPU (or with `ENERGY_DEVICE=sim`) the benchmarks run on
//! the simulated H100, using each benchmark's declared simulated kernel; every id, line and
//! file then says `simulated`. A benchmark without one is checked, not measured: its code
//! runs on the checked device and one line says so (a suite of hundreds of kernels asks
//! for one summary instead, [`RunSettings::summarize_checked`]: the lines come back with
//! `--verbose`). A check that fails is an error, printed in full either way; a missing
//! `ptxas` is said once per binary, with how to get one.

mod criteria;
mod criterion_energy;
pub(crate) mod pipeline;
mod progress;
pub mod queue;
mod quiet;
mod run_options;
mod spec;

use run_options::RunOptions;
pub use spec::{benchmark_name_problem, BenchSpec, Sharing};

pub use criterion_energy::{Energy, EnergyFormatter};

use crate::engine::result::Measurement;
use crate::engine::sweep::{render_sweep, SweepPoint, SweepRow};
use crate::kernel::{open_device, CodeCheck, Rig};
use crate::report::run::RunWriter;
use criteria::Criteria;
use energy_results::error::Error;
use energy_results::error::Result;
use pipeline::{run_spec, SpecOutcome, Station};
use queue::WorkQueue;

/// Runs every `#[energy_bench]` of the binary (what `energy_main!()` calls).
pub fn run_registered(specs: Vec<BenchSpec>) -> std::process::ExitCode {
    let points: Vec<(String, SweepPoint)> =
        specs.iter().filter_map(|s| s.sweep().map(|p| (s.name().to_string(), p.clone()))).collect();
    let collected = run_collect(specs, &RunSettings::default(), |_| {});
    for table in sweep_tables(&points, &collected) {
        println!("{table}");
    }
    if collected.failures > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// The table and verdict of each sweep of which this process measured two points or more
/// (`args = [...]`: a filter, a shard or a node's queue may leave it fewer), in the order
/// of their first point.
pub fn sweep_tables(points: &[(String, SweepPoint)], collected: &Collected) -> Vec<String> {
    let mut sweeps: Vec<(&SweepPoint, Vec<SweepRow>)> = Vec::new();
    for (name, point) in points {
        let Some(m) = collected.measured.iter().find(|b| &b.name == name).and_then(|b| b.kernel.as_ref()) else {
            continue;
        };
        let row = SweepRow { arg: point.arg.clone(), energy_j: m.energy_j, dynamic_j: m.dynamic_j, time_s: m.time_s };
        match sweeps.iter_mut().find(|(p, _)| p.sweep == point.sweep) {
            Some((_, rows)) => rows.push(row),
            None => sweeps.push((point, vec![row])),
        }
    }
    sweeps
        .into_iter()
        .filter(|(_, rows)| rows.len() >= 2)
        .map(|(p, rows)| render_sweep(&p.sweep, &p.param, &rows, collected.simulated))
        .collect()
}

/// What [`run_collect`] measured.
#[derive(Debug, Default)]
pub struct Collected {
    /// Per benchmark that ran: its name, and the measurements of its kernel and of its
    /// baseline (each `None` when criterion ran no window: a filter, `--test`, `--list`).
    pub measured: Vec<CollectedBench>,
    /// Benchmarks checked, not measured: without a GPU, those without a simulated model
    /// ran on the checked device only (and passed: a failed check is counted in `failures`).
    pub checked: usize,
    /// The checks of those benchmarks' code (their kernel's, and their baseline's if any).
    pub checks: Vec<CodeCheck>,
    /// Benchmarks that failed (each was reported on stderr).
    pub failures: usize,
    /// Whether the device was the simulated one.
    pub simulated: bool,
}

/// One benchmark's measurements.
#[derive(Debug)]
pub struct CollectedBench {
    /// The benchmark's name.
    pub name: String,
    /// The kernel's measurement.
    pub kernel: Option<Measurement>,
    /// The baseline's measurement.
    pub baseline: Option<Measurement>,
}

/// Settings of a whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSettings {
    /// Criterion's HTML report plots (about 3.5 s per benchmark, so off by default;
    /// `--plotting-backend` on the command line turns them on regardless).
    pub criterion_plots: bool,
    /// Without a GPU, benchmarks checked but not measured get no line each (nor the note
    /// on the simulated device): they are counted in [`Collected::checked`] for the caller's
    /// one summary line, as a suite of hundreds of kernels wants. `--verbose` prints the
    /// lines regardless; a failed check is printed in full either way. On a real GPU this
    /// changes nothing.
    pub summarize_checked: bool,
}

/// Runs benchmarks as `energy_main!()` does and returns their measurements, for suites
/// that compute figures across benchmarks (net energy per instruction against a shared
/// baseline, linearity in the work). `on_measured` sees each benchmark's measurements as
/// soon as they are taken (to save them before a long run ends).
pub fn run_collect(
    specs: Vec<BenchSpec>,
    settings: &RunSettings,
    mut on_measured: impl FnMut(&CollectedBench),
) -> Collected {
    let options = match RunOptions::from_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}");
            return Collected { failures: 1, ..Collected::default() };
        }
    };
    if let Some(shard) = options.shard {
        eprintln!("{}: shard {} of {} (ENERGY_SHARD)", current_exe_name(), shard.index, shard.count);
    }
    if options.pairing.is_paired() && !options.nothing_runs && !options.test_mode {
        eprintln!(
            "{}: a run of a paired sequence ({}): the windows are not handed to criterion (the sequence reads the \
             result files), and {}",
            current_exe_name(),
            energy_results::run::PAIRED_RUN_ENV,
            options.pairing.tail_phrase()
        );
    }
    // With a queue (`cargo energy run --gpus`), the benchmarks this process may run are
    // registered there and claimed one at a time; without one, each runs in turn.
    let queue = match queue::WorkQueue::from_env() {
        Ok(queue) => queue.filter(|_| !options.nothing_runs),
        Err(e) => {
            eprintln!("error: {e}");
            return Collected { failures: 1, ..Collected::default() };
        }
    };
    let runs = match options.begin_runs() {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("error: cannot start the run: {e}");
            return Collected { failures: 1, ..Collected::default() };
        }
    };
    let mut bench = Bench {
        criteria: Criteria::from_args(settings),
        collected: Collected::default(),
        quiet: settings.summarize_checked && !quiet::verbose(),
        stations: Vec::new(),
        runs,
        options,
    };
    let mut eligible = Vec::new();
    let mut seen: std::collections::HashMap<String, (&str, u32)> = std::collections::HashMap::new();
    for spec in specs {
        let (file, line) = spec.location();
        if let Some(problem) = benchmark_name_problem(spec.name()) {
            eprintln!("error: benchmark at {file}:{line}: {problem}");
            bench.collected.failures += 1;
            continue;
        }
        // Two benchmarks of one name would write one result file twice (`args` whose values
        // print alike make one id).
        if let Some((first_file, first_line)) = seen.insert(spec.name().to_string(), (file, line)) {
            eprintln!(
                "error: benchmark at {file}:{line}: the name `{}` is taken by the benchmark at {first_file}:{first_line}; \
                 each benchmark needs its own name (with `args`, give values that print differently)",
                energy_results::error::echo(spec.name())
            );
            bench.collected.failures += 1;
            continue;
        }
        // A benchmark the filter or the shard leaves out opens no device and reports no
        // device's error.
        let options = &bench.options;
        if !may_run(&spec, options) || options.shard.is_some_and(|s| !spec.in_shard(&s)) {
            continue;
        }
        eligible.push(spec);
    }
    match &queue {
        None => {
            let mut progress =
                progress::Progress::new(eligible.len(), bench.options.test_mode || bench.options.nothing_runs);
            for spec in &eligible {
                progress.next();
                let _ = bench.run_one(spec, &mut on_measured);
            }
        }
        Some(queue) => bench.run_queued(queue, &eligible, &mut on_measured),
    }
    let Bench { mut criteria, mut collected, runs, .. } = bench;
    criteria.final_summary();
    for run in runs {
        let dir = run.dir().to_path_buf();
        if let Err(e) = run.finish(collected.failures) {
            eprintln!("error: could not close the run in {}: {e}", dir.display());
            collected.failures += 1;
        }
    }
    collected
}

/// A run of benchmarks in one process: what it carries from one benchmark to the next.
struct Bench {
    criteria: Criteria,
    collected: Collected,
    quiet: bool,
    stations: Vec<(Option<u32>, Result<Station>)>,
    runs: Vec<RunWriter>,
    options: RunOptions,
}

/// How one benchmark went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ran {
    /// Measured, checked or skipped.
    Ok,
    /// It failed (said on stderr).
    Failed,
    /// Its device did not open (said on stderr): it never started.
    NoDevice,
}

impl Bench {
    /// Runs `spec` on its device, counting and saying what became of it.
    fn run_one(&mut self, spec: &BenchSpec, on_measured: &mut impl FnMut(&CollectedBench)) -> Ran {
        let (file, line) = spec.location();
        let station = match station(&mut self.stations, spec, self.quiet) {
            Ok(station) => station,
            Err(e) => {
                eprintln!("error: benchmark {} ({file}:{line}): {e}", spec.name());
                self.collected.failures += 1;
                return Ran::NoDevice;
            }
        };
        self.collected.simulated = station.device.is_simulated();
        match run_spec(spec, station, &mut self.criteria, &self.runs, &self.options, self.quiet) {
            Ok(SpecOutcome::Ran(measured)) => {
                let (kernel, baseline) = *measured;
                let bench = CollectedBench { name: spec.name().to_string(), kernel, baseline };
                on_measured(&bench);
                self.collected.measured.push(bench);
                Ran::Ok
            }
            Ok(SpecOutcome::Checked(checks)) => {
                self.collected.checked += 1;
                self.collected.checks.extend(checks);
                Ran::Ok
            }
            Ok(SpecOutcome::Skipped | SpecOutcome::NotRun(_)) => Ran::Ok,
            Err(e) => {
                eprintln!("error: benchmark {} ({file}:{line}): {e}", spec.name());
                self.collected.failures += 1;
                Ran::Failed
            }
        }
    }

    /// Runs the specs every GPU measures ([`Sharing::EveryGpu`]), then registers the others
    /// in the node's queue, one unit per benchmark or group ([`Sharing::Group`]), and claims
    /// and runs them one unit at a time until none is left. A unit whose device does not
    /// open is handed back for another process to take, and this one claims no more (its
    /// GPU is not usable).
    fn run_queued(&mut self, queue: &WorkQueue, specs: &[BenchSpec], on_measured: &mut impl FnMut(&CollectedBench)) {
        let fail = |collected: &mut Collected, e: Error| {
            eprintln!("error: the benchmark queue: {e}");
            collected.failures += 1;
        };
        let mut units: Vec<(String, Vec<&BenchSpec>)> = Vec::new();
        for spec in specs {
            let key = match &spec.sharing {
                Sharing::EveryGpu => {
                    if self.run_one(spec, on_measured) == Ran::NoDevice {
                        return;
                    }
                    continue;
                }
                Sharing::Alone => spec.name().to_string(),
                Sharing::Group(group) => group.clone(),
            };
            match units.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(spec),
                None => units.push((key, vec![spec])),
            }
        }
        let keys: Vec<String> = units.iter().map(|(k, _)| k.clone()).collect();
        if let Err(e) = queue.register(&keys) {
            return fail(&mut self.collected, e);
        }
        let mut taken = 0;
        loop {
            let key = match queue.claim_next() {
                Ok(Some(key)) => key,
                Ok(None) => break,
                Err(e) => return fail(&mut self.collected, e),
            };
            let Some((_, members)) = units.iter().find(|(k, _)| *k == key) else {
                eprintln!(
                    "error: the queue gave `{}`, which this process does not run: its processes on the other GPUs \
                     were given another filter or shard",
                    energy_results::error::echo(&key)
                );
                self.collected.failures += 1;
                if let Err(e) = queue.finish(&key, false) {
                    return fail(&mut self.collected, e);
                }
                continue;
            };
            let mut ran = Ran::Ok;
            for spec in members {
                match self.run_one(spec, on_measured) {
                    Ran::Ok => {}
                    Ran::Failed => ran = Ran::Failed,
                    Ran::NoDevice => {
                        ran = Ran::NoDevice;
                        break;
                    }
                }
            }
            let recorded = match ran {
                Ran::NoDevice => queue.release(&key),
                Ran::Ok | Ran::Failed => queue.finish(&key, ran == Ran::Ok),
            };
            if let Err(e) = recorded {
                return fail(&mut self.collected, e);
            }
            if ran == Ran::NoDevice {
                eprintln!(
                    "{}: {key} handed back to the queue: the device did not open here; this process takes no more",
                    current_exe_name()
                );
                break;
            }
            taken += 1;
        }
        eprintln!("{}: took {taken} from the queue as {}", current_exe_name(), queue.worker());
    }
}

fn current_exe_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().split('-').next().unwrap_or("bench").to_string()))
        .unwrap_or_else(|| "bench".into())
}

/// Whether criterion's filter may run any of the benchmark's functions (on a real GPU or
/// the simulated one, whose ids carry " (simulated)"), or `--list` lists it.
fn may_run(spec: &BenchSpec, options: &RunOptions) -> bool {
    if options.nothing_runs {
        return true;
    }
    let ids: Vec<String> = ["energy", "baseline", "time"]
        .iter()
        .flat_map(|f| [format!("{}/{f}", spec.name()), format!("{}/{f} (simulated)", spec.name())])
        .collect();
    let listed = options.only.as_ref().is_none_or(|only| ids.iter().any(|id| only.contains(id)));
    listed && options.filter.runs_any(&ids)
}

/// The station of the GPU `spec` asks for (its UUID looked up), opened for the first
/// benchmark that asks for it; an error opening it is every such benchmark's. `quiet`
/// (checks summarized, no `--verbose`) leaves out the note on the simulated device (the
/// caller's summary says nothing was measured).
fn station<'s>(
    stations: &'s mut Vec<(Option<u32>, Result<Station>)>,
    spec: &BenchSpec,
    quiet: bool,
) -> Result<&'s mut Station> {
    let ordinal = spec.options.cuda_device()?;
    let index = match stations.iter().position(|(o, _)| *o == ordinal) {
        Some(index) => index,
        None => {
            let open = || {
                let device = open_device(ordinal)?;
                device.check_gpu_required("benchmarks")?;
                if let Some(reason) = device.sim_reason().filter(|_| !quiet) {
                    eprintln!("note: running on the simulated H100 ({reason}); every figure below is simulated");
                }
                Ok(Station { rig: Rig::new(&device), device, handover: None })
            };
            stations.push((ordinal, open()));
            stations.len() - 1
        }
    };
    stations[index].1.as_mut().map_err(|e| e.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_benchmark_the_filter_leaves_out_is_not_run_nor_its_device_opened() {
        let spec = BenchSpec::new("saxpy", file!(), line!());
        let with = |filter: &str| RunOptions {
            filter: run_options::BenchFilter::Regex(regex::Regex::new(filter).unwrap()),
            ..RunOptions::default()
        };
        assert!(may_run(&spec, &with("^saxpy/")));
        assert!(may_run(&spec, &with("energy \\(simulated\\)")), "the simulated ids count too");
        assert!(!may_run(&spec, &with("^fma_")));
        let listing = RunOptions { nothing_runs: true, ..with("^fma_") };
        assert!(may_run(&spec, &listing), "--list lists every benchmark");
        // ENERGY_BENCHMARKS (a paired sequence's benchmarks not yet settled) beside the filter.
        let only = |ids: &[&str], filter: &str| RunOptions {
            only: Some(ids.iter().map(|id| id.to_string()).collect()),
            ..with(filter)
        };
        assert!(may_run(&spec, &only(&["saxpy/energy", "fma/energy"], "")));
        assert!(may_run(&spec, &only(&["saxpy/energy (simulated)"], "")));
        assert!(!may_run(&spec, &only(&["fma/energy"], "")), "not listed");
        assert!(!may_run(&spec, &only(&["saxpy/energy"], "^fma_")), "listed, but the filter leaves it out");
    }
}
