//! The criterion plugin: `#[energy_bench]` functions registered at link time, run by
//! `energy_main!()` as criterion benchmarks.
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

mod criterion_energy;
mod quiet;
mod run_options;
mod spec;

use run_options::RunOptions;
pub use spec::{benchmark_name_problem, BenchSpec};

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};

pub use criterion_energy::{Energy, EnergyFormatter};

use crate::cuda::CudaGpu;
use crate::device::{Device, DeviceRequest};
use crate::engine::analyze::AnalysisOptions;
use crate::engine::calibration::{default_calibration_dir, Calibration};
use crate::engine::options::MeasureOptions;
use crate::engine::result::{net_per_op, Measurement};
use crate::engine::run::SimWorkload;
use crate::engine::session::{MeasureRequest, Session};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel_code::{CodeCheck, KernelCode};
use crate::report::run::RunWriter;
use crate::report::{render_summary, write_outputs, NetEnergy, ResultFile};
use crate::sim::SimKernel;
use crate::trace::Trace;
use crate::workload::Workload;

/// The samples criterion needs at least (it refuses fewer).
pub const CRITERION_MIN_SAMPLES: usize = energy_units::bounds::BENCH_WINDOWS_MIN;

/// The payload of the panic that aborts one benchmark from inside criterion's loop; the
/// runner catches it and goes on with the next benchmark.
struct BenchAbort;

/// The GPU-side resources shared by every benchmark of the binary.
struct Rig {
    device: Device,
    calibration: Option<Calibration>,
    cuda: Option<Arc<CudaGpu>>,
    /// The checked device kernel code runs on when the GPU is simulated.
    checked: Option<Arc<CudaGpu>>,
    /// Whether the note on benchmarks checked but not measured was printed.
    unmeasured_note_shown: bool,
}

impl Rig {
    fn cuda(&mut self) -> Result<Arc<CudaGpu>> {
        if let Some(gpu) = &self.cuda {
            return Ok(gpu.clone());
        }
        let ordinal = self.device.facts().cuda_ordinal.ok_or_else(|| {
            Error::new(
                ErrorKind::NoGpu,
                format!("no CUDA device has the UUID {} (hidden by CUDA_VISIBLE_DEVICES?)", self.device.facts().uuid),
            )
        })?;
        let gpu = Arc::new(CudaGpu::open(ordinal)?);
        self.cuda = Some(gpu.clone());
        Ok(gpu)
    }

    /// A benchmark's workload: its code on the real GPU (CUDA is opened here, for a
    /// benchmark that runs), its simulated model on the simulated one.
    fn workload(&mut self, code: Option<&KernelCode>, sim: Option<SimKernel>, seed: u64) -> Result<Box<dyn Workload>> {
        if let Some(gpu) = self.device.sim() {
            let kernel = sim.ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no simulated kernel declared"))?;
            return Ok(Box::new(SimWorkload::new(gpu.clone(), kernel).with_time_jitter(0.001, seed)));
        }
        let code = code.ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no launch function"))?;
        let gpu = self.cuda()?;
        code.workload(&gpu)
    }
}

/// One measured kernel of a benchmark: its measurement, trace and analysis options.
struct Measured {
    measurement: Measurement,
    trace: Trace,
    analysis: AnalysisOptions,
}

