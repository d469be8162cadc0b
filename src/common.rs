//! What the suites share: the skeleton of their `main` (the GPU gate, the benchmarks run
//! with each measured one saved at once, the table published at the end, or without a GPU
//! one line for the kernels checked), where they write, how they read and write their JSON
//! files, which threads' results they check, and how their loops are sized and measured.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use energy_harness::unstable::bench::{run_collect, BenchSpec, Collected, CollectedBench, RunSettings};
use energy_harness::unstable::device::DeviceRequest;
use energy_harness::unstable::kernel::open_device;
use energy_harness::{Error, ErrorKind, Result};
use energy_results::dirs::energy_dir;
use energy_results::stats::linear_fit;
use energy_results::stats::student_t_975;
use energy_results::trace::format::write_atomically;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Where the suites' records and tables go: `target/energy/suites/`.
pub fn suite_dir() -> PathBuf {
    energy_dir().join("suites")
}

/// Threads whose stored results are checked against the host's: the first, one in the
/// middle, the last.
pub fn sample_threads(threads: u64) -> Vec<u64> {
    let mut list = vec![0, threads / 2, threads.saturating_sub(1)];
    list.dedup();
    list
}

/// Whether criterion's `--verbose` (or `-v`) is on the command line (as the harness reads
/// it): without a GPU, a suite prints its plan and a line per kernel checked only then.
pub fn verbose() -> bool {
    std::env::args().skip(1).any(|a| a == "--verbose" || a == "-v")
}

/// The start of a suite's `main`; `Ok(true)` when the device is the simulated one. A
/// suite's figures only mean something measured: without a GPU (or with
/// `ENERGY_DEVICE=sim`) it goes on, so that its kernels are listed (`--list`) and each
/// kernel's PTX, name, arguments and launch are checked on the checked device, and its
/// `main` ends with one line for them ([`SuiteOutcome::finish`]); `--verbose` adds a line
/// here saying why nothing is measured, and one per kernel checked. With
/// `ENERGY_REQUIRE_GPU=1` no GPU is a failure. A bad `ENERGY_DEVICE` exits 2 and a GPU that
/// cannot be opened 1, each after saying why.
pub fn gpu_gate(suite: &str) -> std::result::Result<bool, ExitCode> {
    DeviceRequest::from_env().map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })?;
    // The device the suite's benchmarks will open: `ENERGY_DEVICE`'s, as a kernel with no
    // device of its own gets it.
    match open_device(None) {
        Ok(device) if device.is_simulated() => {
            // ENERGY_REQUIRE_GPU=1: a checked-only suite on a GPU runner is a failure, not a pass.
            if let Err(e) = device.check_gpu_required(&format!("the {suite} suite")) {
                eprintln!("error: {e}");
                return Err(ExitCode::FAILURE);
            }
            if verbose() {
                println!(
                    "{suite}: nothing is measured: the {suite} suite's figures need an NVIDIA GPU ({}); each \
                     kernel's setup and launches run on the checked device instead (PTX assembled where ptxas is \
                     found, names, arguments and launch limits checked)",
                    device.sim_reason().unwrap_or("simulated device requested")
                );
            }
            Ok(true)
        }
        Ok(_) => Ok(false),
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// Reads a JSON file a suite wrote and checks its schema tag; `what` names it in errors
/// ("an instruction table": "… is not an instruction table").
pub fn read_tagged_json<T: DeserializeOwned>(
    path: &Path,
    what: &str,
    expected: &str,
    format_of: impl Fn(&T) -> &str,
) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &format!("read {what}"), e))?;
    let value: T = serde_json::from_str(&text)
        .map_err(|e| Error::new(ErrorKind::Format, format!("{} is not {what} ({expected}): {e}", path.display())))?;
    let found = format_of(&value);
    if found != expected {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{} has format `{found}`, expected `{expected}`", path.display()),
        ));
    }
    Ok(value)
}

/// Sizes a loop count so that `time(count) - fixed_s` (GPU seconds of a timed launch less
/// its fixed part) is about `target_s`: from 16, at most four refinements, stopping once a
/// refinement changes the count by less than 10 %; between 1 and `max`.
pub fn size_loop(time: impl Fn(u32) -> Result<f64>, fixed_s: f64, target_s: f64, max: u32) -> Result<u32> {
    let mut count: u32 = 16;
    for _ in 0..4 {
        let t = (time(count)? - fixed_s).max(1e-6);
        let next = (f64::from(count) * target_s / t).round().clamp(1.0, f64::from(max)) as u32;
        let close = (f64::from(next) / f64::from(count) - 1.0).abs() < 0.1;
        count = next;
        if close {
            break;
        }
    }
    Ok(count)
}

