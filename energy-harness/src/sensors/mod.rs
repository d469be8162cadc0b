//! Sensor sources: one interface ([`SensorSource`]) over NVML, the simulated GPU and
//! replayed trace files, and the models ([`SensorModel`]) of what a reading means.

pub mod model;
pub mod nvml;
pub mod replay;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use model::SensorModel;

use crate::clock::Clock;
use crate::error::{Error, ErrorKind};
use crate::trace::{Channel, Reading};

/// The kinds of on-board power/energy source a GPU may offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SourceKind {
    /// `nvmlDeviceGetTotalEnergyConsumption`: cumulative mJ (Volta and newer).
    Counter,
    /// Field `NVML_FI_DEV_POWER_INSTANT` (186).
    InstantField,
    /// Field `NVML_FI_DEV_POWER_AVERAGE` (185).
    AverageField,
    /// `nvmlDeviceGetPowerUsage`, for GPUs without the power fields.
    PowerUsage,
    /// The driver's power sample buffer, `nvmlDeviceGetSamples(NVML_TOTAL_POWER_SAMPLES)`.
    SampleBuffer,
}

impl SourceKind {
    /// Every kind, in the order `cargo energy info` lists them.
    pub const ALL: [SourceKind; 5] = [
        SourceKind::Counter,
        SourceKind::InstantField,
        SourceKind::AverageField,
        SourceKind::PowerUsage,
        SourceKind::SampleBuffer,
    ];

    /// The trace channel its readings go to.
    pub fn channel(self) -> Channel {
        match self {
            SourceKind::Counter => Channel::CounterMj,
            SourceKind::InstantField => Channel::InstantMw,
            SourceKind::AverageField => Channel::AverageMw,
            SourceKind::PowerUsage => Channel::PowerMw,
            SourceKind::SampleBuffer => Channel::SampleMw,
        }
    }

    /// The source kind that writes a channel, if any.
    pub fn for_channel(channel: &Channel) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|k| &k.channel() == channel)
    }

    /// A short name for messages and command-line options.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Counter => "counter",
            SourceKind::InstantField => "instant",
            SourceKind::AverageField => "average",
            SourceKind::PowerUsage => "power",
            SourceKind::SampleBuffer => "samples",
        }
    }

    /// The order in which sources are preferred, by planning (which source a session's
    /// windows are sized for) and by analysis (which source a trace is read with) alike:
    /// the counter (an exact integral), the sample buffer (20 ms, short lag), the 1 s
    /// average (invertible), power usage, the gated instant field (never trusted).
    pub const PREFERENCE: [SourceKind; 5] = [
        SourceKind::Counter,
        SourceKind::SampleBuffer,
        SourceKind::AverageField,
        SourceKind::PowerUsage,
        SourceKind::InstantField,
    ];

    /// The most preferred of `kinds` ([`SourceKind::PREFERENCE`]).
    pub fn preferred(kinds: &[SourceKind]) -> Option<SourceKind> {
        SourceKind::PREFERENCE.into_iter().find(|k| kinds.contains(k))
    }

    /// The model it is corrected with when nothing else is known: the H100 measurements
    /// (DESIGN.md §1; `shared/traces/h100`).
    pub fn default_model(self) -> SensorModel {
        match self {
            SourceKind::Counter => SensorModel::Counter { period_s: 0.1 },
            SourceKind::AverageField => SensorModel::Boxcar { width_s: 1.0 },
            SourceKind::InstantField => SensorModel::Gated { gate_s: 0.025, period_s: 0.1 },
            SourceKind::SampleBuffer => SensorModel::FirstOrder { tau_s: 0.014 },
            // A reading of unstated kind: integrate it as it is unless calibrated or told.
            SourceKind::PowerUsage => SensorModel::Identity,
        }
    }

    /// How long after the instant it describes it reports it, s, when nothing else is
    /// known: `cargo energy calibrate` on an H100 (docs/results/2026-11-22-h100-calibrate)
    /// found 12.2-12.5 ms for the counter at both edges of a step, 15-20 ms for the average
    /// field, 12-16 ms for the instant field and 6 ms for the sample buffer.
    pub fn default_delay_s(self) -> f64 {
        match self {
            SourceKind::Counter => 0.012,
            SourceKind::AverageField | SourceKind::PowerUsage => 0.017,
            SourceKind::InstantField => 0.013,
            SourceKind::SampleBuffer => 0.006,
        }
    }

    /// The NVML call behind it.
    pub fn nvml_call(self) -> &'static str {
        match self {
            SourceKind::Counter => "nvmlDeviceGetTotalEnergyConsumption",
            SourceKind::InstantField => "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)",
            SourceKind::AverageField => "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_AVERAGE)",
            SourceKind::PowerUsage => "nvmlDeviceGetPowerUsage",
            SourceKind::SampleBuffer => "nvmlDeviceGetSamples(NVML_TOTAL_POWER_SAMPLES)",
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a source could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceError {
    /// The GPU or driver lacks this source: not an error of the measurement, a fact of the GPU.
    NotSupported {
        /// The source.
        kind: SourceKind,
        /// What the driver said.
        detail: String,
    },
    /// The read failed.
    Failed {
        /// The source.
        kind: SourceKind,
        /// What failed.
        detail: String,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::NotSupported { kind, detail } => {
                write!(f, "the {kind} source ({}) is not supported on this GPU: {detail}", kind.nvml_call())
            }
            SourceError::Failed { kind, detail } => {
                write!(f, "reading the {kind} source ({}) failed: {detail}", kind.nvml_call())
            }
        }
    }
}

impl std::error::Error for SourceError {}

impl From<SourceError> for Error {
    fn from(err: SourceError) -> Self {
        let kind = match err {
            SourceError::NotSupported { .. } => ErrorKind::NotSupported,
            SourceError::Failed { .. } => ErrorKind::Nvml,
        };
        Error::new(kind, err.to_string())
    }
}

/// A source of timestamped readings. The sampler thread calls [`SensorSource::read`]
/// at the source's useful rate; each call appends zero or more readings stamped on the
/// sampler's clock (a polled value at the middle of its call, a buffered sample at the
/// time it describes).
pub trait SensorSource: Send {
    /// What the source is.
    fn kind(&self) -> SourceKind;

    /// The trace channel its readings go to.
    fn channel(&self) -> Channel {
        self.kind().channel()
    }

    /// Seconds between useful reads: as fast as it can for sources whose update instants
    /// matter (the counter's ticks), slower for a buffer that only needs draining.
    fn poll_period_s(&self) -> f64;

    /// Reads the source, appending readings to `out`.
    fn read(&mut self, clock: &dyn Clock, out: &mut Vec<Reading>) -> Result<(), SourceError>;
}
