//! The crate's benchmarks: `cargo bench` measures each (simulated without a GPU).
mod common;

use common::*;
use energy_harness::prelude::*;

#[energy_bench(setup = ptx_setup, bytes = BYTES, sim(seconds = 67e-6, watts = 400.0))]
fn saxpy_ptx(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_bench(setup = cuda_c_setup, bytes = BYTES, sim(seconds = 67e-6, watts = 400.0))]
fn saxpy_cuda_c(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

// Undeclared raw cudarc: found out on the checked device ("not run: needs a GPU").
#[energy_bench(setup = raw_setup, bytes = BYTES)]
fn saxpy_cudarc(s: &mut RawSaxpy, stream: &Stream) -> Result<()> {
    raw_launch(s, stream)
}

energy_main!();
