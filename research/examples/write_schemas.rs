//! Writes the published JSON Schemas (`docs/schemas/*.schema.json`) from the types
//! (`energy_report::schemas`): `cargo run -p energy-suites --example write_schemas`.
//! `tests/schemas.rs` fails while a file differs from what this writes.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schemas");
    let files: Vec<(String, String)> =
        energy_report::schemas::published_schemas().into_iter().map(|s| (s.file_name, s.text)).collect();
    match kernel_energy::generated::sync_dir(&dir, ".schema.json", &files) {
        Ok(changes) => {
            for change in changes {
                println!("{change}");
            }
            println!("{} schemas in docs/schemas/", files.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
