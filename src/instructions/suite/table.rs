//! Measured kernels and the table: net energy per instruction against its baseline (Arafa), the linearity and ordering checks.

use super::*;
use energy_harness::unstable::engine::difference;

/// One measured kernel, as the table uses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRun {
    /// Benchmark name.
    pub name: String,
    /// Setup facts (size, verification).
    pub facts: LaunchFacts,
    /// Energy per launch, J.
    pub energy_j: Estimate,
    /// Energy above active idle per launch, J.
    pub dynamic_j: Estimate,
    /// GPU time per launch, s.
    pub time_s: Estimate,
    /// Mean power, W.
    pub power_w: Estimate,
    /// Launches per window.
    pub launches_per_window: u64,
    /// Windows.
    pub windows: usize,
    /// SM clock during the windows, MHz (mean of the windows' readings).
    pub sm_clock_mhz: Option<f64>,
    /// The engine's warnings.
    pub warnings: Vec<String>,
}

impl KernelRun {
    /// From a measurement and the kernel's setup facts.
    pub fn new(name: &str, facts: LaunchFacts, m: &Measurement) -> KernelRun {
        let clocks: Vec<f64> = m.windows.iter().filter_map(|w| w.sm_clock_mhz.map(f64::from)).collect();
        KernelRun {
            name: name.to_string(),
            facts,
            energy_j: m.energy_j,
            dynamic_j: m.dynamic_j,
            time_s: m.time_s,
            power_w: m.power_w,
            launches_per_window: m.launches_per_window,
            windows: m.windows.len(),
            sm_clock_mhz: (!clocks.is_empty()).then(|| clocks.iter().sum::<f64>() / clocks.len() as f64),
            warnings: m.warnings.iter().map(|w| w.message.clone()).collect(),
        }
    }

    fn per_iteration(&self, e: &Estimate) -> Estimate {
        e.scaled(1.0 / self.facts.iterations as f64)
    }
}

/// Arafa's net figures of one kernel against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetFigures {
    /// Net energy per thread-instruction, J.
    pub thread_j: Estimate,
    /// Net energy per warp-instruction (32 threads, or the launch's threads when fewer: one
    /// thread's warp-instruction is one thread-instruction), J.
    pub warp_j: Estimate,
    /// Net energy above active idle per thread-instruction, J.
    pub dynamic_thread_j: Estimate,
    /// Net energy above active idle per warp-instruction, J.
    pub dynamic_warp_j: Estimate,
    /// Net GPU time per chain step and instruction (the whole GPU running its threads), s.
    pub time_per_instruction_s: f64,
}

/// Net figures per instruction: the two kernels' figures per loop iteration, the
/// difference the engine's ([`difference`], as the bench glue's net energy), per thread-
/// and warp-instruction.
pub(super) fn net(with: &KernelRun, without: &KernelRun, instructions_per_iteration: f64) -> NetFigures {
    let per_instruction = 1.0 / (with.facts.threads() * instructions_per_iteration);
    let lanes = lanes_per_warp(with.facts.threads());
    let total = difference(&with.per_iteration(&with.energy_j), &without.per_iteration(&without.energy_j));
    let dynamic = difference(&with.per_iteration(&with.dynamic_j), &without.per_iteration(&without.dynamic_j));
    let time = with.time_s.mean / with.facts.iterations as f64 - without.time_s.mean / without.facts.iterations as f64;
    NetFigures {
        thread_j: total.scaled(per_instruction),
        warp_j: total.scaled(per_instruction * lanes),
        dynamic_thread_j: dynamic.scaled(per_instruction),
        dynamic_warp_j: dynamic.scaled(per_instruction * lanes),
        time_per_instruction_s: time / instructions_per_iteration,
    }
}

/// Thread-instructions in one warp-instruction of a launch of `threads` threads: 32, or
/// the threads themselves when fewer (a launch of one thread issues warp-instructions of
/// one active lane: per warp is per thread, not 32 times it).
pub fn lanes_per_warp(threads: f64) -> f64 {
    threads.clamp(1.0, WARP)
}

