//! Per-op, per-byte and net figures are computed once, in the engine's summary
//! (`energy_harness::unstable::engine::{per_unit, difference, net_per_op, net_energy}`).
//! Before that they were computed three ways: the bench glue (`Measurement::per_unit`,
//! `net_per_op`), budgets (the pooled windows scaled by hand) and the instruction table
//! (its own `difference`). Each old way is copied here as it was, and held against the one
//! way on committed results: the same bits from the same inputs, and the committed figures
//! (written by the old code) within the last digit a JSON round trip may move.

use std::path::{Path, PathBuf};

use energy_harness::units::format_si;
use energy_harness::unstable::engine::{difference, net_per_op, per_unit};
use energy_harness::{Estimate, ResultFile};
use kernel_energy::instructions::suite::{read_table, KernelRun};

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

fn result(path: &str) -> ResultFile {
    let text = std::fs::read_to_string(results().join(path)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn same_bits(a: &Estimate, b: &Estimate) -> bool {
    a.mean.to_bits() == b.mean.to_bits()
        && a.ci_low.to_bits() == b.ci_low.to_bits()
        && a.ci_high.to_bits() == b.ci_high.to_bits()
        && a.std_dev.to_bits() == b.std_dev.to_bits()
        && a.n == b.n
}

fn close(a: &Estimate, b: &Estimate) -> bool {
    let near = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
    near(a.mean, b.mean) && near(a.ci_low, b.ci_low) && near(a.ci_high, b.ci_high) && a.n == b.n
}

/// The bench glue's way (`Measurement::per_unit`, removed): the estimate scaled by 1/units.
fn old_bench_per_unit(e: &Estimate, units: f64) -> Option<Estimate> {
    (units > 0.0 && units.is_finite()).then(|| e.scaled(1.0 / units))
}

/// The bench glue's net figure (`engine::result::net_per_op`, moved into the summary).
fn old_bench_net_per_op(with: &Estimate, without: &Estimate, ops_per_launch: f64) -> Option<Estimate> {
    if !(ops_per_launch > 0.0 && ops_per_launch.is_finite()) {
        return None;
    }
    let mean = with.mean - without.mean;
    let half_with = 0.5 * (with.ci_high - with.ci_low);
    let half_without = 0.5 * (without.ci_high - without.ci_low);
    let half = (half_with.powi(2) + half_without.powi(2)).sqrt();
    let std_dev = (with.std_dev.powi(2) + without.std_dev.powi(2)).sqrt();
    Some(
        Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: with.n.min(without.n), std_dev }
            .scaled(1.0 / ops_per_launch),
    )
}

/// The budgets' way (`EnergyBudget::estimate`): the pooled windows scaled by 1/count.
fn old_budget_per(pooled: &Estimate, count: Option<f64>) -> Option<Estimate> {
    count.filter(|c| *c > 0.0).map(|c| pooled.scaled(1.0 / c))
}

/// The instruction table's own `difference` (removed).
fn old_table_difference(a: &Estimate, b: &Estimate) -> Estimate {
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

#[test]
fn per_op_and_per_byte_of_committed_bench_results_are_the_summarys() {
    let mut seen = 0;
    for path in [
        "2026-11-22-h100-benches/saxpy_energy.json",
        "2026-11-22-h100-benches/fma_loop_energy.json",
        "2026-11-22-h100-benches/fma_loop_o0_energy.json",
        "2026-11-23-h100-time-from-energy-windows/fma_loop_energy.json",
    ] {
        let r = result(path);
        for unit in [&r.per_op, &r.per_byte].into_iter().flatten() {
            for (per_launch, committed) in [(&r.energy_j, &unit.energy_j), (&r.dynamic_j, &unit.dynamic_j)] {
                let once = per_unit(per_launch, unit.units_per_launch).unwrap();
                let old = old_bench_per_unit(per_launch, unit.units_per_launch).unwrap();
                assert!(same_bits(&once, &old), "{path}: per {}: {once:?} against {old:?}", unit.unit);
                assert!(
                    close(&once, committed),
                    "{path}: per {}: {once:?} against the file's {committed:?}",
                    unit.unit
                );
                seen += 1;
            }
        }
    }
    assert_eq!(seen, 10, "saxpy per op and per byte, three FMA loops per op; total and dynamic");
}

#[test]
fn net_energy_of_committed_bench_results_is_the_summarys() {
    // The FMA loop against its -O0 build, and saxpy against the FMA loop: any two results
    // serve, the figure is arithmetic on their estimates.
    let pairs = [
        ("2026-11-22-h100-benches/fma_loop_energy.json", "2026-11-22-h100-benches/fma_loop_o0_energy.json"),
        ("2026-11-22-h100-benches/saxpy_energy.json", "2026-11-22-h100-benches/fma_loop_energy.json"),
    ];
    for (with, without) in pairs {
        let (w, wo) = (result(with), result(without));
        for ops in [1.0, w.per_op.as_ref().map_or(1.0, |u| u.units_per_launch)] {
            let once = net_per_op(&w.energy_j, &wo.energy_j, ops).unwrap();
            let old = old_bench_net_per_op(&w.energy_j, &wo.energy_j, ops).unwrap();
            assert!(same_bits(&once, &old), "{with} against {without}, {ops} ops: {once:?} against {old:?}");
        }
        assert!(net_per_op(&w.energy_j, &wo.energy_j, 0.0).is_none());
        assert!(old_bench_net_per_op(&w.energy_j, &wo.energy_j, 0.0).is_none());
    }
}

#[test]
fn a_committed_per_byte_budget_is_the_summarys_figure() {
    // saxpy_stays_under_200_pj_per_byte on the H100 (tests/energy_budgets.rs: 12 × 2^24
    // bytes per launch), one round of 5 windows; its log printed
    // "energy per byte 159.7 pJ [159.2 pJ … 160.1 pJ]".
    let r = result("2026-11-22-h100-budgets/saxpy_stays_under_200_pj_per_byte.json");
    let values: Vec<f64> = r.windows.iter().map(|w| w.energy.energy_j / w.launches as f64).collect();
    let pooled = Estimate::from_values(&values).unwrap();
    let bytes = Some(12.0 * (1u64 << 24) as f64);
    let once = bytes.and_then(|b| per_unit(&pooled, b)).unwrap();
    let old = old_budget_per(&pooled, bytes).unwrap();
    assert!(same_bits(&once, &old));
    assert_eq!(
        [format_si(once.mean, "J", 4), format_si(once.ci_low, "J", 4), format_si(once.ci_high, "J", 4)],
        ["159.7 pJ", "159.2 pJ", "160.1 pJ"]
    );
    assert_eq!(once.n, 5);
    assert!(per_unit(&pooled, 0.0).is_none() && old_budget_per(&pooled, Some(0.0)).is_none());
}

#[test]
fn net_figures_of_committed_instruction_tables_are_the_summarys_difference() {
    const WARP: f64 = 32.0;
    let mut seen = 0;
    for path in
        ["2026-11-24-instructions-v2-h100-h200/o4-h200.json", "2026-11-24-instructions-v2-h100-h200/o0-board3.json"]
    {
        let table = read_table(&results().join(path)).unwrap();
        let kernel = |name: &str| -> &KernelRun { table.kernels.iter().find(|k| k.name == name).unwrap() };
        for row in &table.rows {
            let Some(committed) = &row.net else { continue };
            let (with, without) = (&row.launch, kernel(&row.baseline));
            let per_iteration = |r: &KernelRun, e: &Estimate| e.scaled(1.0 / r.facts.iterations as f64);
            let per_instruction = 1.0 / (with.facts.threads() * f64::from(row.net_k) * f64::from(row.ops_per_step));
            for (with_e, without_e, committed_thread, committed_warp) in [
                (&with.energy_j, &without.energy_j, &committed.thread_j, &committed.warp_j),
                (&with.dynamic_j, &without.dynamic_j, &committed.dynamic_thread_j, &committed.dynamic_warp_j),
            ] {
                let (a, b) = (per_iteration(with, with_e), per_iteration(without, without_e));
                let once = difference(&a, &b);
                let old = old_table_difference(&a, &b);
                assert!(same_bits(&once, &old), "{path} {}", row.label);
                assert!(close(&once.scaled(per_instruction), committed_thread), "{path} {}", row.label);
                assert!(close(&once.scaled(per_instruction * WARP), committed_warp), "{path} {}", row.label);
                seen += 1;
            }
        }
    }
    assert!(seen > 50, "{seen} net figures");
}

#[test]
fn a_budget_and_the_summary_give_one_per_op_figure() {
    use energy_harness::units::Joules;
    use energy_harness::unstable::device::SimPreset;
    use energy_harness::unstable::engine::virtual_sim_device;
    use energy_harness::{EnergyBudget, KernelUnderTest, Limit, MeasureOptions, Verdict};

    let (ops, bytes) = (1e9, 12e6);
    let budget = EnergyBudget::new(KernelUnderTest::new("fma_1ms").sim(1e-3, 272.0), Limit::PerOp(Joules(1.0)))
        .options(MeasureOptions { ops: Some(ops), bytes: Some(bytes), ..MeasureOptions::DEFAULT });
    let (mut device, _gpu) = virtual_sim_device(SimPreset::h100());
    let Verdict::Pass(report) = budget.check_on(&mut device).unwrap() else { panic!("1 J per op passes") };
    assert_eq!(report.rounds, 1);
    let m = &report.measurement;
    let per_op = m.per_op.as_ref().expect("the summary computes the per-op figure from the options' count");
    let per_byte = m.per_byte.as_ref().expect("and the per-byte figure");
    assert_eq!((per_op.unit.as_str(), per_op.units_per_launch), ("op", ops));
    assert_eq!((per_byte.unit.as_str(), per_byte.units_per_launch), ("byte", bytes));
    assert!(same_bits(&per_op.energy_j, &old_bench_per_unit(&m.energy_j, ops).unwrap()));
    assert!(same_bits(&per_op.dynamic_j, &old_bench_per_unit(&m.dynamic_j, ops).unwrap()));
    assert!(same_bits(&per_byte.energy_j, &old_bench_per_unit(&m.energy_j, bytes).unwrap()));
    // One round: the budget's pooled windows are the summary's, so its figure is the same.
    assert!(same_bits(&report.estimate, &per_op.energy_j), "{:?} against {:?}", report.estimate, per_op.energy_j);
    // The result file carries what the summary computed.
    assert_eq!(m.result_file(None).per_op.as_ref(), Some(per_op));
}
