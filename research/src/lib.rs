//! Energy suites package: the model suite behind `cargo bench -p energy-suites`, the model
//! protocols, the held-out library suite, the energy model fitted from the model suite, and
//! the code that regenerates every published page from its raw data. The instruction and
//! memory suites are the root package's (`kernel_energy`). See the README.

pub mod ci_gate;
pub mod costs;
pub mod heldout;
pub mod launch_paths;
pub mod library_work;
pub mod model;
pub mod parameterized;
pub mod protocol;
pub mod published;
pub mod verdicts;
