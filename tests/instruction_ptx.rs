//! The instruction suite's PTX without a GPU: the files are what the generator writes,
//! every file assembles for sm_80 and sm_90 (in the machine-code check's batches: ptxas's
//! error names the file), and the machine code of each measured loop holds the chain K
//! times and differs from its baseline by nothing else.
//!
//! ptxas and cuobjdump come from NVIDIA's wheels (`.ci/run` installs them). Where they are
//! missing the tool-dependent tests fail with the install command when `CI` is set, and
//! say they did not run otherwise.

use std::path::{Path, PathBuf};

use kernel_energy::generated::stale_files;
use kernel_energy::instructions::check_chain;
use kernel_energy::instructions::{catalog, file_name, generate, Instruction};
use kernel_energy::sass::{assemble, assemble_into, disassemble, tools_for_tests as tools, PtxasOpt};

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

/// Runs `work` over `items` on four threads and gathers what each returns, in order.
fn on_four_threads<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|scope| {
        let work = &work;
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(4).max(1))
            .map(|chunk| scope.spawn(move || chunk.iter().map(work).collect::<Vec<R>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("worker thread")).collect()
    })
}

fn assert_none_failed(failures: &[String], of: usize) {
    assert!(failures.is_empty(), "{} of {of} failed:\n{}", failures.len(), failures.join("\n"));
}

/// Files per ptxas call in the machine-code check: one cubin (and so one disassembly,
/// ~0.5 s of CPU whatever its size) for many files.
const FILES_PER_CUBIN: usize = 32;

#[test]
fn machine_code_holds_each_chain_and_nothing_else() {
    let Some((ptxas, cuobjdump)) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let list = catalog();
    let batches: Vec<(&str, PtxasOpt, usize, &[Instruction])> = TARGETS
        .iter()
        .flat_map(|&(arch, opt)| list.chunks(FILES_PER_CUBIN).enumerate().map(move |(i, chunk)| (arch, opt, i, chunk)))
        .collect();
    let results: Vec<Vec<Result<String, String>>> = on_four_threads(&batches, |&(arch, opt, i, chunk)| {
        let files: Vec<PathBuf> = chunk.iter().map(|instruction| ptx_dir().join(file_name(instruction))).collect();
        let cubin = dir.path().join(format!("{arch}{opt:?}-{i}.cubin"));
        let functions =
            match assemble_into(&ptxas, &files, arch, opt, &cubin).and_then(|()| disassemble(&cuobjdump, &cubin)) {
                Ok(functions) => functions,
                Err(e) => return vec![Err(format!("{arch} {opt:?} batch {i}: {e}"))],
            };
        chunk
            .iter()
            .map(|instruction| {
                let found = check_chain(&functions, instruction)
                    .map_err(|e| format!("{arch} {opt:?} {}: {e}", instruction.label))?;
                Ok(format!(
                    "{arch} {opt:?} {}: {} per step; residual {}",
                    instruction.label,
                    found.describe(),
                    found.describe_residual()
                ))
            })
            .collect()
    });
    let results: Vec<Result<String, String>> = results.into_iter().flatten().collect();
    let failures: Vec<String> = results.iter().filter_map(|r| r.as_ref().err().cloned()).collect();
    assert_none_failed(&failures, TARGETS.len() * list.len());
    let mut lines: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    lines.sort();
    eprintln!("{}", lines.iter().map(|l| l.as_str()).collect::<Vec<_>>().join("\n"));
}

/// The check above reads machine code from cubins of many files; a function's code is the
/// same as when its file is assembled alone (ptxas compiles each entry by itself).
#[test]
fn a_file_assembled_with_others_has_the_code_it_has_alone() {
    let Some((ptxas, cuobjdump)) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let list = catalog();
    let (first, last) = (&list[0], &list[list.len() - 1]);
    let files: Vec<PathBuf> = [first, last].iter().map(|i| ptx_dir().join(file_name(i))).collect();
    for (arch, opt) in TARGETS {
        let together = dir.path().join(format!("together-{arch}{opt:?}.cubin"));
        assemble_into(&ptxas, &files, arch, opt, &together).unwrap();
        let together = disassemble(&cuobjdump, &together).unwrap();
        for (instruction, file) in [first, last].iter().zip(&files) {
            let alone = assemble(&ptxas, file, arch, opt, dir.path()).unwrap();
            let alone = disassemble(&cuobjdump, &alone).unwrap();
            assert!(!alone.is_empty(), "{}: no functions", instruction.label);
            for (name, code) in &alone {
                assert_eq!(
                    together.get(name),
                    Some(code),
                    "{arch} {opt:?} {name}: the code differs when assembled with others"
                );
            }
        }
    }
}
