//! Everything about a sensor source in one place, on the ground floor (the trace, the
//! readers in `sensors`, the simulator and the engine stand on it): [`SourceKind`] and its
//! row of [`SOURCE_TABLE`] — its one name (shared with the macros through
//! [`energy_units::sources`]), the NVML call behind it, its trace channel, the model
//! ([`model`]: what a reading means) and reporting delay it is corrected with when nothing
//! else is known, how often it is read, where it stands in the one preference order,
//! whether it is trusted, and its role.
//!
//! Planning, recording, analysis, calibration, the selftest, the simulator, the CLI and the
//! result files all read a source's facts from here; none of them matches on a kind to
//! learn one. Adding a source is a variant, a row, its name in `energy_units::sources` and
//! (to simulate it) the preset that has it.

use std::fmt;

use energy_units::sources::{self as names, SourceName};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub mod model;

pub use energy_units::sources::Role;
pub use model::SensorModel;

/// The kinds of on-board power/energy source a GPU may offer. Its facts are its row of
/// [`SOURCE_TABLE`] ([`SourceKind::facts`]); it is written by its one name (`"counter"`), and
/// files from before that name read too (`"Counter"`, `"SampleBuffer"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
    /// The GPU-memory power rail: field `NVML_FI_DEV_POWER_AVERAGE` (185) in
    /// `NVML_POWER_SCOPE_MEMORY` (nvidia-smi's "GPU Memory Power Readings").
    MemoryRail,
}

/// What a source's readings are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Cumulative energy in mJ: an exact integral that advances at ticks.
    Energy,
    /// Power in mW.
    Power,
}

/// How a source's readings arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Polled: each read returns the current value, stamped at the middle of the call.
    Polled,
    /// Buffered by the driver: each read drains the samples since the last one, each
    /// stamped by the driver at the instant it describes.
    Buffered,
}

/// The NVML call a source reads, as data: the NVML layer performs it, the table says which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvmlCall {
    /// `nvmlDeviceGetTotalEnergyConsumption`: cumulative mJ.
    TotalEnergy,
    /// `nvmlDeviceGetPowerUsage`: mW.
    PowerUsage,
    /// `nvmlDeviceGetFieldValues` for one power field (mW) in one power scope.
    Field {
        /// `NVML_FI_DEV_POWER_*`: [`FIELD_POWER_AVERAGE`] or [`FIELD_POWER_INSTANT`].
        id: u32,
        /// `NVML_POWER_SCOPE_*`: [`SCOPE_GPU`] for the board, [`SCOPE_MEMORY`] for its memory.
        scope: u32,
    },
    /// `nvmlDeviceGetSamples(NVML_TOTAL_POWER_SAMPLES)`: the driver's buffer of mW samples.
    PowerSamples,
}

impl NvmlCall {
    /// What its readings are.
    pub const fn quantity(self) -> Quantity {
        match self {
            NvmlCall::TotalEnergy => Quantity::Energy,
            _ => Quantity::Power,
        }
    }

    /// How its readings arrive.
    pub const fn delivery(self) -> Delivery {
        match self {
            NvmlCall::PowerSamples => Delivery::Buffered,
            _ => Delivery::Polled,
        }
    }
}

/// `NVML_FI_DEV_POWER_AVERAGE`: the 1 s average power field.
pub const FIELD_POWER_AVERAGE: u32 = 185;
/// `NVML_FI_DEV_POWER_INSTANT`: the instant power field.
pub const FIELD_POWER_INSTANT: u32 = 186;
/// `NVML_POWER_SCOPE_GPU`: a power field's board-wide value (the scope of a zeroed request).
pub const SCOPE_GPU: u32 = 0;
/// `NVML_POWER_SCOPE_MEMORY`: a power field's value for the GPU's memory rail.
pub const SCOPE_MEMORY: u32 = 2;

