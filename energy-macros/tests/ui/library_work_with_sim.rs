use energy_harness::{energy_test, Stream, Result};

#[energy_test(max = "5 mJ", any_stream, sim(seconds = 20e-6, watts = 350.0))]
fn library_call(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