/// Measures one kernel with the session engine, with one progress line on stderr.
fn measure_kernel(rig: &mut Rig, id: &str, workload: &mut dyn Workload, options: &MeasureOptions) -> Result<Measured> {
    use std::io::Write as _;
    let request = MeasureRequest::new(id, options.clone())
        .min_windows(CRITERION_MIN_SAMPLES)
        .calibration(rig.calibration.clone());
    {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{id}: measuring on {} …", rig.device.facts().name);
        let _ = err.flush();
    }
    let outcome = (|| {
        let session = Session::prepare(&rig.device, workload, request)?;
        let analysis = session.analysis_options().clone();
        let plan = *session.plan();
        let (measurement, trace) = session.run(&mut rig.device, workload)?;
        Ok::<_, Error>((Measured { measurement, trace, analysis }, plan))
    })();
    match outcome {
        Ok((m, plan)) => {
            eprintln!(
                " {} windows × {} launches of {} ({}), {:.1} s",
                m.measurement.windows.len(),
                plan.launches_per_window,
                crate::units::format_si(plan.launch_s, "s", 3),
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

/// Hands per-launch values (one per window) to criterion as the samples of
/// `group/function`: sample k is window k's value times the iterations criterion asks for.
/// Nothing runs on the GPU here, and criterion's own progress lines (its "warm-up" of a
/// replay takes no time) are kept off the terminal unless `--verbose` is given.
fn replay<M: criterion::measurement::Measurement>(
    c: &mut Criterion<M>,
    group: &str,
    function: &str,
    throughput: Option<Throughput>,
    per_launch: &[f64],
    value: impl Fn(f64) -> M::Value,
) {
    if per_launch.is_empty() {
        return;
    }
    if per_launch.len() < CRITERION_MIN_SAMPLES {
        println!(
            "note: {group}/{function}: {} windows (long launches); criterion needs {CRITERION_MIN_SAMPLES} samples, so \
             windows are handed to it more than once and its interval is too narrow: read the engine's below",
            per_launch.len()
        );
    }
    quiet::stderr_unless_verbose(|| {
        let mut g = c.benchmark_group(group);
        g.sampling_mode(SamplingMode::Flat)
            .sample_size(per_launch.len().max(CRITERION_MIN_SAMPLES))
            .warm_up_time(Duration::from_nanos(1))
            .measurement_time(Duration::from_millis(1));
        if let Some(t) = throughput {
            g.throughput(t);
        }
        let mut next = 0usize;
        g.bench_function(function, |b| {
            b.iter_custom(|iters| {
                let v = value(per_launch[next % per_launch.len()] * iters as f64);
                next += 1;
                v
            })
        });
        g.finish();
    });
}

/// `cargo bench -- --test`: each kernel runs (a launch, then two), nothing is measured;
/// criterion prints "Success" for each.
fn test_kernel(c: &mut Criterion<Energy>, group: &str, function: &str, workload: &mut dyn Workload) -> Result<()> {
    let mut failure = None;
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut g = c.benchmark_group(group);
        g.bench_function(function, |b| {
            b.iter_custom(|_| match workload.run_batch(1).and_then(|_| workload.run_batch(2)) {
                Ok(_) => 0.0,
                Err(e) => {
                    failure = Some(e);
                    panic::panic_any(BenchAbort)
                }
            })
        });
        g.finish();
    }));
    match (outcome, failure) {
        (_, Some(e)) => Err(e.context(format!("{group}/{function} failed"))),
        (Err(_), None) => Err(Error::new(ErrorKind::Sampler, format!("{group}/{function} panicked"))),
        (Ok(()), None) => Ok(()),
    }
}

/// Runs every `#[energy_bench]` of the binary (what `energy_main!()` calls).
pub fn run_registered(specs: Vec<BenchSpec>) -> std::process::ExitCode {
    if run_collect(specs, &RunSettings::default(), |_| {}).failures > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
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
    let runs = match options.begin_runs() {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("error: cannot start the run: {e}");
            return Collected { failures: 1, ..Collected::default() };
        }
    };
    let criterion = |c: Criterion| if settings.criterion_plots { c } else { c.without_plots() };
    // Criterion probes for gnuplot when it is made and says so on stderr; our plots are SVG.
    let (mut energy_c, mut time_c) = quiet::stderr_unless_verbose(|| {
        (
            criterion(Criterion::default()).with_measurement(Energy).configure_from_args(),
            criterion(Criterion::default()).configure_from_args(),
        )
    });
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<BenchAbort>() {
            previous_hook(info);
        }
    }));
    let mut collected = Collected::default();
    let quiet_checks = settings.summarize_checked && !quiet::verbose();
    let mut rigs: Vec<(Option<u32>, Result<Rig>)> = Vec::new();
    for spec in specs {
        if let Some(problem) = benchmark_name_problem(&spec.name) {
            eprintln!("error: benchmark at {}:{}: {problem}", spec.location.0, spec.location.1);
            collected.failures += 1;
            continue;
        }
        // A benchmark the filter or the shard leaves out opens no device and reports no
        // device's error.
        if !may_run(&spec, &options) || options.shard.is_some_and(|s| !s.runs(&spec.name)) {
            continue;
        }
        let device = match spec.options.cuda_device() {
            Ok(ordinal) => ordinal,
            Err(e) => {
                eprintln!("error: benchmark {} ({}:{}): {e}", spec.name, spec.location.0, spec.location.1);
                collected.failures += 1;
                continue;
            }
        };
        let mut spec = spec;
        spec.options.device = device;
        let index = match rigs.iter().position(|(i, _)| *i == device) {
            Some(i) => i,
            None => {
                rigs.push((device, open_rig(device, quiet_checks)));
                rigs.len() - 1
            }
        };
        match &mut rigs[index].1 {
            Ok(rig) => {
                collected.simulated = rig.device.is_simulated();
                match run_spec(&spec, rig, &mut energy_c, &mut time_c, &runs, &options, quiet_checks) {
                    Ok(SpecOutcome::Ran(ran)) => {
                        let (kernel, baseline) = *ran;
                        let bench = CollectedBench { name: spec.name.clone(), kernel, baseline };
                        on_measured(&bench);
                        collected.measured.push(bench);
                    }
                    Ok(SpecOutcome::Checked(checks)) => {
                        collected.checked += 1;
                        collected.checks.extend(checks);
                    }
                    Ok(SpecOutcome::Skipped) => {}
                    Err(e) => {
                        eprintln!("error: benchmark {} ({}:{}): {e}", spec.name, spec.location.0, spec.location.1);
                        collected.failures += 1;
                    }
                }
            }
            Err(e) => {
                eprintln!("error: benchmark {}: {e}", spec.name);
                collected.failures += 1;
            }
        }
    }
    energy_c.final_summary();
    time_c.final_summary();
    for run in runs {
        let dir = run.dir().to_path_buf();
        if let Err(e) = run.finish(collected.failures) {
            eprintln!("error: could not close the run in {}: {e}", dir.display());
            collected.failures += 1;
        }
    }
    collected
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
        .flat_map(|f| [format!("{}/{f}", spec.name), format!("{}/{f} (simulated)", spec.name)])
        .collect();
    options.filter.runs_any(&ids)
}

