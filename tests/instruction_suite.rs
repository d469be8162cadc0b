//! The instruction suite's figures from measurements: on the simulated H100 (which knows
//! the truth) the energy per instruction comes back from the slope over K within its
//! interval, whatever the loop costs once per iteration; the plan, the bound check, the
//! checks and the merging of partial runs behave as documented. Simulated.

use std::collections::BTreeMap;

use energy_harness::unstable::device::{SimKernel, SimPreset};
use energy_harness::unstable::engine::{measure, MeasureRequest};
use energy_harness::unstable::engine::{virtual_sim_device, SimWorkload};
use energy_harness::Estimate;
use energy_harness::JitOptLevel;
use kernel_energy::instructions::suite::{
    build_table, checks, load_records, plan, ptx_hash, read_table, save_record, slope_of, table_from_records,
    write_table, InstructionTable, KernelRecord, KernelRun, LaunchFacts, MachineCode, SuiteOptions, RECORD_SCHEMA,
    TABLE_SCHEMA,
};
use kernel_energy::instructions::{catalog, Variant, K_NET, K_SWEEP};

const THREADS_PER_LAUNCH: u32 = 132 * 8 * 256;

fn facts(iterations: u32) -> LaunchFacts {
    LaunchFacts {
        iterations,
        blocks: 132 * 8,
        threads_per_block: 256,
        resident_blocks_per_sm: 8,
        verified_threads: 3,
        verify_iterations: 64,
        toggles_per_instruction: 16.0,
        sm_count: 132,
        machine_code: MachineCode::default(),
    }
}

/// A kernel of `iterations` loop iterations costing `per_iteration_j` each, at `watts`.
fn sim_kernel(iterations: u32, per_iteration_j: f64, watts: f64) -> SimKernel {
    let energy = iterations as f64 * per_iteration_j;
    SimKernel::new(energy / watts, watts)
}

fn measure_kernel(name: &str, iterations: u32, per_iteration_j: f64, watts: f64) -> KernelRun {
    let (mut device, gpu) = virtual_sim_device(SimPreset::h100());
    let mut workload = SimWorkload::new(gpu, sim_kernel(iterations, per_iteration_j, watts)).with_time_jitter(0.001, 7);
    // The suites' own options, as their benchmarks run.
    let request = MeasureRequest::new(name, kernel_energy::common::suite_measure_options()).min_windows(10);
    let (m, _) = measure(&mut device, &mut workload, request).expect("simulated measurement");
    KernelRun::new(name, facts(iterations), &m)
}

fn options_o4() -> SuiteOptions {
    SuiteOptions { levels: vec![JitOptLevel::O4], ..SuiteOptions::default() }
}

