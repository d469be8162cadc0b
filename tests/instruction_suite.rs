//! The instruction suite's figures from measurements: on the simulated H100 (which knows
//! the truth) the net energy per instruction comes back within its interval; the plan,
//! the checks and the merging of partial runs behave as documented. Simulated.

use std::collections::BTreeMap;

use energy_harness::Estimate;
use energy_harness::JitOptLevel;
use energy_harness::{measure, MeasureRequest};
use energy_harness::{virtual_sim_device, SimWorkload};
use energy_harness::{SimKernel, SimPreset};
use energy_suites::instructions::suite::{
    build_table, checks, load_records, plan, ptx_hash, read_table, save_record, table_from_records, write_table,
    InstructionTable, KernelRecord, KernelRun, LaunchFacts, SuiteOptions, RECORD_FORMAT, TABLE_FORMAT,
};
use energy_suites::instructions::{catalog, Variant, K};

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
    let request = MeasureRequest::new(name, energy_suites::common::suite_measure_options()).min_windows(10);
    let (m, _) = measure(&mut device, &mut workload, request).expect("simulated measurement");
    KernelRun::new(name, facts(iterations), &m)
}

fn options_o4() -> SuiteOptions {
    SuiteOptions { levels: vec![JitOptLevel::O4], linearity_levels: vec![JitOptLevel::O4], ..SuiteOptions::default() }
}

#[test]
fn net_energy_per_instruction_comes_back_from_simulated_measurements() {
    // Truth: 5 pJ per thread-instruction on top of a 20 uJ loop iteration (per launch).
    let per_instruction = 5e-12;
    let base_iteration = 20e-6;
    let chain = |steps: u32| steps as f64 * THREADS_PER_LAUNCH as f64 * per_instruction;
    let add = catalog().into_iter().find(|i| i.stem == "add_u32").unwrap();
    let options = options_o4();
    let kernels: Vec<_> = plan(&options, std::slice::from_ref(&add));
    assert_eq!(kernels.len(), 3, "K, 2K and the shared baseline");
    let mut runs = BTreeMap::new();
    for k in &kernels {
        let run = match k.variant {
            Variant::K1 => measure_kernel(&k.name, 50_000, base_iteration + chain(K), 300.0),
            Variant::K2 => measure_kernel(&k.name, 25_000, base_iteration + chain(2 * K), 320.0),
            _ => measure_kernel(&k.name, 200_000, base_iteration, 250.0),
        };
        runs.insert(k.name.clone(), run);
    }
    let (rows, found_checks, missing) = build_table(&kernels, &runs, &options);
    assert!(missing.is_empty());
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let net = row.net.thread_j;
    assert!(
        (net.mean - per_instruction).abs() < 0.02 * per_instruction,
        "net {:.4} pJ against the truth {:.4} pJ",
        net.mean * 1e12,
        per_instruction * 1e12
    );
    assert!(net.ci_low <= net.mean && net.mean <= net.ci_high && net.ci_high - net.ci_low > 0.0);
    assert!((row.net.warp_j.mean / net.mean - 32.0).abs() < 1e-9, "per warp is 32 threads");
    let linearity = row.linearity.expect("2K measured");
    assert!(linearity.abs() < 0.05, "K and 2K agree: {:+.2} %", linearity * 100.0);
    let marginal = row.marginal.as_ref().expect("2K measured").thread_j.mean;
    assert!((marginal - per_instruction).abs() < 0.05 * per_instruction, "marginal {marginal:e}");
    // Only the linearity check can be decided with one instruction.
    let linear = found_checks.iter().find(|c| c.name.starts_with("K and 2K")).unwrap();
    assert_eq!(linear.holds, Some(true));
    assert!(found_checks.iter().filter(|c| c.name.contains(">>")).all(|c| c.holds.is_none()));
}

