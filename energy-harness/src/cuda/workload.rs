//! The workloads the engine drives on a real GPU: a launch function timed by CUDA events on
//! the harness's stream (`CudaWorkload`), and library work timed by the host around its own
//! wait (`LibraryWorkload`).

use cudarc::driver::CudaEvent;

use std::sync::Arc;

use super::{cuda_error, CudaGpu, Stream};
use crate::workload::{Batch, TimeBasis, UnawaitedJudge, Workload};
use energy_results::error::Result;

/// Two CUDA events around a stretch of the stream.
pub struct EventTimer {
    pub(super) start: CudaEvent,
    pub(super) stop: CudaEvent,
}

impl EventTimer {
    /// Records the start event.
    pub fn start(&self, stream: &Stream) -> Result<()> {
        self.start.record(stream.cuda()?).map_err(|e| cuda_error("cuEventRecord", e))
    }

    /// Records the stop event.
    pub fn stop(&self, stream: &Stream) -> Result<()> {
        self.stop.record(stream.cuda()?).map_err(|e| cuda_error("cuEventRecord", e))
    }

    /// Waits for the stop event and returns the time between the two, s.
    pub fn elapsed_s(&self) -> Result<f64> {
        self.start
            .elapsed_ms(&self.stop)
            .map(|ms| f64::from(ms) * 1e-3)
            .map_err(|e| cuda_error("cuEventElapsedTime", e))
    }
}

/// A kernel under test on a real GPU, launched on the harness's stream: `launch` enqueues
/// one launch on the stream it is given; batches are timed with events. After the stream's
/// synchronize a context-wide one shows whether the launches left work elsewhere
/// ([`Batch::unawaited_s`]).
pub struct CudaWorkload<F: FnMut(&Stream) -> Result<()>> {
    gpu: Arc<CudaGpu>,
    timer: EventTimer,
    launch: F,
    judge: UnawaitedJudge,
    /// The launch-bound probe's spin kernel, loaded when first needed.
    spin: Option<super::spin::Spin>,
}

impl<F: FnMut(&Stream) -> Result<()>> CudaWorkload<F> {
    /// Wraps a launch closure.
    pub fn new(gpu: Arc<CudaGpu>, launch: F) -> Result<Self> {
        let timer = gpu.timer()?;
        Ok(CudaWorkload { gpu, timer, launch, judge: UnawaitedJudge::default(), spin: None })
    }
}

/// The most launches the probe queues behind its spin: well within what a stream holds
/// pending (about a thousand launches) before the host blocks.
const PROBE_MAX_LAUNCHES: u64 = 256;

impl<F: FnMut(&Stream) -> Result<()>> Workload for CudaWorkload<F> {
    fn run(&mut self, launches: u64) -> Result<Batch> {
        let stream = self.gpu.stream().clone();
        self.timer.start(&stream)?;
        for _ in 0..launches {
            (self.launch)(&stream)?;
        }
        self.timer.stop(&stream)?;
        self.gpu.synchronize()?;
        let waited = std::time::Instant::now();
        self.gpu.synchronize_context()?;
        let unawaited_s = waited.elapsed().as_secs_f64();
        Ok(self.judge.judge(Batch { gpu_s: self.timer.elapsed_s()?, unawaited_s }))
    }

    /// A spin holds the stream while the launches are enqueued; events around the launches
    /// then time them back to back. Checked: the host must have enqueued them all before the
    /// spin ended (else they were paced by the host again), with the spin lengthened and
    /// tried once more; `None` when it could not be.
    fn back_to_back_s(&mut self, launches: u64) -> Result<Option<f64>> {
        let launches = launches.clamp(1, PROBE_MAX_LAUNCHES);
        if self.spin.is_none() {
            self.spin = Some(super::spin::Spin::load(&self.gpu)?);
        }
        let stream = self.gpu.stream().clone();
        let mut hold_s = 2e-3;
        for _ in 0..2 {
            let spin = self.spin.as_ref().expect("loaded above");
            let enqueue = std::time::Instant::now();
            spin.hold(&stream, hold_s)?;
            self.timer.start(&stream)?;
            for _ in 0..launches {
                (self.launch)(&stream)?;
            }
            self.timer.stop(&stream)?;
            let enqueued_s = enqueue.elapsed().as_secs_f64();
            self.gpu.synchronize()?;
            let span_s = self.timer.elapsed_s()?;
            // Half the spin as a margin: the spin starts when its launch reaches the GPU.
            if enqueued_s < hold_s / 2.0 {
                return Ok(Some(span_s / launches as f64));
            }
            hold_s = (4.0 * enqueued_s).min(0.1);
        }
        Ok(None)
    }
}

/// GPU work the harness does not launch (a library with streams or a queue of its own):
/// `launch` makes one call (it may ignore the stream it is given), `wait` waits for the
/// library (its own synchronize), and a context-wide synchronize follows, so a batch ends
/// only when every CUDA stream of the GPU's context is done. A batch is timed on the host
/// clock, from its first call to the end of that synchronize: one wait per batch, never
/// one per call.
pub struct LibraryWorkload<F: FnMut(&Stream) -> Result<()>, W: FnMut() -> Result<()>> {
    gpu: Arc<CudaGpu>,
    launch: F,
    wait: W,
}

impl<F: FnMut(&Stream) -> Result<()>, W: FnMut() -> Result<()>> LibraryWorkload<F, W> {
    /// Wraps a call and the library's wait.
    pub fn new(gpu: Arc<CudaGpu>, launch: F, wait: W) -> Self {
        LibraryWorkload { gpu, launch, wait }
    }
}

impl<F: FnMut(&Stream) -> Result<()>, W: FnMut() -> Result<()>> Workload for LibraryWorkload<F, W> {
    fn run(&mut self, launches: u64) -> Result<Batch> {
        let stream = self.gpu.stream().clone();
        let start = std::time::Instant::now();
        for _ in 0..launches {
            (self.launch)(&stream)?;
        }
        (self.wait)().map_err(|e| e.context("the benchmark's wait function failed"))?;
        self.gpu.synchronize_context()?;
        Ok(Batch::timed(start.elapsed().as_secs_f64()))
    }

    fn time_basis(&self) -> TimeBasis {
        TimeBasis::HostClock
    }
}
