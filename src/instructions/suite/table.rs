//! Measured kernels and the table: net energy per instruction against its baseline (Arafa), the linearity and ordering checks.

use super::*;

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

/// `a - b` of two independent estimates: the interval half-widths add in quadrature.
pub(super) fn difference(a: &Estimate, b: &Estimate) -> Estimate {
    let half = |e: &Estimate| 0.5 * (e.ci_high - e.ci_low);
    let mean = a.mean - b.mean;
    let h = (half(a).powi(2) + half(b).powi(2)).sqrt();
    Estimate {
        mean,
        ci_low: mean - h,
        ci_high: mean + h,
        n: a.n.min(b.n),
        std_dev: (a.std_dev.powi(2) + b.std_dev.powi(2)).sqrt(),
    }
}

/// The net figures of one kernel against another (its baseline, or the K kernel).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetFigures {
    /// Net energy per thread-instruction, J.
    pub thread_j: Estimate,
    /// Net energy per warp-instruction (32 threads), J.
    pub warp_j: Estimate,
    /// Net energy above active idle per thread-instruction, J.
    pub dynamic_thread_j: Estimate,
    /// Net GPU time per chain step and instruction (the whole GPU running its threads), s.
    pub time_per_instruction_s: f64,
}

pub(super) fn net(with: &KernelRun, without: &KernelRun, instructions_per_iteration: f64) -> NetFigures {
    let per_instruction = 1.0 / (with.facts.threads() * instructions_per_iteration);
    let total = difference(&with.per_iteration(&with.energy_j), &without.per_iteration(&without.energy_j));
    let dynamic = difference(&with.per_iteration(&with.dynamic_j), &without.per_iteration(&without.dynamic_j));
    let time = with.time_s.mean / with.facts.iterations as f64 - without.time_s.mean / without.facts.iterations as f64;
    NetFigures {
        thread_j: total.scaled(per_instruction),
        warp_j: total.scaled(per_instruction * WARP),
        dynamic_thread_j: dynamic.scaled(per_instruction),
        time_per_instruction_s: time / instructions_per_iteration,
    }
}

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
    /// K chain steps against the baseline (Arafa's figure).
    pub net: NetFigures,
    /// 2K chain steps against their baseline, where measured.
    pub net_2k: Option<NetFigures>,
    /// (2K kernel - K kernel) / K steps: free of anything the loop adds once per iteration.
    pub marginal: Option<NetFigures>,
    /// (net at 2K - net at K) / net at K.
    pub linearity: Option<f64>,
    /// The K kernel's launch.
    pub launch: KernelRun,
    /// The baseline it was subtracted against.
    pub baseline: String,
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
    /// Format tag.
    pub format: String,
    /// Whether the figures come from the simulated GPU.
    pub simulated: bool,
    /// The GPU.
    pub device: Option<DeviceFacts>,
    /// When the run ended (RFC 3339).
    pub timestamp: String,
    /// Threads per launch (`full` occupancy or `one`).
    pub threads_mode: String,
    /// Chain steps per iteration of the K kernels.
    pub k: u32,
    /// The rows, by level then catalog order.
    pub rows: Vec<InstructionRow>,
    /// The sanity checks.
    pub checks: Vec<Check>,
    /// Every kernel measured.
    pub kernels: Vec<KernelRun>,
    /// Kernels planned but not measured (filtered out, failed).
    pub missing: Vec<String>,
}

/// Format tag of [`InstructionTable`] JSON.
pub const TABLE_FORMAT: &str = "energy-instructions/1";

