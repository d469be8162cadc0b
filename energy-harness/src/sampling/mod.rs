//! The sampler: Arafa's multi-threaded synchronized monitoring. One thread reads the
//! chosen sources at their useful rates, everything stamped on one clock, while the
//! launching thread sets window marks on the same clock. The blocking counter read
//! (~2.4 ms on the H100) therefore never sits on the launch path.
//!
//! Memory is bounded: past [`SamplerConfig::max_readings`] the oldest half of the
//! readings is dropped (counted in the trace's `dropped_readings` metadata). A source
//! that fails stops being read and the failure is returned by [`Sampler::stop`]; a rail
//! (recorded beside the board's source, never measuring it) that fails only stops being read,
//! its failure noted in the trace ([`RAIL_FAILED`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::clock::{Clock, SharedClock};
use crate::sensors::{SensorSource, SourceKind};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{Reading, Trace, WindowEdge, WindowMark};

/// Sampler settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerConfig {
    /// Readings kept before the oldest half is dropped.
    pub max_readings: usize,
    /// Longest sleep when no source is due, s (bounds how late a due read can start).
    pub max_idle_sleep_s: f64,
    /// The pause after each read of a source polled as fast as it answers (the energy
    /// counter), s. NVML reads back to back starve the measured program's own driver calls:
    /// on an H200 a candle matmul (cuBLAS, a new output tensor per call) took 23-27 ms per
    /// call beside a reader polling the counter without pause, 4.3 ms with 0.1 ms pauses and
    /// 2.9 ms with 1 ms pauses (no run without a reader was made; the harness's own windows
    /// then read 2.7 ms on H100s; research/results/2026-11-27-library-work).
    pub poll_gap_s: f64,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            // ~400 s of an H100 (counter at ~420/s, fields at 200/s each, samples 50/s),
            // 16 bytes each: 64 MB at most.
            max_readings: 4_000_000,
            max_idle_sleep_s: 0.0005,
            poll_gap_s: POLL_GAP_S,
        }
    }
}

/// The pause after each read of a source polled as fast as it answers, s
/// ([`SamplerConfig::poll_gap_s`]): a tick is then located to within one call and this
/// pause, and the counter's tick grid (fitted over every tick) to far less.
pub const POLL_GAP_S: f64 = 0.001;

/// Reads the GPU's clock and temperature (see [`crate::gpu::GpuState`]).
pub type StateProbe = Box<dyn FnMut() -> crate::gpu::GpuState + Send>;

/// Trace channel of the SM clock the sampler records beside the sensors, MHz.
pub const STATE_SM_CLOCK: &str = "sm_clock_mhz";
/// Trace channel of the die temperature the sampler records beside the sensors, °C.
pub const STATE_TEMPERATURE: &str = "temperature_c";
/// How often the state is read, s.
const STATE_PERIOD_S: f64 = 0.05;

/// Trace metadata key of a rail that failed while recorded (its value says why): the rail
/// stopped being read, the measurement went on.
pub const RAIL_FAILED: &str = "rail_failed";

/// Schedules reads of several sources: each is read when its poll period has passed
/// since its last read began; a period of 0 means "as fast as it answers".
struct PollLoop {
    sources: Vec<Box<dyn SensorSource>>,
    state: Option<StateProbe>,
    next_state_s: f64,
    next_due_s: Vec<f64>,
    failed: Vec<bool>,
    batch: Vec<Reading>,
    config: SamplerConfig,
}

impl PollLoop {
    fn new(sources: Vec<Box<dyn SensorSource>>, config: SamplerConfig) -> Self {
        let n = sources.len();
        PollLoop {
            sources,
            state: None,
            next_state_s: f64::NEG_INFINITY,
            next_due_s: vec![f64::NEG_INFINITY; n],
            failed: vec![false; n],
            batch: Vec::with_capacity(256),
            config,
        }
    }

