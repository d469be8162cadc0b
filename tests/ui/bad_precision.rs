use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(precision = 5.0)]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
