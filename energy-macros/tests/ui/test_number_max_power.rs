use energy_harness::{energy_test, Stream, Result};

#[energy_test(max_power = 300)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
