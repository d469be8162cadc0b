//! The machine-code check of the instruction suite (Arafa's SASS inspection): assemble each
//! PTX file with ptxas, disassemble it with cuobjdump, find each kernel's loop and compare
//! the loop of a measured kernel with its baseline's.
//!
//! ptxas and cuobjdump are found through `$PTXAS` / `$CUOBJDUMP`, then `PATH`, then
//! `$CUDA_HOME/bin` and `/usr/local/cuda/bin`, then the NVIDIA wheels of the Python on
//! `PATH` (`pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-cuobjdump`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A CUDA binary tool the check needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// The PTX assembler (wheel `nvidia-cuda-nvcc-cu12` or `nvidia-cuda-nvcc`).
    Ptxas,
    /// The CUDA binary dumper (wheel `nvidia-cuda-cuobjdump`).
    Cuobjdump,
}

impl Tool {
    fn program(self) -> &'static str {
        match self {
            Tool::Ptxas => "ptxas",
            Tool::Cuobjdump => "cuobjdump",
        }
    }
    fn variable(self) -> &'static str {
        match self {
            Tool::Ptxas => "PTXAS",
            Tool::Cuobjdump => "CUOBJDUMP",
        }
    }
    fn wheel(self) -> &'static str {
        match self {
            Tool::Ptxas => "nvidia-cuda-nvcc-cu12",
            Tool::Cuobjdump => "nvidia-cuda-cuobjdump",
        }
    }
}

fn executable(path: &Path) -> bool {
    path.is_file()
}

/// Finds `tool`, or says how to install it.
pub fn find_tool(tool: Tool) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(tool.variable()) {
        let path = PathBuf::from(path);
        return if executable(&path) {
            Ok(path)
        } else {
            Err(format!("${} = {} is not a file", tool.variable(), path.display()))
        };
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(paths) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&paths));
    }
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(home).join("bin"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin"));
    for dir in &candidates {
        let path = dir.join(tool.program());
        if executable(&path) {
            return Ok(path);
        }
    }
    // The NVIDIA wheels install under site-packages/nvidia/<component>/bin.
    if let Ok(output) =
        Command::new("python3").args(["-c", "import nvidia, sys; print('\\n'.join(nvidia.__path__))"]).output()
    {
        for root in String::from_utf8_lossy(&output.stdout).lines() {
            if let Ok(entries) = std::fs::read_dir(root) {
                for entry in entries.flatten() {
                    let path = entry.path().join("bin").join(tool.program());
                    if executable(&path) {
                        return Ok(path);
                    }
                }
            }
        }
    }
    Err(format!(
        "{} not found (looked at ${}, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin and the Python `nvidia` wheels): install it with `pip install {}` or set ${}",
        tool.program(),
        tool.variable(),
        tool.wheel(),
        tool.variable()
    ))
}

/// ptxas and cuobjdump for a test: `None` (after saying why on stderr) where they are
/// missing outside CI; in CI (`$CI` set) a missing tool fails the test, with the install
/// command, since the PTX checks must run there.
pub fn tools_for_tests() -> Option<(PathBuf, PathBuf)> {
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

/// ptxas optimization level (the JIT's O4 corresponds to ptxas -O3, its O0 to -O0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxasOpt {
    /// `-O3`, ptxas's default.
    O3,
    /// `-O0`.
    O0,
}

impl PtxasOpt {
    fn flag(self) -> &'static str {
        match self {
            PtxasOpt::O3 => "-O3",
            PtxasOpt::O0 => "-O0",
        }
    }
}

/// Assembles `ptx` for `arch` (`sm_80`, `sm_90`) into a cubin under `dir`; the error
/// carries ptxas's messages.
pub fn assemble(ptxas: &Path, ptx: &Path, arch: &str, opt: PtxasOpt, dir: &Path) -> Result<PathBuf, String> {
    let stem = ptx.file_stem().and_then(|s| s.to_str()).unwrap_or("kernel");
    let cubin = dir.join(format!("{stem}.{arch}{}.cubin", opt.flag()));
    assemble_into(ptxas, std::slice::from_ref(&ptx.to_path_buf()), arch, opt, &cubin)?;
    Ok(cubin)
}

