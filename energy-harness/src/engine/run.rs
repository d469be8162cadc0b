//! What runs on the GPU around a measurement besides the session ([`super::session`]):
//! the simulated workload, and recording an arbitrary body with the sensors sampled around
//! it (the calibration step, validation programs, `cargo energy trace`).
//!
//! On a virtual clock (the simulated GPU in tests) the body runs first and the sensors are
//! read afterwards over the same span, deterministically.

use std::sync::Arc;

use crate::clock::VirtualClock;
use crate::device::Device;
use crate::sampling::{record_until, Sampler, SamplerConfig, WindowMarker};
use crate::sensors::SourceKind;
use crate::sim::{SimGpu, SimKernel};
use crate::workload::{whole_replays, Batch, TimeBasis, Workload};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::Trace;

/// How long the simulated host takes to launch one kernel, s: a launch loop on a fast host
/// with CUDA's driver API (3-4 µs per launch on the H100s and H200s of issue 63 for a
/// kernel of about 2 µs). A kernel shorter than this leaves the GPU waiting between
/// launches, as on a real GPU.
pub const SIM_HOST_LAUNCH_S: f64 = 3.0e-6;

/// A kernel on the simulated GPU: a duration and a power, launched by a host that takes
/// `SIM_HOST_LAUNCH_S` (3 µs) per launch.
pub struct SimWorkload {
    gpu: SimGpu,
    kernel: SimKernel,
    /// The host's time per launch: launch i of a batch starts no earlier than i times this
    /// after the batch's first.
    host_launch_s: f64,
    /// Relative standard deviation of a batch's kernel duration (the GPU clock wanders).
    time_jitter: f64,
    seed: u64,
    batches: i64,
    /// The last batch's first kernel start and last kernel end.
    span_s: Option<(f64, f64)>,
    /// The launches of each replay when they run as a CUDA graph, one host launch per replay
    /// ([`SimWorkload::with_graph`]); `None`: one host launch per kernel.
    graph: Option<u64>,
}

impl SimWorkload {
    /// Launches `kernel` on `gpu`, every batch taking exactly its nominal time.
    pub fn new(gpu: SimGpu, kernel: SimKernel) -> Self {
        SimWorkload {
            gpu,
            kernel,
            host_launch_s: SIM_HOST_LAUNCH_S,
            time_jitter: 0.0,
            seed: 0,
            batches: 0,
            span_s: None,
            graph: None,
        }
    }

    /// Launches replayed as a CUDA graph of `launches` captured launches: the host launches
    /// the graph once per `launches` kernels, which the GPU then runs back to back.
    pub fn with_graph(mut self, launches: u64) -> Self {
        self.graph = Some(launches.max(1));
        self
    }

    /// A host that takes `seconds` to launch one kernel (a slower or faster host than
    /// `SIM_HOST_LAUNCH_S`).
    pub fn with_host_launch_s(mut self, seconds: f64) -> Self {
        self.host_launch_s = seconds.max(0.0);
        self
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
    fn run(&mut self, launches: u64) -> Result<Batch> {
        let mut first_start = None;
        let mut last_end = 0.0;
        let scale = 1.0 + self.time_jitter * crate::sim::noise::gaussian(self.seed, 0x77, self.batches);
        self.batches += 1;
        let kernel = SimKernel { duration_s: self.kernel.duration_s * scale.max(0.5), ..self.kernel };
        let per_host_launch = self.launch_quantum();
        whole_replays(launches, per_host_launch)?;
        let host_start = self.gpu.clock().now_s();
        for i in 0..launches {
            // One host launch per replay of the graph (per kernel without one).
            let host_launch = (i / per_host_launch) as f64 * self.host_launch_s;
            let (start, end) = self.gpu.schedule(host_start + host_launch, kernel);
            first_start.get_or_insert(start);
            last_end = end;
        }
        self.gpu.synchronize();
        self.span_s = first_start.map(|s| (s, last_end));
        Ok(Batch::timed(first_start.map_or(0.0, |s| last_end - s)))
    }

    fn device_span_s(&self) -> Option<(f64, f64)> {
        self.span_s
    }

    fn graph_launches(&self) -> Option<u64> {
        self.graph
    }

    /// As on a real GPU: a spin kernel holds the stream while every launch is enqueued, then
    /// the launches run back to back; their span over their count.
    fn back_to_back_s(&mut self, launches: u64) -> Result<Option<f64>> {
        let launches = launches.max(1);
        let now = self.gpu.clock().now_s();
        let hold_s = 2.0 * launches as f64 * self.host_launch_s + 1e-3;
        self.gpu.schedule(now, SimKernel::new(hold_s, self.kernel.power_w));
        let mut span: Option<(f64, f64)> = None;
        for _ in 0..launches {
            let (start, end) = self.gpu.schedule(now, self.kernel);
            span = Some((span.map_or(start, |s| s.0), end));
        }
        self.gpu.synchronize();
        Ok(span.map(|(start, end)| (end - start) / launches as f64))
    }
}

/// How the harness waits for a simulated library's work ([`SimLibraryWorkload`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimLibraryWait {
    /// As for a kernel on the harness's stream: events there and that stream's synchronize
    /// (which sees none of the library's work), then a context-wide synchronize, whose wait
    /// is reported as work left running (a CUDA library on a stream of its own).
    HarnessStream,
    /// As for a library outside CUDA (wgpu) measured without its wait: nothing the harness
    /// does waits for it; the work outlives the window and only the power after it shows.
    Nothing,
    /// The library's wait and a context-wide synchronize (`any_stream`, `wait = …`): the
    /// batch ends when its work does, timed on the host clock.
    LibraryWait,
    /// A context-wide synchronize alone (`any_stream`), timed on the host clock: it waits
    /// for what the library has handed CUDA, not for calls it still holds on the host
    /// ([`SimLibraryWorkload::holding_on_host`], burn's fusion queue).
    ContextSync,
}

