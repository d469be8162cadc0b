use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "5 mJ", sim(seconds = 20e-6, watts = 350.0), gpu_only)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
