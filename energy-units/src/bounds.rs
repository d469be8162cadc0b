//! The limits of the measurement options, shared by the macros (compile time) and the
//! harness (run time): `#[energy_bench(precision = 0.7)]` is a compile error naming the
//! same range that `MeasureOptions::resolve` checks when the value is only known at run
//! time, so the two can never disagree.

/// Smallest `precision`, a fraction of the estimate (the half-width of its 95 % interval
/// over the mean): ±0.01 %, beyond what any sensor resolves in a bounded number of windows.
pub const PRECISION_MIN: f64 = 1e-4;

/// Largest `precision`, a fraction of the estimate: ±50 %, past which an interval says
/// nothing.
pub const PRECISION_MAX: f64 = 0.5;

/// Longest `window_s`, seconds (it must also be above zero): a window holds back-to-back
/// launches for seconds at most, and a longer one only lengthens the run.
pub const WINDOW_MAX_S: f64 = 60.0;

/// Fewest windows any measurement has: fewer give no useful interval.
pub const WINDOWS_MIN: usize = 3;

/// Fewest windows of a benchmark (`#[energy_bench(windows = …)]`): criterion's minimum
/// sample count, one sample per window.
pub const BENCH_WINDOWS_MIN: usize = 10;

/// Fewest windows of each round of a budget (`#[energy_test(windows = …)]`): a budget
/// decides on the interval, and fewer windows give one too wide to decide anything.
pub const BUDGET_WINDOWS_MIN: usize = 5;

/// Most windows a measurement may be asked for.
pub const WINDOWS_MAX: usize = 1000;

// The bounds must leave room for a value: checked when the crate compiles.
const _: () = assert!(0.0 < PRECISION_MIN && PRECISION_MIN < PRECISION_MAX && PRECISION_MAX < 1.0);
const _: () = assert!(WINDOW_MAX_S > 0.0);
const _: () = assert!(WINDOWS_MIN <= BUDGET_WINDOWS_MIN && BUDGET_WINDOWS_MIN <= BENCH_WINDOWS_MIN);
const _: () = assert!(BENCH_WINDOWS_MIN <= WINDOWS_MAX);

/// Most launches a CUDA graph may capture (`graph = N`): a graph of ten thousand kernel
/// nodes instantiates in milliseconds; more buys nothing, a replay of 100 launches of 2 µs
/// already lasting 200 µs against a host's few µs per graph launch.
pub const GRAPH_LAUNCHES_MAX: u32 = 10_000;

/// Whether `launches` is a CUDA graph's allowed size: 1 to [`GRAPH_LAUNCHES_MAX`].
pub fn graph_launches_allowed(launches: u64) -> bool {
    (1..=u64::from(GRAPH_LAUNCHES_MAX)).contains(&launches)
}

/// Fewest measurement rounds a budget may be given (`max_rounds`): one.
pub const ROUNDS_MIN: usize = 1;

/// Whether `x` is a positive, finite number: what every count (`ops`, `bytes`,
/// `baseline_ops`, `baseline_bytes`), a simulated kernel's `seconds` and `watts`, a
/// budget and a budget's ratio must be.
pub fn is_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// Whether `precision` is within [`PRECISION_MIN`] … [`PRECISION_MAX`] (`NaN` is not).
pub fn precision_allowed(precision: f64) -> bool {
    (PRECISION_MIN..=PRECISION_MAX).contains(&precision)
}

/// Whether `window_s` is above zero and at most [`WINDOW_MAX_S`].
pub fn window_s_allowed(window_s: f64) -> bool {
    is_positive(window_s) && window_s <= WINDOW_MAX_S
}

/// Whether `windows` is between `floor` (the asker's: [`BENCH_WINDOWS_MIN`],
/// [`BUDGET_WINDOWS_MIN`], never under [`WINDOWS_MIN`]) and [`WINDOWS_MAX`].
pub fn windows_allowed(windows: usize, floor: usize) -> bool {
    (floor.max(WINDOWS_MIN)..=WINDOWS_MAX).contains(&windows)
}

