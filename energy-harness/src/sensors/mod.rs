//! Reading sensor sources: one interface ([`SensorSource`]) over NVML, the simulated GPU
//! and replayed trace files. What each source is (its table, [`SourceKind`]) and what a
//! reading means ([`SensorModel`]) live on the ground floor, in [`energy_results::source`].

pub mod nvml;
pub mod replay;

use std::fmt;

pub use energy_results::source::{Delivery, NvmlCall, Quantity, SensorModel, SourceKind};

use crate::clock::Clock;
use energy_results::error::{Error, ErrorKind};
use energy_results::trace::{Channel, Reading};

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
        Channel::Source(self.kind())
    }

    /// Seconds between useful reads: as fast as it can for sources whose update instants
    /// matter (the counter's ticks), slower for a buffer that only needs draining. The
    /// source's own ([`SourceKind::poll_period_s`]) unless the reader knows better.
    fn poll_period_s(&self) -> f64 {
        self.kind().poll_period_s()
    }

    /// Reads the source, appending readings to `out`.
    fn read(&mut self, clock: &dyn Clock, out: &mut Vec<Reading>) -> Result<(), SourceError>;
}
