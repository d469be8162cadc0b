//! Calibration recovers the simulator's sensor parameters; measurements on the simulated
//! GPU land on the truth. Simulated (virtual clock), and one check on the recorded H100 step.

use energy_harness::unstable::device::DeviceFacts;
use energy_harness::unstable::device::{SimKernel, SimPreset};
use energy_harness::unstable::engine::{calibrate, fit_calibration, StepPlan};
use energy_harness::unstable::engine::{measure, MeasureRequest};
use energy_harness::unstable::engine::{virtual_sim_device, SimWorkload};
use energy_harness::MeasureOptions;
use energy_harness::SourceKind;
use energy_results::source::model::SensorModel;
use energy_results::trace::format::read_trace;

fn within(value: f64, expected: f64, relative: f64) -> bool {
    (value - expected).abs() <= relative * expected.abs()
}

#[test]
fn calibration_recovers_the_simulated_h100() {
    let preset = SimPreset::h100();
    let (device, gpu) = virtual_sim_device(preset.clone());
    let mut workload = SimWorkload::new(gpu.clone(), SimKernel::new(0.05, preset.busy_kernel_w));
    let (cal, trace) = calibrate(&device, &mut workload, StepPlan::default()).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&cal).unwrap());
    // The warm-up launches leave the GPU in active idle (the preset's tail) during the lead-in.
    let start = trace.windows().unwrap()[0].start_s;
    let active_idle = gpu.truth_power_w(start - 0.5);

    let counter = cal.counter.as_ref().unwrap();
    assert!(within(counter.period_s, 0.1, 0.002), "{counter:?}");
    // Ticks are observed when reads see them: the preset's phase plus its report delay.
    let counter_spec = preset.sensors[&SourceKind::Counter];
    let phase = counter_spec.ticks.phase_s + counter_spec.report_delay_s;
    assert!((counter.phase_s - phase).abs() < 0.001, "tick phase {} vs {phase}", counter.phase_s);
    assert!((counter.delay_s - 0.012).abs() < 0.003, "{counter:?}");
    assert!(within(cal.idle_before_w, active_idle, 0.005), "{} vs {active_idle}", cal.idle_before_w);
    assert!(within(cal.busy_w, preset.busy_kernel_w, 0.005), "{}", cal.busy_w);

    match cal.sources[&SourceKind::AverageField].model {
        SensorModel::Boxcar { width_s } => {
            assert!(within(width_s, 1.0, 0.03), "average width {width_s}")
        }
        other => panic!("average field fitted as {other}"),
    }
    match cal.sources[&SourceKind::PowerUsage].model {
        SensorModel::Boxcar { width_s } => {
            assert!(within(width_s, 1.0, 0.03), "power usage width {width_s}")
        }
        other => panic!("power usage fitted as {other}"),
    }
    match cal.sources[&SourceKind::InstantField].model {
        SensorModel::Gated { gate_s, period_s } => {
            assert!(within(gate_s, 0.025, 0.5), "gate {gate_s}");
            assert!(within(period_s, 0.1, 0.05), "period {period_s}");
        }
        other => panic!("instant field fitted as {other}"),
    }
    match cal.sources[&SourceKind::SampleBuffer].model {
        SensorModel::FirstOrder { tau_s } => {
            assert!(within(tau_s, 0.014, 0.3), "sample buffer tau {tau_s}")
        }
        other => panic!("sample buffer fitted as {other}"),
    }
}

#[test]
fn calibration_recovers_the_k20_capacitor() {
    let preset = SimPreset::k20();
    let (device, gpu) = virtual_sim_device(preset.clone());
    let mut workload = SimWorkload::new(gpu, SimKernel::new(0.05, preset.busy_kernel_w));
    // The lead-in stays inside the 3.5 s of active idle (52.5 W) the warm-up leaves behind.
    let plan = StepPlan { idle_before_s: 3.0, busy_s: 6.0, idle_after_s: 6.0, ..StepPlan::default() };
    let (cal, _) = calibrate(&device, &mut workload, plan).unwrap();
    assert!(cal.counter.is_none());
    match cal.sources[&SourceKind::PowerUsage].model {
        SensorModel::FirstOrder { tau_s } => assert!(within(tau_s, 0.833, 0.03), "tau {tau_s}"),
        other => panic!("K20 sensor fitted as {other}"),
    }
    assert!(within(cal.busy_w, preset.busy_kernel_w, 0.01), "{}", cal.busy_w);
    assert!(within(cal.idle_before_w, 52.5, 0.04), "{}", cal.idle_before_w);
    // After the kernel the K20 holds active idle (52.5 W).
    assert!(within(cal.idle_after_w, 52.5, 0.02), "{}", cal.idle_after_w);
}

