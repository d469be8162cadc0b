//! `cargo-energy`: see `cargo energy --help`.

fn main() -> std::process::ExitCode {
    energy_harness::cli::main(std::env::args_os())
}
