use energy_harness::{energy_bench, CudaStream, Result};

#[energy_bench(sim(seconds = "20 us", watts = 300.0))]
fn kernel(_stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
