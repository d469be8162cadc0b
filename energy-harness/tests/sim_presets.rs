//! The simulated presets behave as the real sensors were measured to (DESIGN.md §1-2).
//! Everything here is simulated: the simulator knows the truth, the tests check that its
//! sensors distort it the way the H100 and K20 sensors do.

use std::sync::Arc;

use energy_harness::unstable::device::record_until;
use energy_harness::unstable::device::{SamplerConfig, SensorSource, VirtualClock};
use energy_harness::unstable::device::{SimGpu, SimKernel, SimPreset};
use energy_harness::unstable::engine::counter_ticks;
use energy_harness::SourceKind;
use energy_results::trace::Channel;
use energy_results::trace::Reading;

fn open(gpu: &SimGpu, kinds: &[SourceKind]) -> Vec<Box<dyn SensorSource>> {
    kinds.iter().map(|&k| Box::new(gpu.open_source(k).unwrap()) as Box<dyn SensorSource>).collect()
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values.into_iter().fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n as f64
}

/// DESIGN.md §1: under a 25 %-duty square wave (25 ms on / 75 ms off) the counter reads
/// the true mean power at every phase; the gated instant field does not.
#[test]
fn h100_counter_is_continuous_and_instant_field_is_gated_under_a_square_wave() {
    let preset = SimPreset::h100();
    let busy_w = preset.busy_kernel_w;
    let mut instant_means = Vec::new();
    for phase in 0..8 {
        let clock = Arc::new(VirtualClock::starting_at(0.0));
        let gpu = SimGpu::new(SimPreset::h100(), clock.clone());
        let start = 0.5 + f64::from(phase) * 0.0125;
        for period in 0..40 {
            gpu.schedule(start + f64::from(period) * 0.1, SimKernel::new(0.025, busy_w));
        }
        let end = start + 4.0;
        let sources = open(&gpu, &[SourceKind::Counter, SourceKind::InstantField]);
        let trace = record_until(sources, &*clock, end + 0.3, SamplerConfig::default()).unwrap();

        let ticks = counter_ticks(&trace.sorted_series(&Channel::CounterMj));
        let inside: Vec<_> = ticks.iter().filter(|k| k.time_s >= start && k.time_s <= end).collect();
        let (first, last) = (inside[0], inside[inside.len() - 1]);
        let counter_w = (last.energy_mj - first.energy_mj) * 1e-3 / (last.time_s - first.time_s);
        let truth_w = gpu.truth_energy_j(first.time_s, last.time_s) / (last.time_s - first.time_s);
        let counter_error = (counter_w - truth_w).abs() / truth_w;
        assert!(counter_error < 0.005, "phase {phase}: counter {counter_w:.1} W vs truth {truth_w:.1} W");

        let instant_w = mean(
            trace
                .series(&Channel::InstantMw)
                .iter()
                .filter(|r| r.time_s >= start && r.time_s <= end)
                .map(|r| r.value / 1000.0),
        );
        instant_means.push((instant_w, truth_w));
    }
    let lo = instant_means.iter().map(|m| m.0).fold(f64::INFINITY, f64::min);
    let hi = instant_means.iter().map(|m| m.0).fold(f64::NEG_INFINITY, f64::max);
    // The H100 gave 124-247 W by phase against 161 W expected.
    assert!(hi - lo > 80.0, "instant field means by phase {instant_means:?} barely move");
    let worst = instant_means.iter().map(|(m, t)| (m - t).abs() / t).fold(0.0, f64::max);
    assert!(worst > 0.25, "instant field within {worst:.2} of the truth at every phase: not gated");
}

