//! Regenerates the tables of issue 43's GPU runs from their raw files:
//!
//! ```sh
//! cargo run --example library_work_table -- research/results/2026-11-27-library-work/h100-run2 [more run folders]
//! ```
//!
//! Each folder gets `table.md` (see `energy_suites::library_work`); `tests/library_work_page.rs`
//! checks the committed ones are what this writes.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        eprintln!("usage: library_work_table RUN_FOLDER [RUN_FOLDER …]");
        return ExitCode::from(2);
    }
    for dir in dirs {
        let dir = Path::new(&dir);
        match energy_suites::library_work::table(dir) {
            Ok(md) => {
                let out = dir.join("table.md");
                if let Err(e) = std::fs::write(&out, md) {
                    eprintln!("library_work_table: {}: {e}", out.display());
                    return ExitCode::FAILURE;
                }
                println!("wrote {}", out.display());
            }
            Err(e) => {
                eprintln!("library_work_table: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
