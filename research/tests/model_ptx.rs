//! The model suite's PTX without a GPU: each file is the NVRTC output of its CUDA source as
//! it stands (the header's source hash), assembles for sm_80 and sm_90 (the Hopper-only
//! `train_sm90.ptx` for sm_90a), and each kernel's
//! machine code holds the work it is named for and no local memory (a spilled or
//! dynamically indexed array would add loads and stores the kernel is not about), and the
//! training kernels that draw their operands in-kernel take the operand mask at run time:
//! the constant regime (mask 0) runs the very loop of the switching one (issue 35).

use std::path::{Path, PathBuf};

use kernel_energy::sass::{assemble, disassemble, instruction_class, tools_for_tests, PtxasOpt, SassInstruction};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

const FILES: [(&str, &str); 2] =
    [("ptx/model/train.cu", "ptx/model/train.ptx"), ("ptx/apps/apps.cu", "ptx/apps/apps.ptx")];

/// The Hopper-only training kernels (warpgroup MMA): compute_90a PTX, assembled for sm_90a.
const SM90_FILE: (&str, &str) = ("ptx/model/train_sm90.cu", "ptx/model/train_sm90.ptx");

#[test]
fn each_ptx_file_was_generated_from_its_source_as_it_stands() {
    for (cu, ptx) in FILES.into_iter().chain([SM90_FILE]) {
        let source = std::fs::read(root().join(cu)).unwrap();
        let text = std::fs::read_to_string(root().join(ptx)).unwrap();
        let want = format!("// Source FNV-1a: {}", energy_results::hash::content_hash(&source));
        assert!(
            text.lines().take(3).any(|l| l == want),
            "{ptx} was not generated from the current {cu}: run `python3 ptx/nvrtc.py {cu} {ptx}` (NVRTC from the \
             nvidia-cuda-nvrtc-cu12 wheel)"
        );
    }
}

