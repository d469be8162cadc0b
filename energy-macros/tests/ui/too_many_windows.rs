use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(windows = 5000)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
