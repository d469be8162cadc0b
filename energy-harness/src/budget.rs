//! Energy budgets in tests: "this kernel stays within 5 mJ per launch", or "the new
//! version costs at most 1.10 × the old one", decided from the measurement's interval.
//!
//! Decision rule: **pass** when the upper end of the 95 % interval is within the budget;
//! **fail** when the lower end exceeds it; when the interval straddles the budget, measure
//! again (more windows, pooled) up to `max_rounds`, then it is **inconclusive**, which fails
//! unless told otherwise. A measurement that cannot be trusted (the GPU throttled, windows
//! too short for the counter) is inconclusive at best; an NVML or CUDA error is an error.
//! Neither ever passes.
//!
//! Without an NVIDIA GPU a budget runs on the simulated H100 when it declares a simulated
//! kernel; otherwise it is skipped with a line on stderr, unless `ENERGY_REQUIRE_GPU=1`.

use std::fmt;
use std::path::PathBuf;

use crate::device::Device;
use crate::engine::options::MeasureOptions;
use crate::engine::per_unit;
use crate::engine::result::Measurement;
use crate::engine::session::{measure, MeasureRequest};
use crate::engine::stats::{student_t_975, Estimate};
use crate::engine::warning::WarningKind;
use crate::kernel::{open_device, options_on, KernelUnderTest, Part, Readiness, Rig, Role, Subject};
use crate::report::{energy_dir, file_stem};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::format::write_trace;
use energy_units::{format_si, Joules, Watts};

/// What the budget limits. Each is what one `#[energy_test]` option writes: `max`,
/// `max_per_op`, `max_per_byte`, `max_power`, or `relative_to` with `max_ratio`.
///
/// # Examples
///
/// ```
/// use energy_harness::prelude::*;
///
/// // max = "5 mJ": energy per launch.
/// let per_launch = Limit::PerLaunch(Joules(5e-3));
/// // max_per_byte = "200 pJ": needs the bytes per launch in the options (`bytes`).
/// let per_byte = Limit::PerByte(Joules(200e-12));
/// // max_power = "300 W": the mean board power while the kernel runs.
/// let power = Limit::Power(Watts(300.0));
/// // relative_to = …, max_ratio = 1.10: at most 1.10 × the reference's energy per launch.
/// let ratio = Limit::Relative(1.10);
/// assert_ne!(per_launch, Limit::PerOp(Joules(5e-3)));
/// # let _ = (per_byte, power, ratio);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Limit {
    /// Energy per launch.
    PerLaunch(Joules),
    /// Energy per operation (the launch's operation count given).
    PerOp(Joules),
    /// Energy per byte (the launch's byte count given).
    PerByte(Joules),
    /// Mean board power while the kernel runs.
    Power(Watts),
    /// Energy per launch relative to a reference kernel's: at most this ratio.
    Relative(f64),
}

/// An energy budget to check: a kernel, a [`Limit`], the measurement's options, and how
/// many rounds an undecided interval gets. `#[energy_test]` builds one;
/// [`assert_energy!`](crate::assert_energy) checks one built by hand, and
/// [`EnergyBudget::check`] returns the [`Verdict`] instead of panicking.
///
/// # Examples
///
/// A relative budget by hand (the new kernel at most 1.10 × the old one), with a finer
/// precision, five rounds before it is inconclusive, and the verdict matched:
///
/// ```no_run
/// use energy_harness::prelude::*;
/// use energy_harness::Verdict;
///
/// fn launch_v1(_stream: &Stream) -> Result<()> {
///     Ok(()) // enqueue one launch of the old kernel
/// }
/// fn launch_v2(_stream: &Stream) -> Result<()> {
///     Ok(()) // enqueue one launch of the new kernel
/// }
///
/// let new = KernelUnderTest::new("reduce_v2").code(KernelCode::launch(launch_v2)).sim(40e-6, 380.0);
/// let old = KernelUnderTest::new("reduce_v1").code(KernelCode::launch(launch_v1)).sim(42e-6, 380.0);
/// let budget = EnergyBudget::new(new, Limit::Relative(1.10))
///     .reference(old)
///     .options(MeasureOptions { precision: Some(0.005), ..MeasureOptions::DEFAULT })
///     .max_rounds(5);
/// match budget.check()? {
///     Verdict::Pass(report) => println!("within budget: {report}"),
///     Verdict::Fail(report) | Verdict::Inconclusive(report) => panic!("{report}"),
///     Verdict::CheckedNotMeasured(why) | Verdict::NotRun(why) => println!("not measured: {why}"),
/// }
/// # Ok::<(), Error>(())
/// ```
pub struct EnergyBudget {
    /// The kernel, its reference (a relative budget's) and whether their code needs a GPU.
    subject: Subject,
    limit: Limit,
    options: MeasureOptions,
    max_rounds: usize,
    inconclusive_passes: bool,
}

