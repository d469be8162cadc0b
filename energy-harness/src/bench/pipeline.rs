//! One benchmark, step by step: **select** the functions criterion's filter runs →
//! **check or skip** its kernel under test on the device → **plan** what is measured →
//! **measure the kernel** → **measure the baseline** → **hand to criterion** →
//! **summarize** (per-op, per-byte and net figures) → **write** the results. [`run_spec`]
//! runs these in that order; each is a function below. With `--test` the plan is launched
//! instead ([`launch_for_test`]): nothing is measured.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use super::criteria::{Criteria, Samples, CRITERION_MIN_SAMPLES};
use super::run_options::{Pairing, RunOptions};
use super::BenchSpec;
use crate::device::Device;
use crate::engine::analyze::AnalysisOptions;
use crate::engine::net_energy;
use crate::engine::options::MeasureOptions;
use crate::engine::result::Measurement;
use crate::engine::session::{IdleHandover, MeasureRequest, Session};
use crate::engine::sweep::SweepPoint;
use crate::engine::WindowResult;
use crate::kernel::{note_missing_ptxas, options_on, CodeCheck, KernelUnderTest, Readiness, Rig};
use crate::report::run::RunWriter;
use crate::report::{render_summary, write_outputs, NetEnergy};
use crate::workload::Workload;
use energy_results::error::{Error, Result};
use energy_results::trace::Trace;

/// A device the benchmarks run on, with what running kernels there takes.
pub(super) struct Station {
    /// The device (a real GPU or the simulated one).
    pub(super) device: Device,
    /// Its calibration, CUDA and checked device.
    pub(super) rig: Rig,
    /// The recording the last measurement here left running, with its idle tail: the next
    /// measurement's lead-in ([`Session::prepare_continuing`]).
    pub(super) handover: Option<IdleHandover>,
}

impl Station {
    /// `kernel` as the workload measured here ([`Rig::workload`]).
    fn workload(&mut self, kernel: &KernelUnderTest, seed: u64) -> Result<Box<dyn Workload>> {
        self.rig.workload(&self.device, kernel, seed)
    }
}

/// What became of one benchmark that did not fail.
pub(super) enum SpecOutcome {
    /// Not selected: a filter, or `--list`.
    Skipped,
    /// Not run: its code needs a GPU and this one is simulated (why, as printed).
    NotRun(String),
    /// No GPU and no simulated model: its code ran on the checked device only.
    Checked(Vec<CodeCheck>),
    /// Measured (or, with `--test`, launched): the kernel's and the baseline's measurements.
    Ran(Box<(Option<Measurement>, Option<Measurement>)>),
}

/// Runs one benchmark through the steps, on `station`; `quiet`: a benchmark only checked
/// gets no line (a suite summarizes them).
pub(super) fn run_spec(
    spec: &BenchSpec,
    station: &mut Station,
    criteria: &mut Criteria,
    runs: &[RunWriter],
    options: &RunOptions,
    quiet: bool,
) -> Result<SpecOutcome> {
    let Some(selected) = select(spec, station.device.is_simulated(), options, criteria) else {
        return Ok(SpecOutcome::Skipped);
    };
    let companion = match check_or_skip(spec, station, quiet)? {
        ControlFlow::Continue(companion) => companion,
        ControlFlow::Break(SpecOutcome::NotRun(reason)) => {
            // Listed in the run, so that `report` and `compare` show it as not run.
            if selected.energy && !options.test_mode {
                let id = format!("{}/{}", spec.name(), selected.energy_fn);
                for run in runs {
                    run.record_not_run(&id, &reason)?;
                }
            }
            return Ok(SpecOutcome::NotRun(reason));
        }
        ControlFlow::Break(outcome) => return Ok(outcome),
    };
    let plan = plan(spec, &selected, companion);
    if options.test_mode {
        return launch_for_test(spec, &selected, &plan, station, criteria);
    }
    let kernel = measure_kernel(spec, &selected, &plan, station, options.pairing)?;
    let baseline = measure_baseline(spec, &selected, &plan, station, options.pairing)?;
    // A paired sequence reads the result files only: criterion's statistics would go unread.
    if !options.pairing.is_paired() {
        hand_to_criterion(spec, &selected, kernel.as_ref(), baseline.as_ref(), criteria);
    }
    let (kernel, baseline) = summarize(spec, kernel, baseline);
    write(runs, [baseline.as_ref(), kernel.as_ref()], spec.sweep())?;
    Ok(SpecOutcome::Ran(Box::new((kernel.map(|k| k.measured.measurement), baseline.map(|b| b.measured.measurement)))))
}