#[test]
fn energy_per_instruction_comes_back_from_the_slope_whatever_the_loop_costs() {
    // Truth: 5 pJ per thread-instruction. The loop costs 20 uJ per iteration (per launch)
    // alone, but 8 uJ of that hides under the chain once there is one (a saturated pipe
    // overlapping the loop's own instructions): the net figure against the baseline is
    // then low, the slope is not.
    let per_instruction = 5e-12;
    let chain = |steps: u32| steps as f64 * THREADS_PER_LAUNCH as f64 * per_instruction;
    let add = catalog().into_iter().find(|i| i.stem == "add_u32").unwrap();
    let options = options_o4();
    let kernels: Vec<_> = plan(&options, std::slice::from_ref(&add));
    assert_eq!(kernels.len(), K_SWEEP.len() + 1, "the chain at every K and the shared baseline");
    let mut runs = BTreeMap::new();
    for k in &kernels {
        let run = match k.variant {
            Variant::Chain(steps) => {
                let iterations = 1_600_000 / (steps + 4);
                measure_kernel(&k.name, iterations, 12e-6 + chain(steps), 300.0)
            }
            _ => measure_kernel(&k.name, 200_000, 20e-6, 250.0),
        };
        runs.insert(k.name.clone(), run);
    }
    let (rows, found_checks, missing) = build_table(&kernels, &runs, &options);
    assert!(missing.is_empty());
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let slope = row.slope.as_ref().expect("five chain lengths measured");
    let e = slope.thread_j;
    assert!(
        e.ci_low <= per_instruction && per_instruction <= e.ci_high,
        "slope {:.4} pJ [{:.4}, {:.4}] against the truth {:.4} pJ",
        e.mean * 1e12,
        e.ci_low * 1e12,
        e.ci_high * 1e12,
        per_instruction * 1e12
    );
    assert!((e.mean - per_instruction).abs() < 0.02 * per_instruction);
    assert!(slope.r2 > 0.999, "r² {}", slope.r2);
    assert!((slope.warp_j.mean / e.mean - 32.0).abs() < 1e-9, "per warp is 32 threads");
    // Arafa's net figure at K = 32 carries the hidden 8 uJ: 8e-6 / (32 x threads) low.
    let net = row.net.as_ref().expect("baseline measured").thread_j.mean;
    let hidden = 8e-6 / (f64::from(K_NET) * THREADS_PER_LAUNCH as f64);
    assert!((net - (per_instruction - hidden)).abs() < 0.03 * per_instruction, "net {net:e}");
    assert!(row.net_over_slope.unwrap() < -0.1, "the two are reported side by side and differ here");
    let linear = found_checks.iter().find(|c| c.name.starts_with("energy per iteration linear in K")).unwrap();
    assert_eq!(linear.holds, Some(true));
    assert!(found_checks.iter().filter(|c| c.name.contains(">>")).all(|c| c.holds.is_none()));
    // No SASS was read here: no bound is claimed.
    assert!(row.bound.is_none() && row.withheld.is_none());
}

#[test]
fn a_chain_that_is_not_linear_fails_the_check() {
    // Each instruction costs more the longer the chain (5 pJ at K = 8, 9 pJ at K = 128).
    let add = catalog().into_iter().find(|i| i.stem == "add_u32").unwrap();
    let options = options_o4();
    let kernels = plan(&options, std::slice::from_ref(&add));
    let t = THREADS_PER_LAUNCH as f64;
    let mut runs = BTreeMap::new();
    for k in &kernels {
        let run = match k.variant {
            Variant::Chain(steps) => {
                let pj = 5.0 + 4.0 * (f64::from(steps) / 128.0).powi(2);
                measure_kernel(&k.name, 1_600_000 / (steps + 4), 20e-6 + f64::from(steps) * t * pj * 1e-12, 300.0)
            }
            _ => measure_kernel(&k.name, 200_000, 20e-6, 250.0),
        };
        runs.insert(k.name.clone(), run);
    }
    let (rows, found_checks, _) = build_table(&kernels, &runs, &options);
    assert!(rows[0].slope.as_ref().unwrap().r2 < 0.995);
    let linear = found_checks.iter().find(|c| c.name.starts_with("energy per iteration linear in K")).unwrap();
    assert_eq!(linear.holds, Some(false));
    assert!(linear.detail.contains("add.u32"), "{}", linear.detail);
}

#[test]
fn the_slope_interval_carries_the_points_own_intervals() {
    // Five points exactly on a line: the residuals leave no interval, the points' do.
    let points: Vec<(f64, Estimate)> = [8.0, 16.0, 32.0, 64.0, 128.0]
        .iter()
        .map(|&x| {
            let y = 1.0 + 2.0 * x;
            (x, Estimate { mean: y, ci_low: y - 2.0, ci_high: y + 2.0, n: 10, std_dev: 3.0 })
        })
        .collect();
    let (slope, r2) = slope_of(&points).unwrap();
    assert!((slope.mean - 2.0).abs() < 1e-12 && (r2 - 1.0).abs() < 1e-12);
    assert!(slope.ci_high - slope.mean > 0.01, "{slope:?}");
    assert!(slope_of(&points[..2]).is_none(), "two points fit exactly and leave nothing to judge");
}

