use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(max = "5 mJ")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
