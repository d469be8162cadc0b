use energy_harness::{energy_bench, CudaGpu, Stream, Result};

fn setup(_gpu: &CudaGpu) -> Result<()> {
    Ok(())
}

#[energy_bench(setup = setup)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
