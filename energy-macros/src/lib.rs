//! Attribute macros of energy-harness. `#[energy_bench]` arrives with the bench issue;
//! the crate only parses and emits calls into `energy_harness::__private`.
