//! A [`Trace`]: timestamped sensor readings on one clock, plus the kernel window marks
//! set by the launching thread. Written and read as `energy-trace v1` CSV ([`mod@format`]).

pub mod format;
pub mod legacy;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::source::{Quantity, SourceKind};

/// What a series of readings measures, and in which unit: a sensor source's readings
/// (named and measured as its row of the source table says: `counter_mj` in mJ, `sample_mw`
/// in mW), or anything else a trace holds (the sampler's clock and temperature, a channel
/// of a later version), kept and never analyzed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Channel {
    /// A sensor source's readings.
    Source(SourceKind),
    /// Any other channel: kept, never analyzed.
    Other(String),
}

// The channels of the first sources by their former variant names, for code written
// against them (and `match` patterns).
#[allow(non_upper_case_globals)]
impl Channel {
    /// Cumulative energy counter in mJ (`nvmlDeviceGetTotalEnergyConsumption`).
    pub const CounterMj: Channel = Channel::Source(SourceKind::Counter);
    /// `NVML_FI_DEV_POWER_INSTANT` (field 186) in mW.
    pub const InstantMw: Channel = Channel::Source(SourceKind::InstantField);
    /// `NVML_FI_DEV_POWER_AVERAGE` (field 185) in mW.
    pub const AverageMw: Channel = Channel::Source(SourceKind::AverageField);
    /// The driver's power sample buffer (`nvmlDeviceGetSamples`) in mW.
    pub const SampleMw: Channel = Channel::Source(SourceKind::SampleBuffer);
    /// A power reading of unstated kind in mW (`nvmlDeviceGetPowerUsage`, an older GPU's sensor).
    pub const PowerMw: Channel = Channel::Source(SourceKind::PowerUsage);
}

impl Channel {
    /// The channel of every source the harness knows, in [`SourceKind::ALL`]'s order.
    pub const KNOWN: [Channel; SourceKind::COUNT] = {
        let mut known = [Channel::CounterMj; SourceKind::COUNT];
        let mut i = 0;
        while i < SourceKind::COUNT {
            // (`replace` and `forget`: a constant may not drop a value, even one without a String.)
            std::mem::forget(std::mem::replace(&mut known[i], Channel::Source(SourceKind::ALL[i])));
            i += 1;
        }
        known
    };

    /// The name in trace files.
    pub fn name(&self) -> &str {
        match self {
            Channel::Source(kind) => kind.channel_name(),
            Channel::Other(name) => name,
        }
    }

    /// The channel of a trace-file name; unknown names become [`Channel::Other`].
    pub fn from_name(name: &str) -> Channel {
        match SourceKind::ALL.into_iter().find(|k| k.channel_name() == name) {
            Some(kind) => Channel::Source(kind),
            None => Channel::Other(name.to_string()),
        }
    }

    /// The source whose readings it holds, if any.
    pub fn source(&self) -> Option<SourceKind> {
        match self {
            Channel::Source(kind) => Some(*kind),
            Channel::Other(_) => None,
        }
    }

    /// Whether readings are power in mW (as opposed to cumulative energy or unknown).
    pub fn is_power(&self) -> bool {
        self.source().is_some_and(|k| k.quantity() == Quantity::Power)
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One reading: the time it describes on the trace clock, and its value in the channel's unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Reading {
    /// Seconds on the trace clock.
    pub time_s: f64,
    /// Value in the channel's unit (mJ for the counter, mW for power).
    pub value: f64,
}

/// Which edge of a kernel window a mark is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum WindowEdge {
    /// The launching thread is about to enqueue the window's first launch.
    Start,
    /// The launching thread saw the window's last launch complete.
    End,
}

/// A window marker set by the launching thread.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowMark {
    /// Seconds on the trace clock.
    pub time_s: f64,
    /// 0-based window index.
    pub index: u32,
    /// Start or end.
    pub edge: WindowEdge,
}

