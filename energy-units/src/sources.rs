//! The sensor sources by name, shared by the macros (compile time: `#[energy_bench(source =
//! "…")]`) and the harness (its source table, the command line and the files it writes), so
//! that a source has one spelling everywhere and the two lists can never disagree.
//!
//! Everything else about a source (its NVML call, trace channel, sensor model, preference)
//! lives in the harness's source table, `energy_harness::SourceKind`, whose rows name these
//! constants; a test there checks that every name here has exactly one row.

/// What a source measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The whole board: a candidate for the energy a result reports.
    Board,
    /// One rail of the board (its memory, say): recorded and reported beside the board's
    /// energy whenever the GPU offers it, never the source of that energy.
    Rail,
}

/// A source's one name (in the macros, on the command line, in result files) and its role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceName {
    /// The name.
    pub name: &'static str,
    /// What it measures.
    pub role: Role,
}

/// The energy counter (`nvmlDeviceGetTotalEnergyConsumption`).
pub const COUNTER: SourceName = SourceName { name: "counter", role: Role::Board };
/// The instant power field (`NVML_FI_DEV_POWER_INSTANT`).
pub const INSTANT: SourceName = SourceName { name: "instant", role: Role::Board };
/// The 1 s average power field (`NVML_FI_DEV_POWER_AVERAGE`).
pub const AVERAGE: SourceName = SourceName { name: "average", role: Role::Board };
/// `nvmlDeviceGetPowerUsage`.
pub const POWER: SourceName = SourceName { name: "power", role: Role::Board };
/// The driver's power sample buffer (`nvmlDeviceGetSamples`).
pub const SAMPLES: SourceName = SourceName { name: "samples", role: Role::Board };

/// The GPU-memory power rail (`NVML_FI_DEV_POWER_AVERAGE` in `NVML_POWER_SCOPE_MEMORY`).
pub const MEMORY: SourceName = SourceName { name: "memory", role: Role::Rail };

/// Every source, in the order the harness lists them.
pub const ALL: &[SourceName] = &[COUNTER, INSTANT, AVERAGE, POWER, SAMPLES, MEMORY];

/// The source of this name.
pub fn find(name: &str) -> Option<SourceName> {
    ALL.iter().copied().find(|s| s.name == name)
}

/// The names of the sources that measure the whole board (those `source = "…"` accepts), as
/// a sentence: "counter, instant, average, power or samples".
pub fn board_names() -> String {
    let names: Vec<&str> = ALL.iter().filter(|s| s.role == Role::Board).map(|s| s.name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lowercase_words() {
        for (i, s) in ALL.iter().enumerate() {
            assert!(!s.name.is_empty() && s.name.chars().all(|c| c.is_ascii_lowercase()), "{s:?}");
            assert!(ALL[..i].iter().all(|t| t.name != s.name), "{} twice", s.name);
            assert_eq!(find(s.name), Some(*s));
        }
        assert_eq!(find("Counter"), None, "one spelling: the old one is the harness's files' business");
        assert_eq!(find("thermometer"), None);
    }

    #[test]
    fn board_names_read_as_a_sentence() {
        let sentence = board_names();
        assert!(sentence.starts_with("counter, instant"), "{sentence}");
        for s in ALL {
            assert_eq!(sentence.contains(s.name), s.role == Role::Board, "{sentence} / {}", s.name);
        }
        assert_eq!(sentence.matches(" or ").count(), 1, "{sentence}");
    }
}
