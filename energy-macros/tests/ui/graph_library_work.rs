use energy_harness::{energy_bench, Result, Stream};

#[energy_bench(graph = 100, any_stream)]
fn library_call(_stream: &Stream) -> Result<()> {
    Ok(())
}

#[energy_bench(graph = 0)]
fn empty_graph(_stream: &Stream) -> Result<()> {
    Ok(())
}

fn main() {}
