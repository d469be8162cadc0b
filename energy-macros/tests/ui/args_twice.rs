use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(args = [64, 128], args = [256])]
fn kernel(_stream: &Stream, _block: &u32) -> Result<()> {
    Ok(())
}

fn main() {}