/// DESIGN.md §1: field 185 is a 1 s moving average: a step reads as a linear 1 s ramp.
#[test]
fn h100_average_field_is_a_one_second_boxcar() {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(SimPreset::h100(), clock.clone());
    let (idle_w, busy_w) = (gpu.preset().idle_w, gpu.preset().busy_kernel_w);
    gpu.schedule(1.0, SimKernel::new(3.0, busy_w));
    let trace = record_until(open(&gpu, &[SourceKind::AverageField]), &*clock, 4.0, SamplerConfig::default()).unwrap();
    let readings: Vec<Reading> = trace
        .series(&Channel::AverageMw)
        .iter()
        .map(|r| Reading { time_s: r.time_s, value: r.value / 1000.0 })
        .collect();
    let at = |lo: f64, hi: f64| mean(readings.iter().filter(|r| r.time_s >= lo && r.time_s < hi).map(|r| r.value));
    assert!((at(0.5, 0.99) - idle_w).abs() < 1.0);
    assert!((at(2.2, 3.9) - busy_w).abs() < 1.0);
    // Before a full second has passed the average has not arrived.
    assert!(at(1.8, 1.95) < busy_w - 15.0);
    // Linear in between: least-squares slope over the middle of the ramp.
    let ramp: Vec<&Reading> = readings.iter().filter(|r| r.time_s > 1.15 && r.time_s < 1.85).collect();
    let (mt, mv) = (mean(ramp.iter().map(|r| r.time_s)), mean(ramp.iter().map(|r| r.value)));
    let slope = ramp.iter().map(|r| (r.time_s - mt) * (r.value - mv)).sum::<f64>()
        / ramp.iter().map(|r| (r.time_s - mt).powi(2)).sum::<f64>();
    let expected = busy_w - idle_w; // W per second over a 1 s boxcar
    assert!((slope - expected).abs() / expected < 0.05, "ramp slope {slope:.1} W/s, expected {expected:.1}");
    let residual = ramp.iter().map(|r| (r.value - (mv + slope * (r.time_s - mt))).abs()).fold(0.0, f64::max);
    // Reads trail their 100 ms update by up to one 5 ms poll: a staircase, at most one step off the line.
    assert!(residual < 0.1 * expected * 1.1, "largest departure from a line {residual:.1} W");
}

/// DESIGN.md §2: the K20 sensor ramps like a capacitor with time constant C = 0.83 s and,
/// read at sub-ms spacing, repeats stale values between its 66.7 Hz updates.
#[test]
fn k20_sensor_lags_with_time_constant_and_repeats_stale_values() {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(SimPreset::k20(), clock.clone());
    let (idle_w, busy_w) = (gpu.preset().idle_w, gpu.preset().busy_kernel_w);
    gpu.schedule(2.0, SimKernel::new(6.0, busy_w));
    let trace = record_until(open(&gpu, &[SourceKind::PowerUsage]), &*clock, 6.0, SamplerConfig::default()).unwrap();
    let readings = trace.series(&Channel::PowerMw);

    // Time constant: ln(busy - y) falls with slope -1/tau after the step.
    let pts: Vec<(f64, f64)> = readings
        .iter()
        .filter(|r| r.time_s > 2.05 && r.time_s < 4.5)
        .map(|r| (r.time_s, (busy_w - r.value / 1000.0).ln()))
        .collect();
    let (mt, my) = (mean(pts.iter().map(|p| p.0)), mean(pts.iter().map(|p| p.1)));
    let slope =
        pts.iter().map(|p| (p.0 - mt) * (p.1 - my)).sum::<f64>() / pts.iter().map(|p| (p.0 - mt).powi(2)).sum::<f64>();
    let tau = -1.0 / slope;
    assert!((tau - 0.833).abs() / 0.833 < 0.05, "fitted time constant {tau:.3} s");
    // One time constant after the step the reading has covered 63 % of it (give or take an update).
    let one_tau = readings.iter().find(|r| r.time_s >= 2.833).unwrap().value / 1000.0;
    let expected = idle_w + (busy_w - idle_w) * (1.0 - (-1.0f64).exp());
    assert!((one_tau - expected).abs() < 2.0, "{one_tau:.1} W at t = C, expected {expected:.1}");

    // Stale repeats: most reads repeat the previous value, in runs of ~35-40 at sub-ms spacing.
    let repeats = readings.windows(2).filter(|w| w[0].value == w[1].value).count();
    assert!(repeats as f64 / readings.len() as f64 > 0.9, "{repeats} repeats of {}", readings.len());
    let gaps: Vec<f64> = readings.windows(2).map(|w| w[1].time_s - w[0].time_s).collect();
    let min_gap = gaps.iter().copied().fold(f64::INFINITY, f64::min);
    let max_gap = gaps.iter().copied().fold(0.0, f64::max);
    // Reads are stamped mid-call, so a 4.7 ms update call shows as two ~2.5 ms gaps.
    assert!(min_gap < 0.5e-3 && max_gap > 2e-3, "gaps {min_gap:.5}..{max_gap:.5} s");
    let mut runs = Vec::new();
    let mut run = 1;
    for w in readings.windows(2) {
        if w[0].value == w[1].value {
            run += 1;
        } else {
            runs.push(run);
            run = 1;
        }
    }
    runs.sort_unstable();
    let median_run = runs[runs.len() / 2];
    assert!((30..=45).contains(&median_run), "median run of identical readings {median_run}");
}

/// The K20 has no counter, no fields and no buffer: asking for them is NotSupported.
#[test]
fn missing_sources_report_not_supported() {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(SimPreset::k20(), clock);
    let err = gpu.open_source(SourceKind::Counter).err().unwrap();
    assert!(err.to_string().contains("not supported"), "{err}");
    assert_eq!(gpu.supported_sources(), vec![SourceKind::PowerUsage]);
}