#[test]
fn the_recorded_h100_step_calibrates_to_its_known_behaviour() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h100/trace_step3s.csv");
    let trace = read_trace(&path).unwrap();
    let facts = DeviceFacts {
        name: "NVIDIA H100 80GB HBM3 (recorded)".into(),
        uuid: "recorded".into(),
        ..DeviceFacts::default()
    };
    let cal = fit_calibration(&trace, &facts).unwrap();
    let counter = cal.counter.as_ref().unwrap();
    assert!(within(counter.period_s, 0.1, 0.001), "{counter:?}");
    assert!(counter.residual_rms_s < 0.002, "tick phase stable: {counter:?}");
    match cal.sources[&SourceKind::AverageField].model {
        SensorModel::Boxcar { width_s } => assert!(within(width_s, 1.0, 0.06), "{width_s}"),
        other => panic!("{other}"),
    }
    assert!(matches!(cal.sources[&SourceKind::InstantField].model, SensorModel::Gated { .. }));
    assert!((118.0..122.0).contains(&cal.idle_before_w) && (265.0..280.0).contains(&cal.busy_w), "{cal:?}");
}

fn measure_sim(kernel_s: f64, seed: u64) -> (energy_harness::unstable::engine::Measurement, f64) {
    let preset = SimPreset::h100().with_seed(seed);
    let busy = preset.busy_kernel_w;
    let (mut device, gpu) = virtual_sim_device(preset);
    let mut workload = SimWorkload::new(gpu, SimKernel::new(kernel_s, busy));
    // As a benchmark asks: the default options, at least criterion's 10 windows.
    let request = MeasureRequest::new("kernel", MeasureOptions::DEFAULT).min_windows(10);
    let (m, _) = measure(&mut device, &mut workload, request).unwrap();
    (m, busy * kernel_s)
}

#[test]
fn measurements_of_microsecond_to_second_kernels_land_on_the_truth() {
    for (kernel_s, seed) in [(20e-6, 1), (1e-3, 2), (10e-3, 3), (0.1, 4), (1.0, 5)] {
        let (m, truth) = measure_sim(kernel_s, seed);
        let error = m.energy_j.mean / truth - 1.0;
        eprintln!(
            "{:>8.0} µs kernel: {} windows × {} launches ({:?}, {:.2} s), {:.4e} J vs truth {truth:.4e} J ({:+.3} %), CV {:.3} %, CI ±{:.3} %",
            kernel_s * 1e6,
            m.windows.len(),
            m.launches_per_window,
            m.stop,
            m.wall_time_s,
            m.energy_j.mean,
            error * 100.0,
            m.energy_j.cv() * 100.0,
            m.energy_j.relative_half_width() * 100.0
        );
        assert!(error.abs() < 0.01, "{kernel_s} s kernel: {:+.3} %", error * 100.0);
        assert!(m.simulated);
        assert_eq!(m.source, SourceKind::Counter);
        assert!(within(m.time_s.mean, kernel_s, 1e-6));
        // Ten windows and at most 3 s of (simulated) wall time up to 100 ms launches; four
        // windows of one launch after two warm-up launches for 1 s launches.
        if kernel_s < 0.5 {
            assert!(m.windows.len() >= 10, "{} windows", m.windows.len());
            assert!(
                m.wall_time_s <= 3.0,
                "{:.2} s of (simulated) wall time, {} windows, {:?}",
                m.wall_time_s,
                m.windows.len(),
                m.stop
            );
        } else {
            let launches: u64 = m.windows.iter().map(|w| w.launches).sum();
            assert!(launches < 5, "{launches} launches measured besides the warm-up");
        }
        assert!(m.options.is_some_and(|o| o.precision == 0.01), "the resolved options are recorded");
        assert!(m.stop.is_some());
        let cross = m.cross_check.as_ref().unwrap();
        assert!(cross.difference_pct.abs() < 3.0, "sample buffer cross-check {cross:?}");
    }
}

