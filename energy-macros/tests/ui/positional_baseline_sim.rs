use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(baseline = empty, baseline_sim(seconds = 1e-6, 300.0))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn empty(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
