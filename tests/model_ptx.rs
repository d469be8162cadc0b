//! The model suite's PTX without a GPU: each file is the NVRTC output of its CUDA source as
//! it stands (the header's source hash), assembles for sm_80 and sm_90, and each kernel's
//! machine code holds the work it is named for and no local memory (a spilled or
//! dynamically indexed array would add loads and stores the kernel is not about).

use std::path::{Path, PathBuf};

use energy_suites::sass::{assemble, disassemble, tools_for_tests, PtxasOpt};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

const FILES: [(&str, &str); 2] =
    [("ptx/model/train.cu", "ptx/model/train.ptx"), ("ptx/apps/apps.cu", "ptx/apps/apps.ptx")];

#[test]
fn each_ptx_file_was_generated_from_its_source_as_it_stands() {
    for (cu, ptx) in FILES {
        let source = std::fs::read(root().join(cu)).unwrap();
        let text = std::fs::read_to_string(root().join(ptx)).unwrap();
        let want = format!("// Source FNV-1a: {}", energy_harness::unstable::report::content_hash(&source));
        assert!(
            text.lines().take(3).any(|l| l == want),
            "{ptx} was not generated from the current {cu}: run `python3 ptx/nvrtc.py {cu} {ptx}` (NVRTC from the \
             nvidia-cuda-nvrtc-cu12 wheel)"
        );
    }
}

/// Each kernel and an opcode its machine code must hold.
const EXPECTED: [(&str, &str); 21] = [
    ("m_ffma", "FFMA"),
    ("m_hfma2", "HFMA2"),
    ("m_dfma", "DFMA"),
    ("m_imad", "IMAD"),
    ("m_alu", "LOP3.LUT"),
    ("m_mufu", "MUFU.SIN"),
    ("m_cvt", "F2I"),
    ("m_shfl", "SHFL.BFLY"),
    ("m_hmma", "HMMA.16816.F32"),
    ("m_shared_ld", "LDS.128"),
    ("m_shared_st", "STS"),
    ("m_l1_ld", "LDG.E.128"),
    ("m_l2_ld", "LDG.E.128.STRONG.GPU"),
    ("m_dram_st", "STG.E.128"),
    ("m_sleep", "NANOSLEEP"),
    ("tgemm", "HMMA.16816.F32"),
    ("sgemm", "FFMA"),
    ("dgemm", "DFMA"),
    ("softmax", "MUFU.EX2"),
    ("bitonic1024", "LDS"),
    ("hash_keys", "IMAD"),
];

#[test]
fn kernels_hold_their_work_and_no_local_memory() {
    let Some((ptxas, cuobjdump)) = tools_for_tests() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for arch in ["sm_80", "sm_90"] {
        let sub = dir.path().join(arch);
        std::fs::create_dir_all(&sub).unwrap();
        let mut functions = std::collections::BTreeMap::new();
        for (_, ptx) in FILES {
            let cubin = assemble(&ptxas, &root().join(ptx), arch, PtxasOpt::O3, &sub).unwrap();
            functions.extend(disassemble(&cuobjdump, &cubin).unwrap());
        }
        for (kernel, opcode) in EXPECTED {
            let Some(code) = functions.get(kernel) else {
                failures.push(format!("{arch}: no kernel {kernel}"));
                continue;
            };
            if !code.iter().any(|i| i.opcode.starts_with(opcode)) {
                failures.push(format!("{arch} {kernel}: no {opcode}"));
            }
        }
        for (kernel, code) in &functions {
            if let Some(i) = code.iter().find(|i| i.opcode.starts_with("LDL") || i.opcode.starts_with("STL")) {
                failures.push(format!("{arch} {kernel}: local memory ({} {})", i.opcode, i.operands));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