/// The index of a marked busy stretch that is not a measured window (a warm-up): it is
/// kept out of the idle levels and the edge splits, and out of the results.
pub const AUXILIARY_WINDOW: u32 = u32::MAX;

/// The index of the guard before the first measured window: launches of the kernel itself,
/// back to back, between the warm-up and window 0, so that window 0's start falls where the
/// power is the kernel's steady power (the warm-up's batches wait for each other, and its
/// stretch may hold the benchmark's setup). Auxiliary ([`is_auxiliary_window`]).
pub const GUARD_BEFORE_WINDOW: u32 = u32::MAX - 2;

/// The index of the guard after the last measured window: launches of the kernel itself,
/// so that the last window's end falls where the power is steady, and the busy stretch's
/// step down to idle falls in the guard. Auxiliary ([`is_auxiliary_window`]).
pub const GUARD_AFTER_WINDOW: u32 = u32::MAX - 3;

/// Whether a window index marks a busy stretch that is not measured: the warm-up
/// ([`AUXILIARY_WINDOW`]) or a guard ([`GUARD_BEFORE_WINDOW`], [`GUARD_AFTER_WINDOW`]).
/// Such a stretch takes part in the edge splits (its busy time is never idle) but is kept
/// out of the results.
pub fn is_auxiliary_window(index: u32) -> bool {
    matches!(index, AUXILIARY_WINDOW | GUARD_BEFORE_WINDOW | GUARD_AFTER_WINDOW)
}

/// A kernel window: the span from a start mark to the end mark of the same index.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Window {
    /// 0-based window index.
    pub index: u32,
    /// Start, seconds on the trace clock.
    pub start_s: f64,
    /// End, seconds on the trace clock.
    pub end_s: f64,
}

impl Window {
    /// Length in seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// Timestamped readings per channel, window marks and free-form header comments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    comments: Vec<String>,
    series: BTreeMap<Channel, Vec<Reading>>,
    marks: Vec<WindowMark>,
}

impl Trace {
    /// An empty trace.
    pub fn new() -> Self {
        Trace::default()
    }

    /// Adds a header comment (a line without the leading `# `). `key: value` comments
    /// are found again by [`Trace::metadata`].
    pub fn add_comment(&mut self, comment: impl Into<String>) {
        self.comments.push(comment.into());
    }

    /// Adds a `key: value` header comment.
    pub fn set_metadata(&mut self, key: &str, value: impl fmt::Display) {
        self.comments.push(format!("{key}: {value}"));
    }

    /// The header comments in order.
    pub fn comments(&self) -> &[String] {
        &self.comments
    }

