use energy_harness::{energy_bench, Stream, Result};

#[energy_bench(min_window_s = 0.5)]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