#[test]
fn doubling_the_work_doubles_the_energy_and_back_to_back_windows_are_not_inflated() {
    let measure_one = |kernel_s: f64, seed: u64| {
        let preset = SimPreset::h100().with_seed(seed);
        let busy = preset.busy_kernel_w;
        let (mut device, gpu) = virtual_sim_device(preset);
        let mut workload = SimWorkload::new(gpu, SimKernel::new(kernel_s, busy)).with_time_jitter(0.001, seed);
        let request = MeasureRequest::new("kernel", MeasureOptions::DEFAULT).min_windows(10);
        measure(&mut device, &mut workload, request).unwrap().0
    };
    let single = measure_one(10e-3, 21);
    let double = measure_one(20e-3, 22);
    let ratio = double.energy_j.mean / single.energy_j.mean;
    assert!((ratio - 2.0).abs() < 0.01, "doubling gave ×{ratio:.4}");
    // Windows inside one busy stretch against the first: not inflated by the ones before
    // (each window also carries the simulated GPU's 0.1 % time jitter and sensor noise).
    let first = single.windows[0].energy.energy_j;
    let later: Vec<f64> = single.windows[1..].iter().map(|w| w.energy.energy_j).collect();
    let r = later.iter().sum::<f64>() / later.len() as f64 / first;
    assert!((r - 1.0).abs() < 0.01, "the windows after the first are ×{r:.4} the first");
}

#[test]
fn a_tighter_precision_takes_more_windows_and_a_miss_is_a_warning() {
    use energy_results::warning::WarningKind;
    let preset = SimPreset::h100().with_seed(31);
    let busy = preset.busy_kernel_w;
    let (mut device, gpu) = virtual_sim_device(preset);
    // Each batch's duration (and so its energy) wanders by 1 %.
    let mut workload = SimWorkload::new(gpu, SimKernel::new(1e-3, busy)).with_time_jitter(0.01, 31);
    let options = MeasureOptions { precision: Some(0.003), ..MeasureOptions::DEFAULT };
    let (m, _) = measure(&mut device, &mut workload, MeasureRequest::new("noisy", options).min_windows(10)).unwrap();
    assert!(m.windows.len() > 10, "{} windows for ±0.3 % with 1 % noise per window", m.windows.len());
    match m.stop.as_deref() {
        // "Precision reached" only where the final interval holds it; otherwise the stop says
        // it stopped short, and the interval is warned about.
        Some("precision reached") => assert!(m.energy_j.relative_half_width() <= 0.003, "{:?}", m.energy_j),
        Some(short) if short.starts_with("stopped short: ") => {
            assert!(m.energy_j.relative_half_width() > 0.003 && m.has_warning(WarningKind::Imprecise), "{short}")
        }
        // At the limit, a miss is a warning, and only a miss (the last windows, once the
        // sensor covered them, may have reached it).
        Some("window limit") => assert_eq!(
            m.has_warning(WarningKind::Imprecise),
            m.energy_j.relative_half_width() > 0.003,
            "{:?} {:?}",
            m.energy_j,
            m.warnings
        ),
        other => panic!("unexpected stop {other:?}"),
    }
    // A window count given is kept, whatever the precision.
    let fixed = MeasureOptions { windows: Some(12), precision: Some(0.5), ..MeasureOptions::DEFAULT };
    let (m, _) = measure(&mut device, &mut workload, MeasureRequest::new("fixed", fixed).min_windows(10)).unwrap();
    assert_eq!((m.windows.len(), m.stop.as_deref()), (12, Some("window count given")));
    // Options are checked once, in the engine, with the option named.
    let bad = MeasureOptions { precision: Some(2.0), ..MeasureOptions::DEFAULT };
    let err = measure(&mut device, &mut workload, MeasureRequest::new("bad", bad)).unwrap_err();
    assert!(err.message().contains("`precision`"), "{err}");
}
