use energy_harness::{energy_bench, Stream, Result};

struct State;

#[energy_bench(ops = 1024)]
fn kernel(_state: &mut State, _stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