/// The measurement options of every suite benchmark: a ±0.5 % interval on the energy per
/// launch (suite figures are differences of launches), windows added until it is reached.
pub fn suite_measure_options() -> energy_harness::MeasureOptions {
    energy_harness::MeasureOptions { precision: Some(0.005), ..energy_harness::MeasureOptions::DEFAULT }
}

/// What a published page's intervals cover, said in each page's header: every interval
/// is statistical (the windows' spread); the board's own sensor chain carries a gain error
/// no run can see (±5 % per board against an external meter, Yang et al., SC'24) that
/// scales every energy of the board together.
pub const ACCURACY_NOTE: &str = "\n**Accuracy.** Every interval on this page is statistical only (95 %, the spread of the windows). \
Every energy rests on the board's own power sensor: a per-board gain error, ±5 % against an external meter by Yang et al. (SC'24), \
is not in the intervals. It scales all of one board's energies together, so ratios on one board (instruction to instruction, level to level, \
switching to constant) do not move with it; absolute figures, and ratios between two boards, can move by that much.\n";

/// Rough wall time of one suite benchmark, s, for the estimate printed before a run: the
/// kernel's setup, idle before and after, the warm-up, ten windows of 0.15 s, and the
/// writing (3.0 s measured on an H100 for the instruction suite, 2026-11-23).
pub const SUITE_SECONDS_PER_BENCHMARK: f64 = 3.0;

/// Writes `value` as pretty JSON to `path`, whole or not at all (the directory is made);
/// `what` names it in errors.
pub fn write_json<T: Serialize>(path: &Path, what: &str, value: &T) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the suite's output directory", e))?;
    }
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::new(ErrorKind::Format, format!("cannot serialize {what}: {e}")))?;
    write_atomically(path, text.as_bytes())
}

/// What a run without a GPU checked: the suite's one line in place of a line per kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckedSummary {
    /// Benchmarks checked, not measured (their checks passed).
    pub benchmarks: usize,
    /// Benchmarks (and saves) that failed, each error printed in full when it happened.
    pub failed: usize,
    /// PTX modules read on the checked device.
    pub modules: u64,
    /// Of those, modules ptxas assembled.
    pub assembled: u64,
    /// Why the last module not assembled was not.
    pub not_assembled_reason: Option<String>,
    /// Whether modules went unassembled for want of ptxas (said once above, with the fix).
    pub lacks_ptxas: bool,
    /// Launches checked.
    pub launches: u64,
    /// The architecture the checked device assembles for (`sm_90`).
    pub arch: String,
}

impl CheckedSummary {
    /// Adds up the checks of a run; `other_failures` counts failures the run did not
    /// (a suite's saves).
    pub fn of(collected: &Collected, other_failures: usize) -> CheckedSummary {
        let mut summary = CheckedSummary {
            benchmarks: collected.checked,
            failed: collected.failures + other_failures,
            ..CheckedSummary::default()
        };
        for check in &collected.checks {
            let a = &check.activity;
            summary.modules += a.modules;
            summary.assembled += a.assembled;
            summary.launches += a.launches;
            summary.lacks_ptxas |= check.lacks_ptxas();
            if a.assembled < a.modules {
                summary.not_assembled_reason.clone_from(&a.not_assembled_reason);
            }
            if summary.arch.is_empty() {
                summary.arch.clone_from(&check.arch);
            }
        }
        summary
    }

    /// The line: `SUITE: N NOUNs checked on the checked device (PTX assembled by ptxas for
    /// sm_90, launches checked, ALSO…), nothing measured without a GPU — --verbose lists
    /// each`; `also` adds what the suite's setup does besides (e.g. "host references
    /// evaluated"), `listed` says the lines were printed (`--verbose`).
    pub fn line(&self, suite: &str, noun: &str, also: &[&str], listed: bool) -> String {
        let plural = |n: usize| if n == 1 { noun.to_string() } else { format!("{noun}s") };
        let mut what = Vec::new();
        if self.modules > 0 {
            what.push(if self.assembled == self.modules {
                format!("PTX assembled by ptxas for {}", self.arch)
            } else if self.assembled == 0 && self.lacks_ptxas {
                "PTX read, not assembled: no ptxas found".to_string()
            } else {
                format!(
                    "PTX assembled by ptxas for {} ({} of {} modules; not the rest: {})",
                    self.arch,
                    self.assembled,
                    self.modules,
                    if self.lacks_ptxas {
                        "no ptxas found"
                    } else {
                        self.not_assembled_reason.as_deref().unwrap_or("reason not given")
                    }
                )
            });
        }
        if self.launches > 0 {
            what.push("launches checked".to_string());
        }
        what.extend(also.iter().map(|a| a.to_string()));
        let what = if what.is_empty() { String::new() } else { format!(" ({})", what.join(", ")) };
        let failed =
            if self.failed > 0 { format!("; {} failed (each error above)", self.failed) } else { String::new() };
        format!(
            "{suite}: {} {} checked on the checked device{what}, nothing measured without a GPU{failed} — {}",
            self.benchmarks,
            plural(self.benchmarks),
            if listed { "each listed above" } else { "--verbose lists each" }
        )
    }
}

