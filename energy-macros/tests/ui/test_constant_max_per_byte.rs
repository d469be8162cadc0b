use energy_harness::{energy_test, Stream, Result};

const LIMIT_J: f64 = 2e-9;

#[energy_test(bytes = 4096, max_per_byte = LIMIT_J)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
