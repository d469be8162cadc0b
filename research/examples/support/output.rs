//! How the validation programs finish: the markdown on standard output, then the report
//! as `NAME.json` and the markdown as `NAME.md` under the output folder (each written
//! whole or not at all); an error at any step is printed and fails the program.

use std::path::Path;
use std::process::ExitCode;

use energy_harness::Result;
use energy_results::trace::format::write_atomically;
use serde::Serialize;

/// Prints and writes `report` (with its markdown `text`) as `out/NAME.json` and `.md`.
pub fn finish<R: Serialize>(result: Result<R>, markdown: impl Fn(&R) -> String, out: &Path, name: &str) -> ExitCode {
    let written = result.and_then(|report| {
        let text = markdown(&report);
        println!("{text}");
        let json = serde_json::to_string_pretty(&report).map_err(|e| {
            energy_harness::Error::new(energy_harness::ErrorKind::Format, format!("cannot encode the report: {e}"))
        })?;
        write_atomically(&out.join(format!("{name}.json")), json.as_bytes())?;
        write_atomically(&out.join(format!("{name}.md")), text.as_bytes())?;
        eprintln!("written: {}", out.join(format!("{name}.json")).display());
        Ok(())
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
