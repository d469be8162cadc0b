use energy_harness::{energy_bench, CudaStream, Result};

struct State;

#[energy_bench(ops = 1024)]
fn kernel(_state: &mut State, _stream: &CudaStream) -> Result<()> {
    Ok(())
}

fn main() {}
