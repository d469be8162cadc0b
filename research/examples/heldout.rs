//! The held-out test of the energy model (issue 35) on one board, from its raw data.
//!
//! ```sh
//! cargo run --release --example heldout -- BOARD_DIR [FIT]
//! ```
//!
//! BOARD_DIR holds one GPU call's runs under the frozen protocol
//! (`research/results/model-protocol.json`): `run-model/` and `ncu-model/` (the training suite,
//! `cargo bench --bench model`, and its ncu exports), `run-heldout/` and `ncu-heldout/` (the
//! held-out suite), and `fit/model.json` (`fit_model`'s fit of that training run). Writes
//! BOARD_DIR/heldout.md and heldout.json ([`energy_suites::heldout::board_report`]): every
//! held-out benchmark of the protocol predicted with the board's model beside its
//! measurement, the protocol's baselines, the mean errors and the bracket's coverage, the
//! benchmarks that could not be tested (with why), and what the acceptance rule finds short.
//! The protocol is the one the model was fitted under (its `protocol_hash`). FIT names another
//! fit folder of the board (`fit-v1`: the board's runs fitted under protocol v1 too); its
//! report is written as BOARD_DIR/heldout-FIT.md and .json.

use std::path::PathBuf;
use std::process::ExitCode;

use energy_harness::{Error, ErrorKind, Result};
use energy_results::trace::format::write_atomically;
use energy_suites::heldout::{board_report, render_board, report_stem};

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let (board, fit) = match args.as_slice() {
        [board] => (board, "fit".to_string()),
        [board, fit] => (board, fit.to_string_lossy().into_owned()),
        _ => {
            eprintln!(
                "usage: heldout BOARD_DIR [FIT] (with run-model/, ncu-model/, run-heldout/, ncu-heldout/, FIT/model.json; \
                 FIT defaults to fit)"
            );
            return ExitCode::from(2);
        }
    };
    match run(board, &fit) {
        Ok(md) => {
            println!("{md}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(board: &std::path::Path, fit: &str) -> Result<String> {
    let name = board.file_name().map_or_else(|| board.display().to_string(), |n| n.to_string_lossy().into_owned());
    let report = board_report(board, fit, &name)?;
    let md = render_board(&report);
    let stem = report_stem(fit);
    write_atomically(&board.join(format!("{stem}.md")), md.as_bytes())?;
    let json = serde_json::to_string_pretty(&report).map_err(|e| Error::new(ErrorKind::Format, e.to_string()))?;
    write_atomically(&board.join(format!("{stem}.json")), (json + "\n").as_bytes())?;
    Ok(md)
}
