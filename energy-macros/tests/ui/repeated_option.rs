use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(ops = 1024, ops = 2048)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