/// Windows each round measures at least: a budget decides on the interval, and fewer
/// give one too wide to decide anything.
pub const BUDGET_MIN_WINDOWS: usize = energy_units::bounds::BUDGET_WINDOWS_MIN;

impl EnergyBudget {
    /// A budget of `limit` for `kernel`, measured with the engine's default options.
    pub fn new(kernel: KernelUnderTest, limit: Limit) -> Self {
        EnergyBudget {
            subject: Subject::new(kernel),
            limit,
            options: MeasureOptions::DEFAULT,
            max_rounds: 3,
            inconclusive_passes: false,
        }
    }

    /// The reference kernel of a relative budget.
    pub fn reference(mut self, reference: KernelUnderTest) -> Self {
        self.subject.companion(Role::Reference, reference);
        self
    }

    /// The measurement options (ops and bytes per launch for per-op and per-byte budgets,
    /// the GPU by ordinal or UUID, source, precision, windows), checked when the budget is
    /// measured.
    pub fn options(mut self, options: MeasureOptions) -> Self {
        self.options = options;
        self
    }

    /// Rounds measured at most when the interval straddles the budget.
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(energy_units::bounds::ROUNDS_MIN);
        self
    }

    /// Whether an inconclusive result passes (it fails by default).
    pub fn inconclusive_passes(mut self, passes: bool) -> Self {
        self.inconclusive_passes = passes;
        self
    }

    /// Declares that the code cannot run on the checked device (raw cudarc, a library with
    /// its own launches): without a GPU the budget is *not run* (one line, the test passes)
    /// instead of checked; with `ENERGY_REQUIRE_GPU=1` it fails, as every budget without a
    /// GPU does. Code that calls [`crate::Stream::cuda`] or [`crate::CudaGpu::cuda_context`]
    /// is found out without it, on the checked device.
    pub fn gpu_only(mut self) -> Self {
        self.subject.gpu_only = true;
        self
    }

    /// The budget's name (the kernel's).
    pub fn name(&self) -> &str {
        &self.subject.kernel.name
    }

    /// Why the budget stays off the simulated GPU, when `part` has no model there.
    fn missing_model(&self, part: Part) -> String {
        match (part, self.subject.companion_as(Role::Reference)) {
            (Part::Companion, Some(r)) => format!(
                "its reference kernel {} has no simulated model (reference_sim(seconds = …, watts = …))",
                r.name
            ),
            _ => "the test declares no simulated kernel (sim(seconds = …, watts = …))".into(),
        }
    }

    /// The GPU by its UUID (`GPU-…`) instead of a CUDA ordinal: sets
    /// [`MeasureOptions::device_uuid`] of the options given so far (give it after
    /// [`EnergyBudget::options`], which replaces them).
    pub fn device_uuid(mut self, uuid: &str) -> Self {
        self.options.device_uuid = Some(uuid.to_string());
        self
    }

    /// Checks the budget on the device `ENERGY_DEVICE` and the budget's options select.
    /// Without a GPU, the kernel code runs on the checked device first; then
    /// `Ok(Verdict::CheckedNotMeasured)` when there is no simulated model.
    pub fn check(&self) -> Result<Verdict> {
        let what = format!("energy budget {}", self.name());
        let ordinal = self.options.cuda_device().map_err(|e| e.context(&what))?;
        let mut device = open_device(ordinal).map_err(|e| e.context(&what))?;
        device.check_gpu_required(&what)?;
        let mut rig = Rig::new(&device);
        match self.subject.check(&device, &mut rig)? {
            Readiness::NotRun(reason) => Ok(Verdict::NotRun(reason)),
            Readiness::CheckedNotMeasured { checks, unmodelled } => {
                if crate::kernel::strict_mode() {
                    // An omission, not a declaration: strict mode lets a budget go unmeasured
                    // without a GPU only when it says so (`gpu_only`).
                    return Err(Error::new(
                        ErrorKind::NotChecked,
                        format!(
                            "{}=1: {what} would be checked but not measured without a GPU: {}; give it the \
                             simulated model it lacks so that the simulated GPU measures it, or declare it `gpu_only` \
                             to check it on GPUs only",
                            crate::kernel::STRICT_ENV,
                            self.missing_model(unmodelled)
                        ),
                    ));
                }
                Ok(Verdict::CheckedNotMeasured(format!(
                    "{}, and {}; {}",
                    device.sim_reason().unwrap_or("simulated device"),
                    self.missing_model(unmodelled),
                    checks.line(false)
                )))
            }
            Readiness::Measure { checks, .. } => {
                crate::kernel::note_unchecked(&what, &checks);
                self.measure_on(&mut device, &mut rig)
            }
        }
    }

    /// Checks the budget on `device` (a real GPU, or a simulated one in tests).
    ///
    /// On a real GPU, checks in one process run one at a time (the test harness runs tests
    /// on parallel threads; two kernels measured at once would share the board's power).
    pub fn check_on(&self, device: &mut Device) -> Result<Verdict> {
        let mut rig = Rig::new(device);
        self.measure_on(device, &mut rig)
    }

    /// Measures the kernel (and its reference) in rounds until the interval decides.
    fn measure_on(&self, device: &mut Device, rig: &mut Rig) -> Result<Verdict> {
        static ONE_GPU_MEASUREMENT_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _guard = if device.is_simulated() {
            None
        } else {
            Some(ONE_GPU_MEASUREMENT_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner()))
        };
        let kernel_name = &self.subject.kernel.name;
        let mut kernel = rig.workload(device, &self.subject.kernel, 11)?;
        let mut reference = match self.subject.companion_as(Role::Reference) {
            Some(r) => Some((r.name.clone(), rig.workload(device, r, 12)?)),
            None => None,
        };
        if matches!(self.limit, Limit::Relative(_)) && reference.is_none() {
            return Err(Error::new(ErrorKind::InvalidInput, "a relative budget needs a reference kernel"));
        }
        let options = options_on(device, &self.options);
        let calibration = rig.calibration().cloned();
        let request = |id: &str| {
            MeasureRequest::new(id, options.clone())
                .min_windows(BUDGET_MIN_WINDOWS)
                .calibration(calibration.clone())
                .thermal(rig.thermal().cloned())
        };
        let mut kernel_values = Vec::new();
        let mut reference_values = Vec::new();
        let mut untrusted: Vec<String> = Vec::new();
        let mut round = 0;
        loop {
            round += 1;
            let (m, trace) = measure(device, kernel.as_mut(), request(kernel_name))?;
            kernel_values.extend(m.windows.iter().map(|w| w.energy.energy_j / w.launches as f64));
            untrusted.extend(untrustworthy(&m));
            let trace_path = save(&m, &trace)?;
            if let Some((name, r)) = reference.as_mut() {
                let (rm, rtrace) = measure(device, r.as_mut(), request(name))?;
                reference_values.extend(rm.windows.iter().map(|w| w.energy.energy_j / w.launches as f64));
                untrusted.extend(untrustworthy(&rm));
                save(&rm, &rtrace)?;
            }
            let estimate = self.estimate(&m, &kernel_values, &reference_values)?;
            let decision = decide(&estimate, self.limit_value());
            if decision == Decision::Straddles && round < self.max_rounds {
                continue;
            }
            let report = Report {
                name: kernel_name.clone(),
                limit: self.limit.clone(),
                estimate,
                rounds: round,
                measurement: m,
                trace: Some(trace_path),
                untrusted,
            };
            return Ok(match decision {
                // Failing needs no trust; passing does.
                Decision::Over => Verdict::Fail(report),
                _ if !report.untrusted.is_empty() => Verdict::Inconclusive(report),
                Decision::Within => Verdict::Pass(report),
                Decision::Straddles if self.inconclusive_passes => Verdict::Pass(report),
                Decision::Straddles => Verdict::Inconclusive(report),
            });
        }
    }

    fn limit_value(&self) -> f64 {
        match self.limit {
            Limit::PerLaunch(j) | Limit::PerOp(j) | Limit::PerByte(j) => j.0,
            Limit::Power(w) => w.0,
            Limit::Relative(r) => r,
        }
    }

    /// The quantity the limit applies to, with its interval, from the pooled windows.
    fn estimate(&self, m: &Measurement, kernel: &[f64], reference: &[f64]) -> Result<Estimate> {
        let pooled = Estimate::from_values(kernel)
            .ok_or_else(|| Error::new(ErrorKind::Analysis, "no finite energy in the windows"))?;
        let per = |count: Option<f64>, what: &str| {
            count.filter(|c| energy_units::bounds::is_positive(*c)).and_then(|c| per_unit(&pooled, c)).ok_or_else(
                || {
                    Error::new(
                        ErrorKind::InvalidInput,
                        format!("a per-{what} budget needs the {what} count per launch"),
                    )
                },
            )
        };
        match self.limit {
            Limit::PerLaunch(_) => Ok(pooled),
            Limit::PerOp(_) => per(self.options.ops, "op"),
            Limit::PerByte(_) => per(self.options.bytes, "byte"),
            Limit::Power(_) => Ok(m.power_w),
            Limit::Relative(_) => {
                let r = Estimate::from_values(reference)
                    .ok_or_else(|| Error::new(ErrorKind::Analysis, "no finite energy in the reference windows"))?;
                Ok(ratio(&pooled, &r))
            }
        }
    }
}

