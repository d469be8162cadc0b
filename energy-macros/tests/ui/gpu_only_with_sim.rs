use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(gpu_only, sim(seconds = 20e-6, watts = 350.0))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