/// The least-squares slope of `points` (x, y with its 95 % interval) and its r². The
/// slope's 95 % half-width combines in quadrature the residuals' (Student t, n - 2 degrees
/// of freedom) and the points' own intervals carried through the fit's weights, so a line
/// that fits five points perfectly is still no more precise than its points; `None` with
/// fewer than three points.
pub fn slope_of(points: &[(f64, Estimate)]) -> Option<(Estimate, f64)> {
    let xy: Vec<(f64, f64)> = points.iter().map(|(x, e)| (*x, e.mean)).collect();
    let fit = crate::common::fit_line(&xy)?;
    let n = points.len() as f64;
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let carried: f64 =
        points.iter().map(|(x, e)| ((x - mx) / sxx * 0.5 * (e.ci_high - e.ci_low)).powi(2)).sum::<f64>().sqrt();
    let residual = 0.5 * (fit.slope_ci.1 - fit.slope_ci.0);
    let half = (residual.powi(2) + carried.powi(2)).sqrt();
    let estimate = Estimate {
        mean: fit.slope,
        ci_low: fit.slope - half,
        ci_high: fit.slope + half,
        n: points.len(),
        std_dev: half / energy_results::stats::student_t_975(points.len().saturating_sub(2).max(1)),
    };
    Some((estimate, fit.r2))
}

/// Energy and time per instruction from the slope over the chain lengths.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlopeFigures {
    /// Energy per thread-instruction, J: the slope of energy per thread and iteration over
    /// the instructions per iteration, the helper's own slope taken out.
    pub thread_j: Estimate,
    /// Per warp-instruction (32 threads), J.
    pub warp_j: Estimate,
    /// Energy above active idle per thread-instruction, J: the figure to compare across
    /// boards (static power, which differs from board to board, is left out).
    pub dynamic_thread_j: Estimate,
    /// Above active idle per warp-instruction, J.
    pub dynamic_warp_j: Estimate,
    /// Grid time per instruction, s: the slope of a loop iteration's GPU time (the whole
    /// grid) over the instructions per iteration. For a chain with a helper it includes the
    /// helper ([`SlopeFigures::time_includes_helper`]): times do not subtract where the two
    /// issue to different pipes and overlap.
    pub time_per_instruction_s: Estimate,
    /// Whether the time includes the helper's.
    #[serde(default)]
    pub time_includes_helper: bool,
    /// r² of the energy fit of the chain kernels.
    pub r2: f64,
    /// r² of the dynamic-energy fit.
    pub dynamic_r2: f64,
    /// Chain lengths fitted.
    pub k_values: Vec<u32>,
    /// The helper's own energy per statement, J per thread, where one was taken out.
    pub helper_thread_j: Option<Estimate>,
}

/// The bound check of one row: the time per instruction measured against the least the
/// SM's issue and pipe rates allow for the SASS that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundCheck {
    /// SASS per chain step by pipe (`issue`: all), `(longest chain loop - loop alone) / K`.
    pub per_step_pipes: BTreeMap<String, f64>,
    /// SASS per chain step by class.
    pub per_step_classes: BTreeMap<String, f64>,
    /// What binds: `issue` or a pipe.
    pub binding: String,
    /// The least grid time per measured PTX instruction, s (helper included, as measured).
    pub bound_s: f64,
    /// The measured grid time per PTX instruction, s: the chain kernels' slope, helper
    /// included (the same code the bound is computed for).
    pub measured_s: Estimate,
    /// The SM clock the bound assumes, MHz: the highest mean clock of the chain kernels.
    pub clock_mhz: f64,
    /// Whether the measured time is at or above the bound (within [`BOUND_TOLERANCE`]).
    pub holds: bool,
}

/// How far below the bound a measured time may fall before it is a violation: the SM clock
/// is read as a mean over windows, and one reading can be a step off the true clock.
pub const BOUND_TOLERANCE: f64 = 0.01;

/// One row of the table: an instruction at a level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstructionRow {
    /// The PTX instruction(s).
    pub label: String,
    /// File stem.
    pub stem: String,
    /// Family.
    pub category: Category,
    /// JIT level.
    pub level: String,
    /// Measured PTX instructions per chain step.
    pub ops_per_step: u32,
    /// The figures from the slope over K (at least three chain lengths).
    pub slope: Option<SlopeFigures>,
    /// Arafa's figures: the chain at [`InstructionRow::net_k`] against its baseline.
    pub net: Option<NetFigures>,
    /// The chain length of `net` and `launch`.
    pub net_k: u32,
    /// (net − slope) / slope, total energy.
    pub net_over_slope: Option<f64>,
    /// The launch of the chain at `net_k` (or the longest measured).
    pub launch: KernelRun,
    /// The baseline of `net`.
    pub baseline: String,
    /// The bound check, where the SASS was read.
    pub bound: Option<BoundCheck>,
    /// Why the figures are not published, when they are not (a time faster than the
    /// hardware allows).
    pub withheld: Option<String>,
}

