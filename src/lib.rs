//! Energy suites package: the instruction and memory suites behind `cargo bench`, their
//! PTX generators and checks. See the README.

pub mod common;
pub mod costs;
pub mod generated;
pub mod instructions;
pub mod memory;
pub mod sass;
