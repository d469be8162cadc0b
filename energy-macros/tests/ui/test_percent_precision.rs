use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "5 mJ", precision = "0.5 %")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
