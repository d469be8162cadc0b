use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(precision = "1 %")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
