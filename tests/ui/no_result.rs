use energy_harness::{energy_bench, CudaStream};

#[energy_bench]
fn kernel(_stream: &CudaStream) {}

fn main() {}
