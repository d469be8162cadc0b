//! Mistake: a relative budget whose reference does not exist (copied to tests/).
use energy_harness::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
use common::*;

#[energy_test(setup = saxpy_setup, relative_to = old_saxpy, max_ratio = 1.10, sim(seconds = 5e-6, watts = 400.0))]
fn saxpy_costs_no_more_than_before(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}
