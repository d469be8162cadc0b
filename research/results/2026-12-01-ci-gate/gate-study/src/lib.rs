//! The gate study's crate: what a change of the work per launch is. Every benchmark's launch
//! makes `CALLS` calls of its kernel or library function; the study's commits change this
//! number alone (100 → 101 → 102), so the candidate does exactly 1 % or 2 % more work, the
//! same way for a kernel and for a library call whose tiling a size change could alter.

/// Calls per launch.
pub const CALLS: u32 = 100;
