//! Writes `ptx/memory/*.ptx` from the memory suite's template
//! (`cargo run --example generate_memory_ptx`); `cargo test` fails while they differ.

use std::path::Path;

use kernel_energy::generated::sync_dir;
use kernel_energy::memory::{generate, MemoryKernel};

fn main() -> std::process::ExitCode {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("ptx").join("memory");
    let files: Vec<(String, String)> = MemoryKernel::ALL.iter().map(|k| (k.file_name(), generate(*k))).collect();
    match sync_dir(&dir, ".ptx", &files) {
        Ok(changes) => {
            for change in changes {
                println!("{change}");
            }
            println!("{} kernels in ptx/memory/", files.len());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
