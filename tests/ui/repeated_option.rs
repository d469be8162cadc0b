use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(ops = 1024, ops = 2048)]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