/// Each kernel and an opcode its machine code must hold.
const EXPECTED: [(&str, &str); 23] = [
    ("m_ffma", "FFMA"),
    ("m_hfma2", "HFMA2"),
    ("m_dfma", "DFMA"),
    ("m_imad", "IMAD"),
    ("m_alu", "LOP3.LUT"),
    ("m_mufu", "MUFU.SIN"),
    ("m_cvt", "F2I"),
    ("m_shfl", "SHFL.BFLY"),
    ("m_hmma", "HMMA.16816.F32"),
    ("m_dmma", "DMMA"),
    ("m_shared_ld", "LDS.128"),
    ("m_shared_st", "STS"),
    ("m_l1_ld", "LDG.E.128"),
    ("m_l2_ld", "LDG.E.128.STRONG.GPU"),
    ("m_l2_st", "STG.E.128.STRONG.GPU"),
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

/// The training kernels that draw or compute their operands in-kernel, each with the opcode of
/// its work: their last parameter is the operand mask (`ptx/model/train.cu`).
const MASKED: [(&str, &str); 14] = [
    ("m_ffma", "FFMA"),
    ("m_hfma2", "HFMA2"),
    ("m_dfma", "DFMA"),
    ("m_imad", "IMAD"),
    ("m_alu", "SHF"),
    ("m_mufu", "MUFU.SIN"),
    ("m_cvt", "F2I"),
    ("m_shfl", "SHFL.BFLY"),
    ("m_hmma", "HMMA.16816.F32"),
    ("m_dmma", "DMMA"),
    ("m_shared_ld", "LDS.128"),
    ("m_shared_st", "STS"),
    ("m_l2_st", "STG.E.128"),
    ("m_dram_st", "STG.E.128"),
];

/// Pairs of names: (benchmark, entry) or (benchmark, its constant variant).
type Pairs = Vec<(String, String)>;

/// The training benchmarks of the model suite with their entries, and its constant-regime
/// pairs, read from its source (`name: "…", entry: "…"` and `("…", "…_const")`).
fn model_suite() -> (Pairs, Pairs) {
    let source = std::fs::read_to_string(root().join("benches/model/main.rs")).unwrap();
    let quoted = |s: &str| s.split('"').nth(1).map(str::to_string);
    let mut kernels = Vec::new();
    for chunk in source.split("name: \"").skip(1) {
        let name = chunk.split('"').next().unwrap().to_string();
        let entry = chunk
            .split_once("entry: \"")
            .and_then(|(before, after)| (!before.contains('}')).then(|| after.split('"').next().unwrap().to_string()));
        let entry = entry.unwrap_or_else(|| panic!("{name}: no entry"));
        kernels.push((name, entry));
    }
    let mut pairs = Vec::new();
    for line in source.lines().map(str::trim).filter(|l| l.starts_with("(\"train_") && l.ends_with("_const\"),")) {
        let (a, b) = line.split_once(", ").unwrap();
        pairs.push((quoted(a).unwrap(), quoted(b).unwrap()));
    }
    (kernels, pairs)
}

#[test]
fn every_training_kernel_but_sleep_has_a_constant_variant() {
    let (kernels, pairs) = model_suite();
    assert!(kernels.len() >= 29, "{kernels:?}");
    for (name, entry) in &kernels {
        let constant = pairs.iter().find(|(from, _)| from == name);
        if entry == "m_sleep" {
            assert!(constant.is_none(), "{name}: no operands, no constant regime");
            continue;
        }
        let Some((_, to)) = constant else { panic!("{name} ({entry}) has no constant variant") };
        assert_eq!(to, &format!("{name}_const"));
    }
    for (from, _) in &pairs {
        assert!(kernels.iter().any(|(n, _)| n == from), "{from}: no such kernel");
    }
    // Every kernel that draws its operands in-kernel is one of the masked ones, and each
    // masked one is a training kernel.
    let compute: Vec<&str> = MASKED.iter().chain(&MASKED_SM90).map(|(e, _)| *e).collect();
    for (e, _) in MASKED.iter().chain(&MASKED_SM90) {
        assert!(kernels.iter().any(|(_, entry)| entry == e), "{e}: no training kernel");
    }
    let readers = ["m_l1_ld", "m_l1_scatter", "m_l2_ld", "m_dram_ld", "m_dram_copy", "m_sleep"];
    for (name, entry) in &kernels {
        assert!(compute.contains(&entry.as_str()) || readers.contains(&entry.as_str()), "{name}: {entry}");
    }
}

/// `ptx` with the load of `entry`'s parameter `param` replaced by the constant `value`: what
/// ptxas would make of the kernel if the mask were known when it is compiled.
fn with_param_fixed(ptx: &str, entry: &str, param: usize, value: &str) -> String {
    let needle = format!("[{entry}_param_{param}];");
    let mut out = String::new();
    let mut found = 0;
    for line in ptx.lines() {
        if line.trim_start().starts_with("ld.param.u32") && line.trim_end().ends_with(&needle) {
            let register = line.split_whitespace().nth(1).unwrap().trim_end_matches(',');
            out.push_str(&format!("\tmov.u32 \t{register}, {value};\n"));
            found += 1;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert_eq!(found, 1, "{entry}: parameter {param} loaded {found} times");
    out
}

/// The last `.param` of `entry` in `ptx` (its index).
fn last_param(ptx: &str, entry: &str) -> usize {
    let start = ptx.find(&format!(".entry {entry}(")).unwrap_or_else(|| panic!("no entry {entry}"));
    let head = &ptx[start..start + ptx[start..].find(')').unwrap()];
    head.matches(".param").count() - 1
}

/// The loop that does the kernel's work: the narrowest backward branch whose body holds
/// `opcode`.
fn work_loop<'a>(code: &'a [SassInstruction], opcode: &str) -> Option<&'a [SassInstruction]> {
    let mut loops: Vec<&[SassInstruction]> = Vec::new();
    for (at, i) in code.iter().enumerate() {
        if i.opcode != "BRA" {
            continue;
        }
        let Some(target) =
            i.operands.split_whitespace().last().and_then(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok())
        else {
            continue;
        };
        if target < i.address {
            if let Some(start) = code.iter().position(|j| j.address == target) {
                loops.push(&code[start..=at]);
            }
        }
    }
    loops.sort_by_key(|l| l.len());
    loops.into_iter().find(|l| l.iter().any(|i| i.opcode.starts_with(opcode)))
}

/// A loop's instructions by class, the integer ALU's classes merged (ptxas picks among
/// `IADD3`, `IMAD.IADD`, `LOP3` and moves freely; ncu counts them in one term).
fn loop_counts(body: &[SassInstruction]) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for i in body {
        let class = instruction_class(i);
        let class = match class.as_str() {
            "IADD" | "IMAD" | "LOP3" | "SHF" | "MOV" | "UIADD3" | "UMOV" => "integer".to_string(),
            _ => class,
        };
        *counts.entry(class).or_insert(0) += 1;
    }
    counts
}

