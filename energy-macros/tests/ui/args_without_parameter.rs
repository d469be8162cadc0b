use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(args = [64, 128, 256])]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
