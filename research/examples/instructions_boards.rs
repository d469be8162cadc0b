//! Dynamic energy per instruction on two boards with the ratio per instruction:
//! `cargo run --release --example instructions_boards -- LEVEL OTHER.json REFERENCE.json...`
//! (instruction tables, `instructions.json`; the references in order of preference: the
//! first that has an instruction gives its figure).

use std::path::PathBuf;

use kernel_energy::instructions::suite::{board_ratios, read_table, render_board_ratios};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: instructions_boards LEVEL OTHER.json REFERENCE.json...");
        return std::process::ExitCode::from(2);
    }
    let read = |p: &String| read_table(&PathBuf::from(p));
    let other = match read(&args[1]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut references = Vec::new();
    for p in &args[2..] {
        match read(p) {
            Ok(t) => references.push(t),
            Err(e) => {
                eprintln!("error: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let name = |t: &kernel_energy::instructions::suite::InstructionTable| {
        t.device.as_ref().map(|d| d.name.clone()).unwrap_or_else(|| "?".into())
    };
    let list = board_ratios(&references, &other, &args[0]);
    print!("{}", render_board_ratios(&list, &name(&references[0]), &name(&other)));
    std::process::ExitCode::SUCCESS
}
