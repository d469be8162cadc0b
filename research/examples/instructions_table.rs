//! Rebuilds the instruction table from the kernel records under `target/energy/suites/`
//! without measuring: after an interrupted `cargo bench --bench instructions`, or to
//! choose the GPU (`cargo run --example instructions_table -- GPU-uuid`). The same
//! `ENERGY_INSTRUCTIONS_LEVELS` / `ENERGY_INSTRUCTIONS_THREADS` as the run apply.

use kernel_energy::instructions::suite::{publish_table, suite_dir, SuiteOptions};

fn main() -> std::process::ExitCode {
    let uuid = std::env::args().nth(1);
    let options = match SuiteOptions::from_env() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match publish_table(&suite_dir(), &options, uuid.as_deref()) {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
