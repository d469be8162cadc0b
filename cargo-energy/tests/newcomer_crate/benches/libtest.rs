//! A correct bench file whose target in Cargo.toml lacks `harness = false`.
mod common;

use common::*;
use energy_harness::prelude::*;

#[energy_bench(setup = saxpy_setup, sim(seconds = 5e-6, watts = 400.0))]
fn saxpy_libtest(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

energy_main!();
