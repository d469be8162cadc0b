//! What runs on the GPU around a measurement besides the session ([`super::session`]):
//! the simulated workload, and recording an arbitrary body with the sensors sampled around
//! it (the calibration step, validation programs, `cargo energy trace`).
//!
//! On a virtual clock (the simulated GPU in tests) the body runs first and the sensors are
//! read afterwards over the same span, deterministically.

use std::sync::Arc;

use crate::clock::VirtualClock;
use crate::device::Device;
use crate::error::{Error, ErrorKind, Result};
use crate::sampling::{record_until, Sampler, SamplerConfig, WindowMarker};
use crate::sensors::SourceKind;
use crate::sim::{SimGpu, SimKernel};
use crate::trace::Trace;
use crate::workload::Workload;

/// A kernel on the simulated GPU: a duration and a power.
pub struct SimWorkload {
    gpu: SimGpu,
    kernel: SimKernel,
    /// Relative standard deviation of a batch's kernel duration (the GPU clock wanders).
    time_jitter: f64,
    seed: u64,
    batches: i64,
}

impl SimWorkload {
    /// Launches `kernel` on `gpu`, every batch taking exactly its nominal time.
    pub fn new(gpu: SimGpu, kernel: SimKernel) -> Self {
        SimWorkload { gpu, kernel, time_jitter: 0.0, seed: 0, batches: 0 }
    }

    /// Lets each batch's kernel duration vary by `relative` (standard deviation), drawn
    /// from `seed`: a real GPU's clock wanders a little, and criterion's statistics
    /// expect samples that are not all identical.
    pub fn with_time_jitter(mut self, relative: f64, seed: u64) -> Self {
        self.time_jitter = relative;
        self.seed = seed;
        self
    }
}

impl Workload for SimWorkload {
    fn run_batch(&mut self, launches: u64) -> Result<f64> {
        let mut first_start = None;
        let mut last_end = 0.0;
        let scale = 1.0 + self.time_jitter * crate::sim::noise::gaussian(self.seed, 0x77, self.batches);
        self.batches += 1;
        let kernel = SimKernel { duration_s: self.kernel.duration_s * scale.max(0.5), ..self.kernel };
        for _ in 0..launches {
            let (start, end) = self.gpu.launch(kernel);
            first_start.get_or_insert(start);
            last_end = end;
        }
        self.gpu.synchronize();
        Ok(first_start.map_or(0.0, |s| last_end - s))
    }
}

/// Runs `body` with the device's `sources` sampled around it (a sampler thread on a real
/// clock; afterwards, over the same span, on a virtual one); returns its value and the
/// trace with the marks `body` set.
pub fn record<R>(
    device: &Device,
    sources: &[SourceKind],
    body: impl FnOnce(&WindowMarker) -> Result<R>,
) -> Result<(R, Trace)> {
    let (opened, _) = device.open_sources(sources);
    if opened.is_empty() {
        return Err(Error::new(
            ErrorKind::NotSupported,
            format!("none of the sources {sources:?} works on {}", device.facts().name),
        ));
    }
    let clock = device.clock().clone();
    if clock.is_virtual() {
        let marker = WindowMarker::standalone(clock.clone());
        let begin = clock.now_s();
        let value = body(&marker)?;
        let end = clock.now_s();
        let replay = VirtualClock::starting_at(begin);
        let mut trace = record_until(opened, &replay, end, SamplerConfig::default())?;
        for mark in marker.marks() {
            trace.push_mark(mark);
        }
        return Ok((value, trace));
    }
    let sampler = Sampler::start(opened, clock, SamplerConfig::default())?;
    let marker = sampler.marker();
    let value = body(&marker);
    let trace = sampler.stop()?;
    Ok((value?, trace))
}

/// A simulated device on a virtual clock: measurements on it run in milliseconds.
pub fn virtual_sim_device(preset: crate::sim::SimPreset) -> (Device, SimGpu) {
    let clock = Arc::new(VirtualClock::starting_at(0.0));
    let gpu = SimGpu::new(preset, clock);
    (Device::simulated(gpu.clone(), "virtual simulated GPU (tests)"), gpu)
}
