//! The workloads the engine drives on a real GPU: a launch function timed by CUDA events on
//! the harness's stream (`CudaWorkload`), and library work timed by the host around its own
//! wait (`LibraryWorkload`).

use cudarc::driver::{sys, CudaEvent, CudaGraph};

use std::sync::Arc;

use super::{cuda_error, CudaGpu, Stream};
use crate::workload::{whole_quanta, whole_replays, Batch, TimeBasis, UnawaitedJudge, Workload, PROBE_MAX_LAUNCHES};
use energy_results::error::{Error, ErrorKind, Result};

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
///
/// With a CUDA graph ([`CudaWorkload::with_graph`]) the launch function runs only while
/// the graph is captured, N times; a batch then replays the graph, N launches per replay,
/// which the GPU runs back to back whatever the host's time per launch.
pub struct CudaWorkload<F: FnMut(&Stream) -> Result<()>> {
    gpu: Arc<CudaGpu>,
    timer: EventTimer,
    launch: F,
    judge: UnawaitedJudge,
    /// The launch-bound probe's spin kernel, loaded when first needed.
    spin: Option<super::spin::Spin>,
    /// The graph of captured launches, and how many it holds.
    graph: Option<(CudaGraph, u64)>,
}

impl<F: FnMut(&Stream) -> Result<()>> CudaWorkload<F> {
    /// Wraps a launch closure.
    pub fn new(gpu: Arc<CudaGpu>, launch: F) -> Result<Self> {
        let timer = gpu.timer()?;
        Ok(CudaWorkload { gpu, timer, launch, judge: UnawaitedJudge::default(), spin: None, graph: None })
    }

    /// Wraps a launch closure whose `launches` launches are captured into a CUDA graph here,
    /// once; each batch replays it. Refused, naming the cause and the fix, when the launch
    /// fails under capture (a synchronize, an allocation, a copy that waits: what a capture
    /// cannot hold) or enqueues nothing on the stream it is given (work on another stream
    /// is not captured).
    pub fn with_graph(gpu: Arc<CudaGpu>, mut launch: F, launches: u64) -> Result<Self> {
        let graph = capture(&gpu, &mut launch, launches)?;
        let mut workload = CudaWorkload::new(gpu, launch)?;
        workload.graph = Some((graph, launches));
        Ok(workload)
    }

    /// Enqueues `launches` launches on `stream`: the launch function's, or whole replays of
    /// the graph.
    fn enqueue(&mut self, stream: &Stream, launches: u64) -> Result<()> {
        match &self.graph {
            None => {
                for _ in 0..launches {
                    (self.launch)(stream)?;
                }
            }
            Some((graph, per_graph)) => {
                for _ in 0..whole_replays(launches, *per_graph)? {
                    graph.launch().map_err(|e| cuda_error("cuGraphLaunch", e))?;
                }
            }
        }
        Ok(())
    }
}

/// Why a capture failed, and what to do (`graph = N` of `#[energy_bench]`/`#[energy_test]`,
/// or [`KernelCode::graph`](crate::KernelCode::graph)).
fn capture_refused(launches: u64, detail: String) -> Error {
    Error::new(
        ErrorKind::Cuda,
        format!(
            "`graph = {launches}`: the launch function could not be captured into a CUDA graph: {detail}. A captured \
             launch may only enqueue work on the stream it is given: no synchronize, no allocation or host copy in the \
             launch (move them to `setup`), no work on another stream or a library's queue; or remove `graph`"
        ),
    )
}

/// Captures `launches` calls of `launch` on the harness's stream into a CUDA graph, checks
/// that it holds work, and uploads it.
fn capture<F: FnMut(&Stream) -> Result<()>>(gpu: &Arc<CudaGpu>, launch: &mut F, launches: u64) -> Result<CudaGraph> {
    let stream = gpu.stream().clone();
    let cuda = stream.cuda()?.clone();
    let context = gpu.cuda_context()?;
    gpu.synchronize_context()?;
    // cudarc's event tracking records and waits on an event per buffer around each launch,
    // events of work outside the capture, which a capture refuses (CUDA_ERROR_STREAM_CAPTURE_
    // ISOLATION). Everything before the capture has finished (the context synchronized
    // above) and every batch of replays ends with a context-wide synchronize, so the
    // tracking has nothing to order here: it is off while the launches are captured.
    let tracking = context.is_event_tracking();
    if tracking {
        // SAFETY: no buffer is made while it is off (the launches are only captured), and no
        // work of the context is pending (synchronized above).
        unsafe { context.disable_event_tracking() };
    }
    let began = cuda
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(|e| cuda_error("cuStreamBeginCapture", e));
    let mut failed = None;
    if began.is_ok() {
        for launch_index in 1..=launches {
            if let Err(e) = launch(&stream) {
                failed = Some((launch_index, e));
                break;
            }
        }
    }
    // The capture always ends, so that the stream is usable again, whatever failed.
    let ended = began.and_then(|()| {
        cuda.end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(|e| capture_refused(launches, format!("cuStreamEndCapture failed: {e}")))
    });
    if tracking {
        // SAFETY: as above; tracking is back as the code had it.
        unsafe { context.enable_event_tracking() };
    }
    if let Some((launch_index, e)) = failed {
        return Err(capture_refused(launches, format!("launch {launch_index} of {launches} failed: {e}")));
    }
    let graph = ended?.ok_or_else(|| capture_refused(launches, "the capture made no graph".into()))?;
    let mut nodes = 0usize;
    // SAFETY: `cu_graph` is the live graph `graph` owns; a null node array asks for the count only.
    unsafe { sys::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut nodes) }
        .result()
        .map_err(|e| cuda_error("cuGraphGetNodes", e))?;
    if nodes == 0 {
        return Err(capture_refused(
            launches,
            "nothing was enqueued on the stream the launch function was given (work launched elsewhere runs once, \
             outside the graph)"
                .into(),
        ));
    }
    graph.upload().map_err(|e| cuda_error("cuGraphUpload", e))?;
    gpu.synchronize()?;
    Ok(graph)
}

impl<F: FnMut(&Stream) -> Result<()>> Workload for CudaWorkload<F> {
    fn run(&mut self, launches: u64) -> Result<Batch> {
        let stream = self.gpu.stream().clone();
        self.timer.start(&stream)?;
        self.enqueue(&stream, launches)?;
        self.timer.stop(&stream)?;
        self.gpu.synchronize()?;
        let waited = std::time::Instant::now();
        self.gpu.synchronize_context()?;
        let unawaited_s = waited.elapsed().as_secs_f64();
        Ok(self.judge.judge(Batch { gpu_s: self.timer.elapsed_s()?, unawaited_s }))
    }

    fn graph_launches(&self) -> Option<u64> {
        self.graph.as_ref().map(|(_, launches)| *launches)
    }

    /// A spin holds the stream while the launches are enqueued; events around the launches
    /// then time them back to back. Checked: the host must have enqueued them all before the
    /// spin ended (else they were paced by the host again), with the spin lengthened and
    /// tried once more; `None` when it could not be.
    fn back_to_back_s(&mut self, launches: u64) -> Result<Option<f64>> {
        let launches = whole_quanta(launches.clamp(1, PROBE_MAX_LAUNCHES), self.launch_quantum());
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
            self.enqueue(&stream, launches)?;
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