    /// Performs the next due read (or sleeps until one is due) and stores what it got.
    fn step(&mut self, clock: &dyn Clock, sink: &Recording) {
        let now = clock.now_s();
        if let Some(probe) = &mut self.state {
            if now >= self.next_state_s {
                let state = probe();
                let stamp = 0.5 * (now + clock.now_s());
                for (channel, value) in [(STATE_SM_CLOCK, state.sm_clock_mhz), (STATE_TEMPERATURE, state.temperature_c)]
                {
                    if let Some(v) = value {
                        sink.append(
                            &energy_results::trace::Channel::Other(channel.into()),
                            &[Reading { time_s: stamp, value: f64::from(v) }],
                        );
                    }
                }
                self.next_state_s = now + STATE_PERIOD_S;
            }
        }
        let due = (0..self.sources.len())
            .filter(|&i| !self.failed[i])
            .min_by(|&a, &b| self.next_due_s[a].total_cmp(&self.next_due_s[b]));
        let Some(i) = due else {
            clock.sleep_s(self.config.max_idle_sleep_s);
            return;
        };
        if self.next_due_s[i] > now {
            clock.sleep_s((self.next_due_s[i] - now).min(self.config.max_idle_sleep_s));
            return;
        }
        self.batch.clear();
        let result = self.sources[i].read(clock, &mut self.batch);
        let after = clock.now_s();
        if after <= now {
            // A source that answers in zero time (a replay) must not spin a virtual clock.
            clock.sleep_s(1e-6);
        }
        let period = self.sources[i].poll_period_s();
        self.next_due_s[i] = if period > 0.0 {
            // Fixed rate; after falling behind (a blocking read elsewhere), skip missed
            // slots rather than burst.
            (self.next_due_s[i] + period).max(now)
        } else {
            // As fast as it answers, after a pause that leaves the driver to the measured
            // program, and after whatever else is due.
            clock.now_s() + self.config.poll_gap_s
        };
        match result {
            Ok(()) => sink.append(&self.sources[i].channel(), &self.batch),
            Err(e) if !self.sources[i].kind().measures_board() => {
                self.failed[i] = true;
                lock(&sink.trace).set_metadata(RAIL_FAILED, format!("{}: {e}", self.sources[i].kind()));
            }
            Err(e) => {
                self.failed[i] = true;
                sink.fail(
                    Error::from(e).context(format!("sampler stopped reading the {} source", self.sources[i].kind())),
                );
            }
        }
    }
}

/// Readings, marks and the first failure, shared between the threads.
struct Recording {
    trace: Mutex<Trace>,
    dropped: Mutex<usize>,
    marks: Arc<Mutex<Vec<WindowMark>>>,
    error: Mutex<Option<Error>>,
    max_readings: usize,
}

