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