/// One sanity check of the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// JIT level.
    pub level: String,
    /// Whether it holds (`None`: a figure it needs was not measured).
    pub holds: Option<bool>,
    /// The figures behind it.
    pub detail: String,
}

/// The suite's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstructionTable {
    /// Schema tag ([`TABLE_SCHEMA`]).
    pub format: String,
    /// Whether the figures come from the simulated GPU.
    pub simulated: bool,
    /// The GPU.
    pub device: Option<DeviceFacts>,
    /// When the run ended (RFC 3339).
    pub timestamp: String,
    /// Threads per launch (`full` occupancy or `one`).
    pub threads_mode: String,
    /// Chain lengths measured.
    pub k_values: Vec<u32>,
    /// The rows, by level then catalog order.
    pub rows: Vec<InstructionRow>,
    /// The sanity checks.
    pub checks: Vec<Check>,
    /// Every kernel measured.
    pub kernels: Vec<KernelRun>,
    /// Kernels planned but not measured (filtered out, failed).
    pub missing: Vec<String>,
}

/// The schema tag of [`InstructionTable`] JSON.
pub const TABLE_SCHEMA: &str = "energy-instructions/2";

fn per_thread_iteration(run: &KernelRun, e: &Estimate) -> Estimate {
    e.scaled(1.0 / (run.facts.iterations as f64 * run.facts.threads()))
}

fn per_iteration_time(run: &KernelRun) -> Estimate {
    run.time_s.scaled(1.0 / run.facts.iterations as f64)
}

/// Fits energy, dynamic energy and time per iteration over `x` (instructions or helpers
/// per iteration) for `runs`.
fn fit_runs(runs: &[(f64, &KernelRun)]) -> Option<[(Estimate, f64); 3]> {
    let energy: Vec<(f64, Estimate)> = runs.iter().map(|(x, r)| (*x, per_thread_iteration(r, &r.energy_j))).collect();
    let dynamic: Vec<(f64, Estimate)> = runs.iter().map(|(x, r)| (*x, per_thread_iteration(r, &r.dynamic_j))).collect();
    let time: Vec<(f64, Estimate)> = runs.iter().map(|(x, r)| (*x, per_iteration_time(r))).collect();
    Some([slope_of(&energy)?, slope_of(&dynamic)?, slope_of(&time)?])
}

/// The bound check of an instruction at a level, from the SASS of its longest chain kernel
/// and of the loop alone.
fn bound_check(instruction: &Instruction, chains: &[(u32, &KernelRun)], base: &KernelRun) -> Option<BoundCheck> {
    let (k, longest) = chains.iter().max_by_key(|(k, _)| *k)?;
    let (code, base_code) = (&longest.facts.machine_code, &base.facts.machine_code);
    if !code.loop_was_read() || !base_code.loop_was_read() || chains.len() < 3 {
        return None;
    }
    let steps = f64::from(*k);
    let per_step_pipes = crate::instructions::bound::per_step(&code.loop_pipes, &base_code.loop_pipes, steps);
    let per_step_classes = crate::instructions::bound::per_step(&code.loop_classes, &base_code.loop_classes, steps);
    if crate::instructions::bound::has_control_flow(&per_step_classes) {
        // Which instructions of the step run depends on the data: no lower bound from them.
        return None;
    }
    let facts = &longest.facts;
    let sms = f64::from(facts.sm_count.max(1));
    let warps_per_sm = if facts.threads() >= 32.0 * sms { facts.threads() / WARP / sms } else { 1.0 };
    let step = crate::instructions::bound::step_bound(&per_step_pipes, warps_per_sm);
    let clock_mhz = chains.iter().filter_map(|(_, r)| r.sm_clock_mhz).fold(f64::NAN, f64::max);
    if !clock_mhz.is_finite() || clock_mhz <= 0.0 {
        return None;
    }
    let ops = f64::from(instruction.ops_per_step);
    let bound_s = step.cycles_per_step / (clock_mhz * 1e6) / ops;
    let raw: Vec<(f64, Estimate)> = chains.iter().map(|(k, r)| (f64::from(*k) * ops, per_iteration_time(r))).collect();
    let (measured_s, _) = slope_of(&raw)?;
    let holds = measured_s.ci_high >= bound_s * (1.0 - BOUND_TOLERANCE);
    Some(BoundCheck { per_step_pipes, per_step_classes, binding: step.binding, bound_s, measured_s, clock_mhz, holds })
}

