//! Mistake: `#[energy_bench]` in an integration test (copied to tests/).
use energy_harness::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
use common::*;

#[energy_bench(setup = saxpy_setup, sim(seconds = 5e-6, watts = 400.0))]
fn saxpy_in_a_test(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}