/// Opens a device for the benchmarks; `quiet` (checks summarized, no `--verbose`) leaves
/// out the note on the simulated device (the caller's summary says nothing was measured).
fn open_rig(device: Option<u32>, quiet: bool) -> Result<Rig> {
    let request = DeviceRequest::from_env()?;
    let device = Device::open(&request, device).map_err(|e| {
        if request == DeviceRequest::Nvml {
            e.context("ENERGY_DEVICE=nvml requires a real NVIDIA GPU")
        } else {
            e
        }
    })?;
    device.check_gpu_required("benchmarks")?;
    if let Some(reason) = device.sim_reason().filter(|_| !quiet) {
        eprintln!("note: running on the simulated H100 ({reason}); every figure below is simulated");
    }
    let calibration = Calibration::load_cached(&default_calibration_dir(), &device.facts().uuid).unwrap_or_else(|e| {
        eprintln!("warning: ignoring the cached calibration: {e}");
        None
    });
    Ok(Rig { device, calibration, cuda: None, checked: None, unmeasured_note_shown: false })
}

/// The measurements of a benchmark's kernel and baseline.
type SpecMeasurements = (Option<Measurement>, Option<Measurement>);

/// What became of one benchmark that did not fail.
enum SpecOutcome {
    /// Not run: a filter or `--list`.
    Skipped,
    /// No GPU and no simulated model: its code ran on the checked device only.
    Checked(Vec<CodeCheck>),
    /// Measured (or, with `--test`, launched).
    Ran(Box<SpecMeasurements>),
}

/// Says once per process that no `ptxas` was found and how to get one (every check
/// after it says "no ptxas found" in three words).
fn note_missing_ptxas(check: &CodeCheck) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if check.lacks_ptxas() && !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "note: no ptxas found: PTX is read and its kernels, arguments and launches checked, but not assembled \
             for {} (an error only the JIT would find goes unseen); to assemble it: {}",
            check.arch,
            crate::cuda::checked::PTXAS_HOWTO
        );
    }
}

