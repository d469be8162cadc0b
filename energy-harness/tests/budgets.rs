//! Energy budgets decided on the simulated H100 (virtual clock, deterministic seeds): a
//! budget above the truth passes, one below fails with a full message, one inside the
//! noise is inconclusive, a relative budget catches a 20 % costlier variant, and a failed
//! `#[energy_test]` panics at the test's own line. Simulated.

use energy_harness::units::{Joules, Watts};
use energy_harness::unstable::device::SimPreset;
use energy_harness::unstable::engine::virtual_sim_device;
use energy_harness::MeasureOptions;
use energy_harness::{EnergyBudget, KernelUnderTest, Limit, Verdict};

const KERNEL_S: f64 = 1e-3;
const WATTS: f64 = 272.0;
/// The truth: 1 ms at 272 W.
const TRUTH_J: f64 = KERNEL_S * WATTS;

fn check(budget: EnergyBudget) -> Verdict {
    let (mut device, _gpu) = virtual_sim_device(SimPreset::h100());
    budget.check_on(&mut device).expect("the simulated measurement works")
}

fn kernel() -> KernelUnderTest {
    KernelUnderTest::new("fma_1ms").sim(KERNEL_S, WATTS)
}

#[test]
fn a_budget_above_the_truth_passes() {
    match check(EnergyBudget::new(kernel(), Limit::PerLaunch(Joules(TRUTH_J * 1.05)))) {
        Verdict::Pass(report) => {
            assert!(report.estimate.ci_high <= TRUTH_J * 1.05);
            assert_eq!(report.rounds, 1);
        }
        other => panic!("expected a pass, got {other:?}"),
    }
}

