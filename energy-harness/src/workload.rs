//! The kernel under test as the measurement engine drives it, on the ground floor: the
//! CUDA layer ([`crate::cuda::CudaWorkload`]), the simulator
//! ([`crate::engine::run::SimWorkload`]) and test doubles implement it; the engine
//! ([`crate::engine`]) runs it.

use energy_results::error::{Error, ErrorKind, Result};

/// Below this a context-wide synchronize's wait is its own cost, not work left running, s
/// (an idle `cuCtxSynchronize` returns in microseconds).
pub const UNAWAITED_FLOOR_S: f64 = 200e-6;

/// The most launches the launch-bound probe queues behind its spin kernel
/// ([`Workload::back_to_back_s`]): well within what a stream holds pending (about a thousand
/// launches) before the host blocks.
pub const PROBE_MAX_LAUNCHES: u64 = 256;

/// Work left running after a batch beyond this share of the batch's time is refused: the
/// window would close before its work ends (the next window, or the idle after the last,
/// would be charged with it).
pub const UNAWAITED_SHARE: f64 = 0.005;

/// Above this share of its batch (and [`HOST_DELAY_MAX_S`]), a context-wide synchronize's
/// wait after the batch is work left running at once; below it, the first such wait of a
/// measurement is taken for the host's own delay ([`UnawaitedJudge`]).
pub const UNAWAITED_ONCE_SHARE: f64 = 0.1;

/// The longest wait of a context-wide synchronize taken for the host's own delay once,
/// whatever the batch's length, s: a host slow to return from a wait is slow by its own
/// time, not by a share of the batch (1.784 ms after a 14.5 ms batch of an FMA loop on the
/// harness's own stream, an H200 under gVisor, research/results/2026-12-01-ci-gate call 15).
pub const HOST_DELAY_MAX_S: f64 = 5e-3;

/// Tells work left running from a delay of the host: a context-wide synchronize can wait
/// with nothing left on the GPU when the host is slow to return from it (seen on H200s under
/// gVisor: 0.284 ms after a 23.9 ms batch of 100 saxpy launches and 1.784 ms after a 14.5 ms
/// batch of FMA loops, each on the harness's own stream; research/results/2026-12-01-ci-gate).
/// Work left on another stream shows in every batch, so the first batch of a measurement
/// that seems to leave less than [`UNAWAITED_ONCE_SHARE`] of itself or [`HOST_DELAY_MAX_S`]
/// running is let through once, and the next one that does is refused as always
/// ([`Batch::awaited`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UnawaitedJudge {
    /// Whether a batch was let through already.
    forgiven: bool,
}

impl UnawaitedJudge {
    /// `batch` as the measurement takes it: its unawaited time cleared the first time it
    /// is small, kept otherwise.
    pub fn judge(&mut self, batch: Batch) -> Batch {
        let host_delay = batch.unawaited_s < (UNAWAITED_ONCE_SHARE * batch.gpu_s).max(HOST_DELAY_MAX_S);
        if batch.left_work_running() && !self.forgiven && host_delay {
            self.forgiven = true;
            return Batch { unawaited_s: 0.0, ..batch };
        }
        batch
    }
}

pub use energy_results::measured::TimeBasis;

/// One batch of launches as it ran: its time, and how long the GPU was still busy with
/// work the batch's own wait did not cover.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Batch {
    /// The batch's time, s, read as [`Workload::time_basis`] says: CUDA events on the
    /// harness's stream, or, for work the harness does not launch (a library's own streams or
    /// queue), the host clock from the first launch to the end of the wait (exact on the
    /// simulator).
    pub gpu_s: f64,
    /// How long a context-wide synchronize waited after the batch's own wait had returned,
    /// s: GPU work the launches enqueued where the wait does not look (another stream of
    /// the context). Zero when nothing was left.
    pub unawaited_s: f64,
}

impl Batch {
    /// A batch of `gpu_s` seconds that left nothing running.
    pub fn timed(gpu_s: f64) -> Self {
        Batch { gpu_s, unawaited_s: 0.0 }
    }

    /// Whether the GPU was still busy with this batch's work when its wait returned, by
    /// more than [`UNAWAITED_FLOOR_S`] and [`UNAWAITED_SHARE`] of the batch.
    pub fn left_work_running(&self) -> bool {
        self.unawaited_s > UNAWAITED_FLOOR_S && self.unawaited_s > UNAWAITED_SHARE * self.gpu_s
    }

    /// The batch's time, or an error ([`ErrorKind::UnawaitedWork`]) naming the fix when it
    /// left work running ([`Batch::left_work_running`]): a figure of that batch would be
    /// wrong, so none is made.
    pub fn awaited(self) -> Result<f64> {
        if self.left_work_running() {
            return Err(Error::new(
                ErrorKind::UnawaitedWork,
                format!(
                    "the GPU was still busy {:.3} ms after the launches' wait returned ({:.1} % of the batch's {:.3} ms): \
                     the launch function enqueued work on a stream other than the one it was given (a library's own \
                     stream, a stream of its own), so the window would close before its work ends and no figure of it \
                     would be right. Launch on the stream the harness hands in, or declare how the work is waited for: \
                     `any_stream` in `#[energy_bench(...)]`/`#[energy_test(...)]` for CUDA work on any stream of the GPU \
                     (candle, raw cudarc), `wait = your_sync_fn` for a library with a queue of its own (burn's `B::sync`, \
                     cubecl's `block_on(client.sync())`, wgpu's `device.poll`); see the book's chapter \"candle, burn, cubecl, wgpu\"",
                    self.unawaited_s * 1e3,
                    100.0 * self.unawaited_s / self.gpu_s.max(1e-12),
                    self.gpu_s * 1e3
                ),
            ));
        }
        Ok(self.gpu_s)
    }
}

