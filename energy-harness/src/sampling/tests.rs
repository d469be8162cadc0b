//! Unit tests of `sampling`.

use super::*;
use crate::clock::{MonotonicClock, VirtualClock};
use crate::sensors::{SourceError, SourceKind};
use crate::sim::{SimGpu, SimPreset};
use energy_results::trace::Channel;

#[test]
fn dropping_readings_keeps_the_recordings_notes() {
    let reading = |t: f64| Reading { time_s: t, value: t };
    // The oldest half dropped past the bound, and everything before a cut: a comment and a
    // rail's failure stay with the readings that remain.
    let recording = Recording::new(16);
    lock(&recording.trace).add_comment(String::from("a note"));
    lock(&recording.trace).set_metadata(RAIL_FAILED, "memory: gone");
    let readings: Vec<Reading> = (0..20).map(|i| reading(f64::from(i))).collect();
    recording.append(&Channel::Other("x".into()), &readings);
    assert!(*lock(&recording.dropped) > 0);
    recording.forget_before(15.0);
    let trace = lock(&recording.trace);
    assert_eq!(trace.series(&Channel::Other("x".into())).first().map(|r| r.time_s), Some(15.0));
    assert_eq!(trace.comments(), ["a note".to_string(), format!("{RAIL_FAILED}: memory: gone")]);
    assert_eq!(trace.metadata(RAIL_FAILED), Some("memory: gone"));
}

#[test]
fn virtual_recording_polls_each_source_at_its_rate() {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(SimPreset::h100(), clock.clone());
    let trace = record_until(gpu.open_all_sources(), &*clock, 2.0, SamplerConfig::default()).unwrap();
    let counter = trace.series(&Channel::CounterMj).len();
    // 2.4 ms counter reads 1 ms apart, fields every 5 ms, the buffer every 0.25 s.
    assert!((540..=640).contains(&counter), "{counter} counter reads in 2 s");
    let average = trace.series(&Channel::AverageMw).len();
    assert!((330..=420).contains(&average), "{average} average reads in 2 s");
    let samples = trace.series(&Channel::SampleMw).len();
    // Drained every 0.25 s: the last drain at ~1.75 s holds the samples up to then.
    assert!((80..=95).contains(&samples), "{samples} buffered samples in 2 s");
}

struct Failing;
impl SensorSource for Failing {
    fn kind(&self) -> SourceKind {
        SourceKind::PowerUsage
    }
    fn poll_period_s(&self) -> f64 {
        0.001
    }
    fn read(&mut self, _: &dyn Clock, _: &mut Vec<Reading>) -> Result<(), SourceError> {
        Err(SourceError::Failed { kind: SourceKind::PowerUsage, detail: "GPU is lost".into() })
    }
}

#[test]
fn thread_marks_windows_and_stops_cleanly() {
    let clock: SharedClock = MonotonicClock::shared();
    let gpu = SimGpu::new(SimPreset::h100(), clock.clone());
    let sampler = Sampler::start(gpu.open_all_sources(), clock.clone(), SamplerConfig::default()).unwrap();
    let marker = sampler.marker();
    let start = marker.start(0);
    gpu.launch(crate::sim::SimKernel::new(0.05, 272.0));
    gpu.synchronize();
    let end = marker.end(0);
    // Real time on a possibly loaded machine: wait for the counter reads rather than a fixed time.
    let give_up = clock.now_s() + 5.0;
    while sampler.snapshot().series(&Channel::CounterMj).len() <= 10 && clock.now_s() < give_up {
        clock.sleep_s(0.01);
    }
    let trace = sampler.stop().unwrap();
    let windows = trace.windows().unwrap();
    assert_eq!(windows.len(), 1);
    assert_eq!((windows[0].start_s, windows[0].end_s), (start, end));
    assert!(trace.series(&Channel::CounterMj).len() > 10);
    // Every source of the preset, by name, in the order opened.
    let names: Vec<&str> = gpu.supported_sources().iter().map(|k| k.name()).collect();
    assert!(names.starts_with(&["counter", "instant", "average", "power", "samples"]), "{names:?}");
    assert_eq!(trace.metadata("sources"), Some(names.join(", ").as_str()));
}

#[test]
fn a_failing_source_is_reported_by_stop() {
    let clock: SharedClock = MonotonicClock::shared();
    let sampler = Sampler::start(vec![Box::new(Failing)], clock.clone(), SamplerConfig::default()).unwrap();
    clock.sleep_s(0.01);
    assert!(sampler.error().is_some());
    let err = sampler.stop().unwrap_err();
    assert!(err.message().contains("GPU is lost"), "{err}");
    assert!(err.message().contains("power source"), "{err}");
}

#[test]
fn memory_stays_bounded() {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(SimPreset::h100(), clock.clone());
    let config = SamplerConfig { max_readings: 1000, ..SamplerConfig::default() };
    let trace = record_until(gpu.open_all_sources(), &*clock, 10.0, config).unwrap();
    assert!(trace.reading_count() <= 1000);
    assert!(trace.metadata("dropped_readings").is_some());
    // What is kept is the most recent part.
    let counter = trace.sorted_series(&Channel::CounterMj);
    assert!(counter.last().unwrap().time_s > 9.9);
}

#[test]
fn no_sources_is_an_error() {
    let err = Sampler::start(Vec::new(), MonotonicClock::shared(), SamplerConfig::default()).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Sampler);
}