#[test]
fn a_budget_below_the_truth_fails_with_the_figures() {
    match check(EnergyBudget::new(kernel(), Limit::PerLaunch(Joules(TRUTH_J * 0.95)))) {
        Verdict::Fail(report) => {
            assert!(report.estimate.ci_low > TRUTH_J * 0.95);
            let message = report.to_string();
            for expected in
                ["fma_1ms", "energy per launch", "258.4 mJ", "(95 % CI", "[simulated]", "source counter", "trace "]
            {
                assert!(message.contains(expected), "`{expected}` missing from: {message}");
            }
            assert!(report.trace.as_ref().is_some_and(|t| t.exists()), "the trace is saved");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn a_budget_inside_the_noise_is_inconclusive_after_bounded_rounds() {
    // A budget set at the measured mean itself lies inside the interval of any round.
    let measured = match check(EnergyBudget::new(kernel(), Limit::PerLaunch(Joules(1.0)))) {
        Verdict::Pass(report) => report.estimate.mean,
        other => panic!("expected a pass, got {other:?}"),
    };
    let options = MeasureOptions { windows: Some(5), ..MeasureOptions::DEFAULT };
    let budget =
        || EnergyBudget::new(kernel(), Limit::PerLaunch(Joules(measured))).options(options.clone()).max_rounds(2);
    match check(budget()) {
        Verdict::Inconclusive(report) => {
            assert_eq!(report.rounds, 2, "measured again before giving up");
            assert!(report.estimate.ci_low <= measured && report.estimate.ci_high > measured);
        }
        other => panic!("expected inconclusive, got {other:?}"),
    }
    assert!(matches!(check(budget().inconclusive_passes(true)), Verdict::Pass(_)), "configurable to pass");
}

#[test]
fn a_relative_budget_catches_a_20_percent_costlier_variant() {
    let reference = || KernelUnderTest::new("v1").sim(KERNEL_S, WATTS);
    let costlier = KernelUnderTest::new("v2_costlier").sim(KERNEL_S * 1.2, WATTS);
    match check(EnergyBudget::new(costlier, Limit::Relative(1.10)).reference(reference())) {
        Verdict::Fail(report) => assert!((report.estimate.mean - 1.2).abs() < 0.01, "{report}"),
        other => panic!("expected the costlier variant to fail, got {other:?}"),
    }
    let same = KernelUnderTest::new("v2_same").sim(KERNEL_S, WATTS);
    match check(EnergyBudget::new(same, Limit::Relative(1.10)).reference(reference())) {
        Verdict::Pass(report) => assert!((report.estimate.mean - 1.0).abs() < 0.01, "{report}"),
        other => panic!("expected an unchanged variant to pass, got {other:?}"),
    }
}

#[test]
fn per_op_and_power_budgets() {
    let ops = 1e9;
    let per_op = EnergyBudget::new(kernel(), Limit::PerOp(Joules(TRUTH_J / ops * 1.05)))
        .options(MeasureOptions { ops: Some(ops), ..MeasureOptions::DEFAULT });
    assert!(matches!(check(per_op), Verdict::Pass(_)));
    let power = EnergyBudget::new(kernel(), Limit::Power(Watts(250.0)));
    assert!(matches!(check(power), Verdict::Fail(_)), "272 W exceeds a 250 W budget");
}

/// The result file is the versioned on-disk schema (`energy-result/N`), kept apart from the
/// in-memory `Measurement` on purpose; this holds the two together: every figure of a
/// measurement reaches its file unchanged, and the device's identity and the simulated
/// flag travel in the file's `device`.
#[test]
fn a_result_file_carries_every_figure_of_its_measurement() {
    use energy_harness::ResultFile;
    let report = match check(EnergyBudget::new(kernel(), Limit::PerLaunch(Joules(TRUTH_J * 1.05)))) {
        Verdict::Pass(report) => report,
        other => panic!("expected a pass, got {other:?}"),
    };
    let m = &report.measurement;
    let file = m.result_file(None);
    let measured = serde_json::to_value(m).unwrap();
    let written = serde_json::to_value(&file).unwrap();
    let (measured, written) = (measured.as_object().unwrap(), written.as_object().unwrap());
    for (key, value) in measured {
        match key.as_str() {
            "device" => {
                assert_eq!(written["device"]["name"], value["name"]);
                assert_eq!(written["device"]["uuid"], value["uuid"]);
            }
            "simulated" => assert_eq!(written["device"]["simulated"], *value),
            _ => assert_eq!(written.get(key), Some(value), "`{key}` of the measurement is not in its result file"),
        }
    }
    assert_eq!(file.launches, m.windows.iter().map(|w| w.launches).sum::<u64>());
    let text = serde_json::to_string(&file).unwrap();
    let read = ResultFile::parse(&text, std::path::Path::new("r.json")).expect("a written result reads back");
    assert_eq!(serde_json::to_value(&read).unwrap().as_object(), Some(written), "the file reads back as written");
}

/// A precision the macro cannot see (a constant, not a literal) and outside the bounds:
/// `MeasureOptions::resolve` refuses it when the budget is checked, before anything is
/// measured, so the budget below fails at once (on a GPU or without one).
const PRECISION_OUT_OF_BOUNDS: f64 = 0.7;

/// The line of `fn over_loose_precision` below: a failed budget's panic points there.
const OVER_LOOSE_PRECISION_LINE: u32 = line!() + 4;

#[energy_harness::energy_test(max = "1 J", precision = PRECISION_OUT_OF_BOUNDS, sim(seconds = KERNEL_S, watts = WATTS))]
#[ignore = "called by a_failed_budget_points_at_the_test_not_the_harness"]
fn over_loose_precision(_stream: &energy_harness::Stream) -> energy_harness::Result<()> {
    Ok(())
}

#[test]
fn a_failed_budget_points_at_the_test_not_the_harness() {
    use std::cell::RefCell;
    use std::sync::Arc;
    thread_local! {
        /// The location of this thread's panic, when it is the one under test.
        static CAUGHT: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
    }
    // Panics of other tests' threads go to the usual hook.
    let usual: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> = Arc::from(std::panic::take_hook());
    let others = usual.clone();
    let this_thread = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| match info.location() {
        Some(at) if std::thread::current().id() == this_thread => {
            CAUGHT.with(|c| *c.borrow_mut() = Some((at.file().to_string(), at.line())));
        }
        _ => others(info),
    }));
    let outcome = std::panic::catch_unwind(over_loose_precision);
    std::panic::set_hook(Box::new(move |info| usual(info)));
    let message = outcome.expect_err("a budget whose options are out of bounds fails");
    let message = message.downcast_ref::<String>().expect("a formatted panic message");
    assert!(message.contains("precision") && message.contains("0.0001 … 0.5"), "{message}");
    let caught = CAUGHT.with(|c| c.borrow_mut().take());
    assert_eq!(caught, Some((file!().to_string(), OVER_LOOSE_PRECISION_LINE)), "the panic's location");
}

/// A budget over arguments: 1, 2 and 3 ms of the kernel against 0.5 J (the truth: 272 mJ
/// per ms), so the first passes and the other two fail.
#[energy_harness::energy_test(args = [1u32, 2, 3], max = "0.5 J", sim(seconds = KERNEL_S * ms as f64, watts = WATTS))]
#[ignore = "called by a_budget_over_arguments_checks_each_and_names_every_one_that_failed"]
fn budget_over_milliseconds(_stream: &energy_harness::Stream, ms: &u32) -> energy_harness::Result<()> {
    let _ = ms;
    Ok(())
}

#[test]
fn a_budget_over_arguments_checks_each_and_names_every_one_that_failed() {
    let message = std::panic::catch_unwind(budget_over_milliseconds).expect_err("two of three exceed the budget");
    let message = message.downcast_ref::<String>().expect("a formatted panic message");
    assert!(message.starts_with("2 of 3 energy budgets not met"), "{message}");
    assert!(
        message.contains("budget_over_milliseconds/2") && message.contains("budget_over_milliseconds/3"),
        "{message}"
    );
    assert!(!message.contains("budget_over_milliseconds/1"), "the first argument met its budget: {message}");
}

/// A budget on a kernel shorter than its launch (1 µs at 300 W, the simulated host launching
/// every 3 µs): launched by the host each launch also carries 2 µs of active idle, and the
/// failure says the benchmark is launch-bound; replayed as a CUDA graph the same kernel is
/// measured back to back (300 µJ) and passes, its report saying it was a graph.
#[test]
fn a_launch_bound_budget_says_so_and_a_graph_measures_the_kernel() {
    let short = || KernelUnderTest::new("short").sim(1e-6, 300.0);
    match check(EnergyBudget::new(short(), Limit::PerLaunch(Joules(400e-6)))) {
        Verdict::Fail(report) => {
            let message = report.to_string();
            assert!(message.contains("launch-bound") && message.contains("graph = 100"), "{message}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    let graphed = short().code(energy_harness::KernelCode::launch(|_: &energy_harness::Stream| Ok(())).graph(100));
    match check(EnergyBudget::new(graphed, Limit::PerLaunch(Joules(400e-6)))) {
        Verdict::Pass(report) => {
            assert!((report.estimate.mean / 300e-6 - 1.0).abs() < 0.02, "{report}");
            assert!(report.to_string().contains("launched as a CUDA graph of 100"), "{report}");
        }
        other => panic!("expected a pass, got {other:?}"),
    }
}