/// Ratio of two independent means with a delta-method interval.
fn ratio(a: &Estimate, b: &Estimate) -> Estimate {
    let mean = a.mean / b.mean;
    let se_rel = ((a.std_dev / a.mean).powi(2) / a.n as f64 + (b.std_dev / b.mean).powi(2) / b.n as f64).sqrt();
    let half = student_t_975(a.n.min(b.n).saturating_sub(1)) * se_rel * mean.abs();
    Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: a.n.min(b.n), std_dev: se_rel * mean.abs() }
}

fn untrustworthy(m: &Measurement) -> Vec<String> {
    m.warnings
        .iter()
        .filter(|w| matches!(w.kind, WarningKind::Throttling | WarningKind::TooFewTicks | WarningKind::DroppedReadings))
        .map(|w| w.message.clone())
        .collect()
}

fn save(m: &Measurement, trace: &energy_results::trace::Trace) -> Result<PathBuf> {
    let dir = energy_dir().join("tests");
    let stem = file_stem(&m.id);
    let trace_path = dir.join(format!("{stem}.trace.csv"));
    write_trace(trace, &trace_path)?;
    m.result_file(None).write(&dir.join(format!("{stem}.json")))?;
    Ok(trace_path)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    Within,
    Over,
    Straddles,
}

fn decide(estimate: &Estimate, limit: f64) -> Decision {
    if estimate.ci_high <= limit {
        Decision::Within
    } else if estimate.ci_low > limit {
        Decision::Over
    } else {
        Decision::Straddles
    }
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The kernel.
    pub name: String,
    /// The limit.
    pub limit: Limit,
    /// The limited quantity with its 95 % interval (J, W or a ratio).
    pub estimate: Estimate,
    /// Measurement rounds it took.
    pub rounds: usize,
    /// The last measurement of the kernel.
    pub measurement: Measurement,
    /// Where its trace was saved.
    pub trace: Option<PathBuf>,
    /// Why the measurement cannot be trusted, if it cannot.
    pub untrusted: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.estimate;
        let (what, shown) = match &self.limit {
            Limit::PerLaunch(j) => ("energy per launch", format_si(j.0, "J", 4)),
            Limit::PerOp(j) => ("energy per op", format_si(j.0, "J", 4)),
            Limit::PerByte(j) => ("energy per byte", format_si(j.0, "J", 4)),
            Limit::Power(w) => ("power", format_si(w.0, "W", 4)),
            Limit::Relative(r) => ("energy per launch relative to the reference", format!("{r}×")),
        };
        let value = |v: f64| match self.limit {
            Limit::Power(_) => format_si(v, "W", 4),
            Limit::Relative(_) => format!("{v:.4}×"),
            _ => format_si(v, "J", 4),
        };
        let m = &self.measurement;
        write!(
            f,
            "{}: {what} {} [{} … {}] (95 % CI, {} windows, {} round(s)), budget {shown}; device {} ({}){}; source {} ({}, {})",
            self.name,
            value(e.mean),
            value(e.ci_low),
            value(e.ci_high),
            e.n,
            self.rounds,
            m.device.name,
            m.device.uuid,
            if m.simulated { " [simulated]" } else { "" },
            m.source,
            m.sensor_model,
            m.model_origin
        )?;
        if let Some(t) = &self.trace {
            write!(f, "; trace {}", t.display())?;
        }
        for reason in &self.untrusted {
            write!(f, "; not trusted: {reason}")?;
        }
        // What the figure describes besides the kernel: the host's pace, or a graph's replay.
        if let Some(n) = m.graph_launches {
            write!(f, "; launched as a CUDA graph of {n}, figures per launch")?;
        }
        if let Some(w) = m.warnings.iter().find(|w| w.kind == energy_results::warning::WarningKind::LaunchBound) {
            write!(f, "; {}", w.message)?;
        }
        Ok(())
    }
}

