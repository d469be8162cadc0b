//! The criterion plugin: `#[energy_bench]` functions registered at link time, run by
//! `energy_main!()` as criterion benchmarks.
//!
//! Each benchmark becomes up to three criterion benchmarks in one binary:
//! - `NAME/energy`: [`Energy`] measurement, flat sampling; every sample is one window of
//!   back-to-back launches planned by the engine (enough to span several counter ticks),
//!   marked, sampled by the sensor thread, followed by idle, and analyzed (correction,
//!   idle subtraction). The value handed to criterion is that window's energy per launch
//!   times the iteration count criterion asked for, so criterion's statistics, reports,
//!   filters and baselines all work on measured joules;
//! - `NAME/baseline`, when a baseline kernel is given, the same for it;
//! - `NAME/time`: a criterion time benchmark whose samples are the CUDA-event GPU times
//!   per launch of the `NAME/energy` windows (no second pass on the GPU; it follows the
//!   energy benchmark, so a filter must select that one).
//!
//! After them the engine's own summary is printed (time, energy and dynamic energy per
//! launch with intervals, power, per-op/per-byte and net figures, source, model, ticks,
//! warnings) and the result, trace and plot are written under `target/energy/new/`
//! (and `target/energy/NAME/` with `--save-baseline NAME`).
//!
//! On a machine without an NVIDIA GPU (or with `ENERGY_DEVICE=sim`) the benchmarks run on
//! the simulated H100, using each benchmark's declared simulated kernel; every id, line and
//! file then says `simulated`. A benchmark without one is skipped with a line saying why.

pub mod measurement;
mod run_options;
mod spec;

use run_options::RunOptions;
pub use spec::BenchSpec;

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode};

pub use measurement::Energy;

use crate::cuda::CudaGpu;
use crate::device::{Device, DeviceRequest};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel_code::KernelCode;
use crate::measurement::analyze::analyze_windows;
use crate::measurement::calibration::{default_calibration_dir, Calibration};
use crate::measurement::result::{net_per_op, Measurement};
use crate::measurement::run::{annotate_trace, prepare, summarize, Finished, MeasureConfig, Prepared, SimWorkload};
use crate::report::run::RunWriter;
use crate::report::{render_summary, write_outputs, NetEnergy, ResultFile};
use crate::sampling::{Sampler, SamplerConfig, WindowMarker};
use crate::sim::SimKernel;
use crate::workload::Workload;

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

    /// A maker of the benchmark's workload, called only when criterion runs the benchmark
    /// (a filtered-out benchmark costs no kernel setup). CUDA is opened here.
    fn maker<'a>(
        &mut self,
        code: Option<&'a KernelCode>,
        sim: Option<SimKernel>,
        seed: u64,
    ) -> Result<WorkloadMaker<'a>> {
        if let Some(gpu) = self.device.sim() {
            let gpu = gpu.clone();
            return Ok(Box::new(move || {
                let kernel = sim.ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no simulated kernel declared"))?;
                Ok(Box::new(SimWorkload::new(gpu.clone(), kernel).with_time_jitter(0.001, seed)) as Box<dyn Workload>)
            }));
        }
        let code = code.ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no launch function"))?;
        let gpu = self.cuda()?;
        Ok(Box::new(move || code.workload(&gpu)))
    }
}

/// Makes a benchmark's workload on first use.
type WorkloadMaker<'a> = Box<dyn FnMut() -> Result<Box<dyn Workload>> + 'a>;

/// A workload made on first use.
struct LazyWorkload<'a> {
    make: WorkloadMaker<'a>,
    made: Option<Box<dyn Workload>>,
}

impl<'a> LazyWorkload<'a> {
    fn new(make: WorkloadMaker<'a>) -> Self {
        LazyWorkload { make, made: None }
    }

    fn get(&mut self) -> Result<&mut dyn Workload> {
        if self.made.is_none() {
            self.made = Some((self.make)()?);
        }
        match self.made.as_mut() {
            Some(w) => Ok(w.as_mut()),
            None => Err(Error::new(ErrorKind::Sampler, "the workload could not be made")),
        }
    }
}