/// One source's facts: a row of [`SOURCE_TABLE`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceFacts {
    /// The kind this row describes.
    pub kind: SourceKind,
    /// Its one name and role, from the list the macros share ([`energy_units::sources`]).
    pub id: SourceName,
    /// How result and calibration files spelled it before the one name, read still.
    pub legacy_name: Option<&'static str>,
    /// The NVML call behind it, for messages.
    pub call: &'static str,
    /// The NVML call behind it, as the NVML layer performs it.
    pub nvml: NvmlCall,
    /// Its trace channel's name (`counter_mj`, `sample_mw`): the unit is the call's.
    pub channel: &'static str,
    /// The model it is corrected with when nothing else is known: the H100 measurements
    /// (DESIGN.md §1; `shared/traces/h100`).
    pub default_model: SensorModel,
    /// How long after the instant it describes it reports it, s, when nothing else is
    /// known: `cargo energy calibrate` on an H100 (research/results/2026-11-22-h100-calibrate).
    pub default_delay_s: f64,
    /// Seconds between useful reads: 0 for as fast as it answers (the counter's tick
    /// instants matter), longer for a field that updates every 100 ms or a buffer that only
    /// needs draining.
    pub poll_period_s: f64,
    /// Its place in the one preference order ([`SourceKind::PREFERENCE`]): lower is preferred.
    pub rank: u8,
    /// Whether its energy can be taken at its word: false for a sensor that sees only part
    /// of each period (a gate) or whose response is not measured (an assumed model), whose
    /// figures the harness reports as such.
    pub trusted: bool,
    /// The source recorded beside it, when it measures, as a check on its figure.
    pub cross_check: Option<SourceKind>,
}

/// Every source's facts, one row per [`SourceKind`] in its order.
pub const SOURCE_TABLE: &[SourceFacts] = &[
    SourceFacts {
        kind: SourceKind::Counter,
        id: names::COUNTER,
        legacy_name: Some("Counter"),
        call: "nvmlDeviceGetTotalEnergyConsumption",
        nvml: NvmlCall::TotalEnergy,
        channel: "counter_mj",
        // 100 ms ticks at a stable phase, the exact integral (DESIGN.md §1).
        default_model: SensorModel::Counter { period_s: 0.1 },
        // 12.2-12.5 ms at both edges of a step.
        default_delay_s: 0.012,
        // As fast as the blocking call allows (~2.4 ms on the H100): tick instants are
        // located to within one call.
        poll_period_s: 0.0,
        rank: 0,
        trusted: true,
        cross_check: Some(SourceKind::SampleBuffer),
    },
    SourceFacts {
        kind: SourceKind::InstantField,
        id: names::INSTANT,
        legacy_name: Some("InstantField"),
        call: "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)",
        nvml: NvmlCall::Field { id: FIELD_POWER_INSTANT, scope: SCOPE_GPU },
        channel: "instant_mw",
        // Sees ~25 ms of each 100 ms period (a square wave read 124-247 W by phase).
        default_model: SensorModel::Gated { gate_s: 0.025, period_s: 0.1 },
        default_delay_s: 0.013,
        // Updates every 100 ms; 5 ms locates each update well enough.
        poll_period_s: 0.005,
        rank: 4,
        trusted: false,
        cross_check: None,
    },
    SourceFacts {
        kind: SourceKind::AverageField,
        id: names::AVERAGE,
        legacy_name: Some("AverageField"),
        call: "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_AVERAGE)",
        nvml: NvmlCall::Field { id: FIELD_POWER_AVERAGE, scope: SCOPE_GPU },
        channel: "average_mw",
        // A 1 s moving average (a linear 1 s ramp after a step), invertible.
        default_model: SensorModel::Boxcar { width_s: 1.0 },
        default_delay_s: 0.017,
        poll_period_s: 0.005,
        rank: 2,
        trusted: true,
        cross_check: None,
    },
    SourceFacts {
        kind: SourceKind::PowerUsage,
        id: names::POWER,
        legacy_name: Some("PowerUsage"),
        call: "nvmlDeviceGetPowerUsage",
        nvml: NvmlCall::PowerUsage,
        channel: "power_mw",
        // A reading of unstated kind: integrated as it is unless calibrated or told.
        default_model: SensorModel::Identity,
        default_delay_s: 0.017,
        poll_period_s: 0.005,
        rank: 3,
        trusted: true,
        cross_check: None,
    },
    SourceFacts {
        kind: SourceKind::SampleBuffer,
        id: names::SAMPLES,
        legacy_name: Some("SampleBuffer"),
        call: "nvmlDeviceGetSamples(NVML_TOTAL_POWER_SAMPLES)",
        nvml: NvmlCall::PowerSamples,
        channel: "sample_mw",
        // 20 ms samples with a short lag (a fall after a kernel fits ~14 ms).
        default_model: SensorModel::FirstOrder { tau_s: 0.014 },
        default_delay_s: 0.006,
        // About 120 samples (2.4 s) deep: drain well before it wraps.
        poll_period_s: 0.25,
        rank: 1,
        trusted: true,
        cross_check: None,
    },
    SourceFacts {
        kind: SourceKind::MemoryRail,
        id: names::MEMORY,
        legacy_name: None,
        call: "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY)",
        nvml: NvmlCall::Field { id: FIELD_POWER_AVERAGE, scope: SCOPE_MEMORY },
        channel: "memory_mw",
        // The H100 (driver 580.159.04) answers the average field in the memory scope and not
        // the instant one (nvidia-smi: "Instantaneous Power Draw: N/A"); idle 34-59 W,
        // +5.3-6.7 pJ/bit streaming HBM (DESIGN.md §7), updates every ~100 ms. Its response
        // is not measured (calibration's FMA step hardly moves it and shows transients no
        // model describes): assumed to average as the board's average field does (a 1 s
        // boxcar, 17 ms late), so not trusted.
        default_model: SensorModel::Boxcar { width_s: 1.0 },
        default_delay_s: 0.017,
        poll_period_s: 0.005,
        rank: 5,
        trusted: false,
        cross_check: None,
    },
];

