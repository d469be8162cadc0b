use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(window_s = 120.0)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