/// The kernel under test, as the runner drives it.
pub trait Workload {
    /// Enqueues `launches` back-to-back launches, waits for them to finish and returns
    /// how the batch ran ([`Batch`]).
    fn run(&mut self, launches: u64) -> Result<Batch>;

    /// What its batches' time is read from: CUDA events, unless it is library work timed
    /// on the host clock.
    fn time_basis(&self) -> TimeBasis {
        TimeBasis::CudaEvents
    }

    /// [`Workload::run`], its time in seconds; an error when the batch left work running
    /// ([`Batch::awaited`]).
    fn run_batch(&mut self, launches: u64) -> Result<f64> {
        self.run(launches)?.awaited()
    }

    /// When the last batch's work began and ended on the engine's clock, s, where the device
    /// itself knows it (the simulated GPU: its kernels' places on its timeline); the window
    /// is then marked by that span rather than by the host around the batch, so that a host
    /// slow to wake from the batch's wait (a loaded machine) adds no idle to the window.
    /// `None` (a real GPU) marks the window from the host, before the first launch and after
    /// the wait returned.
    fn device_span_s(&self) -> Option<(f64, f64)> {
        None
    }

    /// The launches of each replay when they run as a CUDA graph ([`KernelCode::graph`]);
    /// `None` when each is launched by the host.
    ///
    /// [`KernelCode::graph`]: crate::KernelCode::graph
    fn graph_launches(&self) -> Option<u64> {
        None
    }

    /// The launches it runs at a time: every batch's count is a multiple of it. One, but a
    /// CUDA graph of N captured launches replays N at a time.
    fn launch_quantum(&self) -> u64 {
        self.graph_launches().unwrap_or(1).max(1)
    }

    /// The time per launch of `launches` launches run back to back on the GPU, with no wait
    /// for the host between them, s: the launches are enqueued while the stream is held busy
    /// (a spin kernel of the harness), then run as fast as the GPU runs them. Against the
    /// windows' time per launch it shows how long the GPU waited for the host between
    /// launches (a launch-bound benchmark). `None` where it cannot be measured (library work
    /// on streams of its own, the checked device).
    fn back_to_back_s(&mut self, launches: u64) -> Result<Option<f64>> {
        let _ = launches;
        Ok(None)
    }
}

/// Refuses a batch of `launches` that is no whole number of replays of a CUDA graph of
/// `per_graph`: the engine sizes every batch in whole replays, so one that is not is a bug.
pub fn whole_replays(launches: u64, per_graph: u64) -> Result<u64> {
    if per_graph == 0 || !launches.is_multiple_of(per_graph) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{launches} launches are no whole number of replays of a CUDA graph of {per_graph} (a harness bug: \
                 please report it)"
            ),
        ));
    }
    Ok(launches / per_graph)
}

/// `launches` rounded up to a whole number of `quantum` (at least one quantum): the count a
/// workload that runs `quantum` launches at a time ([`Workload::launch_quantum`]) is given.
pub fn whole_quanta(launches: u64, quantum: u64) -> u64 {
    let quantum = quantum.max(1);
    launches.max(1).div_ceil(quantum).saturating_mul(quantum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_whole_quanta() {
        assert_eq!(whole_quanta(1, 1), 1);
        assert_eq!(whole_quanta(0, 1), 1);
        assert_eq!(whole_quanta(1, 100), 100);
        assert_eq!(whole_quanta(100, 100), 100);
        assert_eq!(whole_quanta(101, 100), 200);
        assert_eq!(whole_quanta(7, 0), 7);
    }

    #[test]
    fn a_host_delay_once_is_let_through_and_work_left_running_is_refused() {
        let delayed = Batch { gpu_s: 23.882e-3, unawaited_s: 0.284e-3 };
        assert!(delayed.left_work_running());
        let mut judge = UnawaitedJudge::default();
        assert!(judge.judge(delayed).awaited().is_ok(), "once: the host's delay");
        assert!(judge.judge(Batch::timed(0.02)).awaited().is_ok());
        let err = judge.judge(delayed).awaited().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnawaitedWork, "twice: work left running");
        // A host's delay of milliseconds after a short batch, once: let through.
        let mut judge = UnawaitedJudge::default();
        assert!(judge.judge(Batch { gpu_s: 14.514e-3, unawaited_s: 1.784e-3 }).awaited().is_ok());
        // Work left running by a large share and beyond a host's delay is refused at once.
        let mut judge = UnawaitedJudge::default();
        assert!(judge.judge(Batch { gpu_s: 0.02, unawaited_s: 0.006 }).awaited().is_err());
        let mut judge = UnawaitedJudge::default();
        assert!(judge.judge(Batch { gpu_s: 0.2, unawaited_s: 0.03 }).awaited().is_err());
    }
}
