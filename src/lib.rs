//! The project's root package (`kernel-energy`): the README's benchmarks (`benches/`) and
//! energy budgets (`tests/energy_budgets.rs`) as a GPU crate writes them, with the PTX they
//! load (`ptx/examples/`), and the instruction and memory suites (`cargo bench --bench
//! instructions`, `--bench memory`): energy per PTX instruction and per memory access, their
//! PTX generators (`ptx/instructions/`, `ptx/memory/`) and checks (`tests/`).

pub mod common;
pub mod generated;
pub mod instructions;
pub mod memory;
pub mod sass;
