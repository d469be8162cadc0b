use energy_harness::{energy_test, Stream, Result};

#[energy_test(sim(seconds = 1e-3, watts = 300.0))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
