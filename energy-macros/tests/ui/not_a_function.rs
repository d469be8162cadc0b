use energy_harness::energy_bench;

#[energy_bench]
struct Kernel;

fn main() {}
