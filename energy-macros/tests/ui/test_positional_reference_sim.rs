use energy_harness::{energy_test, Stream, Result};

#[energy_test(relative_to = reference, max_ratio = 1.10, reference_sim(76e-6))]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn reference(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
