use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(frobnicate = 1)]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
