//! A relative budget whose reference has no simulated model (`reference_sim(…)` left out):
//! without a GPU it is checked but not measured.
use energy_harness::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
use common::*;

#[energy_test(setup = saxpy_setup, relative_to = saxpy_before, max_ratio = 1.10, sim(seconds = 5e-6, watts = 400.0))]
fn saxpy_costs_no_more_than_before(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

/// The reference: the version before.
fn saxpy_before(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}