/// One energy benchmark in progress: its workload, plan, sampler and windows.
struct EnergySession<'a> {
    workload: LazyWorkload<'a>,
    config: MeasureConfig,
    prepared: Option<Prepared>,
    sampler: Option<Sampler>,
    marker: Option<WindowMarker>,
    gpu_times: Vec<f64>,
    wall_start: f64,
    timestamp: String,
    error: Option<Error>,
}

impl EnergySession<'_> {
    /// One criterion sample: the first call prepares (warm-up, plan, sampler, lead-in
    /// idle); each later call runs one window and returns its energy for `iters` launches.
    fn step(&mut self, rig: &Rig, iters: u64) -> Result<f64> {
        let clock = rig.device.clock().clone();
        let Some(prepared) = &self.prepared else {
            let prepared = prepare(&rig.device, self.workload.get()?, &self.config)?;
            let (sources, _) = rig.device.open_sources(&prepared.sources);
            let sampler = Sampler::start(sources, clock.clone(), SamplerConfig::default())?;
            self.marker = Some(sampler.marker());
            self.sampler = Some(sampler);
            clock.sleep_s(prepared.plan.lead_s);
            self.prepared = Some(prepared);
            return Ok(0.0);
        };
        let (sampler, marker) = match (&self.sampler, &self.marker) {
            (Some(s), Some(m)) => (s, m),
            _ => return Err(Error::new(ErrorKind::Sampler, "the sampler is not running")),
        };
        let index = self.gpu_times.len() as u32;
        let n = prepared.plan.launches_per_window;
        marker.start(index);
        let gpu_s = self.workload.get()?.run_batch(n)?;
        marker.end(index);
        self.gpu_times.push(gpu_s);
        clock.sleep_s(prepared.plan.gap_s);
        if let Some(err) = sampler.error() {
            return Err(err);
        }
        let snapshot = sampler.snapshot();
        let windows = snapshot.windows()?;
        let analysis = analyze_windows(&snapshot, &windows, &prepared.options)?;
        let last =
            analysis.windows.iter().find(|w| w.index == index).ok_or_else(|| {
                Error::new(ErrorKind::Analysis, "the window just measured is missing from the analysis")
            })?;
        Ok(last.energy_j / n as f64 * iters as f64)
    }

    /// Stops the sampler and summarizes the windows (None when no window ran: a filter,
    /// `--test` or `--list`).
    fn finish(mut self, rig: &mut Rig) -> Result<Option<(Measurement, crate::trace::Trace, Prepared)>> {
        let (Some(prepared), Some(sampler)) = (self.prepared.take(), self.sampler.take()) else {
            return Ok(None);
        };
        if self.gpu_times.is_empty() {
            drop(sampler);
            return Ok(None);
        }
        let clock = rig.device.clock().clone();
        clock.sleep_s(0.3);
        let facts_before = rig.device.facts().clone();
        let mut trace = sampler.stop()?;
        let _ = rig.device.refresh();
        let facts_after = rig.device.facts().clone();
        annotate_trace(&mut trace, &self.config.id, &facts_before, &facts_after, &prepared.plan, &self.gpu_times);
        let measurement = summarize(Finished {
            config: &self.config,
            prepared: &prepared,
            trace: &trace,
            gpu_times: &self.gpu_times,
            facts_before: &facts_before,
            facts_after: &facts_after,
            timestamp: self.timestamp.clone(),
            wall_time_s: clock.now_s() - self.wall_start,
        })?;
        Ok(Some((measurement, trace, prepared)))
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSettings {
    /// Criterion's HTML report plots (about 3.5 s per benchmark; `--plotting-backend`
    /// on the command line turns them on regardless).
    pub criterion_plots: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings { criterion_plots: true }
    }
}

