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
