//! What criterion gets from a benchmark: the per-launch values of the windows the engine
//! measured, replayed as its samples (nothing runs on the GPU here); with `--test`, a few
//! launches and no measurement; with `--list`, the names.

use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};

use super::criterion_energy::Energy;
use super::quiet;
use super::RunSettings;
use crate::workload::Workload;
use energy_results::error::{Error, ErrorKind, Result};

/// The samples criterion needs at least (it refuses fewer).
pub const CRITERION_MIN_SAMPLES: usize = energy_units::bounds::BENCH_WINDOWS_MIN;

/// The payload of the panic that aborts one benchmark from inside criterion's loop; the
/// runner catches it and goes on with the next benchmark.
struct BenchAbort;

/// The two criterion instances of a run: one measures energy ([`Energy`]), one time.
pub(super) struct Criteria {
    energy: Criterion<Energy>,
    time: Criterion,
}

impl Criteria {
    /// Criterion as the command line configures it (its HTML plots off unless `settings`
    /// or `--plotting-backend` ask for them); a benchmark aborted from inside criterion's
    /// loop ([`Criteria::test`]) prints no panic message.
    pub(super) fn from_args(settings: &RunSettings) -> Criteria {
        let criterion = |c: Criterion| if settings.criterion_plots { c } else { c.without_plots() };
        // Criterion probes for gnuplot when it is made and says so on stderr; our plots are SVG.
        let (energy, time) = quiet::stderr_unless_verbose(|| {
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
        Criteria { energy, time }
    }

    /// `--list`: criterion lists `group/function` for each function, running nothing.
    pub(super) fn list(&mut self, group: &str, functions: &[&str]) {
        for function in functions {
            let mut g = self.energy.benchmark_group(group);
            g.bench_function(*function, |b| b.iter_custom(|_| 0.0));
            g.finish();
        }
    }

    /// `cargo bench -- --test`: the kernel runs (a launch, then two), nothing is measured;
    /// criterion prints "Success" for it.
    pub(super) fn test(&mut self, group: &str, function: &str, workload: &mut dyn Workload) -> Result<()> {
        let mut failure = None;
        let c = &mut self.energy;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let mut g = c.benchmark_group(group);
            g.bench_function(function, |b| {
                let quantum = workload.launch_quantum();
                b.iter_custom(|_| match workload.run_batch(quantum).and_then(|_| workload.run_batch(2 * quantum)) {
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

    /// Hands each of `samples` to criterion as `group/FUNCTION` (nothing runs on the GPU
    /// here), criterion's progress lines kept off stderr unless `--verbose` is given.
    pub(super) fn replay(&mut self, group: &str, samples: &[Samples]) {
        quiet::stderr_unless_verbose(|| {
            for s in samples.iter().filter(|s| !s.per_launch.is_empty()) {
                if s.per_launch.len() < CRITERION_MIN_SAMPLES {
                    println!(
                        "note: {group}/{}: {} windows (long launches); criterion needs {CRITERION_MIN_SAMPLES} samples, \
                         so windows are handed to it more than once and its interval is too narrow: read the engine's \
                         below",
                        s.function,
                        s.per_launch.len()
                    );
                }
                match s.time {
                    false => replay(&mut self.energy, group, s, |v| v),
                    true => replay(&mut self.time, group, s, Duration::from_secs_f64),
                }
            }
        });
    }

    /// Criterion's summary at the end of the run.
    pub(super) fn final_summary(&mut self) {
        self.energy.final_summary();
        self.time.final_summary();
    }
}

/// The samples of one criterion function: per-launch values, one per window.
pub(super) struct Samples {
    function: String,
    throughput: Option<Throughput>,
    per_launch: Vec<f64>,
    /// Whether the values are GPU times, s (else energies, J).
    time: bool,
}

impl Samples {
    /// Energies per launch (J) as `function`.
    pub(super) fn energy(function: &str, throughput: Option<Throughput>, per_launch: Vec<f64>) -> Samples {
        Samples { function: function.to_string(), throughput, per_launch, time: false }
    }

    /// GPU times per launch (s) as `function`.
    pub(super) fn time(function: &str, throughput: Option<Throughput>, per_launch: Vec<f64>) -> Samples {
        Samples { function: function.to_string(), throughput, per_launch, time: true }
    }
}

/// Hands `samples` to criterion as the samples of `group/FUNCTION`: sample k is window k's
/// value times the iterations criterion asks for (more samples than windows, when it
/// needs them, repeat the windows).
fn replay<M: criterion::measurement::Measurement>(
    c: &mut Criterion<M>,
    group: &str,
    samples: &Samples,
    value: impl Fn(f64) -> M::Value,
) {
    let per_launch = &samples.per_launch;
    let mut g = c.benchmark_group(group);
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(per_launch.len().max(CRITERION_MIN_SAMPLES))
        .warm_up_time(Duration::from_nanos(1))
        .measurement_time(Duration::from_millis(1));
    if let Some(t) = samples.throughput.clone() {
        g.throughput(t);
    }
    let mut next = 0usize;
    g.bench_function(samples.function.as_str(), |b| {
        b.iter_custom(|iters| {
            let v = value(per_launch[next % per_launch.len()] * iters as f64);
            next += 1;
            v
        })
    });
    g.finish();
}
