use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(name = "  ")]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
