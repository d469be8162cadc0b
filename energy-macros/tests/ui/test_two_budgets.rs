use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "5 mJ", max_power = "300 W")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