/// A library on the simulated GPU that owns its queue: a call enqueues one kernel and
/// returns at once, unless `queue_depth` of its kernels are already queued (a CUDA stream
/// holds about a thousand pending launches), when it waits for the oldest to end. The GPU
/// drains the queue behind the host, so without a wait the work outlives the batch by up
/// to `queue_depth` kernels.
pub struct SimLibraryWorkload {
    gpu: SimGpu,
    kernel: SimKernel,
    queue_depth: usize,
    wait: SimLibraryWait,
    queued_ends: std::collections::VecDeque<f64>,
    host_queue: u64,
    held: u64,
    /// The first start and the last end of the kernels handed to the GPU in this batch.
    launched_s: Option<(f64, f64)>,
    /// The last batch's span, when its wait covered all of its work.
    span_s: Option<(f64, f64)>,
}

impl SimLibraryWorkload {
    /// `kernel` called through a library whose queue holds `queue_depth` kernels (at least
    /// one), waited for as `wait` says.
    pub fn new(gpu: SimGpu, kernel: SimKernel, queue_depth: usize, wait: SimLibraryWait) -> Self {
        SimLibraryWorkload {
            gpu,
            kernel,
            queue_depth: queue_depth.max(1),
            wait,
            queued_ends: Default::default(),
            host_queue: 1,
            held: 0,
            launched_s: None,
            span_s: None,
        }
    }

    /// The library holds calls on the host and hands them to the GPU `calls` at a time (a
    /// fusion queue, burn's): only its own wait ([`SimLibraryWait::LibraryWait`]) flushes
    /// the rest.
    pub fn holding_on_host(mut self, calls: u64) -> Self {
        self.host_queue = calls.max(1);
        self
    }

    /// Hands the calls held on the host to the GPU's queue, waiting for room as a stream
    /// does.
    fn flush(&mut self) {
        let clock = self.gpu.clock().clone();
        for _ in 0..std::mem::take(&mut self.held) {
            let now = clock.now_s();
            while self.queued_ends.front().is_some_and(|&end| end <= now) {
                self.queued_ends.pop_front();
            }
            if self.queued_ends.len() >= self.queue_depth {
                self.wait_for_oldest();
            }
            let (start, end) = self.gpu.launch(self.kernel);
            self.queued_ends.push_back(end);
            self.launched_s = Some((self.launched_s.map_or(start, |(first, _)| first), end));
        }
    }

    /// Waits until the oldest queued kernel ends.
    fn wait_for_oldest(&mut self) {
        if let Some(oldest) = self.queued_ends.pop_front() {
            let clock = self.gpu.clock();
            let now = clock.now_s();
            if oldest > now {
                clock.sleep_s(oldest - now);
            }
        }
    }
}

impl Workload for SimLibraryWorkload {
    fn run(&mut self, launches: u64) -> Result<Batch> {
        let clock = self.gpu.clock().clone();
        let start = clock.now_s();
        self.launched_s = None;
        self.span_s = None;
        for _ in 0..launches {
            self.held += 1;
            if self.held >= self.host_queue {
                self.flush();
            }
        }
        let host_s = clock.now_s() - start;
        if self.wait == SimLibraryWait::Nothing {
            return Ok(Batch::timed(host_s));
        }
        // The library's wait flushes what it holds; then it or the context-wide synchronize
        // waits until the GPU's queue has drained.
        if self.wait == SimLibraryWait::LibraryWait {
            self.flush();
        }
        self.gpu.synchronize();
        self.queued_ends.clear();
        // A wait that covered every call: the window is the kernels' span and the batch's
        // host time ends when the last kernel did (a host slow to wake adds nothing).
        let awaited_end = match self.launched_s {
            Some((first, last)) if self.held == 0 && self.wait != SimLibraryWait::HarnessStream => {
                self.span_s = Some((first, last));
                last
            }
            _ => clock.now_s(),
        };
        Ok(match self.wait {
            SimLibraryWait::LibraryWait | SimLibraryWait::ContextSync => Batch::timed(awaited_end - start),
            // Events on the harness's idle stream read the host's time; the context-wide
            // synchronize then waited for the library's queue.
            _ => Batch { gpu_s: host_s, unawaited_s: clock.now_s() - start - host_s },
        })
    }

    fn time_basis(&self) -> TimeBasis {
        match self.wait {
            SimLibraryWait::LibraryWait | SimLibraryWait::ContextSync => TimeBasis::HostClock,
            SimLibraryWait::HarnessStream | SimLibraryWait::Nothing => TimeBasis::CudaEvents,
        }
    }

    fn device_span_s(&self) -> Option<(f64, f64)> {
        self.span_s
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
