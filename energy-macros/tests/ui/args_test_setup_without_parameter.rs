use energy_harness::{energy_test, CudaGpu, Stream, Result};

fn setup(_gpu: &CudaGpu, _block: &u32) -> Result<u32> {
    Ok(0)
}

#[energy_test(args = [64, 128], setup = setup, max = "5 mJ")]
fn kernel(_state: &mut u32, _stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