    /// The value of the last `key: value` header comment with this key.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.comments.iter().rev().find_map(|c| {
            let (k, v) = c.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    }

    /// Appends a reading to a channel.
    pub fn push(&mut self, channel: Channel, reading: Reading) {
        self.series.entry(channel).or_default().push(reading);
    }

    /// Appends a window mark.
    pub fn push_mark(&mut self, mark: WindowMark) {
        self.marks.push(mark);
    }

    /// The readings of a channel, in the order recorded (empty if the channel is absent).
    pub fn series(&self, channel: &Channel) -> &[Reading] {
        self.series.get(channel).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The readings of a channel sorted by time (stable, so equal times keep their order).
    pub fn sorted_series(&self, channel: &Channel) -> Vec<Reading> {
        let mut readings = self.series(channel).to_vec();
        readings.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        readings
    }

    /// The channels present, known ones first.
    pub fn channels(&self) -> impl Iterator<Item = &Channel> {
        self.series.keys()
    }

    /// Number of readings over all channels.
    pub fn reading_count(&self) -> usize {
        self.series.values().map(Vec::len).sum()
    }

    /// The window marks in the order recorded.
    pub fn marks(&self) -> &[WindowMark] {
        &self.marks
    }

    /// Pairs the marks into windows, sorted by start time.
    ///
    /// Errors when an index has a start without an end (or the reverse), a repeated
    /// edge, or an end before its start.
    pub fn windows(&self) -> Result<Vec<Window>> {
        let mut by_index: BTreeMap<u32, (Option<f64>, Option<f64>)> = BTreeMap::new();
        for mark in &self.marks {
            let entry = by_index.entry(mark.index).or_default();
            let slot = match mark.edge {
                WindowEdge::Start => &mut entry.0,
                WindowEdge::End => &mut entry.1,
            };
            if slot.is_some() {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("window {} has two {} marks", mark.index, edge_channel_name(mark.edge)),
                ));
            }
            *slot = Some(mark.time_s);
        }
        let mut windows = Vec::with_capacity(by_index.len());
        for (index, (start, end)) in by_index {
            match (start, end) {
                (Some(start_s), Some(end_s)) if end_s >= start_s => windows.push(Window { index, start_s, end_s }),
                (Some(start_s), Some(end_s)) => {
                    return Err(Error::new(
                        ErrorKind::Format,
                        format!("window {index} ends ({end_s} s) before it starts ({start_s} s)"),
                    ))
                }
                (Some(_), None) => {
                    return Err(Error::new(
                        ErrorKind::Format,
                        format!("window {index} has a window_start mark but no window_end"),
                    ))
                }
                (None, _) => {
                    return Err(Error::new(
                        ErrorKind::Format,
                        format!("window {index} has a window_end mark but no window_start"),
                    ))
                }
            }
        }
        windows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        Ok(windows)
    }

    /// The earliest and latest time of any reading or mark.
    pub fn time_span_s(&self) -> Option<(f64, f64)> {
        let times = self.series.values().flatten().map(|r| r.time_s).chain(self.marks.iter().map(|m| m.time_s));
        times.fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((lo, hi)) => Some((lo.min(t), hi.max(t))),
        })
    }

    /// Moves every reading and mark by `offset_s` (to put a recorded trace's origin at zero, say).
    pub fn shift_time(&mut self, offset_s: f64) {
        for reading in self.series.values_mut().flatten() {
            reading.time_s += offset_s;
        }
        for mark in &mut self.marks {
            mark.time_s += offset_s;
        }
    }
}

/// The trace-file channel name of a window edge.
pub(crate) fn edge_channel_name(edge: WindowEdge) -> &'static str {
    match edge {
        WindowEdge::Start => "window_start",
        WindowEdge::End => "window_end",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(time_s: f64, index: u32, edge: WindowEdge) -> WindowMark {
        WindowMark { time_s, index, edge }
    }

    #[test]
    fn windows_pair_marks_by_index() {
        let mut trace = Trace::new();
        trace.push_mark(mark(3.0, 1, WindowEdge::Start));
        trace.push_mark(mark(1.0, 0, WindowEdge::Start));
        trace.push_mark(mark(2.0, 0, WindowEdge::End));
        trace.push_mark(mark(4.0, 1, WindowEdge::End));
        let windows = trace.windows().unwrap();
        assert_eq!(windows.len(), 2);
        assert_eq!(windows[0].index, 0);
        assert_eq!(windows[1].duration_s(), 1.0);
    }

    #[test]
    fn unpaired_or_reversed_marks_are_errors() {
        let mut trace = Trace::new();
        trace.push_mark(mark(1.0, 0, WindowEdge::Start));
        assert!(trace.windows().unwrap_err().message().contains("no window_end"));
        trace.push_mark(mark(0.5, 0, WindowEdge::End));
        assert!(trace.windows().unwrap_err().message().contains("before it starts"));
        trace.push_mark(mark(0.7, 0, WindowEdge::End));
        assert!(trace.windows().unwrap_err().message().contains("two window_end"));
    }

    #[test]
    fn metadata_reads_key_value_comments() {
        let mut trace = Trace::new();
        trace.add_comment("energy measured on a real GPU");
        trace.set_metadata("device", "NVIDIA H100 80GB HBM3");
        trace.set_metadata("device", "NVIDIA H100: second");
        assert_eq!(trace.metadata("device"), Some("NVIDIA H100: second"));
        assert_eq!(trace.metadata("driver"), None);
    }
}
