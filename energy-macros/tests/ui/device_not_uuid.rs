use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "1 J", device = "H100")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
