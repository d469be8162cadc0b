use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(sim(seconds = 1e-3, watts = 300.0), baseline_sim(seconds = 1e-3, watts = 200.0))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