/// The outcome of a budget check.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// The upper end of the interval is within the budget.
    Pass(Report),
    /// The lower end of the interval exceeds the budget.
    Fail(Report),
    /// The interval straddles the budget after every round, or the measurement cannot be trusted.
    Inconclusive(Report),
    /// No GPU and no simulated model: the kernel code ran on the checked device, but
    /// nothing was measured.
    CheckedNotMeasured(String),
    /// No GPU, and code that cannot run without one (declared `gpu_only`, or it asked for
    /// raw cudarc on the checked device): neither checked nor measured. The reason.
    NotRun(String),
}

/// Checks a budget and panics unless it passes (what `#[energy_test]` and
/// [`assert_energy!`](crate::assert_energy) call). A skip prints one line to stderr.
#[track_caller]
pub fn assert_budget(budget: &EnergyBudget) {
    if let Err(failure) = budget_outcome(budget) {
        panic!("{failure}");
    }
}

/// Checks every budget of `budgets` (one per argument of `#[energy_test(args = [...])]`),
/// printing each one's line as [`assert_budget`] does, then panics naming each that failed,
/// was inconclusive or could not be checked.
#[track_caller]
pub fn assert_budgets(budgets: &[EnergyBudget]) {
    let failures: Vec<String> = budgets.iter().filter_map(|b| budget_outcome(b).err()).collect();
    if !failures.is_empty() {
        panic!("{} of {} energy budgets not met:\n{}", failures.len(), budgets.len(), failures.join("\n"));
    }
}

