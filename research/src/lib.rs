//! Energy suites package: the instruction, memory and model suites behind `cargo bench`,
//! their PTX generators and checks, and the energy model fitted from the model suite. See
//! the README.

pub mod ci_gate;
pub mod common;
pub mod costs;
pub mod generated;
pub mod heldout;
pub mod instructions;
pub mod launch_paths;
pub mod library_work;
pub mod memory;
pub mod model;
pub mod parameterized;
pub mod protocol;
pub mod published;
pub mod sass;
pub mod verdicts;
