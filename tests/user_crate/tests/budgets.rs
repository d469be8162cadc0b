//! Energy budgets: `cargo test` checks them (on the simulated GPU without a real one).
use energy_harness::prelude::*;

#[path = "../benches/common/mod.rs"]
mod common;
use common::*;

#[energy_test(setup = ptx_setup, max = "40 mJ", sim(seconds = 67e-6, watts = 400.0))]
fn saxpy_stays_under_40_mj(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

#[energy_test(setup = cuda_c_setup, max_per_byte = "1 nJ", bytes = BYTES, sim(seconds = 67e-6, watts = 400.0))]
fn cuda_c_saxpy_under_a_nanojoule_per_byte(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    launch(s, stream)
}

// The crate's own cudarc launch, declared gpu_only: "not run" without a GPU.
#[energy_test(setup = raw_setup, max = "40 mJ", gpu_only)]
fn cudarc_saxpy_stays_under_40_mj(s: &mut RawSaxpy, stream: &Stream) -> Result<()> {
    raw_launch(s, stream)
}