/// One budget's check: its line printed when it passed or was not measured; the panic
/// message when it failed, was inconclusive or could not be checked.
fn budget_outcome(budget: &EnergyBudget) -> std::result::Result<(), String> {
    match budget.check() {
        Ok(Verdict::Pass(report)) => {
            eprintln!("energy budget met: {report}");
            Ok(())
        }
        // Straight to the terminal: the test harness captures `eprintln!` of passing tests,
        // and a skip must show in plain `cargo test` output.
        Ok(Verdict::CheckedNotMeasured(reason)) => {
            use std::io::Write as _;
            let _ =
                writeln!(std::io::stderr().lock(), "checked, not measured: energy budget {}: {reason}", budget.name());
            Ok(())
        }
        Ok(Verdict::NotRun(reason)) => {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr().lock(), "not run: energy budget {}: {reason}", budget.name());
            Ok(())
        }
        Ok(Verdict::Fail(report)) => Err(format!("energy budget exceeded: {report}")),
        Ok(Verdict::Inconclusive(report)) => Err(format!(
            "energy budget inconclusive (the interval straddles the budget or the measurement is not trusted; \
             `inconclusive = \"pass\"` accepts this): {report}"
        )),
        Err(e) => Err(format!("energy budget {} failed: {e}", budget.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(mean: f64, half: f64) -> Estimate {
        Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: 5, std_dev: half / 2.0 }
    }

    #[test]
    fn decision_uses_the_interval() {
        assert_eq!(decide(&est(4.0, 0.5), 5.0), Decision::Within);
        assert_eq!(decide(&est(6.0, 0.5), 5.0), Decision::Over);
        assert_eq!(decide(&est(5.0, 0.5), 5.0), Decision::Straddles);
        assert_eq!(decide(&est(4.6, 0.5), 5.0), Decision::Straddles);
    }

    #[test]
    fn ratio_of_estimates() {
        let a = Estimate::from_values(&[1.2, 1.21, 1.19, 1.2, 1.2]).unwrap();
        let b = Estimate::from_values(&[1.0, 1.01, 0.99, 1.0, 1.0]).unwrap();
        let r = ratio(&a, &b);
        assert!((r.mean - 1.2).abs() < 1e-9);
        assert!(r.ci_low < 1.2 && r.ci_high > 1.2 && r.ci_high - r.ci_low < 0.05);
    }
}
