//! Energy suites package: the instruction and memory suites behind `cargo bench`, their
//! PTX generators and checks. See the README.

pub mod instructions;
pub mod sass;
