use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(max = "5 mJ")]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