#[test]
fn the_plan_measures_every_chain_length_helpers_at_three_and_shares_baselines() {
    let list = catalog();
    let options = SuiteOptions::default();
    let kernels = plan(&options, &list);
    let with_helper = list.iter().filter(|i| i.helper.is_some()).count();
    let widths = 3; // 16, 32 and 64-bit state
    let per_level = K_SWEEP.len() * list.len() + 3 * with_helper + widths;
    assert_eq!(options.helper_k_values(), vec![8, 32, 128]);
    assert_eq!(kernels.len(), options.levels.len() * per_level);
    let mut names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), kernels.len(), "each kernel once");
    // The one-thread mode: Arafa's setup, one chain length against its baseline.
    let one = SuiteOptions { one_thread: true, k_values: vec![128], ..SuiteOptions::default() };
    assert_eq!(one.net_k(), 128);
    assert_eq!(plan(&one, &list).len(), one.levels.len() * (list.len() + with_helper + widths));
}

#[test]
fn a_time_below_the_hardware_bound_is_withheld() {
    // add.f32 at full occupancy: one FADD per step on the FMA pipes, 4 per clock per SM,
    // 64 warps per SM: 16 clocks per step, 8.08 ns at 1980 MHz. Measured 7.5 ns: impossible.
    let fadd = catalog().into_iter().find(|i| i.stem == "add_f32").unwrap();
    let options = options_o4();
    let kernels = plan(&options, std::slice::from_ref(&fadd));
    let code = |chain: i64| MachineCode {
        source: "driver JIT".into(),
        cubin_hash: Some("0".into()),
        loop_classes: [("FADD".to_string(), chain), ("IADD".to_string(), 1), ("BRA".to_string(), 1)].into(),
        loop_pipes: [("issue".to_string(), chain + 2), ("fma".to_string(), chain), ("alu".to_string(), 1)].into(),
        not_read: None,
    };
    let run_for = |ns_per_instruction: f64| {
        let mut runs = BTreeMap::new();
        for k in &kernels {
            let steps = k.variant.chain_steps();
            let mut facts = facts(1000);
            facts.machine_code = code(i64::from(steps));
            let time = 1000.0 * (2e-9 + f64::from(steps) * ns_per_instruction * 1e-9);
            runs.insert(k.name.clone(), synthetic_run(&k.name, facts, time * 300.0, time * 200.0, time));
        }
        build_table(&kernels, &runs, &options)
    };
    let (rows, found, _) = run_for(7.5);
    let bound = rows[0].bound.as_ref().expect("SASS read");
    assert!((bound.bound_s * 1e9 - 8.08).abs() < 0.01, "{bound:?}");
    assert_eq!(bound.binding, "fma");
    assert!(!bound.holds && rows[0].withheld.is_some());
    assert!(rows[0].dynamic_j().is_none(), "a withheld row gives no figure to the checks");
    let check = found.iter().find(|c| c.name.starts_with("time per instruction")).unwrap();
    assert_eq!(check.holds, Some(false));
    assert!(check.detail.contains("add.f32"), "{}", check.detail);
    // At 8.3 ns it holds.
    let (rows, found, _) = run_for(8.3);
    assert!(rows[0].bound.as_ref().unwrap().holds && rows[0].withheld.is_none());
    assert_eq!(found.iter().find(|c| c.name.starts_with("time per instruction")).unwrap().holds, Some(true));
}

/// A measured kernel with given energy, dynamic energy and time per launch (±1 %).
fn synthetic_run(name: &str, facts: LaunchFacts, energy_j: f64, dynamic_j: f64, time_s: f64) -> KernelRun {
    KernelRun {
        name: name.to_string(),
        facts,
        energy_j: est(energy_j),
        dynamic_j: est(dynamic_j),
        time_s: est(time_s),
        power_w: est(300.0),
        launches_per_window: 20,
        windows: 10,
        sm_clock_mhz: Some(1980.0),
        warnings: vec![],
    }
}

fn est(mean: f64) -> Estimate {
    Estimate { mean, ci_low: mean * 0.99, ci_high: mean * 1.01, n: 10, std_dev: mean * 0.01 }
}

