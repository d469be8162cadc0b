//! Writes every page `energy_suites::published` regenerates from the committed raw data
//! under `research/results/` (after a change of the code that renders them; the test
//! `tests/published_pages.rs` fails until they are written again):
//! `cargo run --example republish`.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let pages = match energy_suites::published::all_pages(&results) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut changed = 0;
    for page in pages {
        let path = results.join(&page.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(page.text.as_str()) {
            continue;
        }
        if let Err(e) = energy_results::trace::format::write_atomically(&path, page.text.as_bytes()) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        println!("wrote {}", page.path.display());
        changed += 1;
    }
    println!("{changed} pages changed");
    ExitCode::SUCCESS
}
