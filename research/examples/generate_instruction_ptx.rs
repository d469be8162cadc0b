//! Writes `ptx/instructions/*.ptx` from the suite's catalog and template
//! (`cargo run --example generate_instruction_ptx`); `cargo test` fails while they differ.

use std::path::Path;

use kernel_energy::generated::sync_dir;
use kernel_energy::instructions::{catalog, file_name, generate};

fn main() -> std::process::ExitCode {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("ptx").join("instructions");
    let list = catalog();
    let files: Vec<(String, String)> = list.iter().map(|i| (file_name(i), generate(i))).collect();
    match sync_dir(&dir, ".ptx", &files) {
        Ok(changes) => {
            for change in changes {
                println!("{change}");
            }
            println!("{} instructions in ptx/instructions/", list.len());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
