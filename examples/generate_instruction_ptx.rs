//! Writes `ptx/instructions/*.ptx` from the suite's catalog and template
//! (`cargo run --example generate_instruction_ptx`); `cargo test` fails while they differ.

use std::path::Path;

use energy_suites::instructions::{catalog, file_name, generate};

fn main() -> std::process::ExitCode {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ptx").join("instructions");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return std::process::ExitCode::FAILURE;
    }
    let list = catalog();
    let expected: Vec<String> = list.iter().map(file_name).collect();
    // Files of instructions no longer in the catalog go.
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(".ptx") && !expected.contains(&name) {
                if let Err(e) = std::fs::remove_file(entry.path()) {
                    eprintln!("error: cannot remove {}: {e}", entry.path().display());
                    return std::process::ExitCode::FAILURE;
                }
                println!("removed {name}");
            }
        }
    }
    for instruction in &list {
        let path = dir.join(file_name(instruction));
        let text = generate(instruction);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        // Written beside, then renamed: never a half-written file.
        let tmp = dir.join(format!(".{}.tmp", file_name(instruction)));
        if let Err(e) = std::fs::write(&tmp, &text).and_then(|_| std::fs::rename(&tmp, &path)) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return std::process::ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    println!("{} instructions in ptx/instructions/", list.len());
    std::process::ExitCode::SUCCESS
}