/// The operand mask is a run-time parameter: the loop of each masked kernel as assembled is
/// the loop of the same kernel with the mask fixed at all ones (the switching regime's code,
/// as before the mask existed), so mask 0 runs every instruction of it; fixing the mask at 0
/// instead lets ptxas drop work (shown on m_cvt and m_shfl, whose XOR with a zero key goes),
/// which is what a run-time mask prevents. Every class but the integer ALU's must match
/// exactly; that one within one instruction per iteration (with the mask fixed, ptxas
/// materialises m_shared_st's generator constant with one more move inside the loop).
#[test]
fn the_operand_mask_is_a_run_time_parameter_and_changes_no_loop() {
    let Some((ptxas, cuobjdump)) = tools_for_tests() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ptx = std::fs::read_to_string(root().join("ptx/model/train.ptx")).unwrap();
    let mut failures = Vec::new();
    for arch in ["sm_80", "sm_90"] {
        let assembled = |name: &str, text: &str| {
            let sub = dir.path().join(format!("{arch}-{name}"));
            std::fs::create_dir_all(&sub).unwrap();
            let file = sub.join("train.ptx");
            std::fs::write(&file, text).unwrap();
            disassemble(&cuobjdump, &assemble(&ptxas, &file, arch, PtxasOpt::O3, &sub).unwrap()).unwrap()
        };
        let as_is = assembled("as-is", &ptx);
        let (mut ones, mut zero) = (ptx.clone(), ptx.clone());
        for (entry, _) in MASKED {
            let mask = last_param(&ptx, entry);
            ones = with_param_fixed(&ones, entry, mask, "-1");
            zero = with_param_fixed(&zero, entry, mask, "0");
        }
        let (ones, zero) = (assembled("ones", &ones), assembled("zero", &zero));
        let mut folded = Vec::new();
        for (entry, opcode) in MASKED {
            let body = |f: &std::collections::BTreeMap<String, Vec<SassInstruction>>| {
                work_loop(&f[entry], opcode).map(loop_counts).unwrap_or_default()
            };
            let (runtime, switching, constant) = (body(&as_is), body(&ones), body(&zero));
            let others = |c: &std::collections::BTreeMap<String, usize>| {
                c.iter().filter(|(k, _)| k.as_str() != "integer").map(|(k, v)| (k.clone(), *v)).collect::<Vec<_>>()
            };
            let integer = |c: &std::collections::BTreeMap<String, usize>| c.get("integer").copied().unwrap_or(0);
            if runtime.is_empty()
                || others(&runtime) != others(&switching)
                || integer(&runtime).abs_diff(integer(&switching)) > 1
            {
                failures
                    .push(format!("{arch} {entry}: loop {runtime:?}, with the mask fixed at all ones {switching:?}"));
            }
            if constant != runtime {
                folded.push(entry);
            }
        }
        for entry in ["m_cvt", "m_shfl"] {
            if !folded.contains(&entry) {
                failures.push(format!("{arch} {entry}: a mask fixed at 0 changes nothing: is the check blind?"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The Hopper-only training kernels, each with the opcode of its work (all draw their
/// operands in-kernel and take the operand mask last).
const MASKED_SM90: [(&str, &str); 1] = [("m_hgmma", "HGMMA.64x64x16.F32")];

/// `train_sm90.ptx` assembles for sm_90a; each kernel holds its work and no local memory, and
/// its work loop with the operand mask as a run-time parameter is the loop with the mask fixed
/// at all ones (the constant regime runs the switching one's code).
#[test]
fn hopper_kernels_hold_their_work_and_take_the_mask_at_run_time() {
    let Some((ptxas, cuobjdump)) = tools_for_tests() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ptx = std::fs::read_to_string(root().join(SM90_FILE.1)).unwrap();
    let assembled = |name: &str, text: &str| {
        let sub = dir.path().join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let file = sub.join("train_sm90.ptx");
        std::fs::write(&file, text).unwrap();
        disassemble(&cuobjdump, &assemble(&ptxas, &file, "sm_90a", PtxasOpt::O3, &sub).unwrap()).unwrap()
    };
    let as_is = assembled("as-is", &ptx);
    let mut ones = ptx.clone();
    for (entry, _) in MASKED_SM90 {
        ones = with_param_fixed(&ones, entry, last_param(&ptx, entry), "-1");
    }
    let ones = assembled("ones", &ones);
    let mut failures = Vec::new();
    for (kernel, code) in &as_is {
        if let Some(i) = code.iter().find(|i| i.opcode.starts_with("LDL") || i.opcode.starts_with("STL")) {
            failures.push(format!("{kernel}: local memory ({} {})", i.opcode, i.operands));
        }
    }
    for (entry, opcode) in MASKED_SM90 {
        let body = |f: &std::collections::BTreeMap<String, Vec<SassInstruction>>| {
            work_loop(&f[entry], opcode).map(loop_counts).unwrap_or_default()
        };
        let (runtime, switching) = (body(&as_is), body(&ones));
        if runtime.is_empty() || runtime != switching {
            failures.push(format!("{entry}: loop {runtime:?}, with the mask fixed at all ones {switching:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