// Row i describes the kind whose discriminant is i, so `facts` is an index.
const _: () = {
    let mut i = 0;
    while i < SOURCE_TABLE.len() {
        assert!(SOURCE_TABLE[i].kind as usize == i, "SOURCE_TABLE's rows must follow SourceKind's order");
        i += 1;
    }
};

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl SourceKind {
    /// How many kinds there are.
    pub const COUNT: usize = SOURCE_TABLE.len();

    /// Every kind, in the order `cargo energy info` lists them.
    pub const ALL: [SourceKind; SourceKind::COUNT] = {
        let mut all = [SourceKind::Counter; SourceKind::COUNT];
        let mut i = 0;
        while i < SourceKind::COUNT {
            all[i] = SOURCE_TABLE[i].kind;
            i += 1;
        }
        all
    };

    /// The one order in which sources are preferred (by [`SourceFacts::rank`]), by planning
    /// (which source a session's windows are sized for) and by analysis (which source a trace
    /// is read with) alike: the counter (an exact integral), the sample buffer (20 ms, short
    /// lag), the 1 s average (invertible), power usage, the gated instant field (never
    /// trusted); rails last, and never chosen ([`SourceKind::preferred`]).
    pub const PREFERENCE: [SourceKind; SourceKind::COUNT] = {
        let mut order = SourceKind::ALL;
        // Selection sort by (role, rank): the table is small and this runs at compile time.
        const fn key(k: SourceKind) -> u16 {
            let f = k.facts();
            (matches!(f.id.role, Role::Rail) as u16) << 8 | f.rank as u16
        }
        let mut i = 0;
        while i < SourceKind::COUNT {
            let mut best = i;
            let mut j = i + 1;
            while j < SourceKind::COUNT {
                if key(order[j]) < key(order[best]) {
                    best = j;
                }
                j += 1;
            }
            let swap = order[i];
            order[i] = order[best];
            order[best] = swap;
            i += 1;
        }
        order
    };

    /// Its row of [`SOURCE_TABLE`].
    pub const fn facts(self) -> &'static SourceFacts {
        &SOURCE_TABLE[self as usize]
    }

    /// Its one name: in the macros, on the command line, in result files and messages.
    pub const fn name(self) -> &'static str {
        self.facts().id.name
    }

    /// The kind of this name ([`SourceKind::name`]); `None` for any other text.
    pub const fn from_name(name: &str) -> Option<SourceKind> {
        let mut i = 0;
        while i < SOURCE_TABLE.len() {
            if same_str(SOURCE_TABLE[i].id.name, name) {
                return Some(SOURCE_TABLE[i].kind);
            }
            i += 1;
        }
        None
    }

    /// The kind of a name as files wrote it: its one name, or its spelling before it.
    pub fn from_file_name(name: &str) -> Option<SourceKind> {
        SourceKind::from_name(name)
            .or_else(|| SOURCE_TABLE.iter().find(|f| f.legacy_name == Some(name)).map(|f| f.kind))
    }

    /// What it measures: the whole board, or one rail of it.
    pub const fn role(self) -> Role {
        self.facts().id.role
    }

    /// Whether it measures the whole board (a candidate for a result's energy).
    pub const fn measures_board(self) -> bool {
        matches!(self.role(), Role::Board)
    }

    /// The kinds that measure the whole board, in [`SourceKind::ALL`]'s order.
    pub fn boards() -> impl Iterator<Item = SourceKind> {
        SourceKind::ALL.into_iter().filter(|k| k.measures_board())
    }

    /// The rails, in [`SourceKind::ALL`]'s order: recorded beside the board's source
    /// whenever the GPU offers them, each reported with its own energy.
    pub fn rails() -> impl Iterator<Item = SourceKind> {
        SourceKind::ALL.into_iter().filter(|k| !k.measures_board())
    }

    /// The most preferred board source among `kinds` ([`SourceKind::PREFERENCE`]).
    pub fn preferred(kinds: &[SourceKind]) -> Option<SourceKind> {
        SourceKind::PREFERENCE.into_iter().find(|k| k.measures_board() && kinds.contains(k))
    }

    /// The name of its trace channel.
    pub const fn channel_name(self) -> &'static str {
        self.facts().channel
    }

    /// What its readings are.
    pub const fn quantity(self) -> Quantity {
        self.facts().nvml.quantity()
    }

    /// How its readings arrive.
    pub const fn delivery(self) -> Delivery {
        self.facts().nvml.delivery()
    }

    /// The model it is corrected with when nothing else is known.
    pub const fn default_model(self) -> SensorModel {
        self.facts().default_model
    }

    /// Its reporting delay when nothing else is known, s.
    pub const fn default_delay_s(self) -> f64 {
        self.facts().default_delay_s
    }

    /// Seconds between useful reads (0: as fast as it answers).
    pub const fn poll_period_s(self) -> f64 {
        self.facts().poll_period_s
    }

    /// Whether its energy can be taken at its word ([`SourceFacts::trusted`]).
    pub const fn trusted(self) -> bool {
        self.facts().trusted
    }

    /// The source recorded beside it as a check on its figure, if any.
    pub const fn cross_check(self) -> Option<SourceKind> {
        self.facts().cross_check
    }

    /// The NVML call behind it, for messages.
    pub const fn nvml_call(self) -> &'static str {
        self.facts().call
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for SourceKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A source is written as its name, one of [`SourceKind::ALL`]'s; older names are read too.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for SourceKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SourceKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // What is read: today's names, and the names files of earlier versions carry.
        let mut names: Vec<&str> = SourceKind::ALL.iter().map(|k| k.name()).collect();
        names.extend(SOURCE_TABLE.iter().filter_map(|f| f.legacy_name));
        schemars::json_schema!({
            "type": "string",
            "description": "A sensor source, by its name (files of earlier versions spell it as the Rust variant: read, never written).",
            "enum": names,
        })
    }
}

