//! Prints the verdict tables of issue 32 (research/results/2026-11-25-h100-verdicts/table.md):
//! `cargo run --example verdicts -- RAW_DIR` with RAW_DIR holding one folder per GPU call,
//! each with the call's `<tag>.tgz` as `exp.sh` wrote it (unpacked here with `tar`).
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(raw) = std::env::args_os().nth(1) else {
        eprintln!("usage: verdicts RAW_DIR (research/results/2026-11-25-h100-verdicts/raw)");
        return ExitCode::from(2);
    };
    match energy_suites::verdicts::unpack_and_render(raw.as_ref()) {
        Ok(md) => {
            print!("{md}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
