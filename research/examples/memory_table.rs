//! Rebuilds the memory suite's table (`target/energy/suites/memory.{json,md}` and
//! `memory-threads.svg`) from the points file a run left there, for example after an
//! interrupted run or with another instruction table for the DIV cross-check
//! (`ENERGY_MEMORY_INSTRUCTIONS=path`).
//!
//! `cargo run --release --example memory_table [DIR]` (default `target/energy/suites`).

use std::path::PathBuf;

use kernel_energy::memory::suite::{publish_table, suite_dir};

fn main() -> std::process::ExitCode {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(suite_dir);
    match publish_table(&dir) {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memory_table: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
