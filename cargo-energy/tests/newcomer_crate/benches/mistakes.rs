//! Two correct benchmarks and the newcomer's runtime mistakes; the test runs each alone
//! (`cargo bench --bench mistakes -- ^name/`).
mod common;

use common::*;
use energy_harness::prelude::*;

#[energy_bench(setup = saxpy_setup, sim(seconds = 5e-6, watts = 400.0))]
fn saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = saxpy_setup, sim(seconds = 10e-6, watts = 400.0))]
fn saxpy_twice(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)?;
    launch(s, stream)
}

#[energy_bench(setup = invalid_opcode_setup, sim(seconds = 5e-6, watts = 400.0))]
fn invalid_opcode(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = missing_extern_c_setup, sim(seconds = 5e-6, watts = 400.0))]
fn missing_extern_c(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = wrong_argument_count_setup, sim(seconds = 5e-6, watts = 400.0))]
fn wrong_argument_count(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = kernel_name_typo_setup, sim(seconds = 5e-6, watts = 400.0))]
fn kernel_name_typo(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = own_stream_setup)]
fn own_stream(s: &mut OwnStream, stream: &Stream) -> Result<()> {
    own_stream_launch(s, stream)
}

energy_main!();
