//! Prints the launch-path table of interleaved rounds (issue 29):
//! `cargo run --example launch_paths -- DIR` with DIR holding `r<k>_<path>_energy.json`.
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: launch_paths DIR (the results of tests/user_crate/benches/interleaved.rs)");
        return ExitCode::from(2);
    };
    match energy_suites::launch_paths::read_rounds(dir.as_ref()).and_then(|r| energy_suites::launch_paths::render(&r)) {
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
