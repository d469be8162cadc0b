//! The library-work benchmark of `benches/library_work.rs` written as a newcomer would
//! first write it: the work on the library's own stream, no `any_stream`, no `wait`. The
//! harness's stream sees none of it: every measurement here must be **refused** (exit ≠ 0,
//! the message naming the fix), never printed as a figure. Not part of a plain `cargo
//! bench` (`bench = false`): `cargo bench --bench library_work_unwaited` on a GPU.

use energy_harness::prelude::*;

#[path = "common/library.rs"]
mod library;
use library::{fma_loop_on_own_stream, OwnStreamFma};

fn own_20us(gpu: &CudaGpu) -> Result<OwnStreamFma> {
    fma_loop_on_own_stream(gpu, 0.02)
}
fn own_2ms(gpu: &CudaGpu) -> Result<OwnStreamFma> {
    fma_loop_on_own_stream(gpu, 2.0)
}

#[energy_bench(setup = own_20us, gpu_only)]
fn unwaited_20us(s: &mut OwnStreamFma, _stream: &Stream) -> Result<()> {
    s.launch()
}

#[energy_bench(setup = own_2ms, gpu_only)]
fn unwaited_2ms(s: &mut OwnStreamFma, _stream: &Stream) -> Result<()> {
    s.launch()
}

energy_main!();
