//! `cargo energy …`: the command-line face of the harness.
//!
//! Works as a cargo subcommand (`cargo energy info`, after `cargo install --path
//! energy-harness`) and called directly (`cargo-energy info`). Exit codes: 0 success,
//! 1 the measurement or device failed, 2 bad arguments or a bad input file.

mod info;
mod trace;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{Error, ErrorKind};

/// Measure the energy of GPU kernels.
#[derive(Debug, Parser)]
#[command(name = "cargo energy", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the GPU's facts and which power/energy sources work on it.
    Info {
        /// NVML index of the GPU.
        #[arg(long, default_value_t = 0)]
        device: u32,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Record a live sensor trace (energy-trace v1 CSV).
    Trace {
        /// How long to record, seconds.
        #[arg(long, value_parser = parse_seconds)]
        seconds: f64,
        /// NVML index of the GPU.
        #[arg(long, default_value_t = 0)]
        device: u32,
        /// Output file (written atomically); standard output when absent.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .ok_or_else(|| format!("`{text}` is not a duration in seconds (0 < S <= 86400)"))
}

/// Runs the command line `args` (the program name first) and returns the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut args: Vec<OsString> = args.into_iter().collect();
    // `cargo energy info` runs `cargo-energy energy info`.
    if args.get(1).is_some_and(|a| a == "energy") {
        args.remove(1);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Info { device, json } => info::run(device, json),
        Command::Trace {
            seconds,
            device,
            output,
        } => trace::run(seconds, device, output.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// 2 for bad input (arguments, files), 1 for everything else.
fn exit_code(err: &Error) -> u8 {
    match err.kind() {
        ErrorKind::InvalidInput | ErrorKind::Format => 2,
        _ => 1,
    }
}
