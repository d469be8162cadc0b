//! The instruction suite (Arafa et al. 2020 on today's GPUs): energy per PTX instruction.
//!
//! - [`mod@catalog`]: the instructions, each a chain of dependent steps;
//! - [`ptx`]: the one kernel template their PTX (`ptx/instructions/`) is generated from;
//! - [`arafa`]: Arafa et al.'s Table I (TITAN V), beside which the one-thread mode is set;
//! - [`bound`]: the SM's throughput bound on the time of a chain step, from its SASS;
//! - [`host`]: the host's evaluation of each kernel, to check the GPU's stored results, on
//!   [`interpreter`] (PTX statements executed on the CPU);
//! - [`suite`]: `cargo bench --bench instructions`, the measurement and the table.

pub mod arafa;
pub mod bound;
pub mod catalog;
pub mod host;
pub mod interpreter;
pub mod ptx;
pub mod sass_check;
pub mod suite;

pub use catalog::{catalog, Agreement, Category, Init, Instruction, Width};
pub use ptx::{entry_name, file_name, generate, Variant, K_NET, K_SWEEP};
pub use sass_check::{check_chain, ChainSass, MAX_RESIDUAL_PER_ITERATION};
