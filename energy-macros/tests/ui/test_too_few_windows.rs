use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "5 mJ", windows = 3)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