/// Assembles several PTX files with one ptxas call into the one cubin `cubin` (their
/// entries' names must differ). ptxas compiles each entry as it would alone; one cubin
/// for many files makes one disassembly, which is what a check over hundreds of files
/// spends its time on.
pub fn assemble_into(ptxas: &Path, ptx: &[PathBuf], arch: &str, opt: PtxasOpt, cubin: &Path) -> Result<(), String> {
    let output = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(opt.flag())
        .args(ptx)
        .arg("-o")
        .arg(cubin)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    if !output.status.success() {
        let files: Vec<String> = ptx.iter().map(|p| p.display().to_string()).collect();
        return Err(format!(
            "ptxas -arch={arch} {} {} failed:\n{}{}",
            opt.flag(),
            files.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// One SASS instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SassInstruction {
    /// Byte offset in the function.
    pub address: u64,
    /// Guard predicate (`@P0`, `@!P1`), if any.
    pub predicate: Option<String>,
    /// Mnemonic with modifiers (`IMAD.IADD`, `MUFU.RCP`).
    pub opcode: String,
    /// Operands as printed.
    pub operands: String,
}

/// The SASS of each function of a cubin, by function name.
pub fn disassemble(cuobjdump: &Path, cubin: &Path) -> Result<BTreeMap<String, Vec<SassInstruction>>, String> {
    let output = Command::new(cuobjdump)
        .arg("-sass")
        .arg(cubin)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cuobjdump.display()))?;
    if !output.status.success() {
        return Err(format!("cuobjdump -sass {} failed: {}", cubin.display(), String::from_utf8_lossy(&output.stderr)));
    }
    parse_sass(&String::from_utf8_lossy(&output.stdout))
}

/// Parses `cuobjdump -sass` output.
pub fn parse_sass(text: &str) -> Result<BTreeMap<String, Vec<SassInstruction>>, String> {
    let mut functions: BTreeMap<String, Vec<SassInstruction>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix("Function : ") {
            let name = name.trim().to_string();
            functions.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        // `/*0090*/   @!P0 BRA 0x70 ;   /* 0x... */`
        let Some(rest) = trimmed.strip_prefix("/*") else { continue };
        let Some((address, rest)) = rest.split_once("*/") else { continue };
        let Ok(address) = u64::from_str_radix(address.trim(), 16) else { continue };
        let Some((text, _)) = rest.split_once(';') else { continue };
        let mut tokens = text.split_whitespace();
        let Some(first) = tokens.next() else { continue };
        let (predicate, opcode) = if first.starts_with('@') {
            (Some(first.to_string()), tokens.next().unwrap_or("").to_string())
        } else {
            (None, first.to_string())
        };
        let operands = tokens.collect::<Vec<_>>().join(" ");
        let Some(name) = &current else {
            return Err(format!("an instruction before any `Function :` line: {trimmed}"));
        };
        functions.entry(name.clone()).or_default().push(SassInstruction { address, predicate, opcode, operands });
    }
    if functions.is_empty() {
        return Err("no function in the disassembly".to_string());
    }
    Ok(functions)
}

fn branch_target(instruction: &SassInstruction) -> Option<u64> {
    if instruction.opcode != "BRA" {
        return None;
    }
    let target = instruction.operands.split_whitespace().last()?;
    u64::from_str_radix(target.trim_start_matches("0x"), 16).ok()
}

/// The instructions of the kernel's loop: from the target of the backward branch that
/// closes it (the widest one before the first `EXIT`; ptxas closes some loops with an
/// unconditional branch and leaves them through a predicated call) to that branch.
/// Out-of-line code (subroutines after `EXIT`, such as a division's slow path) is not
/// part of it; the calls to it are.
pub fn loop_body(function: &[SassInstruction]) -> Option<&[SassInstruction]> {
    let exit = function.iter().position(|i| i.opcode == "EXIT").unwrap_or(function.len());
    let (branch, target) = function[..exit]
        .iter()
        .enumerate()
        .filter_map(|(at, i)| branch_target(i).filter(|t| *t < i.address).map(|t| (at, t)))
        .max_by_key(|(at, t)| function[*at].address - t)?;
    let start = function.iter().position(|i| i.address == target)?;
    Some(&function[start..=branch])
}

/// The functional class of an instruction: [`opcode_class`], except that `HFMA2.MMA d,
/// -RZ, RZ, x, y` (ptxas's way of loading a constant) is a move and `IMAD.MOV d, RZ, RZ,
/// -x` (a negation, which ptxas alternates with `IADD3 d, -x, RZ, RZ`) an integer add.
pub fn instruction_class(instruction: &SassInstruction) -> String {
    if instruction.opcode.starts_with("HFMA2") && instruction.operands.contains("-RZ, RZ,") {
        return "MOV".to_string();
    }
    if instruction.opcode.starts_with("IMAD.MOV")
        && instruction.operands.rsplit(',').next().is_some_and(|last| last.trim().starts_with('-'))
    {
        return "IADD".to_string();
    }
    opcode_class(&instruction.opcode)
}

/// The functional class of an opcode: the mnemonic with the modifiers that only say how
/// (which pipe, which operand form) removed, so a loop counter that ptxas happens to
/// increment with `VIADD` in one kernel and `IADD3` in another counts the same.
pub fn opcode_class(opcode: &str) -> String {
    let base = opcode.split('.').next().unwrap_or(opcode);
    let has = |m: &str| opcode.split('.').skip(1).any(|x| x == m);
    match base {
        "IADD3" | "IADD" | "VIADD" | "IADD32I" => if has("X") { "IADD.X" } else { "IADD" }.to_string(),
        "IMAD" => {
            if has("IADD") {
                "IADD".to_string()
            } else if has("MOV") {
                "MOV".to_string()
            } else if has("SHL") {
                "SHF".to_string()
            } else if has("WIDE") {
                "IMAD.WIDE".to_string()
            } else if has("HI") {
                "IMAD.HI".to_string()
            } else if has("X") {
                "IMAD.X".to_string()
            } else {
                "IMAD".to_string()
            }
        }
        "MOV" | "MOV32I" => "MOV".to_string(),
        "IMNMX" | "VIMNMX" | "VIMNMX3" => "IMNMX".to_string(),
        "LOP" | "LOP3" | "LOP32I" => "LOP3".to_string(),
        "SHF" | "SHL" | "SHR" => "SHF".to_string(),
        "MUFU" => opcode.to_string(),
        "HADD2" if has("F32") => "HADD2.F32".to_string(),
        "CALL" => "CALL".to_string(),
        other => other.to_string(),
    }
}

/// Counts of each opcode class in `instructions`.
pub fn histogram(instructions: &[SassInstruction]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for i in instructions {
        *counts.entry(instruction_class(i)).or_insert(0) += 1;
    }
    counts
}

/// Counts by class as `2 IMAD + 0.50 MOV` (`nothing` when empty).
pub fn describe_counts(counts: &BTreeMap<String, f64>) -> String {
    if counts.is_empty() {
        return "nothing".to_string();
    }
    counts
        .iter()
        .map(
            |(class, n)| {
                if (n - n.round()).abs() < 1e-9 {
                    format!("{} {class}", n.round())
                } else {
                    format!("{n:.2} {class}")
                }
            },
        )
        .collect::<Vec<_>>()
        .join(" + ")
}

/// `a - b` for each class of either, the non-zero differences only.
pub fn difference(a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for class in a.keys().chain(b.keys()) {
        let d = a.get(class).copied().unwrap_or(0) - b.get(class).copied().unwrap_or(0);
        if d != 0 {
            out.insert(class.clone(), d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "
	code for sm_90
		Function : k_k2
        /*0000*/                   LDC R1, c[0x0][0x28] ;                              /* 0x00000a00ff017b82 */
        /*0010*/                   IMAD.MOV.U32 R0, RZ, RZ, RZ ;
        /*0020*/                   IMAD.IADD R4, R5, 0x1, R4 ;
        /*0030*/                   VIADD R0, R0, 0x1 ;
        /*0040*/                   IADD3 R5, R4, R5, RZ ;
        /*0050*/                   ISETP.GE.U32.AND P0, PT, R0, UR6, PT ;
        /*0060*/              @!P0 BRA 0x20 ;
        /*0070*/                   EXIT ;
        /*0080*/                   BRA 0x80;
		Function : k_base
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0020*/                   ISETP.GE.U32.AND P0, PT, R0, UR6, PT ;
        /*0030*/              @!P0 BRA 0x10 ;
        /*0040*/                   EXIT ;
";

    #[test]
    fn parses_functions_and_finds_the_loop() {
        let functions = parse_sass(SAMPLE).unwrap();
        assert_eq!(functions.len(), 2);
        let body = loop_body(&functions["k_k2"]).unwrap();
        assert_eq!(body.first().unwrap().address, 0x20);
        assert_eq!(body.last().unwrap().opcode, "BRA");
        let counts = histogram(body);
        assert_eq!(counts["IADD"], 3, "IMAD.IADD, VIADD and IADD3 are all integer adds");
        let base = histogram(loop_body(&functions["k_base"]).unwrap());
        assert_eq!(base["IADD"], 1);
        assert_eq!(counts["ISETP"], base["ISETP"]);
    }

    #[test]
    fn classes_merge_forms_and_keep_functions_apart() {
        assert_eq!(opcode_class("IADD3.X"), "IADD.X");
        assert_eq!(opcode_class("IMAD.MOV.U32"), "MOV");
        assert_eq!(opcode_class("IMAD.WIDE.U32"), "IMAD.WIDE");
        assert_eq!(opcode_class("IMAD.HI.U32"), "IMAD.HI");
        assert_eq!(opcode_class("MUFU.RCP64H"), "MUFU.RCP64H");
        assert_eq!(opcode_class("VIMNMX.U32"), "IMNMX");
        assert_eq!(opcode_class("LOP3.LUT"), "LOP3");
        assert_eq!(opcode_class("FADD.FTZ"), "FADD");
        assert_eq!(opcode_class("CALL.REL.NOINC"), "CALL");
        let negation = SassInstruction {
            address: 0,
            predicate: None,
            opcode: "IMAD.MOV".into(),
            operands: "R11, RZ, RZ, -R9".into(),
        };
        assert_eq!(instruction_class(&negation), "IADD");
        let constant = SassInstruction {
            address: 0,
            predicate: None,
            opcode: "HFMA2.MMA".into(),
            operands: "R0, -RZ, RZ, 0, 0".into(),
        };
        assert_eq!(instruction_class(&constant), "MOV");
    }

    #[test]
    fn missing_tool_message_says_how_to_install() {
        std::env::set_var("CUOBJDUMP", "/nonexistent/cuobjdump");
        let err = find_tool(Tool::Cuobjdump).unwrap_err();
        std::env::remove_var("CUOBJDUMP");
        assert!(err.contains("CUOBJDUMP") && err.contains("not a file"), "{err}");
    }
}