/// Which of a benchmark's criterion functions run.
struct Selected {
    /// `NAME/energy`, `NAME/baseline`, `NAME/time` (each with ` (simulated)` on the
    /// simulated GPU).
    energy_fn: String,
    baseline_fn: String,
    time_fn: String,
    energy: bool,
    baseline: bool,
    time: bool,
}

/// Step 1, select: the functions criterion's filter runs; `None` when it runs none, or
/// for `--list` (criterion lists them).
fn select(spec: &BenchSpec, simulated: bool, options: &RunOptions, criteria: &mut Criteria) -> Option<Selected> {
    let suffix = if simulated { " (simulated)" } else { "" };
    let (energy_fn, baseline_fn, time_fn) =
        (format!("energy{suffix}"), format!("baseline{suffix}"), format!("time{suffix}"));
    let has_baseline = spec.baseline_kernel().is_some();
    if options.nothing_runs {
        let listed = [(&energy_fn, true), (&baseline_fn, has_baseline), (&time_fn, spec.time_bench)];
        let functions: Vec<&str> = listed.iter().filter(|(_, l)| *l).map(|(f, _)| f.as_str()).collect();
        criteria.list(spec.name(), &functions);
        return None;
    }
    let runs = |function: &str| options.filter.runs_any(&[format!("{}/{function}", spec.name())]);
    let selected = Selected {
        energy: runs(&energy_fn),
        baseline: has_baseline && runs(&baseline_fn),
        time: spec.time_bench && runs(&time_fn),
        energy_fn,
        baseline_fn,
        time_fn,
    };
    (selected.energy || selected.baseline || selected.time).then_some(selected)
}

/// Step 2, check or skip: the kernel under test on the device ([`crate::kernel`]). Goes on
/// with whether the baseline is measured too; stops, with one line, at "not run: needs a
/// GPU" and at "checked, not measured" (no line for the latter when `quiet`).
fn check_or_skip(spec: &BenchSpec, station: &mut Station, quiet: bool) -> Result<ControlFlow<SpecOutcome, bool>> {
    let name = spec.name();
    Ok(match spec.subject.check(&station.device, &mut station.rig)? {
        Readiness::NotRun(reason) => {
            println!("{name}: not run: {reason}");
            ControlFlow::Break(SpecOutcome::NotRun(reason))
        }
        Readiness::CheckedNotMeasured { checks, .. } => {
            note_missing_ptxas(&checks);
            if !quiet {
                static NOTE_SHOWN: AtomicBool = AtomicBool::new(false);
                if !NOTE_SHOWN.swap(true, Ordering::Relaxed) {
                    println!(
                        "note: without a GPU, a benchmark without a simulated model (sim(seconds = …, watts = …) in \
                         its #[energy_bench]) is checked, not measured: its setup and launches run on the checked \
                         device"
                    );
                }
                println!("{name}: checked, not measured: {}", checks.line(true));
            }
            ControlFlow::Break(SpecOutcome::Checked(checks.into_vec()))
        }
        Readiness::Measure { checks, companion } => {
            if station.device.is_simulated() {
                note_missing_ptxas(&checks);
                println!(
                    "{name}: kernel code checked without a GPU: {}; its figures below are simulated from its sim(…) model",
                    checks.line(true)
                );
            }
            ControlFlow::Continue(companion)
        }
    })
}

/// What is measured.
struct Plan {
    /// The kernel (for its energy or its time function).
    kernel: bool,
    /// The baseline.
    baseline: bool,
}

/// Step 3, plan: the kernel when its energy or time is asked for; the baseline when asked
/// for and measurable (`companion`: on the simulated GPU, when it has a model).
fn plan(spec: &BenchSpec, selected: &Selected, companion: bool) -> Plan {
    if let Some(baseline) = spec.baseline_kernel().filter(|_| selected.baseline && !companion) {
        println!(
            "{}: baseline {} skipped: it declares no simulated kernel (baseline_sim(…))",
            spec.name(),
            baseline.name
        );
    }
    Plan { kernel: selected.energy || selected.time, baseline: selected.baseline && companion }
}

