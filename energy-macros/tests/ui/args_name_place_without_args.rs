use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(name = "reduce_{}")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
