use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(sim(seconds = 1e-3))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
