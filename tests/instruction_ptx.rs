//! The instruction suite's PTX without a GPU: the files are what the generator writes,
//! every file assembles for sm_80 and sm_90, and the machine code of each measured loop
//! holds the chain K times and differs from its baseline by nothing else.
//!
//! ptxas and cuobjdump come from NVIDIA's wheels (`.ci/run` installs them). Where they are
//! missing the tool-dependent tests fail with the install command when `CI` is set, and
//! say they did not run otherwise.

use std::path::{Path, PathBuf};

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

fn for_each_instruction(check: impl Fn(&Instruction, &Path) -> Result<(), String> + Sync) {
    let list = catalog();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<&[Instruction]> = list.chunks(list.len().div_ceil(4)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let check = &check;
                scope.spawn(move || {
                    chunk.iter().filter_map(|i| check(i, &ptx_dir().join(file_name(i))).err()).collect::<Vec<String>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("checker thread")).collect()
    });
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), list.len(), failures.join("\n"));
}

#[test]
fn every_file_assembles_for_sm80_and_sm90() {
    let Some((ptxas, _)) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    for_each_instruction(|_, path| {
        for arch in ["sm_80", "sm_90"] {
            assemble(&ptxas, path, arch, PtxasOpt::O3, dir.path())?;
        }
        Ok(())
    });
}

#[test]
fn machine_code_holds_each_chain_and_nothing_else() {
    let Some((ptxas, cuobjdump)) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let report = std::sync::Mutex::new(Vec::new());
    for_each_instruction(|instruction, path| {
        for (arch, opt) in [("sm_90", PtxasOpt::O3), ("sm_90", PtxasOpt::O0), ("sm_80", PtxasOpt::O3)] {
            let sub = dir.path().join(format!("{arch}{opt:?}"));
            std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
            let cubin = assemble(&ptxas, path, arch, opt, &sub)?;
            let functions = disassemble(&cuobjdump, &cubin)?;
            let found = check_chain(&functions, instruction).map_err(|e| format!("{arch} {opt:?}: {e}"))?;
            report.lock().unwrap().push(format!(
                "{arch} {opt:?} {}: {} per step; residual {}",
                instruction.label,
                found.describe(),
                found.describe_residual()
            ));
        }
        Ok(())
    });
    let mut lines = report.into_inner().unwrap();
    lines.sort();
    eprintln!("{}", lines.join("\n"));
}
