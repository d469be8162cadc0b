//! One preference order of sensor sources, for planning and analysis alike (issue 31).
//!
//! The simulated H100 without its energy counter offers the gated instant field, the 1 s
//! average, power usage and the 20 ms sample buffer. Analysis reads such a trace with the
//! sample buffer; the session used to plan its windows for the instant field (the second
//! source in listing order): 0.5 s windows where the sample buffer needs 0.15 s.

use energy_harness::unstable::device::{SimKernel, SimPreset};
use energy_harness::unstable::engine::{measure, virtual_sim_device, MeasureRequest, SimWorkload};
use energy_harness::{MeasureOptions, SourceKind};

#[test]
fn without_a_counter_the_session_plans_and_measures_with_the_same_source() {
    let mut preset = SimPreset::h100();
    assert!(preset.sensors.remove(&SourceKind::Counter).is_some());
    assert!(preset.sensors.contains_key(&SourceKind::InstantField));
    let (mut device, gpu) = virtual_sim_device(preset);
    let launch_s = 1e-3;
    let mut kernel = SimWorkload::new(gpu.clone(), SimKernel::new(launch_s, 300.0));
    let (m, _trace) = measure(&mut device, &mut kernel, MeasureRequest::new("no_counter", MeasureOptions::DEFAULT))
        .expect("a measurement without the counter");
    assert_eq!(m.source, SourceKind::SampleBuffer, "analysis prefers the sample buffer");
    // Windows as short as the sample buffer allows (0.15 s: 150 launches of 1 ms), not the
    // instant field's 0.5 s (500 launches).
    let window_s = m.launches_per_window as f64 * launch_s;
    assert!((0.14..=0.2).contains(&window_s), "windows of {window_s} s ({} launches)", m.launches_per_window);
}

#[test]
fn the_preference_order_holds_every_source_once() {
    let mut sorted = SourceKind::PREFERENCE.to_vec();
    sorted.sort();
    let mut all = SourceKind::ALL.to_vec();
    all.sort();
    assert_eq!(sorted, all);
    assert_eq!(
        SourceKind::preferred(&[SourceKind::InstantField, SourceKind::SampleBuffer]),
        Some(SourceKind::SampleBuffer)
    );
    assert_eq!(SourceKind::preferred(&[]), None);
}