/// Builds the table from the measured kernels (any subset of the plan).
pub fn build_table(
    kernels: &[PlannedKernel],
    runs: &BTreeMap<String, KernelRun>,
    options: &SuiteOptions,
) -> (Vec<InstructionRow>, Vec<Check>, Vec<String>) {
    let mut rows = Vec::new();
    let mut seen: Vec<(String, JitOptLevel)> = Vec::new();
    for planned in kernels.iter().filter(|k| matches!(k.variant, Variant::Chain(_))) {
        let instruction = &planned.instruction;
        let level = planned.level;
        if seen.contains(&(instruction.stem.to_string(), level)) {
            continue;
        }
        seen.push((instruction.stem.to_string(), level));
        let ops = f64::from(instruction.ops_per_step);
        let chains: Vec<(u32, &KernelRun)> = options
            .k_values
            .iter()
            .filter_map(|&k| runs.get(&kernel_name(instruction, Variant::Chain(k), level)).map(|r| (k, r)))
            .collect();
        let Some(base) = runs.get(&baseline_name(instruction, Variant::Base, level)) else { continue };
        let Some(&(launch_k, launch)) =
            chains.iter().find(|(k, _)| *k == options.net_k()).or_else(|| chains.iter().max_by_key(|(k, _)| *k))
        else {
            continue;
        };
        // Arafa's net figure at the launch's K, against its baseline.
        let baseline = baseline_of(instruction, Variant::Chain(launch_k), level);
        let net_figures = runs.get(&baseline).map(|b| net(launch, b, f64::from(launch_k) * ops));
        // The slope over K, the helper's own slope taken out.
        let fitted: Vec<(f64, &KernelRun)> = chains.iter().map(|(k, r)| (f64::from(*k) * ops, *r)).collect();
        let helpers: Vec<(f64, &KernelRun)> = options
            .helper_k_values()
            .iter()
            .filter_map(|&k| runs.get(&kernel_name(instruction, Variant::Helpers(k), level)).map(|r| (f64::from(k), r)))
            .collect();
        let slope = fit_runs(&fitted).and_then(|[(e, r2), (d, dr2), (t, _)]| {
            let (e, d, t, helper) = if instruction.helper.is_some() {
                // Per step: chain slope x ops - helper slope; per instruction: / ops.
                let [(he, _), (hd, _), _] = fit_runs(&helpers)?;
                let take = |c: &Estimate, h: &Estimate| difference(c, &h.scaled(1.0 / ops));
                (take(&e, &he), take(&d, &hd), t, Some(he))
            } else {
                (e, d, t, None)
            };
            let lanes = lanes_per_warp(launch.facts.threads());
            Some(SlopeFigures {
                warp_j: e.scaled(lanes),
                dynamic_warp_j: d.scaled(lanes),
                thread_j: e,
                dynamic_thread_j: d,
                time_per_instruction_s: t,
                time_includes_helper: helper.is_some(),
                r2,
                dynamic_r2: dr2,
                k_values: chains.iter().map(|(k, _)| *k).collect(),
                helper_thread_j: helper,
            })
        });
        let net_over_slope = match (&slope, &net_figures) {
            (Some(s), Some(n)) if s.thread_j.mean != 0.0 => Some((n.thread_j.mean - s.thread_j.mean) / s.thread_j.mean),
            _ => None,
        };
        let bound = bound_check(instruction, &chains, base);
        let withheld = bound.as_ref().filter(|b| !b.holds).map(|b| {
            format!(
                "measured {:.2} ns per instruction, below the {:.2} ns the SM allows ({} bound at {:.0} MHz for {} per step)",
                b.measured_s.mean * 1e9,
                b.bound_s * 1e9,
                b.binding,
                b.clock_mhz,
                crate::sass::describe_counts(&b.per_step_classes)
            )
        });
        rows.push(InstructionRow {
            label: instruction.label.to_string(),
            stem: instruction.stem.to_string(),
            category: instruction.category,
            level: level_name(level),
            ops_per_step: instruction.ops_per_step,
            slope,
            net: net_figures,
            net_k: launch_k,
            net_over_slope,
            launch: launch.clone(),
            baseline,
            bound,
            withheld,
        });
    }
    let checks = options.levels.iter().flat_map(|&level| checks(&rows, &level_name(level))).collect();
    let missing = kernels.iter().filter(|k| !runs.contains_key(&k.name)).map(|k| k.name.clone()).collect();
    (rows, checks, missing)
}

