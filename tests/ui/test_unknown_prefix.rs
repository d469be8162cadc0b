use energy_harness::{energy_test, CudaStream, Result};

#[energy_test(max = "5 xJ")]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
