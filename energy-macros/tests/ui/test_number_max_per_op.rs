use energy_harness::{energy_test, Stream, Result};

#[energy_test(ops = 1024, max_per_op = 2e-9)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