fn synthetic_table(per_instruction_pj: &[(&str, f64)]) -> InstructionTable {
    // Every kernel: 1000 iterations; a baseline costing nothing beyond 1 uJ per iteration.
    let options = options_o4();
    let list = catalog();
    let kernels = plan(&options, &list);
    let t = THREADS_PER_LAUNCH as f64;
    let mut runs = BTreeMap::new();
    for k in &kernels {
        let pj = per_instruction_pj.iter().find(|(s, _)| *s == k.instruction.stem).map(|p| p.1).unwrap_or(1.0);
        let steps = (k.variant.chain_steps() * k.instruction.ops_per_step) as f64;
        let per_iteration = 1e-6 + steps * t * pj * 1e-12;
        let run = synthetic_run(&k.name, facts(1000), 1000.0 * per_iteration, 500.0 * per_iteration, 0.01);
        runs.insert(k.name.clone(), run);
    }
    let (rows, checks, missing) = build_table(&kernels, &runs, &options);
    InstructionTable {
        format: TABLE_SCHEMA.into(),
        simulated: true,
        device: None,
        timestamp: "2026-11-22T00:00:00Z".into(),
        threads_mode: "full".into(),
        k_values: options.k_values.clone(),
        rows,
        checks,
        kernels: runs.into_values().collect(),
        missing,
    }
}

#[test]
fn sanity_checks_decide_on_the_figures() {
    let good = synthetic_table(&[
        ("add_u32", 2.0),
        ("div_u32", 40.0),
        ("div_s32", 45.0),
        ("rem_u32", 40.0),
        ("rem_s32", 45.0),
        ("div_u64", 200.0),
        ("div_s64", 220.0),
        ("rem_u64", 200.0),
        ("rem_s64", 220.0),
        ("add_f64", 8.0),
        ("add_f32", 3.0),
        ("add_f16", 2.5),
        ("add_f16x2", 4.0),
        ("mul_f64", 8.0),
        ("mul_f32", 3.0),
        ("mul_f16", 2.5),
        ("mul_f16x2", 4.0),
        ("fma_f64", 9.0),
        ("fma_f32", 3.5),
        ("fma_f16", 2.5),
        ("fma_f16x2", 4.0),
        ("min_s32_quiet", 0.6),
        ("and_b32_quiet", 0.6),
        ("popc_b32_quiet", 0.6),
        ("min_f32_quiet", 0.6),
        ("sqrt_rn_f32_quiet", 0.6),
    ]);
    let (bound, rest): (Vec<_>, Vec<_>) = good.checks.iter().partition(|c| c.name.starts_with("time per instruction"));
    assert!(rest.iter().all(|c| c.holds == Some(true)), "{:#?}", good.checks);
    assert_eq!(bound[0].holds, None, "no SASS read, no bound claimed: {}", bound[0].detail);
    // A division only 3 times an add, and packed fp16 dearer per operation than fp32, are
    // caught.
    let bad = synthetic_table(&[
        ("add_u32", 2.0),
        ("div_u32", 6.0),
        ("add_f64", 9.0),
        ("add_f32", 3.0),
        ("add_f16", 3.5),
        ("add_f16x2", 7.0),
    ]);
    let found = checks(&bad.rows, "O4");
    let div = found.iter().find(|c| c.name.starts_with("div.u32")).unwrap();
    assert_eq!(div.holds, Some(false), "{}", div.detail);
    let fp = found.iter().find(|c| c.name.starts_with("add: fp64 > fp32 > fp16")).unwrap();
    assert_eq!(fp.holds, Some(false), "{}", fp.detail);
    // Scalar fp16 against fp32 is no check: Arafa's Table I claims no order between them.
    assert!(!found.iter().any(|c| c.name.contains("scalar fp16")), "{found:#?}");
}

#[test]
fn tables_round_trip() {
    let table = synthetic_table(&[("add_u32", 2.0)]);
    let dir = tempfile::tempdir().unwrap();
    let (json, md) = write_table(&table, dir.path()).unwrap();
    let back = read_table(&json).unwrap();
    assert!(back == table, "the table does not read back as written (bit for bit)");
    let markdown = std::fs::read_to_string(md).unwrap();
    assert!(markdown.contains("(SIMULATED)") && markdown.contains("| add.u32 |"));
    // A malformed file names the problem.
    std::fs::write(dir.path().join("bad.json"), "{\"format\": \"x\"}").unwrap();
    let err = read_table(&dir.path().join("bad.json")).unwrap_err();
    assert!(err.to_string().contains("not an instruction table"), "{err}");
}

