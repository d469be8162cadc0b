use energy_harness::{energy_bench, Result, Stream};

#[energy_bench(ops = 10, baseline_ops = 2)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
