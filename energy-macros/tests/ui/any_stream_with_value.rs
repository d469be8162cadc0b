use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(any_stream = true)]
fn library_call(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
