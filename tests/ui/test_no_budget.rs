use energy_harness::{energy_test, CudaStream, Result};

#[energy_test(sim(seconds = 1e-3, watts = 300.0))]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
