//! From a trace and its kernel windows to energy figures.

pub mod clean;
pub mod counter;
pub mod curve;
pub mod stats;
pub mod windows;