#[test]
fn a_chain_that_is_not_linear_fails_the_check() {
    // The 2K kernel costs 20 % more per instruction than the K kernel.
    let add = catalog().into_iter().find(|i| i.stem == "add_u32").unwrap();
    let options = options_o4();
    let kernels = plan(&options, std::slice::from_ref(&add));
    let t = THREADS_PER_LAUNCH as f64;
    let mut runs = BTreeMap::new();
    for k in &kernels {
        let run = match k.variant {
            Variant::K1 => measure_kernel(&k.name, 50_000, 20e-6 + K as f64 * t * 5e-12, 300.0),
            Variant::K2 => measure_kernel(&k.name, 25_000, 20e-6 + 2.0 * K as f64 * t * 6e-12, 320.0),
            _ => measure_kernel(&k.name, 200_000, 20e-6, 250.0),
        };
        runs.insert(k.name.clone(), run);
    }
    let (rows, found_checks, _) = build_table(&kernels, &runs, &options);
    assert!((rows[0].linearity.unwrap() - 0.2).abs() < 0.03);
    let linear = found_checks.iter().find(|c| c.name.starts_with("K and 2K")).unwrap();
    assert_eq!(linear.holds, Some(false));
    assert!(linear.detail.contains("add.u32"), "{}", linear.detail);
}

#[test]
fn the_plan_shares_baselines_and_measures_2k_at_the_first_level_only() {
    let list = catalog();
    let kernels = plan(&SuiteOptions::default(), &list);
    let with_helper = list.iter().filter(|i| i.helper.is_some()).count();
    let widths = 3; // 16, 32 and 64-bit state
                    // O4: K and 2K of each, the width baselines, two baselines per helper chain;
                    // O0: K of each, the width baselines, one baseline per helper chain.
    let expected = (2 * list.len() + widths + 2 * with_helper) + (list.len() + widths + with_helper);
    assert_eq!(kernels.len(), expected);
    let mut names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), kernels.len(), "each kernel once");
    assert!(kernels.iter().all(|k| k.level == JitOptLevel::O4 || k.variant != Variant::K2));
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
        let run = KernelRun {
            name: k.name.clone(),
            facts: facts(1000),
            energy_j: est(1000.0 * per_iteration),
            dynamic_j: est(500.0 * per_iteration),
            time_s: est(0.01),
            power_w: est(300.0),
            launches_per_window: 20,
            windows: 10,
            sm_clock_mhz: Some(1980.0),
            warnings: vec![],
        };
        runs.insert(k.name.clone(), run);
    }
    let (rows, checks, missing) = build_table(&kernels, &runs, &options);
    InstructionTable {
        format: TABLE_FORMAT.into(),
        simulated: true,
        device: None,
        timestamp: "2026-11-22T00:00:00Z".into(),
        threads_mode: "full".into(),
        k: K,
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
    ]);
    assert!(good.checks.iter().all(|c| c.holds == Some(true)), "{:#?}", good.checks);
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
    let (this_gpu, _) = energy_harness::virtual_sim_device(SimPreset::h100());
    let mut other_gpu = this_gpu.facts().clone();
    other_gpu.uuid = "GPU-another-board".into();
    let dir = tempfile::tempdir().unwrap();
    let record = |run: &KernelRun, device: energy_harness::DeviceFacts, hash: String, time: &str| KernelRecord {
        format: RECORD_FORMAT.into(),
        device,
        ptx_hash: hash,
        threads_mode: "full".into(),
        timestamp: time.into(),
        run: run.clone(),
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
    let add = table.kernels.iter().find(|k| k.name.ends_with("add_u32/O4/k32")).unwrap();
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
    assert!((row.net.thread_j.mean - 2e-12).abs() < 1e-15, "neither the other board's nor the stale kernel's figure");
    assert_eq!(rebuilt.timestamp, "2026-11-22T11:00:00Z");
    assert!(table_from_records(&records, &options, "GPU-nobody").is_none());
}
