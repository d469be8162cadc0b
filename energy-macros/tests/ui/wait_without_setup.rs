use energy_harness::{energy_bench, Stream, Result};

fn sync() -> Result<()> {
    Ok(())
}

#[energy_bench(wait = sync)]
fn library_call(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