/// Copies what a recording's trace notes besides its readings (its comments, which hold its
/// metadata: a rail's failure) onto `to`, the trace that replaces it when readings are dropped.
fn carry_notes(from: &Trace, to: &mut Trace) {
    for comment in from.comments() {
        to.add_comment(comment.clone());
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Recording {
    fn new(max_readings: usize) -> Self {
        Recording {
            trace: Mutex::new(Trace::new()),
            dropped: Mutex::new(0),
            marks: Arc::new(Mutex::new(Vec::new())),
            error: Mutex::new(None),
            max_readings: max_readings.max(16),
        }
    }

    fn append(&self, channel: &energy_results::trace::Channel, readings: &[Reading]) {
        if readings.is_empty() {
            return;
        }
        let mut trace = lock(&self.trace);
        for r in readings {
            trace.push(channel.clone(), *r);
        }
        let count = trace.reading_count();
        if count > self.max_readings {
            // Drop the oldest half of everything: amortized O(1) per reading.
            let mut kept = Trace::new();
            let cutoff = {
                let mut times: Vec<f64> =
                    trace.channels().flat_map(|c| trace.series(c).iter().map(|r| r.time_s)).collect();
                let mid = times.len() / 2;
                let (_, t, _) = times.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
                *t
            };
            let channels: Vec<_> = trace.channels().cloned().collect();
            for c in channels {
                for r in trace.series(&c).iter().filter(|r| r.time_s >= cutoff) {
                    kept.push(c.clone(), *r);
                }
            }
            *lock(&self.dropped) += count - kept.reading_count();
            carry_notes(&trace, &mut kept);
            *trace = kept;
        }
    }

    /// Forgets the readings before `from_s` and every mark: what a session continuing this
    /// recording must not see of the one before it (its windows, its busy stretch). A
    /// sensor's readings are kept from its first update after `from_s`: a reading before
    /// that repeats a value that covers time before `from_s` (a counter's tick during the
    /// busy stretch), and would bring part of it into the first interval.
    fn forget_before(&self, from_s: f64) {
        let mut trace = lock(&self.trace);
        let mut kept = Trace::new();
        let channels: Vec<_> = trace.channels().cloned().collect();
        for c in channels {
            let series = trace.series(&c);
            let first = series.partition_point(|r| r.time_s < from_s);
            let cut = match c {
                energy_results::trace::Channel::Source(_) => (first.max(1)..series.len())
                    .find(|&i| series[i].value != series[i - 1].value)
                    .unwrap_or(series.len()),
                _ => first,
            };
            for r in &series[cut..] {
                kept.push(c.clone(), *r);
            }
        }
        carry_notes(&trace, &mut kept);
        *trace = kept;
        *lock(&self.dropped) = 0;
        lock(&self.marks).clear();
    }

    fn fail(&self, err: Error) {
        let mut slot = lock(&self.error);
        if slot.is_none() {
            *slot = Some(err);
        }
    }

    fn snapshot(&self) -> Trace {
        let mut trace = lock(&self.trace).clone();
        for m in lock(&self.marks).iter() {
            trace.push_mark(*m);
        }
        let dropped = *lock(&self.dropped);
        if dropped > 0 {
            trace.set_metadata("dropped_readings", dropped);
        }
        trace
    }
}

/// Sets window marks from the launching thread. Cheap to clone and to call.
#[derive(Clone)]
pub struct WindowMarker {
    marks: Arc<Mutex<Vec<WindowMark>>>,
    clock: SharedClock,
}

impl WindowMarker {
    /// A marker that only collects marks (for runs sampled afterwards on a virtual clock).
    pub fn standalone(clock: SharedClock) -> Self {
        WindowMarker { marks: Arc::new(Mutex::new(Vec::new())), clock }
    }

    /// The marks set so far.
    pub fn marks(&self) -> Vec<WindowMark> {
        lock(&self.marks).clone()
    }

    /// The clock marks are taken on.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// Marks the start of window `index` now; returns the time marked.
    pub fn start(&self, index: u32) -> f64 {
        self.at(index, WindowEdge::Start, self.clock.now_s())
    }

    /// Marks the end of window `index` now; returns the time marked.
    pub fn end(&self, index: u32) -> f64 {
        self.at(index, WindowEdge::End, self.clock.now_s())
    }

    /// Marks an edge at a time already taken on the sampler's clock.
    pub fn at(&self, index: u32, edge: WindowEdge, time_s: f64) -> f64 {
        lock(&self.marks).push(WindowMark { time_s, index, edge });
        time_s
    }
}

/// A running sampler thread.
pub struct Sampler {
    recording: Arc<Recording>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    clock: SharedClock,
    source_names: Vec<String>,
}

impl Sampler {
    /// Starts a thread reading `sources` on `clock`.
    pub fn start(sources: Vec<Box<dyn SensorSource>>, clock: SharedClock, config: SamplerConfig) -> Result<Self> {
        Self::start_with_state(sources, None, clock, config)
    }

    /// Starts a thread reading `sources`, and the GPU state through `state` every 50 ms.
    pub fn start_with_state(
        sources: Vec<Box<dyn SensorSource>>,
        state: Option<StateProbe>,
        clock: SharedClock,
        config: SamplerConfig,
    ) -> Result<Self> {
        if sources.is_empty() {
            return Err(Error::new(ErrorKind::Sampler, "the sampler needs at least one sensor source"));
        }
        let source_names = sources.iter().map(|s| s.kind().name().to_string()).collect();
        let recording = Arc::new(Recording::new(config.max_readings));
        let stop = Arc::new(AtomicBool::new(false));
        let thread_recording = Arc::clone(&recording);
        let thread_stop = Arc::clone(&stop);
        let thread_clock = Arc::clone(&clock);
        let handle = std::thread::Builder::new()
            .name("energy-sampler".into())
            .spawn(move || {
                let mut poll = PollLoop::new(sources, config);
                poll.state = state;
                while !thread_stop.load(Ordering::Acquire) {
                    poll.step(&*thread_clock, &thread_recording);
                }
            })
            .map_err(|e| Error::new(ErrorKind::Sampler, format!("could not start the sampler thread: {e}")))?;
        Ok(Sampler { recording, stop, handle: Some(handle), clock, source_names })
    }

    /// A handle for setting window marks from the launching thread.
    pub fn marker(&self) -> WindowMarker {
        WindowMarker { marks: Arc::clone(&self.recording.marks), clock: Arc::clone(&self.clock) }
    }

    /// The clock everything is stamped on.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// A copy of what has been recorded so far.
    pub fn snapshot(&self) -> Trace {
        self.recording.snapshot()
    }

    /// The first source failure so far, if any.
    pub fn error(&self) -> Option<Error> {
        lock(&self.recording.error).clone()
    }

    /// Stops the thread and returns the trace, or the first source failure.
    pub fn stop(mut self) -> Result<Trace> {
        self.halt()?;
        if let Some(err) = self.error() {
            return Err(err);
        }
        let mut trace = self.recording.snapshot();
        trace.set_metadata("sources", self.source_names.join(", "));
        Ok(trace)
    }

    fn halt(&mut self) -> Result<()> {
        self.stop.store(true, Ordering::Release);
        if let Some(handle) = self.handle.take() {
            handle.join().map_err(|_| Error::new(ErrorKind::Sampler, "the sampler thread panicked"))?;
        }
        Ok(())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// What a measurement session records with: the sampler thread on a real clock, or, on a
/// virtual clock (the simulated GPU in tests), the same polling run on the caller's thread
/// to catch up with the device clock whenever a snapshot is asked for. One API for both,
/// so the session protocol is the same on either.
pub enum Recorder {
    /// A sampler thread reading the sources while the kernels run.
    Thread(Sampler),
    /// Polling on a replay clock that follows the device's virtual clock.
    Virtual(Box<VirtualRecorder>),
}

/// The virtual-clock side of [`Recorder`].
pub struct VirtualRecorder {
    poll: PollLoop,
    replay: crate::clock::VirtualClock,
    device_clock: SharedClock,
    recording: Recording,
    source_names: Vec<String>,
}

impl VirtualRecorder {
    fn catch_up(&mut self) -> Result<()> {
        let until = self.device_clock.now_s();
        while self.replay.now_s() < until {
            self.poll.step(&self.replay, &self.recording);
        }
        match lock(&self.recording.error).clone() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}

impl Recorder {
    /// Starts recording `sources` on `clock`.
    pub fn start(
        sources: Vec<Box<dyn SensorSource>>,
        state: Option<StateProbe>,
        clock: SharedClock,
        config: SamplerConfig,
    ) -> Result<Self> {
        if !clock.is_virtual() {
            return Sampler::start_with_state(sources, state, clock, config).map(Recorder::Thread);
        }
        if sources.is_empty() {
            return Err(Error::new(ErrorKind::Sampler, "the sampler needs at least one sensor source"));
        }
        let source_names = sources.iter().map(|s| s.kind().name().to_string()).collect();
        let mut poll = PollLoop::new(sources, config);
        poll.state = state;
        Ok(Recorder::Virtual(Box::new(VirtualRecorder {
            poll,
            replay: crate::clock::VirtualClock::starting_at(clock.now_s()),
            device_clock: clock,
            recording: Recording::new(config.max_readings),
            source_names,
        })))
    }

    /// A handle for setting window marks.
    pub fn marker(&self) -> WindowMarker {
        match self {
            Recorder::Thread(s) => s.marker(),
            Recorder::Virtual(v) => {
                WindowMarker { marks: Arc::clone(&v.recording.marks), clock: Arc::clone(&v.device_clock) }
            }
        }
    }

    /// The recording as of now: on a virtual clock caught up with the device's; the first
    /// source failure is an error.
    fn current(&mut self) -> Result<&Recording> {
        match self {
            Recorder::Thread(s) => match s.error() {
                Some(err) => Err(err),
                None => Ok(&s.recording),
            },
            Recorder::Virtual(v) => {
                v.catch_up()?;
                Ok(&v.recording)
            }
        }
    }

    /// What has been recorded up to now, marks included; the first source failure is an error.
    pub fn snapshot(&mut self) -> Result<Trace> {
        Ok(self.current()?.snapshot())
    }

    /// Stops recording and returns the trace, or the first source failure.
    pub fn stop(self) -> Result<Trace> {
        match self {
            Recorder::Thread(s) => s.stop(),
            mut virtual_clock => virtual_clock.recorded(),
        }
    }

    /// What has been recorded up to now, as [`Recorder::stop`] returns it, recording on (the
    /// next session on the device continues it, [`Recorder::forget_before`]).
    pub fn recorded(&mut self) -> Result<Trace> {
        let mut trace = self.snapshot()?;
        let names = match self {
            Recorder::Thread(s) => &s.source_names,
            Recorder::Virtual(v) => &v.source_names,
        };
        trace.set_metadata("sources", names.join(", "));
        Ok(trace)
    }

    /// Forgets the readings before `from_s` and every window mark, recording on: a session
    /// that continues this recording sees only the idle the one before it left, not its
    /// windows.
    pub fn forget_before(&mut self, from_s: f64) -> Result<()> {
        self.current()?.forget_before(from_s);
        Ok(())
    }

    /// How many updates of `kind`'s readings (a reading whose value differs from the one
    /// before it: a counter's tick) were read after `after_s`; the first source failure is an
    /// error.
    pub fn updates_after(&mut self, kind: SourceKind, after_s: f64) -> Result<usize> {
        let trace = lock(&self.current()?.trace);
        let series = trace.series(&energy_results::trace::Channel::Source(kind));
        Ok(series.windows(2).rev().take_while(|p| p[1].time_s > after_s).filter(|p| p[1].value != p[0].value).count())
    }

    /// Whether it is still recording every source it was started with that measures the
    /// board (a failure is kept for [`Recorder::snapshot`] to return).
    pub fn healthy(&self) -> bool {
        match self {
            Recorder::Thread(s) => s.error().is_none(),
            Recorder::Virtual(v) => lock(&v.recording.error).is_none(),
        }
    }
}

/// Runs the same polling as the sampler thread on the caller's thread until `clock`
/// reaches `until_s`: with a [`crate::clock::VirtualClock`] and simulated sources this
/// synthesizes a trace deterministically and fast.
pub fn record_until(
    sources: Vec<Box<dyn SensorSource>>,
    clock: &dyn Clock,
    until_s: f64,
    config: SamplerConfig,
) -> Result<Trace> {
    let recording = Recording::new(config.max_readings);
    let mut poll = PollLoop::new(sources, config);
    while clock.now_s() < until_s {
        poll.step(clock, &recording);
    }
    if let Some(err) = lock(&recording.error).take() {
        return Err(err);
    }
    Ok(recording.snapshot())
}

#[cfg(test)]
mod tests;
