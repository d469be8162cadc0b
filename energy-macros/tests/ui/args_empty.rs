use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(args = [], ops = 1024)]
fn kernel(_stream: &Stream, _block: &u32) -> Result<()> {
    Ok(())
}

fn main() {}
