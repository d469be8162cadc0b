//! The verdict experiment of issue 32: an FMA loop with a work knob (0, +1, +2 % loop
//! iterations: `fma0`/`fma1`/`fma2`, FMA_ITERS 8192/8274/8356) measured on a GPU by
//! `exp.sh` (research/results/2026-11-25-h100-verdicts/): one process per run, in blocks
//! A B B A A B B A of one level, each cycle's first block from a cooled board. From those
//! runs, with the harness's own code:
//! - **plain compare**: each A-first pair of a block (pairs 1 and 3) as two result sets,
//!   compared as `cargo energy compare` does, on the raw energy per launch;
//! - **temperature-normalized compare**: the same pairs with each result's energy at 50 °C
//!   (the board's dP/dT fitted on the calibration runs, role K: another kernel, the FMA
//!   loop without optimization);
//! - **paired runs**: each block's four pairs as `cargo energy ab` takes them (its
//!   statistics and stopping rule: at least 3 pairs, stop when the detectable change is at
//!   most 1 %; a block holds 4, so at most 4 here);
//! - **Zeus-style**: cool-down (20 s) before each run, one A and one B, compared plainly.
//!
//! Every comparison uses threshold [`THRESHOLD_PCT`]; a regression verdict at level 0 is a
//! false alarm, at +1 and +2 % a detection. A comparison is *cold* when its first run began
//! after [`COLD_IDLE_S`] or more of idle (a fixed cool-down, or the machine's start); the
//! die itself reads near idle within 2 s of a kernel's end, the board does not.
//!
//! The runs are read in `read.rs`, compared in `outcomes.rs`, summed up per board in
//! `analysis.rs` and set out as tables in `render.rs`.

use std::path::{Path, PathBuf};

use energy_harness::{Error, ErrorKind, Result};

mod analysis;
mod modes;
mod outcomes;
mod read;
mod render;

pub use analysis::{analyze, Analysis, BoardFigures, BoardFit, ColdHot};
pub use modes::{Mode, Outcome};
pub use read::{read_ab_reports, read_call, read_calls, Run};
pub use render::{render, wilson_pct};

/// The regression threshold of every comparison here, percent: the practical floor below
/// the +1 % the experiment asks to catch.
pub const THRESHOLD_PCT: f64 = 0.5;
/// The paired mode's detectable-change target, percent (`cargo energy ab --target`).
pub const PAIRED_TARGET_PCT: f64 = 1.0;
/// Idle before a comparison's first run that makes it a cold start, s.
pub const COLD_IDLE_S: f64 = 20.0;
/// Loop iterations of the three executables.
pub const ITERATIONS: [u32; 3] = [8192, 8274, 8356];

/// Unpacks each call's `<tag>/<tag>.tgz` under `raw` into a temporary folder (with `tar`)
/// and renders the tables.
pub fn unpack_and_render(raw: &Path) -> Result<String> {
    let work = std::env::temp_dir().join(format!("energy-verdicts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| Error::io(&work, "create", e))?;
    let mut calls: Vec<PathBuf> = std::fs::read_dir(raw)
        .map_err(|e| Error::io(raw, "list the calls", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    calls.sort();
    // The unpacked calls, in name order (the runs are read from them, then their `ab` reports).
    let mut unpacked = Vec::new();
    for call in calls {
        let Some(tag) = call.file_name().and_then(|t| t.to_str()).map(str::to_string) else { continue };
        let archive = call.join(format!("{tag}.tgz"));
        if !archive.exists() {
            continue;
        }
        let into = work.join(&tag);
        std::fs::create_dir_all(&into).map_err(|e| Error::io(&into, "create", e))?;
        let status = std::process::Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&into)
            .status()
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not run tar for {}: {e}", archive.display())))?;
        if !status.success() {
            return Err(Error::new(ErrorKind::Format, format!("{}: tar failed ({status})", archive.display())));
        }
        unpacked.push(into);
    }
    let rendered = read_calls(&work).and_then(|runs| analyze(&runs)).and_then(|mut a| {
        for call in &unpacked {
            a.outcomes.extend(read_ab_reports(call)?);
        }
        let all: Vec<Outcome> = a
            .outcomes
            .iter()
            .filter(|o| matches!(o.mode, Mode::Paired | Mode::AbCommand))
            .map(|o| Outcome { mode: Mode::PairedAll, ..o.clone() })
            .collect();
        a.outcomes.extend(all);
        Ok(render(&a))
    });
    let _ = std::fs::remove_dir_all(&work);
    rendered
}