/// How a suite's benchmarks went: what `main` needs to finish.
#[derive(Clone, Debug)]
pub struct SuiteOutcome {
    /// Whether any benchmark was measured and saved.
    pub measured: bool,
    /// Whether a benchmark or a save failed.
    pub failed: bool,
    /// Whether the device was the simulated one.
    pub simulated: bool,
    /// What was checked without being measured (no GPU).
    pub checked: CheckedSummary,
}

/// Runs a suite's benchmarks under criterion (its HTML plots off: they would add ~3.5 s to
/// each of hundreds of kernels; `--plotting-backend` turns them on) and hands each measured
/// benchmark to `save` at once, so a long run interrupted keeps what it measured. `save`
/// returns whether it saved anything; its errors are printed and counted. Without a GPU
/// the kernels checked get no line each unless `--verbose` is given
/// ([`SuiteOutcome::finish`] prints one for them all).
pub fn run_benchmarks(specs: Vec<BenchSpec>, mut save: impl FnMut(&CollectedBench) -> Result<bool>) -> SuiteOutcome {
    let mut measured = false;
    let mut save_failures = 0;
    let settings = RunSettings { summarize_checked: true, ..RunSettings::default() };
    let collected = run_collect(specs, &settings, |bench| match save(bench) {
        Ok(saved) => measured |= saved,
        Err(e) => {
            eprintln!("error: {e}");
            save_failures += 1;
        }
    });
    SuiteOutcome {
        measured,
        failed: collected.failures > 0 || save_failures > 0,
        simulated: collected.simulated,
        checked: CheckedSummary::of(&collected, save_failures),
    }
}

impl SuiteOutcome {
    /// Without a GPU, prints the suite's one line for the kernels checked (or failed) and
    /// returns `true`; `false` (nothing printed) on a real GPU or when none ran. `also`
    /// as in [`CheckedSummary::line`].
    pub fn say_checked(&self, suite: &str, noun: &str, also: &[&str]) -> bool {
        if !self.simulated || self.checked.benchmarks + self.checked.failed == 0 {
            return false;
        }
        println!("{}", self.checked.line(suite, noun, also, verbose()));
        true
    }

    /// The exit status: 1 when a benchmark or a save failed.
    pub fn exit_code(&self) -> ExitCode {
        if self.failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        }
    }

    /// The end of a suite's `main`: when something was measured, `publish` builds and writes
    /// the table; otherwise one line says why there is none (without a GPU, the line of
    /// [`SuiteOutcome::say_checked`]). Exit status 1 when a benchmark, a save or the table
    /// failed. `suite` and `noun` ("kernel", "point") name them; `also` as in
    /// [`CheckedSummary::line`].
    pub fn finish(self, suite: &str, noun: &str, also: &[&str], publish: impl FnOnce() -> Result<()>) -> ExitCode {
        if !self.measured {
            let said = self.say_checked(suite, noun, also);
            if !said && self.simulated {
                println!("{suite}: no {noun} was checked or measured (--list, or a filter that selects none)");
            } else if !said {
                println!("{suite}: no {noun} was measured (a filter, --test or --list): no table written");
            }
            return self.exit_code();
        }
        if let Err(e) = publish() {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        self.exit_code()
    }
}

/// An ordinary least-squares line `y = intercept + slope * x` with its uncertainty.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    /// Slope (y units per x unit).
    pub slope: f64,
    /// 95 % interval of the slope (Student t with n - 2 degrees of freedom).
    pub slope_ci: (f64, f64),
    /// Intercept (y units).
    pub intercept: f64,
    /// 95 % interval of the intercept.
    pub intercept_ci: (f64, f64),
    /// Coefficient of determination.
    pub r2: f64,
    /// Points fitted.
    pub n: usize,
}

/// Fits `points` (x, y) by least squares. Needs at least three points with at least two
/// distinct x (two points fit exactly and leave no interval); `None` otherwise or with
/// non-finite input.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let n = points.len();
    if n < 3 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let fit = linear_fit(points)?;
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    // The residual variance, recovered from the slope's standard error.
    let s2 = fit.slope_std_err.powi(2) * sxx;
    let se_intercept = (s2 * (1.0 / nf + mx * mx / sxx)).sqrt();
    let t = student_t_975(n - 2);
    Some(LineFit {
        slope: fit.slope,
        slope_ci: (fit.slope - t * fit.slope_std_err, fit.slope + t * fit.slope_std_err),
        intercept: fit.intercept,
        intercept_ci: (fit.intercept - t * se_intercept, fit.intercept + t * se_intercept),
        r2: fit.r_squared,
        n,
    })
}