/// Runs benchmarks as [`run_registered`] does and returns their measurements, for suites
/// that compute figures across benchmarks (net energy per instruction against a shared
/// baseline, linearity in the work). `on_measured` sees each benchmark's measurements as
/// soon as they are taken (to save them before a long run ends).
pub fn run_collect(
    specs: Vec<BenchSpec>,
    settings: &RunSettings,
    mut on_measured: impl FnMut(&CollectedBench),
) -> Collected {
    let options = RunOptions::from_args();
    let runs = match options.begin_runs() {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("error: cannot start the run: {e}");
            return Collected { failures: 1, ..Collected::default() };
        }
    };
    let criterion = |c: Criterion| if settings.criterion_plots { c } else { c.without_plots() };
    let mut energy_c = criterion(Criterion::default()).with_measurement(Energy).configure_from_args();
    let mut time_c = criterion(Criterion::default()).configure_from_args();
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<BenchAbort>() {
            previous_hook(info);
        }
    }));
    let mut collected = Collected::default();
    let mut rigs: Vec<(u32, Result<Rig>)> = Vec::new();
    for spec in specs {
        let index = match rigs.iter().position(|(i, _)| *i == spec.device) {
            Some(i) => i,
            None => {
                rigs.push((spec.device, open_rig(spec.device)));
                rigs.len() - 1
            }
        };
        match &mut rigs[index].1 {
            Ok(rig) => {
                collected.simulated = rig.device.is_simulated();
                match run_spec(&spec, rig, &mut energy_c, &mut time_c, &runs, &options) {
                    Ok(Some((kernel, baseline))) => {
                        let bench = CollectedBench { name: spec.name.clone(), kernel, baseline };
                        on_measured(&bench);
                        collected.measured.push(bench);
                    }
                    Ok(None) => {}
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

fn open_rig(nvml_index: u32) -> Result<Rig> {
    let request = DeviceRequest::from_env()?;
    let device = Device::open(&request, nvml_index).map_err(|e| {
        if request == DeviceRequest::Nvml {
            e.context("ENERGY_DEVICE=nvml requires a real NVIDIA GPU")
        } else {
            e
        }
    })?;
    device.check_gpu_required("benchmarks")?;
    if let Some(reason) = device.sim_reason() {
        eprintln!("note: running on the simulated H100 ({reason}); every figure below is simulated");
    }
    let calibration = Calibration::load_cached(&default_calibration_dir(), &device.facts().uuid).unwrap_or_else(|e| {
        eprintln!("warning: ignoring the cached calibration: {e}");
        None
    });
    Ok(Rig { device, calibration, cuda: None, checked: None, unmeasured_note_shown: false })
}

fn measure_config(spec: &BenchSpec, id: String, rig: &Rig) -> MeasureConfig {
    let defaults = MeasureConfig::default();
    MeasureConfig {
        id,
        source: spec.source,
        calibration: rig.calibration.clone(),
        precision: spec.precision.unwrap_or(defaults.precision),
        min_window_s: spec.min_window_s.unwrap_or(defaults.min_window_s),
        windows: spec.windows.unwrap_or(10).max(10),
        idle_gap_s: spec.idle_gap_s.unwrap_or(defaults.idle_gap_s),
        ..defaults
    }
}

/// Runs one energy benchmark under criterion; `Ok(None)` when criterion ran no window.
fn run_energy(
    c: &mut Criterion<Energy>,
    rig: &mut Rig,
    spec: &BenchSpec,
    function: &str,
    workload: WorkloadMaker<'_>,
    config: MeasureConfig,
) -> Result<Option<(Measurement, crate::trace::Trace, Prepared)>> {
    let clock = rig.device.clock().clone();
    let windows = config.windows;
    let mut session = EnergySession {
        workload: LazyWorkload::new(workload),
        config,
        prepared: None,
        sampler: None,
        marker: None,
        gpu_times: Vec::new(),
        wall_start: clock.now_s(),
        timestamp: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        error: None,
    };
    {
        let mut group = c.benchmark_group(&spec.name);
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(windows)
            .warm_up_time(Duration::from_nanos(1))
            // Criterion derives iterations from this and the first call's time (the warm-up
            // and lead-in, ~0.7 s); every sample is one window whatever it asks for, so this
            // only keeps its time estimate near the truth (~1 s per window with its idle gap)
            // and its "unable to complete" warning away (it fires at one iteration per sample).
            .measurement_time(Duration::from_secs_f64(windows as f64 * 1.2));
        if let Some(t) = spec.throughput() {
            group.throughput(t);
        }
        let rig_ref: &Rig = rig;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            group.bench_function(function, |b| {
                b.iter_custom(|iters| match session.step(rig_ref, iters) {
                    Ok(v) => v,
                    Err(e) => {
                        session.error = Some(e);
                        panic::panic_any(BenchAbort)
                    }
                })
            });
        }));
        group.finish();
        if outcome.is_err() {
            let err = session.error.take().unwrap_or_else(|| Error::new(ErrorKind::Sampler, "the benchmark panicked"));
            return Err(err.context(format!("{}/{function} aborted", spec.name)));
        }
    }
    session.finish(rig)
}

/// Hands the per-launch GPU times of a measurement's windows to criterion as the samples of
/// `NAME/function`: sample k is window k's time per launch (cycling when criterion asks for
/// more), times the iterations criterion asks for. Nothing runs on the GPU here.
fn replay_window_times(c: &mut Criterion, spec: &BenchSpec, function: &str, m: &Measurement) {
    let per_launch: Vec<f64> = m
        .windows
        .iter()
        .filter(|w| w.launches > 0 && w.gpu_time_s.is_finite() && w.gpu_time_s > 0.0)
        .map(|w| w.gpu_time_s / w.launches as f64)
        .collect();
    if per_launch.is_empty() {
        return;
    }
    let measured_s: f64 = m.windows.iter().map(|w| w.gpu_time_s).sum();
    let mut group = c.benchmark_group(&spec.name);
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(per_launch.len().max(10))
        .warm_up_time(Duration::from_nanos(1))
        // The iteration counts criterion plans from this only scale the replayed samples;
        // the windows' own GPU time keeps them where they were measured.
        .measurement_time(Duration::from_secs_f64(measured_s.max(1e-3)));
    if let Some(t) = spec.throughput() {
        group.throughput(t);
    }
    let mut next = 0usize;
    group.bench_function(function, |b| {
        b.iter_custom(|iters| {
            let seconds = per_launch[next % per_launch.len()] * iters as f64;
            next += 1;
            Duration::from_secs_f64(seconds)
        })
    });
    group.finish();
}

/// The measurements of a benchmark's kernel and baseline.
type SpecMeasurements = (Option<Measurement>, Option<Measurement>);

/// Runs one benchmark; `Ok(None)` when it was skipped (no GPU and no simulated model).
fn run_spec(
    spec: &BenchSpec,
    rig: &mut Rig,
    energy_c: &mut Criterion<Energy>,
    time_c: &mut Criterion,
    runs: &[RunWriter],
    options: &RunOptions,
) -> Result<Option<SpecMeasurements>> {
    let simulated = rig.device.is_simulated();
    // Kernel code is checked only for a benchmark criterion runs (not for --list, nor
    // for one a filter leaves out).
    let runs_here = || {
        let ids: Vec<String> =
            ["energy", "baseline", "time"].iter().map(|f| format!("{}/{f} (simulated)", spec.name)).collect();
        options.filter.runs_any(&ids)
    };
    if simulated && !options.nothing_runs && runs_here() {
        let mut checks = Vec::new();
        let codes = spec.code.iter().map(|c| ("kernel code".to_string(), c));
        let baseline = spec.baseline.iter().map(|(name, c)| (format!("baseline {name}'s code"), c));
        for (what, code) in codes.chain(baseline) {
            match code.check_on_sim(&rig.device, &mut rig.checked) {
                Ok(Some(check)) if what == "kernel code" => checks.push(check.to_string()),
                Ok(Some(check)) => checks.push(format!("{what}: {check}")),
                Ok(None) => {}
                Err(e) => {
                    return Err(e.context(format!(
                        "its {what} failed on the checked device (no GPU here; the same code fails on a GPU)"
                    )))
                }
            }
        }
        let checked = if checks.is_empty() { "no kernel code to check".to_string() } else { checks.join("; ") };
        if spec.sim.is_none() {
            if !rig.unmeasured_note_shown {
                rig.unmeasured_note_shown = true;
                println!(
                    "note: without a GPU, a benchmark without a simulated model (sim(seconds = …, watts = …) in its \
                     #[energy_bench]) is checked, not measured: its setup and launches run on the checked device"
                );
            }
            println!("{}: checked, not measured: {checked}", spec.name);
            return Ok(None);
        }
        println!(
            "{}: kernel code checked without a GPU: {checked}; its figures below are simulated from its sim(…) model",
            spec.name
        );
    }
    let suffix = if simulated { " (simulated)" } else { "" };
    let energy_fn = format!("energy{suffix}");
    let id = format!("{}/{energy_fn}", spec.name);
    let main = rig.maker(spec.code.as_ref(), spec.sim, 1)?;
    let measured = run_energy(energy_c, rig, spec, &energy_fn, main, measure_config(spec, id, rig))?;

    let baseline = match (&spec.baseline, simulated) {
        (Some((name, code)), false) => Some((name.clone(), rig.maker(Some(code), None, 2)?)),
        (Some((name, _)), true) => match spec.baseline_sim {
            Some(kernel) => Some((name.clone(), rig.maker(None, Some(kernel), 2)?)),
            None => {
                println!("{}: baseline {name} skipped: it declares no simulated kernel (baseline_sim(…))", spec.name);
                None
            }
        },
        (None, _) => None,
    };
    let mut baseline_measured = None;
    if let Some((name, workload)) = baseline {
        let function = format!("baseline{suffix}");
        let id = format!("{}/{function}", spec.name);
        baseline_measured = run_energy(energy_c, rig, spec, &function, workload, measure_config(spec, id, rig))?
            .map(|(m, trace, prepared)| (name, m, trace, prepared));
    }

    // Time: the CUDA-event times of the energy windows just measured, per launch, handed
    // to criterion (its statistics, reports and `--baseline` comparisons of time work on
    // them) without a second pass on the GPU.
    if spec.time_bench {
        if let Some((m, _, _)) = &measured {
            replay_window_times(time_c, spec, &format!("time{suffix}"), m);
        }
    }

    // Per-op and per-byte figures from each kernel's own counts: a baseline does not do the
    // kernel's work, so it never inherits its counts.
    let report = |m: &mut Measurement,
                  trace: &crate::trace::Trace,
                  prepared: &Prepared,
                  (ops, bytes): (Option<f64>, Option<f64>),
                  net: Option<NetEnergy>|
     -> Result<()> {
        if let Some(ops) = ops {
            m.per_op = m.per_unit("op", ops);
        }
        if let Some(bytes) = bytes {
            m.per_byte = m.per_unit("byte", bytes);
        }
        let result = ResultFile::new(m, net);
        let mut files = None;
        for run in runs {
            let written = write_outputs(run, &result, trace, &prepared.options)?;
            files.get_or_insert(written);
        }
        println!("{}", render_summary(&result, files.as_ref()));
        Ok(())
    };
    match (measured, baseline_measured) {
        (Some((mut main, trace, prepared)), Some((_, mut base, base_trace, base_prepared))) => {
            // The baseline's own result first, so the main one (with the net figure) ends the block.
            report(&mut base, &base_trace, &base_prepared, (spec.baseline_ops, spec.baseline_bytes), None)?;
            let ops = spec.ops.unwrap_or(1.0);
            let net = net_per_op(&main.energy_j, &base.energy_j, ops).map(|e| NetEnergy {
                baseline_id: base.id.clone(),
                ops_per_launch: ops,
                energy_j: e,
            });
            report(&mut main, &trace, &prepared, (spec.ops, spec.bytes), net)?;
            Ok(Some((Some(main), Some(base))))
        }
        (Some((mut m, trace, prepared)), None) => {
            report(&mut m, &trace, &prepared, (spec.ops, spec.bytes), None)?;
            Ok(Some((Some(m), None)))
        }
        (None, Some((_, mut m, trace, prepared))) => {
            report(&mut m, &trace, &prepared, (spec.baseline_ops, spec.baseline_bytes), None)?;
            Ok(Some((None, Some(m))))
        }
        (None, None) => Ok(Some((None, None))),
    }
}