/// Builds the table from the measured kernels (any subset of the plan).
pub fn build_table(
    kernels: &[PlannedKernel],
    runs: &BTreeMap<String, KernelRun>,
    options: &SuiteOptions,
) -> (Vec<InstructionRow>, Vec<Check>, Vec<String>) {
    let mut rows = Vec::new();
    for planned in kernels.iter().filter(|k| k.variant == Variant::K1) {
        let instruction = &planned.instruction;
        let level = planned.level;
        let steps = |v: Variant| (v.chain_steps() * instruction.ops_per_step) as f64;
        let (Some(main), Some(base)) =
            (runs.get(&planned.name), runs.get(&baseline_of(instruction, Variant::K1, level)))
        else {
            continue;
        };
        let k2_name = kernel_name(instruction, Variant::K2, level);
        let k2 = runs.get(&k2_name);
        let base2 = runs.get(&baseline_of(instruction, Variant::K2, level));
        let figures = net(main, base, steps(Variant::K1));
        let net_2k = match (k2, base2) {
            (Some(k2), Some(b2)) => Some(net(k2, b2, steps(Variant::K2))),
            _ => None,
        };
        // The marginal figure: both kernels' per-iteration energies, differing by K steps
        // (and, with a helper, by K helpers: its baselines' difference takes those out).
        let marginal = match (k2, base2) {
            (Some(k2), Some(b2)) if instruction.helper.is_some() => {
                let helpers = net(b2, base, 1.0);
                let mut m = net(k2, main, steps(Variant::K1));
                let h_per = 1.0 / steps(Variant::K1);
                m.thread_j = difference(&m.thread_j, &helpers.thread_j.scaled(h_per));
                m.warp_j = difference(&m.warp_j, &helpers.warp_j.scaled(h_per));
                m.dynamic_thread_j = difference(&m.dynamic_thread_j, &helpers.dynamic_thread_j.scaled(h_per));
                m.time_per_instruction_s -= helpers.time_per_instruction_s * h_per;
                Some(m)
            }
            (Some(k2), Some(_)) => Some(net(k2, main, steps(Variant::K1))),
            _ => None,
        };
        let linearity = net_2k.as_ref().map(|n2| (n2.thread_j.mean - figures.thread_j.mean) / figures.thread_j.mean);
        rows.push(InstructionRow {
            label: instruction.label.to_string(),
            stem: instruction.stem.to_string(),
            category: instruction.category,
            level: level_name(level),
            ops_per_step: instruction.ops_per_step,
            net: figures,
            net_2k,
            marginal,
            linearity,
            launch: main.clone(),
            baseline: base.name.clone(),
        });
    }
    let checks = options.levels.iter().flat_map(|&level| checks(&rows, &level_name(level))).collect();
    let missing = kernels.iter().filter(|k| !runs.contains_key(&k.name)).map(|k| k.name.clone()).collect();
    (rows, checks, missing)
}

pub(super) fn pj(e: &Estimate) -> String {
    format!("{:.2} pJ [{:.2}, {:.2}]", e.mean * 1e12, e.ci_low * 1e12, e.ci_high * 1e12)
}

/// The sanity checks of one level: div/rem >> add; fp64 > fp32 > f16x2 per operation;
/// energy linear in K.
pub fn checks(rows: &[InstructionRow], level: &str) -> Vec<Check> {
    let find = |stem: &str| rows.iter().find(|r| r.stem == stem && r.level == level);
    let mut out = Vec::new();
    // div/rem >> add.
    let add = find("add_u32");
    for stem in ["div_u32", "div_s32", "rem_u32", "rem_s32", "div_u64", "div_s64", "rem_u64", "rem_s64"] {
        let row = find(stem);
        let (holds, detail) = match (row, add) {
            (Some(r), Some(a)) => {
                let ratio = r.net.thread_j.mean / a.net.thread_j.mean;
                (
                    Some(ratio >= DIVISION_OVER_ADD),
                    format!(
                        "{} / add.u32 = {ratio:.1} ({} against {})",
                        r.label,
                        pj(&r.net.thread_j),
                        pj(&a.net.thread_j)
                    ),
                )
            }
            _ => (None, "not measured".to_string()),
        };
        let label = row.map(|r| r.label.clone()).unwrap_or_else(|| stem.replace('_', "."));
        out.push(Check {
            name: format!("{label} >> add.u32 (at least {DIVISION_OVER_ADD}x)"),
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
        let per_op = |stem: &str, ops: f64| find(stem).map(|r| r.net.thread_j.scaled(1.0 / ops));
        let (d, s, h2) = (per_op(f64_stem, 1.0), per_op(f32_stem, 1.0), per_op(f16x2_stem, 2.0));
        let mut push = |name: String, holds: Option<bool>, detail: String| {
            out.push(Check { name, level: level.into(), holds, detail })
        };
        match (d, s, h2) {
            (Some(d), Some(s), Some(h2)) => push(
                format!("{op}: fp64 > fp32 > fp16 per operation (f16x2: two per instruction)"),
                Some(d.mean > s.mean && s.mean > h2.mean),
                format!("fp64 {}, fp32 {}, fp16 (f16x2) {} per operation", pj(&d), pj(&s), pj(&h2)),
            ),
            _ => push(format!("{op}: fp64 > fp32 > fp16 per operation"), None, "not all measured".into()),
        }
    }
    // Linearity in K.
    let measured: Vec<&InstructionRow> = rows.iter().filter(|r| r.level == level && r.linearity.is_some()).collect();
    if !measured.is_empty() {
        let off: Vec<String> = measured
            .iter()
            .filter(|r| r.linearity.is_some_and(|l| l.abs() > LINEARITY_TOLERANCE))
            .map(|r| format!("{} {:+.1} %", r.label, r.linearity.unwrap_or(0.0) * 100.0))
            .collect();
        out.push(Check {
            name: format!("K and 2K agree within {:.0} % per instruction", LINEARITY_TOLERANCE * 100.0),
            level: level.into(),
            holds: Some(off.is_empty()),
            detail: if off.is_empty() {
                format!("all {} instructions", measured.len())
            } else {
                format!("{} of {} agree; not: {}", measured.len() - off.len(), measured.len(), off.join(", "))
            },
        });
    }
    out
}
