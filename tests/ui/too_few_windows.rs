use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(windows = 3)]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
