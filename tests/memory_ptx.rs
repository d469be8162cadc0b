//! The memory suite's PTX without a GPU: the files are what the generator writes, every
//! file assembles for sm_80 and sm_90, and each measurement loop's machine code holds its
//! accesses (LDG, LDS, STG, STS) the expected number of times per iteration with little
//! else (the DIV kernels: a division's sequence after each load; the shared chase: the add
//! of its two words), every access 64-bit wide.
//!
//! ptxas and cuobjdump come from NVIDIA's wheels (`.ci/run` installs them); see
//! `kernel_energy::sass::tools_for_tests` for what happens where they are missing.

use std::path::{Path, PathBuf};

use kernel_energy::generated::stale_files;
use kernel_energy::memory::ptx::LOAD_UNROLL;
use kernel_energy::memory::{generate, MemoryKernel};
use kernel_energy::sass::{assemble, disassemble, histogram, loop_body, tools_for_tests, PtxasOpt};

fn ptx_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ptx").join("memory")
}

/// Instructions a LOAD measurement loop may hold besides its accesses: the counter's add,
/// compare and branch (and a move).
const LOAD_LOOP_OVERHEAD: i64 = 4;
/// The same for the STORE loops, which also advance their 64-bit offset by a chunk, wrap it
/// and form the address (ptxas: 13 instructions per iteration for sm_80 and sm_90).
const STORE_LOOP_OVERHEAD: i64 = 14;

#[test]
fn files_are_what_the_generator_writes() {
    let files: Vec<(String, String)> = MemoryKernel::ALL.iter().map(|k| (k.file_name(), generate(*k))).collect();
    let stale = stale_files(&ptx_dir(), ".ptx", &files);
    assert!(
        stale.is_empty(),
        "ptx/memory is out of date; run `cargo run --example generate_memory_ptx`:\n{}",
        stale.join("\n")
    );
}

#[test]
fn measurement_loops_hold_their_accesses_and_little_else() {
    let Some((ptxas, cuobjdump)) = tools_for_tests() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for kernel in MemoryKernel::ALL {
        let path = ptx_dir().join(kernel.file_name());
        for arch in ["sm_80", "sm_90"] {
            let sub = dir.path().join(arch);
            std::fs::create_dir_all(&sub).unwrap();
            let cubin = match assemble(&ptxas, &path, arch, PtxasOpt::O3, &sub) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{} {arch}: {e}", kernel.entry()));
                    continue;
                }
            };
            let Some(class) = kernel.access_class() else { continue }; // init: assembling is the check
            let functions = disassemble(&cuobjdump, &cubin).expect("cuobjdump");
            let Some(body) = functions.get(kernel.entry()).and_then(|f| loop_body(f)) else {
                failures.push(format!("{} {arch}: no measurement loop found", kernel.entry()));
                continue;
            };
            // Every access is 64-bit (LDG.E.64, LDS.64, ...): ptxas did not narrow the chase.
            let narrow: Vec<&str> = body
                .iter()
                .filter(|i| i.opcode.split('.').next() == Some(class) && !i.opcode.split('.').any(|m| m == "64"))
                .map(|i| i.opcode.as_str())
                .collect();
            if !narrow.is_empty() {
                failures.push(format!("{} {arch}: accesses narrower than 64 bits: {narrow:?}", kernel.entry()));
            }
            let counts = histogram(body);
            let accesses = counts.get(class).copied().unwrap_or(0);
            let others: i64 = counts.iter().filter(|(c, _)| c.as_str() != class).map(|(_, n)| n).sum();
            let expected = i64::from(kernel.accesses_per_iteration());
            if accesses != expected {
                failures.push(format!(
                    "{} {arch}: {accesses} {class} per iteration, expected {expected}: {counts:?}",
                    kernel.entry()
                ));
            }
            if kernel.divides() {
                // Each load is followed by a division's sequence (reciprocal multiply and corrections).
                if others < 3 * i64::from(LOAD_UNROLL) {
                    failures.push(format!(
                        "{} {arch}: only {others} other instructions for {LOAD_UNROLL} divisions: {counts:?}",
                        kernel.entry()
                    ));
                }
            } else if others
                > if kernel.stores() { STORE_LOOP_OVERHEAD } else { LOAD_LOOP_OVERHEAD }
                    + i64::from(kernel.other_instructions_per_access()) * expected
            {
                failures
                    .push(format!("{} {arch}: {others} instructions besides the accesses: {counts:?}", kernel.entry()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
