use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = 0.015)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