/// Whether `c` cannot stand as itself in a benchmark name or any output of one: control
/// characters (Unicode's `Cc`: C0, DEL, C1), the line and paragraph separators, the
/// bidirectional controls that reorder what a reader sees, the byte-order mark, and
/// U+FFFE/U+FFFF (not characters XML allows). The macros refuse such names; the harness's
/// writers show such characters as escapes.
pub fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fffe}'
                | '\u{ffff}'
        )
}

/// Whether `text` reads as a GPU's UUID as NVML and `cargo energy info` print it
/// (`GPU-…`, or `MIG-…` for a MIG instance; any case), not an ordinal or a word.
pub fn is_gpu_uuid(text: &str) -> bool {
    let value = text.trim().to_ascii_lowercase();
    (value.starts_with("gpu-") || value.starts_with("mig-")) && value.len() >= 8
}

/// One value on one side of one bound of a measurement option: what the macros (given
/// as a literal) and `MeasureOptions::resolve` (any value, at run time) must both accept
/// or both refuse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    /// The option (`precision`, `windows`, …), as the macros and `MeasureOptions` name it.
    pub option: &'static str,
    /// The value (a whole number for `windows`).
    pub value: f64,
    /// Whether the value is allowed.
    pub allowed: bool,
    /// The asker's floor on `windows` the value is held to ([`BENCH_WINDOWS_MIN`] for a
    /// benchmark, [`BUDGET_WINDOWS_MIN`] for a budget); [`BENCH_WINDOWS_MIN`] for the other
    /// options, which no floor bounds.
    pub windows_floor: usize,
}

impl Edge {
    /// The value as a Rust literal (`0.0001`, `-1.0`, `9`).
    pub fn literal(&self) -> String {
        if self.option == "windows" {
            format!("{}", self.value as usize)
        } else {
            format!("{:?}", self.value)
        }
    }
}

/// Every bound of every measurement option, each with values just inside and just outside
/// it: the macros' tests and the harness's tests walk this one list, so compile time and
/// run time cannot bound an option differently.
pub fn edges() -> Vec<Edge> {
    let mut edges = Vec::new();
    let mut edge = |option: &'static str, value: f64, allowed: bool, windows_floor: usize| {
        edges.push(Edge { option, value, allowed, windows_floor });
    };
    let any = BENCH_WINDOWS_MIN;
    for count in ["ops", "bytes", "baseline_ops", "baseline_bytes"] {
        for (value, allowed) in [(-1.0, false), (0.0, false), (1e-9, true), (1.0, true), (1e12, true)] {
            edge(count, value, allowed, any);
        }
    }
    for (value, allowed) in [
        (0.0, false),
        (PRECISION_MIN / 2.0, false),
        (PRECISION_MIN, true),
        (0.01, true),
        (PRECISION_MAX, true),
        (PRECISION_MAX * 1.4, false),
        (5.0, false),
    ] {
        edge("precision", value, allowed, any);
    }
    for (value, allowed) in
        [(-0.5, false), (0.0, false), (1e-3, true), (WINDOW_MAX_S, true), (WINDOW_MAX_S * 2.0, false)]
    {
        edge("window_s", value, allowed, any);
    }
    for floor in [BENCH_WINDOWS_MIN, BUDGET_WINDOWS_MIN] {
        for (value, allowed) in [(floor - 1, false), (floor, true), (WINDOWS_MAX, true), (WINDOWS_MAX + 1, false)] {
            edge("windows", value as f64, allowed, floor);
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edges_agree_with_the_predicates() {
        for e in edges() {
            let allowed = match e.option {
                "precision" => precision_allowed(e.value),
                "window_s" => window_s_allowed(e.value),
                "windows" => windows_allowed(e.value as usize, e.windows_floor),
                _ => is_positive(e.value),
            };
            assert_eq!(allowed, e.allowed, "{e:?}");
        }
    }

    #[test]
    fn uuids_read_as_uuids() {
        for uuid in ["GPU-c744a1b2-0000", "gpu-12345", " MIG-abcd1234 "] {
            assert!(is_gpu_uuid(uuid), "{uuid}");
        }
        for not in ["0", "GPU-", "gpu-12", "all", "c744a1b2-0000"] {
            assert!(!is_gpu_uuid(not), "{not}");
        }
    }
}
