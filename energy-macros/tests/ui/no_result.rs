use energy_harness::{energy_bench, Stream};

#[energy_bench]
fn kernel(_stream: &Stream) {}

fn main() {}
