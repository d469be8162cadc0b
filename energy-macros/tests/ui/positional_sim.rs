use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(sim(22e-6, 350.0))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
