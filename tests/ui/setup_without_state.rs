use energy_harness::{energy_bench, CudaGpu, CudaStream, Result};

fn setup(_gpu: &CudaGpu) -> Result<()> {
    Ok(())
}

#[energy_bench(setup = setup)]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
