//! The instruction suite's PTX without a GPU: the files are what the generator writes,
//! every file assembles for sm_80 and sm_90, and the machine code of each measured loop
//! holds the chain K times and differs from its baseline by nothing else.
//!
//! ptxas and cuobjdump come from NVIDIA's wheels (`.ci/run` installs them). Where they are
//! missing the tool-dependent tests fail with the install command when `CI` is set, and
//! say they did not run otherwise.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use energy_suites::generated::stale_files;
use energy_suites::instructions::{catalog, file_name, generate, Instruction};
use energy_suites::sass::{assemble, check_chain, disassemble, tools_for_tests as tools, PtxasOpt};

fn ptx_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ptx").join("instructions")
}

#[test]
fn files_are_what_the_generator_writes() {
    let files: Vec<(String, String)> = catalog().iter().map(|i| (file_name(i), generate(i))).collect();
    let stale = stale_files(&ptx_dir(), ".ptx", &files);
    assert!(
        stale.is_empty(),
        "ptx/instructions is out of date; run `cargo run --example generate_instruction_ptx`:\n{}",
        stale.join("\n")
    );
}

/// The targets each file is assembled for: sm_80 and sm_90 at the optimisation the suite
/// loads with, and sm_90 without optimisation (the chain must survive both).
const TARGETS: [(&str, PtxasOpt); 3] = [("sm_90", PtxasOpt::O3), ("sm_90", PtxasOpt::O0), ("sm_80", PtxasOpt::O3)];

/// One file assembled for one target: the cubin, or ptxas's complaint.
struct Assembled {
    instruction: Instruction,
    arch: &'static str,
    opt: PtxasOpt,
    cubin: Result<PathBuf, String>,
}

/// Every file assembled for every target, once for the whole test binary (both tests read
/// it; ptxas over 222 files × 3 targets is most of this file's time). Four threads.
fn assembled(ptxas: &Path) -> &'static [Assembled] {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static ASSEMBLED: OnceLock<Vec<Assembled>> = OnceLock::new();
    ASSEMBLED.get_or_init(|| {
        let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory")).path();
        for (arch, opt) in TARGETS {
            std::fs::create_dir_all(dir.join(format!("{arch}{opt:?}"))).expect("a temporary directory");
        }
        let list = catalog();
        std::thread::scope(|scope| {
            let handles: Vec<_> = list
                .chunks(list.len().div_ceil(4))
                .map(|chunk| {
                    scope.spawn(move || {
                        let mut out = Vec::new();
                        for instruction in chunk {
                            let path = ptx_dir().join(file_name(instruction));
                            for (arch, opt) in TARGETS {
                                let sub = dir.join(format!("{arch}{opt:?}"));
                                let cubin = assemble(ptxas, &path, arch, opt, &sub);
                                out.push(Assembled { instruction: instruction.clone(), arch, opt, cubin });
                            }
                        }
                        out
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("assembler thread")).collect()
        })
    })
}

fn assert_none_failed(failures: &[String], of: usize) {
    assert!(failures.is_empty(), "{} of {of} failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_file_assembles_for_sm80_and_sm90() {
    let Some((ptxas, _)) = tools() else { return };
    let optimised: Vec<&Assembled> = assembled(&ptxas).iter().filter(|a| a.opt == PtxasOpt::O3).collect();
    assert_eq!(optimised.len(), 2 * catalog().len(), "every file for sm_80 and sm_90");
    let failures: Vec<String> = optimised
        .iter()
        .filter_map(|a| a.cubin.as_ref().err().map(|e| format!("{} {}: {e}", a.arch, a.instruction.label)))
        .collect();
    assert_none_failed(&failures, optimised.len());
}

#[test]
fn machine_code_holds_each_chain_and_nothing_else() {
    let Some((ptxas, cuobjdump)) = tools() else { return };
    let all = assembled(&ptxas);
    let results: Vec<Result<String, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = all
            .chunks(all.len().div_ceil(4))
            .map(|chunk| {
                let cuobjdump = &cuobjdump;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|a| {
                            let (arch, opt, instruction) = (a.arch, a.opt, &a.instruction);
                            let cubin =
                                a.cubin.as_ref().map_err(|e| format!("{arch} {opt:?} {}: {e}", instruction.label))?;
                            let functions = disassemble(cuobjdump, cubin)?;
                            let found = check_chain(&functions, instruction)
                                .map_err(|e| format!("{arch} {opt:?} {}: {e}", instruction.label))?;
                            Ok(format!(
                                "{arch} {opt:?} {}: {} per step; residual {}",
                                instruction.label,
                                found.describe(),
                                found.describe_residual()
                            ))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("checker thread")).collect()
    });
    let failures: Vec<String> = results.iter().filter_map(|r| r.as_ref().err().cloned()).collect();
    assert_none_failed(&failures, results.len());
    let mut lines: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    lines.sort();
    eprintln!("{}", lines.iter().map(|l| l.as_str()).collect::<Vec<_>>().join("\n"));
}
