use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(sim(seconds = "20 us", watts = 300.0))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