/// `--test`, instead of steps 4 to 8: each kernel the plan measures runs a few launches
/// under criterion (which prints "Success"); nothing is measured.
fn launch_for_test(
    spec: &BenchSpec,
    s: &Selected,
    plan: &Plan,
    station: &mut Station,
    criteria: &mut Criteria,
) -> Result<SpecOutcome> {
    // Launches outside a measurement: the idle a measurement left is no one's lead-in now.
    station.handover = None;
    let kernel = Some(&spec.subject.kernel).filter(|_| plan.kernel);
    let baseline = spec.baseline_kernel().filter(|_| plan.baseline);
    for (function, kernel, seed) in [(&s.energy_fn, kernel, 1), (&s.baseline_fn, baseline, 2)] {
        if let Some(kernel) = kernel {
            let mut workload = station.workload(kernel, seed)?;
            criteria.test(spec.name(), function, workload.as_mut())?;
        }
    }
    Ok(SpecOutcome::Ran(Box::new((None, None))))
}

/// One measured kernel of a benchmark: its measurement, trace and analysis options.
struct Measured {
    measurement: Measurement,
    trace: Trace,
    analysis: AnalysisOptions,
}

/// Step 4, measure the kernel, with the benchmark's options.
fn measure_kernel(
    spec: &BenchSpec,
    s: &Selected,
    plan: &Plan,
    station: &mut Station,
    pairing: Pairing,
) -> Result<Option<Measured>> {
    if !plan.kernel {
        return Ok(None);
    }
    measure(station, spec.name(), &s.energy_fn, &spec.subject.kernel, &spec.options, 1, pairing).map(Some)
}

/// Step 5, measure the baseline, with its own counts ([`MeasureOptions::baseline`]).
fn measure_baseline(
    spec: &BenchSpec,
    s: &Selected,
    plan: &Plan,
    station: &mut Station,
    pairing: Pairing,
) -> Result<Option<Measured>> {
    match spec.baseline_kernel().filter(|_| plan.baseline) {
        Some(baseline) => {
            measure(station, spec.name(), &s.baseline_fn, baseline, &spec.options.baseline(), 2, pairing).map(Some)
        }
        None => Ok(None),
    }
}

/// The environment variable that sets every benchmark's window count in paired runs
/// (`cargo energy gate --windows N`, `cargo energy ab --windows N`): each run of a paired
/// sequence needs no interval of its own, the pairs' spread is the verdict's noise.
pub const PAIRED_WINDOWS_ENV: &str = "ENERGY_PAIRED_WINDOWS";

/// `ENERGY_PAIRED_WINDOWS`, when set: a window count from the engine's minimum to its
/// maximum; anything else is an error naming it.
fn paired_windows() -> Result<Option<usize>> {
    let Ok(text) = std::env::var(PAIRED_WINDOWS_ENV) else { return Ok(None) };
    let (min, max) = (energy_units::bounds::WINDOWS_MIN, energy_units::bounds::WINDOWS_MAX);
    match text.trim().parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(Error::new(
            energy_results::error::ErrorKind::InvalidInput,
            format!(
                "{PAIRED_WINDOWS_ENV}=`{}`: give a window count from {min} to {max}",
                energy_results::error::echo(&text)
            ),
        )),
    }
}

/// Measures `kernel` as `group/function` with the session engine, one progress line on
/// stderr. The idle the station's last measurement ended with is this one's lead-in when it
/// fits ([`Session::prepare_continuing`]); this one's idle tail is left for the next.
/// `pairing`: whether and how this is a run of a paired sequence ([`Pairing`]).
fn measure(
    station: &mut Station,
    group: &str,
    function: &str,
    kernel: &KernelUnderTest,
    options: &MeasureOptions,
    seed: u64,
    pairing: Pairing,
) -> Result<Measured> {
    use std::io::Write as _;
    let handover = station.handover.take();
    let mut workload = station.workload(kernel, seed)?;
    let id = format!("{group}/{function}");
    let (options, floor) = match paired_windows()? {
        // A benchmark that fixes its own windows keeps them.
        Some(n) if options.windows.is_none() => {
            (MeasureOptions { windows: Some(n), ..options.clone() }, n.min(CRITERION_MIN_SAMPLES))
        }
        _ => (options.clone(), CRITERION_MIN_SAMPLES),
    };
    let request = MeasureRequest::new(&id, options_on(&station.device, &options))
        .min_windows(floor)
        .calibration(station.rig.calibration().cloned())
        .thermal(station.rig.thermal().cloned());
    let request = pairing.apply(request);
    let device = &mut station.device;
    {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{id}: measuring on {} …", device.facts().name);
        let _ = err.flush();
    }
    let outcome = (|| {
        let session = Session::prepare_continuing(device, workload.as_mut(), request, handover)?;
        let analysis = session.analysis_options().clone();
        let plan = *session.plan();
        let (measurement, trace, handover) = session.run_handing_over(device, workload.as_mut())?;
        Ok::<_, Error>((Measured { measurement, trace, analysis }, plan, handover))
    })();
    match outcome {
        Ok((m, plan, handover)) => {
            station.handover = Some(handover);
            eprintln!(
                " {} windows × {} launches of {}{} ({}), {:.1} s",
                m.measurement.windows.len(),
                plan.launches_per_window,
                energy_units::format_si(plan.launch_s, "s", 3),
                m.measurement.graph_launches.map(|n| format!(", replayed as a CUDA graph of {n}")).unwrap_or_default(),
                m.measurement.stop.as_deref().unwrap_or("done"),
                m.measurement.wall_time_s
            );
            Ok(m)
        }
        Err(e) => {
            eprintln!(" failed");
            Err(e)
        }
    }
}