pub(super) fn pj(e: &Estimate) -> String {
    format!("{:.2} pJ [{:.2}, {:.2}]", e.mean * 1e12, e.ci_low * 1e12, e.ci_high * 1e12)
}

impl InstructionRow {
    /// The figure the checks compare: dynamic energy per thread-instruction from the slope,
    /// else Arafa's net dynamic figure (one chain length measured); `None` when withheld.
    pub fn dynamic_j(&self) -> Option<Estimate> {
        if self.withheld.is_some() {
            return None;
        }
        self.slope.as_ref().map(|s| s.dynamic_thread_j).or_else(|| self.net.as_ref().map(|n| n.dynamic_thread_j))
    }
}

/// The sanity checks of one level, on dynamic energy (static power is the same for every
/// instruction and says nothing of its datapath): div/rem >> add; fp64 > fp32 > f16x2 per
/// operation; switching operands cost more than constant ones; energy grows linearly with
/// K; no time per instruction below the hardware's bound.
pub fn checks(rows: &[InstructionRow], level: &str) -> Vec<Check> {
    let find = |stem: &str| rows.iter().find(|r| r.stem == stem && r.level == level);
    let dynamic = |stem: &str| find(stem).and_then(|r| r.dynamic_j());
    let mut out = Vec::new();
    // div/rem >> add.
    let add = dynamic("add_u32");
    for stem in ["div_u32", "div_s32", "rem_u32", "rem_s32", "div_u64", "div_s64", "rem_u64", "rem_s64"] {
        let label = find(stem).map(|r| r.label.clone()).unwrap_or_else(|| stem.replace('_', "."));
        let (holds, detail) = match (dynamic(stem), add) {
            (Some(r), Some(a)) => {
                let ratio = r.mean / a.mean;
                (
                    Some(ratio >= DIVISION_OVER_ADD),
                    format!("{label} / add.u32 = {ratio:.1} ({} against {})", pj(&r), pj(&a)),
                )
            }
            _ => (None, "not measured".to_string()),
        };
        out.push(Check {
            name: format!("{label} >> add.u32 (at least {DIVISION_OVER_ADD}x, dynamic)"),
            level: level.into(),
            holds,
            detail,
        });
    }
    // fp64 > fp32 > fp16 per operation, by datapath width: a packed f16x2 instruction does
    // two operations in one issue slot. Scalar f16 against f32 is not checked: it issues in
    // the same slot as f32, and Arafa et al.'s Table I claims no order between them (on the
    // TITAN V its FP16 add/sub/mul cost more per warp instruction than FP32 add: 0.0924
    // against 0.0064 nJ, optimized).
    for (op, f64_stem, f32_stem, f16x2_stem) in [
        ("add", "add_f64", "add_f32", "add_f16x2"),
        ("mul", "mul_f64", "mul_f32", "mul_f16x2"),
        ("fma", "fma_f64", "fma_f32", "fma_f16x2"),
    ] {
        let per_op = |stem: &str, ops: f64| dynamic(stem).map(|e| e.scaled(1.0 / ops));
        let (d, s, h2) = (per_op(f64_stem, 1.0), per_op(f32_stem, 1.0), per_op(f16x2_stem, 2.0));
        let name = format!("{op}: fp64 > fp32 > fp16 per operation (f16x2: two per instruction; dynamic)");
        match (d, s, h2) {
            (Some(d), Some(s), Some(h2)) => out.push(Check {
                name,
                level: level.into(),
                holds: Some(d.mean > s.mean && s.mean > h2.mean),
                detail: format!("fp64 {}, fp32 {}, fp16 (f16x2) {} per operation", pj(&d), pj(&s), pj(&h2)),
            }),
            _ => out.push(Check { name, level: level.into(), holds: None, detail: "not all measured".into() }),
        }
    }
    // Switching operands against constant ones.
    let pairs: Vec<(String, Estimate, Estimate)> = rows
        .iter()
        .filter(|r| r.level == level && r.stem.ends_with("_quiet"))
        .filter_map(|q| {
            let switching = dynamic(q.stem.trim_end_matches("_quiet"))?;
            Some((q.label.replace(" (constant operands)", ""), switching, q.dynamic_j()?))
        })
        .collect();
    if !pairs.is_empty() {
        // Fails only where switching operands cost significantly less (intervals apart);
        // overlapping intervals are said, not counted against it.
        let cheaper = pairs.iter().filter(|(_, s, q)| s.ci_high < q.ci_low).count();
        out.push(Check {
            name: "switching operands cost at least what constant ones do (dynamic)".into(),
            level: level.into(),
            holds: Some(cheaper == 0),
            detail: pairs
                .iter()
                .map(|(l, s, q)| {
                    let verdict = if s.ci_low > q.ci_high {
                        "more"
                    } else if s.ci_high < q.ci_low {
                        "LESS"
                    } else {
                        "within intervals"
                    };
                    format!("{l}: {} against {} ({:.2}x, {verdict})", pj(s), pj(q), s.mean / q.mean)
                })
                .collect::<Vec<_>>()
                .join("; ")
                + &switching_range(&pairs),
        });
    }

    // A straight line over K.
    let fitted: Vec<&InstructionRow> = rows.iter().filter(|r| r.level == level && r.slope.is_some()).collect();
    if !fitted.is_empty() {
        let off: Vec<String> = fitted
            .iter()
            .filter_map(|r| r.slope.as_ref().filter(|s| s.r2 < MIN_R2).map(|s| format!("{} r² {:.4}", r.label, s.r2)))
            .collect();
        out.push(Check {
            name: format!("energy per iteration linear in K (r² at least {MIN_R2})"),
            level: level.into(),
            holds: Some(off.is_empty()),
            detail: if off.is_empty() {
                format!("all {} instructions", fitted.len())
            } else {
                format!("{} of {} hold; not: {}", fitted.len() - off.len(), fitted.len(), off.join(", "))
            },
        });
    }
    // The hardware's bound.
    let bounded: Vec<&InstructionRow> = rows.iter().filter(|r| r.level == level && r.bound.is_some()).collect();
    let unread = rows.iter().filter(|r| r.level == level && r.bound.is_none()).count();
    if !bounded.is_empty() || unread > 0 {
        let off: Vec<String> = bounded
            .iter()
            .filter_map(|r| {
                r.bound
                    .as_ref()
                    .filter(|b| !b.holds)
                    .map(|b| format!("{} {:.2} < {:.2} ns", r.label, b.measured_s.mean * 1e9, b.bound_s * 1e9))
            })
            .collect();
        // Rows that hold only by the tolerance: their whole interval lies below the bound.
        let by_tolerance: Vec<String> = bounded
            .iter()
            .filter_map(|r| {
                let b = r.bound.as_ref().filter(|b| b.holds && b.measured_s.ci_high < b.bound_s)?;
                Some(format!(
                    "{} {:.2} [{:.2}, {:.2}] < {:.2} ns ({:+.2} %)",
                    r.label,
                    b.measured_s.mean * 1e9,
                    b.measured_s.ci_low * 1e9,
                    b.measured_s.ci_high * 1e9,
                    b.bound_s * 1e9,
                    (b.measured_s.mean / b.bound_s - 1.0) * 100.0
                ))
            })
            .collect();
        out.push(Check {
            name: "time per instruction at or above the SM's throughput bound".into(),
            level: level.into(),
            holds: if bounded.is_empty() { None } else { Some(off.is_empty()) },
            detail: format!(
                "{} checked{}{}{}",
                bounded.len(),
                if by_tolerance.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; holds only within the {:.0} % clock tolerance (interval below the bound): {}. The tolerance \
                         covers the SM clock the bound assumes: the mean of the windows' clock readings, which can sit a \
                         clock step off the clock the SM ran at; it does not cover a pipe faster than its published rate",
                        BOUND_TOLERANCE * 100.0,
                        by_tolerance.join(", ")
                    )
                },
                if off.is_empty() {
                    String::new()
                } else {
                    format!("; below the bound (withheld): {}", off.join(", "))
                },
                if unread > 0 {
                    format!("; {unread} without SASS read or too few chain lengths")
                } else {
                    String::new()
                }
            ),
        });
    }
    out
}

/// The range of the switching-to-constant ratios over `pairs` (label, switching, constant).
fn switching_range(pairs: &[(String, Estimate, Estimate)]) -> String {
    let ratios: Vec<f64> = pairs.iter().map(|(_, s, q)| s.mean / q.mean).collect();
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if ratios.is_empty() {
        String::new()
    } else {
        format!("; range {lo:.2}x to {hi:.2}x over {} pairs", ratios.len())
    }
}
