//! The three launch paths of one kernel, interleaved in one process (five rounds of PTX,
//! CUDA C, cudarc): on a GPU, each path's energy per launch against the PTX one of its round.
//! Declared gpu_only: without a GPU there is nothing to compare.
mod common;

use common::*;
use energy_harness::prelude::*;

macro_rules! round {
    ($ptx:ident, $cuda_c:ident, $cudarc:ident) => {
        #[energy_bench(setup = ptx_setup, bytes = BYTES, gpu_only)]
        fn $ptx(s: &mut Saxpy, stream: &Stream) -> Result<()> {
            launch(s, stream)
        }
        #[energy_bench(setup = cuda_c_setup, bytes = BYTES, gpu_only)]
        fn $cuda_c(s: &mut Saxpy, stream: &Stream) -> Result<()> {
            launch(s, stream)
        }
        #[energy_bench(setup = raw_setup, bytes = BYTES, gpu_only)]
        fn $cudarc(s: &mut RawSaxpy, stream: &Stream) -> Result<()> {
            raw_launch(s, stream)
        }
    };
}

round!(r1_ptx, r1_cuda_c, r1_cudarc);
round!(r2_ptx, r2_cuda_c, r2_cudarc);
round!(r3_ptx, r3_cuda_c, r3_cudarc);
round!(r4_ptx, r4_cuda_c, r4_cudarc);
round!(r5_ptx, r5_cuda_c, r5_cudarc);

energy_main!();