/// Runs one benchmark. Without a GPU its code is checked first; `quiet` (checks
/// summarized) prints no line for a benchmark only checked.
fn run_spec(
    spec: &BenchSpec,
    rig: &mut Rig,
    energy_c: &mut Criterion<Energy>,
    time_c: &mut Criterion,
    runs: &[RunWriter],
    options: &RunOptions,
    quiet: bool,
) -> Result<SpecOutcome> {
    let simulated = rig.device.is_simulated();
    let suffix = if simulated { " (simulated)" } else { "" };
    let (energy_fn, baseline_fn, time_fn) =
        (format!("energy{suffix}"), format!("baseline{suffix}"), format!("time{suffix}"));
    let id = |function: &str| format!("{}/{function}", spec.name);
    if options.nothing_runs {
        // `--list`: criterion lists what is registered, without running anything.
        for (function, listed) in
            [(&energy_fn, true), (&baseline_fn, spec.baseline.is_some()), (&time_fn, spec.time_bench)]
        {
            if listed {
                let c: &mut Criterion<Energy> = energy_c;
                let mut g = c.benchmark_group(&spec.name);
                g.bench_function(function.as_str(), |b| b.iter_custom(|_| 0.0));
                g.finish();
            }
        }
        return Ok(SpecOutcome::Skipped);
    }
    let runs_energy = options.filter.runs_any(&[id(&energy_fn)]);
    let runs_time = spec.time_bench && options.filter.runs_any(&[id(&time_fn)]);
    let runs_baseline = spec.baseline.is_some() && options.filter.runs_any(&[id(&baseline_fn)]);
    if !(runs_energy || runs_time || runs_baseline) {
        return Ok(SpecOutcome::Skipped);
    }
    if simulated && spec.gpu_only {
        println!("{}: not run: needs a GPU (declared gpu_only)", spec.name);
        return Ok(SpecOutcome::Skipped);
    }
    if simulated {
        // Without a GPU the kernel code runs on the checked device first.
        let mut checks = Vec::new();
        let mut lines = Vec::new();
        let codes = spec.code.iter().map(|c| ("kernel code".to_string(), c));
        let baseline = spec.baseline.iter().map(|(name, c)| (format!("baseline {name}'s code"), c));
        for (what, code) in codes.chain(baseline) {
            match code.check_on_sim(&rig.device, &mut rig.checked) {
                Ok(Some(check)) => {
                    note_missing_ptxas(&check);
                    lines.push(if what == "kernel code" {
                        check.brief()
                    } else {
                        format!("{what}: {}", check.brief())
                    });
                    checks.push(check);
                }
                Ok(None) => {}
                // Raw cudarc exists only on a GPU: the code is not wrong, it cannot be checked.
                Err(e) if e.kind() == ErrorKind::NeedsGpu => {
                    println!("{}: not run: needs a GPU ({})", spec.name, crate::budget::needs_gpu_reason(&e));
                    return Ok(SpecOutcome::Skipped);
                }
                Err(e) => {
                    return Err(e.context(format!(
                        "its {what} failed on the checked device (no GPU here; the same code fails on a GPU)"
                    )))
                }
            }
        }
        let checked = if lines.is_empty() { "no kernel code to check".to_string() } else { lines.join("; ") };
        if spec.sim.is_none() {
            if !quiet {
                if !rig.unmeasured_note_shown {
                    rig.unmeasured_note_shown = true;
                    println!(
                        "note: without a GPU, a benchmark without a simulated model (sim(seconds = …, watts = …) in \
                         its #[energy_bench]) is checked, not measured: its setup and launches run on the checked \
                         device"
                    );
                }
                println!("{}: checked, not measured: {checked}", spec.name);
            }
            return Ok(SpecOutcome::Checked(checks));
        }
        println!(
            "{}: kernel code checked without a GPU: {checked}; its figures below are simulated from its sim(…) model",
            spec.name
        );
    }

    let baseline_sim = match (&spec.baseline, simulated) {
        (Some((name, _)), true) if spec.baseline_sim.is_none() => {
            println!("{}: baseline {name} skipped: it declares no simulated kernel (baseline_sim(…))", spec.name);
            false
        }
        _ => true,
    };
    let runs_baseline = runs_baseline && baseline_sim;

    if options.test_mode {
        if runs_energy || runs_time {
            let mut w = rig.workload(spec.code.as_ref(), spec.sim, 1)?;
            test_kernel(energy_c, &spec.name, &energy_fn, w.as_mut())?;
        }
        if runs_baseline {
            let code = spec.baseline.as_ref().map(|(_, c)| c);
            let mut w = rig.workload(code, spec.baseline_sim, 2)?;
            test_kernel(energy_c, &spec.name, &baseline_fn, w.as_mut())?;
        }
        return Ok(SpecOutcome::Ran(Box::new((None, None))));
    }

    let main = if runs_energy || runs_time {
        let mut w = rig.workload(spec.code.as_ref(), spec.sim, 1)?;
        Some(measure_kernel(rig, &id(&energy_fn), w.as_mut(), &spec.options)?)
    } else {
        None
    };
    let base = if runs_baseline {
        let code = spec.baseline.as_ref().map(|(_, c)| c);
        let mut w = rig.workload(code, spec.baseline_sim, 2)?;
        Some(measure_kernel(rig, &id(&baseline_fn), w.as_mut(), &spec.options.baseline())?)
    } else {
        None
    };

    // Criterion gets the windows' energies and CUDA-event times per launch (its
    // statistics, reports and `--baseline` comparisons work on them), with no second pass.
    let per_launch = |m: &Measurement, of: fn(&crate::engine::WindowResult) -> f64| -> Vec<f64> {
        m.windows
            .iter()
            .filter(|w| w.launches > 0)
            .map(|w| of(w) / w.launches as f64)
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect()
    };
    if let Some(m) = &main {
        let throughput = BenchSpec::throughput(&spec.options);
        if runs_energy {
            let values = per_launch(&m.measurement, |w| w.energy.energy_j);
            replay(energy_c, &spec.name, &energy_fn, throughput.clone(), &values, |v| v);
        }
        if runs_time {
            let values = per_launch(&m.measurement, |w| w.gpu_time_s);
            replay(time_c, &spec.name, &time_fn, throughput, &values, Duration::from_secs_f64);
        }
    }
    if let Some(b) = &base {
        let values = per_launch(&b.measurement, |w| w.energy.energy_j);
        let throughput = BenchSpec::throughput(&spec.options.baseline());
        replay(energy_c, &spec.name, &baseline_fn, throughput, &values, |v| v);
    }

    // Per-op and per-byte figures from each kernel's own counts: a baseline does not do the
    // kernel's work, so it never inherits its counts.
    let report = |m: &mut Measured, (ops, bytes): (Option<f64>, Option<f64>), net: Option<NetEnergy>| -> Result<()> {
        if let Some(ops) = ops {
            m.measurement.per_op = m.measurement.per_unit("op", ops);
        }
        if let Some(bytes) = bytes {
            m.measurement.per_byte = m.measurement.per_unit("byte", bytes);
        }
        let result = ResultFile::new(&m.measurement, net);
        let mut files = None;
        for run in runs {
            let written = write_outputs(run, &result, &m.trace, &m.analysis)?;
            files.get_or_insert(written);
        }
        println!("{}", render_summary(&result, files.as_ref()));
        Ok(())
    };
    match (main, base) {
        (Some(mut main), Some(mut base)) => {
            // The baseline's own result first, so the main one (with the net figure) ends the block.
            report(&mut base, (spec.options.baseline_ops, spec.options.baseline_bytes), None)?;
            let ops = spec.options.ops.unwrap_or(1.0);
            let net = net_per_op(&main.measurement.energy_j, &base.measurement.energy_j, ops).map(|e| NetEnergy {
                baseline_id: base.measurement.id.clone(),
                ops_per_launch: ops,
                energy_j: e,
            });
            report(&mut main, (spec.options.ops, spec.options.bytes), net)?;
            Ok(SpecOutcome::Ran(Box::new((Some(main.measurement), Some(base.measurement)))))
        }
        (Some(mut m), None) => {
            report(&mut m, (spec.options.ops, spec.options.bytes), None)?;
            Ok(SpecOutcome::Ran(Box::new((Some(m.measurement), None))))
        }
        (None, Some(mut b)) => {
            report(&mut b, (spec.options.baseline_ops, spec.options.baseline_bytes), None)?;
            Ok(SpecOutcome::Ran(Box::new((None, Some(b.measurement)))))
        }
        (None, None) => Ok(SpecOutcome::Ran(Box::new((None, None)))),
    }
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
    }
}