/// Step 6, hand to criterion: the windows' energies and CUDA-event times per launch, as
/// `NAME/energy`, `NAME/time` and `NAME/baseline` (its statistics, reports and
/// `--baseline` comparisons work on them), with no second pass on the GPU.
fn hand_to_criterion(
    spec: &BenchSpec,
    s: &Selected,
    kernel: Option<&Measured>,
    baseline: Option<&Measured>,
    criteria: &mut Criteria,
) {
    let per_launch = |m: &Measured, of: fn(&WindowResult) -> f64| -> Vec<f64> {
        m.measurement
            .windows
            .iter()
            .filter(|w| w.launches > 0)
            .map(|w| of(w) / w.launches as f64)
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect()
    };
    let energy = |w: &WindowResult| w.energy.energy_j;
    let (throughput, baseline_throughput) =
        (BenchSpec::throughput(&spec.options), BenchSpec::throughput(&spec.options.baseline()));
    let mut samples = Vec::new();
    if let Some(m) = kernel.filter(|_| s.energy) {
        samples.push(Samples::energy(&s.energy_fn, throughput.clone(), per_launch(m, energy)));
    }
    if let Some(m) = kernel.filter(|_| s.time) {
        samples.push(Samples::time(&s.time_fn, throughput, per_launch(m, |w| w.gpu_time_s)));
    }
    if let Some(b) = baseline {
        samples.push(Samples::energy(&s.baseline_fn, baseline_throughput, per_launch(b, energy)));
    }
    criteria.replay(spec.name(), &samples);
}

/// A measured kernel with its figures per op, per byte and net of the baseline: what is
/// written.
struct Summary {
    measured: Measured,
    net: Option<NetEnergy>,
}

/// Step 7, summarize: the kernel's energy per op net of the baseline's (the engine's).
/// Per-op and per-byte figures came with each measurement from its own counts (a baseline
/// does not do the kernel's work, so it never inherits them).
fn summarize(
    _spec: &BenchSpec,
    kernel: Option<Measured>,
    baseline: Option<Measured>,
) -> (Option<Summary>, Option<Summary>) {
    let net = match (&kernel, &baseline) {
        (Some(k), Some(b)) => net_energy(&k.measurement, &b.measurement),
        _ => None,
    };
    (kernel.map(|measured| Summary { measured, net }), baseline.map(|measured| Summary { measured, net: None }))
}

/// Step 8, write: each result, trace and plot into every run, each summary printed (the
/// baseline's first, so the kernel's, with the net figure, ends the block).
fn write(runs: &[RunWriter], summaries: [Option<&Summary>; 2], sweep: Option<&SweepPoint>) -> Result<()> {
    for (i, s) in summaries.into_iter().enumerate().filter_map(|(i, s)| s.map(|s| (i, s))) {
        let mut result = s.measured.measurement.result_file(s.net.clone());
        // The kernel's result (the second) is the sweep's point; its baseline's is not.
        if i == 1 {
            result.sweep = sweep.cloned();
        }
        let mut files = None;
        for run in runs {
            let written = write_outputs(run, &result, &s.measured.trace, &s.measured.analysis)?;
            files.get_or_insert(written);
        }
        println!("{}", render_summary(&result, files.as_ref()));
    }
    Ok(())
}
