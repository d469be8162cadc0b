//! A correct budget (`cargo test`).
use energy_harness::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
use common::*;

#[energy_test(setup = saxpy_setup, max = "40 mJ", sim(seconds = 5e-6, watts = 400.0))]
fn saxpy_stays_under_40_mj(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}
