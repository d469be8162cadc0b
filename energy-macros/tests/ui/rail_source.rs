use energy_harness::{energy_bench, Stream, Result};

// The memory rail is recorded beside the board's source, never the source itself.
#[energy_bench(source = "memory")]
fn kernel(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
