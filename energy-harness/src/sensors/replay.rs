//! A recorded trace played back as a live source: each read hands over the readings
//! whose (shifted) time has come, so the sampler and everything after it can run on
//! real recorded sensor data.

use super::{SensorSource, SourceError, SourceKind};
use crate::clock::Clock;
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{Channel, Reading, Trace};

/// Plays one channel of a trace back in (clock) time.
pub struct ReplaySource {
    kind: SourceKind,
    readings: Vec<Reading>,
    next: usize,
    /// Added to trace times to get clock times.
    offset_s: f64,
}

impl ReplaySource {
    /// Replays the channel of `kind` from `trace`, with the trace's first reading of any
    /// channel placed at clock time `start_at_s`.
    pub fn new(trace: &Trace, kind: SourceKind, start_at_s: f64) -> Result<Self> {
        let readings = trace.sorted_series(&Channel::Source(kind));
        if readings.is_empty() {
            return Err(Error::new(
                ErrorKind::NotSupported,
                format!("the trace has no {} readings to replay", kind.channel_name()),
            ));
        }
        let trace_start = trace.time_span_s().map(|(lo, _)| lo).unwrap_or(0.0);
        Ok(ReplaySource { kind, readings, next: 0, offset_s: start_at_s - trace_start })
    }

    /// Whether every reading has been handed over.
    pub fn is_exhausted(&self) -> bool {
        self.next >= self.readings.len()
    }
}

impl SensorSource for ReplaySource {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn poll_period_s(&self) -> f64 {
        0.002
    }

    fn read(&mut self, clock: &dyn Clock, out: &mut Vec<Reading>) -> Result<(), SourceError> {
        let now = clock.now_s();
        while let Some(r) = self.readings.get(self.next) {
            let time_s = r.time_s + self.offset_s;
            if time_s > now {
                break;
            }
            out.push(Reading { time_s, value: r.value });
            self.next += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::VirtualClock;
    use energy_results::trace::Channel;

    #[test]
    fn hands_over_readings_as_their_time_comes() {
        let mut trace = Trace::new();
        for (t, v) in [(10.0, 1.0), (10.5, 2.0), (11.0, 3.0)] {
            trace.push(Channel::CounterMj, Reading { time_s: t, value: v });
        }
        let mut source = ReplaySource::new(&trace, SourceKind::Counter, 0.0).unwrap();
        let clock = VirtualClock::starting_at(0.6);
        let mut out = Vec::new();
        source.read(&clock, &mut out).unwrap();
        assert_eq!(out, vec![Reading { time_s: 0.0, value: 1.0 }, Reading { time_s: 0.5, value: 2.0 }]);
        clock.advance_to(2.0);
        source.read(&clock, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        assert!(source.is_exhausted());
    }

    #[test]
    fn missing_channel_is_not_supported() {
        let err = ReplaySource::new(&Trace::new(), SourceKind::SampleBuffer, 0.0).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::NotSupported);
    }
}