#[test]
fn records_of_separate_runs_make_one_table_of_one_gpu_and_current_kernels() {
    let table = synthetic_table(&[("add_u32", 2.0)]);
    let options = options_o4();
    let list = catalog();
    let (this_gpu, _) = energy_harness::unstable::engine::virtual_sim_device(SimPreset::h100());
    let mut other_gpu = this_gpu.facts().clone();
    other_gpu.uuid = "GPU-another-board".into();
    let dir = tempfile::tempdir().unwrap();
    let record = |run: &KernelRun, device: energy_harness::unstable::device::DeviceFacts, hash: String, time: &str| {
        KernelRecord {
            format: RECORD_SCHEMA.into(),
            device,
            ptx_hash: hash,
            threads_mode: "full".into(),
            timestamp: time.into(),
            run: run.clone(),
        }
    };
    let hash_of = |name: &str| {
        let k = plan(&options, &list).into_iter().find(|k| k.name == name).unwrap();
        ptx_hash(&k.instruction)
    };
    // Two "runs" of the same GPU, each saving half of the kernels.
    for (i, run) in table.kernels.iter().enumerate() {
        let time = if i % 2 == 0 { "2026-11-22T10:00:00Z" } else { "2026-11-22T11:00:00Z" };
        save_record(dir.path(), &record(run, this_gpu.facts().clone(), hash_of(&run.name), time)).unwrap();
    }
    // Noise: another board's add kernel, and a record of an older add kernel (other PTX).
    let add = table.kernels.iter().find(|k| k.name.ends_with("add_u32/O4/k128")).unwrap();
    let mut other = add.clone();
    other.energy_j = est(1.0);
    let mut other_record = record(&other, other_gpu, hash_of(&add.name), "2026-11-22T12:00:00Z");
    other_record.run.name = add.name.clone();
    let other_dir = dir.path().join("instructions");
    std::fs::write(other_dir.join("zz_other.json"), serde_json::to_string(&other_record).unwrap()).unwrap();
    let stale = record(&other, this_gpu.facts().clone(), "0000000000000000".into(), "2026-11-22T13:00:00Z");
    std::fs::write(other_dir.join("zz_stale.json"), serde_json::to_string(&stale).unwrap()).unwrap();
    std::fs::write(other_dir.join("zz_broken.json"), "{").unwrap();
    let records = load_records(dir.path());
    assert_eq!(records.len(), table.kernels.len() + 2, "the broken file is skipped");
    let rebuilt = table_from_records(&records, &options, &this_gpu.facts().uuid).unwrap();
    assert!(rebuilt.missing.is_empty());
    assert_eq!(rebuilt.rows.len(), table.rows.len());
    let row = rebuilt.rows.iter().find(|r| r.stem == "add_u32").unwrap();
    let slope = row.slope.as_ref().unwrap().thread_j.mean;
    assert!((slope - 2e-12).abs() < 1e-15, "neither the other board's nor the stale kernel's figure: {slope:e}");
    assert_eq!(rebuilt.timestamp, "2026-11-22T11:00:00Z");
    assert!(table_from_records(&records, &options, "GPU-nobody").is_none());
}

#[test]
fn an_energy_below_zero_is_said_to_be_impossible_not_printed() {
    let mut table = synthetic_table(&[("add_u32", 2.0)]);
    table.threads_mode = "one".into();
    let row = table.rows.iter_mut().find(|r| r.stem == "add_u32").unwrap();
    row.slope = None;
    let net = row.net.as_mut().unwrap();
    let below = Estimate { mean: -1.866e-6, ci_low: -3.05e-6, ci_high: -0.68e-6, n: 10, std_dev: 1e-7 };
    net.dynamic_warp_j = below;
    net.dynamic_thread_j = below.scaled(1.0 / 32.0);
    let md = kernel_energy::instructions::suite::render_markdown(&table);
    assert!(md.contains("impossible: below zero"), "{md}");
    assert!(!md.contains("-1866") && !md.contains("-58.3"), "no negative joules printed as a figure");
    assert!(md.contains("Table I") && md.contains("none is taken as resolved"), "the one-thread section says why");
}
