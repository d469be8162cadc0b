//! Mistake: an energy budget in watts (copied to tests/).
use energy_harness::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
use common::*;

#[energy_test(setup = saxpy_setup, max = "40 mW", sim(seconds = 5e-6, watts = 400.0))]
fn saxpy_under_40_milliwatts(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}
