use energy_harness::{energy_test, Stream, Result};

#[energy_test(max_ratio = 1.1)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
