use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(frobnicate = 1)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
