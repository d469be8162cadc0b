//! The instruction suite's PTX without a GPU: the files are what the generator writes,
//! every file assembles for sm_80 and sm_90, and the machine code of each measured loop
//! holds the chain K times and differs from its baseline by nothing else.
//!
//! ptxas and cuobjdump come from NVIDIA's wheels (`.ci/run` installs them). Where they are
//! missing the tool-dependent tests fail with the install command when `CI` is set, and
//! say they did not run otherwise.

use std::path::{Path, PathBuf};

use energy_suites::instructions::{catalog, file_name, generate, Instruction};
use energy_suites::sass::{assemble, check_chain, disassemble, find_tool, PtxasOpt, Tool};

fn ptx_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ptx").join("instructions")
}

/// The tools, or `None` (after saying why) where they are absent outside CI.
fn tools() -> Option<(PathBuf, PathBuf)> {
    match (find_tool(Tool::Ptxas), find_tool(Tool::Cuobjdump)) {
        (Ok(p), Ok(c)) => Some((p, c)),
        (p, c) => {
            let why = [p.err(), c.err()].into_iter().flatten().collect::<Vec<_>>().join("; ");
            if std::env::var_os("CI").is_some() {
                panic!("CI must run the PTX checks: {why}");
            }
            eprintln!("note: PTX checks not run: {why}");
            None
        }
    }
}

#[test]
fn files_are_what_the_generator_writes() {
    let list = catalog();
    let mut stale = Vec::new();
    for instruction in &list {
        let path = ptx_dir().join(file_name(instruction));
        match std::fs::read_to_string(&path) {
            Ok(text) if text == generate(instruction) => {}
            Ok(_) => stale.push(format!("{} differs", path.display())),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    let names: Vec<String> = list.iter().map(file_name).collect();
    for entry in std::fs::read_dir(ptx_dir()).expect("ptx/instructions exists").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.ends_with(".ptx") && !names.contains(&name) {
            stale.push(format!("{name} is not in the catalog"));
        }
    }
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
