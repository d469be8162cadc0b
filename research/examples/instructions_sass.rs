//! Writes the SASS check of every instruction kernel as a markdown table: what one chain
//! step compiles to and what the measured loop holds beyond its baseline, for sm_90 and
//! sm_80 at ptxas -O3 and -O0 (Arafa's SASS inspection, made reviewable).
//!
//! `cargo run --release --example instructions_sass [OUT.md]` (default
//! `research/results/instructions-sass.md`). Needs ptxas and cuobjdump (see `kernel_energy::sass`).

use kernel_energy::instructions::check_chain;
use kernel_energy::instructions::{catalog, file_name};
use kernel_energy::sass::{assemble, disassemble, find_tool, PtxasOpt, Tool};
use std::path::PathBuf;

const TARGETS: [(&str, PtxasOpt); 3] = [("sm_90", PtxasOpt::O3), ("sm_90", PtxasOpt::O0), ("sm_80", PtxasOpt::O3)];

fn run() -> Result<PathBuf, String> {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "research/results/instructions-sass.md".into()));
    let ptxas = find_tool(Tool::Ptxas)?;
    let cuobjdump = find_tool(Tool::Cuobjdump)?;
    let version = std::process::Command::new(&ptxas)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or("").to_string())
        .map_err(|e| format!("{}: {e}", ptxas.display()))?;
    let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let ptx_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ptx/instructions");
    let mut text = String::from("# SASS of the instruction kernels\n\n");
    text.push_str(&format!(
        "Written by `cargo run --release --example instructions_sass` with ptxas {version}. \
         Per step: the SASS of one chain step, `(2K loop - K loop) / K` by opcode class. \
         Residual: what the measured (K) loop holds per iteration beyond its baseline's loop and \
         the K steps (ptxas's moves at the loop's edges); the check allows at most {} instructions. \
         `cargo test --test instruction_ptx` checks the same for every kernel.\n\n",
        kernel_energy::instructions::MAX_RESIDUAL_PER_ITERATION
    ));
    text.push_str("| instruction |");
    for (arch, opt) in TARGETS {
        text.push_str(&format!(" {arch} {opt:?} per step | residual |"));
    }
    text.push_str("\n|---|");
    text.push_str(&"---|---|".repeat(TARGETS.len()));
    text.push('\n');
    for instruction in catalog() {
        let path = ptx_dir.join(file_name(&instruction));
        text.push_str(&format!("| {} |", instruction.label));
        for (arch, opt) in TARGETS {
            let sub = dir.path().join(format!("{arch}{opt:?}"));
            std::fs::create_dir_all(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
            let cubin = assemble(&ptxas, &path, arch, opt, &sub)?;
            let found = check_chain(&disassemble(&cuobjdump, &cubin)?, &instruction)
                .map_err(|e| format!("{arch} {opt:?}: {e}"))?;
            text.push_str(&format!(" {} | {} |", found.describe(), found.describe_residual()));
        }
        text.push('\n');
    }
    // Written whole to a temporary file and renamed: never a half-written table.
    let partial = out.with_extension("md.partial");
    std::fs::write(&partial, text).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(out)
}

fn main() {
    match run() {
        Ok(out) => println!("instructions_sass: wrote {}", out.display()),
        Err(e) => {
            eprintln!("instructions_sass: {e}");
            std::process::exit(1);
        }
    }
}
