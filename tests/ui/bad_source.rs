use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(source = "thermometer")]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