impl<'de> Deserialize<'de> for SourceKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = SourceKind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sensor source's name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SourceKind, E> {
                SourceKind::from_file_name(v).ok_or_else(|| {
                    let known: Vec<&str> = SourceKind::ALL.iter().map(|k| k.name()).collect();
                    E::custom(format!("unknown source `{}`: expected one of {}", v.escape_debug(), known.join(", ")))
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_shared_names_agree() {
        // Every shared name has exactly one row, with its role, and every row one shared name.
        assert_eq!(SOURCE_TABLE.len(), names::ALL.len());
        for (row, shared) in SOURCE_TABLE.iter().zip(names::ALL) {
            assert_eq!(row.id, *shared, "row {:?}", row.kind);
            assert_eq!(SourceKind::from_name(shared.name), Some(row.kind));
        }
        assert_eq!(SourceKind::from_name("thermometer"), None);
        assert_eq!(SourceKind::from_name("Counter"), None, "the old spelling is for files only");
    }

    #[test]
    fn a_name_finds_its_kind_at_compile_time_as_the_macros_ask() {
        // The form `#[energy_bench(source = "samples")]` expands to.
        const SAMPLES: SourceKind = match SourceKind::from_name("samples") {
            Some(kind) => kind,
            None => panic!("a source name the harness does not know"),
        };
        assert_eq!(SAMPLES, SourceKind::SampleBuffer);
        for kind in SourceKind::ALL {
            assert_eq!(SourceKind::from_name(kind.name()), Some(kind));
            assert_eq!(SourceKind::from_file_name(kind.name()), Some(kind));
        }
    }

    #[test]
    fn names_channels_and_legacy_spellings_are_unique() {
        for (i, a) in SOURCE_TABLE.iter().enumerate() {
            for b in &SOURCE_TABLE[..i] {
                assert_ne!(a.channel, b.channel);
                assert_ne!(a.rank, b.rank);
                assert!(a.legacy_name.is_none() || a.legacy_name != b.legacy_name);
                assert!(a.legacy_name.is_none_or(|l| SourceKind::from_name(l).is_none()));
            }
            let unit = match a.nvml.quantity() {
                Quantity::Energy => "_mj",
                Quantity::Power => "_mw",
            };
            assert!(a.channel.ends_with(unit), "{} holds {unit}", a.channel);
            assert!(a.default_model.validate().is_ok(), "{:?}", a.kind);
            assert!(a.default_delay_s >= 0.0 && a.poll_period_s >= 0.0);
            // Only an energy source takes the counter model, and it takes only that.
            assert_eq!(matches!(a.default_model, SensorModel::Counter { .. }), a.nvml.quantity() == Quantity::Energy);
            // A check is made by another board source.
            assert!(a.cross_check.is_none_or(|c| c != a.kind && c.measures_board()));
        }
    }

    #[test]
    fn names_read_in_both_spellings_and_write_in_one() {
        for kind in SourceKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<SourceKind>(&json).unwrap(), kind);
            if let Some(old) = kind.facts().legacy_name {
                assert_eq!(serde_json::from_str::<SourceKind>(&format!("\"{old}\"")).unwrap(), kind);
            }
        }
        assert_eq!(serde_json::from_str::<SourceKind>("\"SampleBuffer\"").unwrap(), SourceKind::SampleBuffer);
        let err = serde_json::from_str::<SourceKind>("\"thermometer\"").unwrap_err().to_string();
        assert!(err.contains("unknown source `thermometer`"), "{err}");
    }

    #[test]
    fn rails_come_last_and_are_never_preferred() {
        let first_rail = SourceKind::PREFERENCE.iter().position(|k| !k.measures_board());
        if let Some(first) = first_rail {
            assert!(SourceKind::PREFERENCE[first..].iter().all(|k| !k.measures_board()));
        }
        for rail in SourceKind::rails() {
            assert_eq!(SourceKind::preferred(&[rail]), None);
            assert_eq!(SourceKind::preferred(&[rail, SourceKind::PowerUsage]), Some(SourceKind::PowerUsage));
        }
        assert_eq!(SourceKind::PREFERENCE[0], SourceKind::Counter);
        assert_eq!(SourceKind::boards().count() + SourceKind::rails().count(), SourceKind::COUNT);
    }
}
