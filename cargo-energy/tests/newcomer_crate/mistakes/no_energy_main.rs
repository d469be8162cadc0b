//! Mistake: a bench file without `energy_main!()` (copied over benches/mistakes.rs).
mod common;

use common::*;
use energy_harness::prelude::*;

#[energy_bench(setup = saxpy_setup, sim(seconds = 5e-6, watts = 400.0))]
fn saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}
