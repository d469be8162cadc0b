use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(sim(seconds = 1e-3))]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
