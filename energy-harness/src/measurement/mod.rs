//! From a trace and its kernel windows to energy figures.

pub mod counter;
