use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(device = "all")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
