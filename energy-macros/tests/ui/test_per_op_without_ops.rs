use energy_harness::{energy_test, Stream, Result};

#[energy_test(max_per_op = "10 pJ")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
