use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(gpu_only, ops = 1024, gpu_only)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
