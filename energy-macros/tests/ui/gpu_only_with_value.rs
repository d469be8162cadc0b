use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "5 mJ", gpu_only = true)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
