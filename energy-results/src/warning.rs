//! Warnings attached to a result: anything that makes a figure less trustworthy.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a warning is about, for code that must react (a budget test fails on throttling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// A window spans fewer counter ticks (or sensor updates) than the estimate needs.
    TooFewTicks,
    /// Active idle before and after a window differ.
    IdleShift,
    /// The source only sees part of each update period (the H100 instant field).
    GatedSource,
    /// Less steady idle before the first window than the sensor model needs.
    ShortLeadIn,
    /// A window drew less than active idle: the split or the idle level is off.
    NegativeDynamic,
    /// The GPU warmed up noticeably during the measurement.
    ThermalDrift,
    /// SM or memory clocks changed during the measurement.
    ClockChange,
    /// The GPU reported a throttle reason that slows kernels.
    Throttling,
    /// Other processes were using the GPU.
    OtherProcesses,
    /// The sampler dropped old readings to bound its memory.
    DroppedReadings,
    /// Two sources disagree on the energy of the same windows.
    SourceDisagreement,
    /// The windows' energies vary more than the precision asked for.
    Imprecise,
    /// The energy counter was reset or wrapped during the trace (outside every window).
    CounterReset,
    /// The energy per launch trended from the first window to the last.
    Drift,
    /// A rail the GPU offers was recorded but gave no figure (it failed, or its readings
    /// could not be analyzed); the board's figures stand.
    RailUnavailable,
    /// The host launched more slowly than the GPU ran the kernel: the GPU waited between
    /// launches, and the energy per launch follows the host's launch rate.
    LaunchBound,
    /// No whole sensor interval of idle lies before or after the windows: the active idle,
    /// and every dynamic figure resting on it, are unknown; the total energy stands.
    NoIdle,
    /// No idle of its own lies in the trace (a lean run of a paired sequence measures none
    /// after its first benchmark): the active idle, and the dynamic figures resting on it,
    /// were measured earlier in the run, by the benchmark named; the total energy stands.
    IdleCarried,
}

impl WarningKind {
    /// A few words for a table's cell or a summary line (`idle shift`).
    pub fn label(self) -> &'static str {
        match self {
            WarningKind::TooFewTicks => "too few ticks",
            WarningKind::IdleShift => "idle shift",
            WarningKind::GatedSource => "gated source",
            WarningKind::ShortLeadIn => "short lead-in",
            WarningKind::NegativeDynamic => "negative dynamic",
            WarningKind::ThermalDrift => "thermal drift",
            WarningKind::ClockChange => "clock change",
            WarningKind::Throttling => "throttling",
            WarningKind::OtherProcesses => "other processes",
            WarningKind::DroppedReadings => "dropped readings",
            WarningKind::SourceDisagreement => "sources disagree",
            WarningKind::Imprecise => "imprecise",
            WarningKind::CounterReset => "counter reset",
            WarningKind::Drift => "drift",
            WarningKind::RailUnavailable => "rail unavailable",
            WarningKind::LaunchBound => "launch-bound",
            WarningKind::NoIdle => "no idle measured",
            WarningKind::IdleCarried => "idle carried",
        }
    }
}

/// A warning: its kind and a sentence for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// The kind.
    pub kind: WarningKind,
    /// What happened, with the figures.
    pub message: String,
}

impl Warning {
    /// A warning of `kind`.
    pub fn new(kind: WarningKind, message: impl Into<String>) -> Self {
        Warning { kind, message: message.into() }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
