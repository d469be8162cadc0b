use energy_harness::{energy_bench, CudaGpu, Stream, Result};

struct Library;

fn setup(_gpu: &CudaGpu) -> Result<Library> {
    Ok(Library)
}

#[energy_bench(setup = setup, wait)]
fn library_call(_s: &mut Library, _stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
