use energy_harness::{energy_test, CudaStream, Result};

#[energy_test(max_per_op = "10 pJ")]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
