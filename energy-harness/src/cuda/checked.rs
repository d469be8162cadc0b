//! The checked device: the CUDA layer of a machine without a GPU. PTX is read (and
//! assembled by `ptxas` for the simulated GPU's architecture where `ptxas` is found),
//! kernels are looked up by name, launches are checked against the entry's parameters and
//! the device's limits, and buffers live in host memory with their sizes tracked.
//! Kernels do not execute: a buffer holds what was uploaded to it (zeros otherwise).
//!
//! The argument and launch-configuration checks here run on a real GPU too, before each
//! launch, so the same mistake gives the same message with and without a GPU.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::ptx_interface::{PtxEntry, PtxParam};
use super::{GpuProperties, JitOptLevel, LaunchConfig};
use energy_results::error::{Error, ErrorKind, Result};

/// The environment variable naming the `ptxas` the checked device assembles PTX with.
pub const PTXAS_ENV: &str = "PTXAS";

/// Why a module was not assembled when no `ptxas` was found: the start of
/// [`CheckedActivity::not_assembled_reason`] then (the rest is [`PTXAS_HOWTO`]).
pub const NO_PTXAS: &str = "no ptxas found";

/// What [`CheckedActivity::not_assembled_reason`] says of CUDA C read without NVRTC (the
/// module is then counted as not assembled).
pub const NOT_COMPILED: &str = "checked without compiling";

/// How to get a `ptxas` for the checked device: NVIDIA's PyPI wheel, then `PTXAS` or `PATH`.
pub const PTXAS_HOWTO: &str = "`pip install nvidia-cuda-nvcc-cu12`, then set PTXAS to the \
                               nvidia/cuda_nvcc/bin/ptxas it installs, or put ptxas on PATH";

/// Dynamic shared memory a block gets without opting in (`cuFuncSetAttribute`), bytes.
pub const DEFAULT_SHARED_PER_BLOCK_BYTES: u32 = 48 * 1024;

/// What the checked device has seen: for the one line a checked bench or test prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckedActivity {
    /// PTX modules loaded.
    pub modules: u64,
    /// Of those, modules `ptxas` assembled for the device's architecture.
    pub assembled: u64,
    /// Of those, CUDA C sources NVRTC compiled to the PTX loaded (CUDA C read without NVRTC
    /// counts as a module not assembled, its reason saying so).
    pub compiled_by_nvrtc: u64,
    /// Of those, CUDA C sources read without compiling (no NVRTC library).
    pub cuda_c_not_compiled: u64,
    /// Why the last module not assembled was not (no ptxas, a ptxas older than the PTX).
    pub not_assembled_reason: Option<String>,
    /// Launches checked.
    pub launches: u64,
    /// Buffers allocated.
    pub buffers: u64,
    /// Bytes allocated in them.
    pub buffer_bytes: u64,
}

/// The state of a checked device.
pub(crate) struct CheckedGpu {
    pub(crate) properties: GpuProperties,
    live: Mutex<HashMap<u64, u64>>,
    next_id: AtomicU64,
    activity: Mutex<CheckedActivity>,
}

impl CheckedGpu {
    pub(crate) fn new(properties: GpuProperties) -> Self {
        CheckedGpu {
            properties,
            live: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            activity: Mutex::new(CheckedActivity::default()),
        }
    }

    /// Reserves `bytes` of device memory; fails as `cuMemAlloc` would beyond the device's memory.
    pub(crate) fn allocate(&self, bytes: u64) -> Result<u64> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let in_use: u64 = live.values().sum();
        let total = self.properties.total_memory_bytes;
        if in_use.saturating_add(bytes) > total {
            return Err(Error::new(
                ErrorKind::Cuda,
                format!(
                    "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY: {bytes} bytes asked with {in_use} of the {} device's \
                     {total} bytes in use (checked device)",
                    self.properties.name
                ),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        live.insert(id, bytes);
        let mut activity = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        activity.buffers += 1;
        activity.buffer_bytes += bytes;
        Ok(id)
    }

    /// Frees a buffer.
    pub(crate) fn release(&self, id: u64) {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }

    pub(crate) fn record_module(&self, assembly: Assembly) {
        let mut activity = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        activity.modules += 1;
        match assembly {
            Assembly::Assembled => activity.assembled += 1,
            Assembly::NotAssembled(why) => activity.not_assembled_reason = Some(why),
            Assembly::CudaCNotCompiled(why) => {
                activity.cuda_c_not_compiled += 1;
                activity.not_assembled_reason = Some(why);
            }
        }
    }

    /// Counts a CUDA C source NVRTC compiled (its PTX is then recorded as a module).
    pub(crate) fn record_nvrtc_compile(&self) {
        self.activity.lock().unwrap_or_else(|p| p.into_inner()).compiled_by_nvrtc += 1;
    }

    pub(crate) fn record_launch(&self) {
        self.activity.lock().unwrap_or_else(|p| p.into_inner()).launches += 1;
    }

    pub(crate) fn activity(&self) -> CheckedActivity {
        self.activity.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The `ptxas` to assemble with: `$PTXAS`, else `ptxas` on `PATH`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(PTXAS_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join("ptxas")).find(|p| p.is_file())
}

/// Modules already assembled in this process: (hash of the text, arch, level).
type AssemblyKey = (String, String, u32);
/// What ptxas assembled in this process: its cubin, by PTX hash, architecture and level.
static ASSEMBLED: Mutex<Option<HashMap<AssemblyKey, Arc<Vec<u8>>>>> = Mutex::new(None);

/// The cubin ptxas made of `ptx` for `arch` at `level` in this process, if it did.
pub(crate) fn assembled_cubin(ptx: &str, arch: &str, level: JitOptLevel) -> Option<Arc<Vec<u8>>> {
    let key = (energy_results::hash::content_hash(ptx.as_bytes()), arch.to_string(), level.value());
    ASSEMBLED.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|m| m.get(&key).cloned())
}

/// What became of a module's assembly on the checked device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Assembly {
    /// ptxas assembled it for the device's architecture.
    Assembled,
    /// It was read but not assembled, for this reason.
    NotAssembled(String),
    /// CUDA C read without compiling (no NVRTC), for this reason.
    CudaCNotCompiled(String),
}

/// Assembles `ptx` with `ptxas` for `arch` at `level` (ptxas takes -O0 to -O3; the JIT's
/// level 4 is ptxas -O3). Not assembled when no ptxas is found, or when the ptxas found is
/// older than the module's PTX ISA (a driver can take what an older toolkit's ptxas
/// cannot: that is no mistake of the PTX). An assembly error carries ptxas's log, worded as
/// the driver's JIT error is.
pub(crate) fn assemble(ptx: &str, name: &str, arch: &str, level: JitOptLevel) -> Result<Assembly> {
    let Some(ptxas) = find_ptxas() else {
        return Ok(Assembly::NotAssembled(format!("{NO_PTXAS}: {PTXAS_HOWTO}")));
    };
    let key = (energy_results::hash::content_hash(ptx.as_bytes()), arch.to_string(), level.value());
    if ASSEMBLED.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| s.contains_key(&key)) {
        return Ok(Assembly::Assembled);
    }
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let stem = format!("energy-checked-{}-{}", std::process::id(), SEQUENCE.fetch_add(1, Ordering::Relaxed));
    let dir = std::env::temp_dir();
    let source = dir.join(format!("{stem}.ptx"));
    let output = dir.join(format!("{stem}.cubin"));
    std::fs::write(&source, ptx).map_err(|e| Error::io(&source, "write PTX for ptxas", e))?;
    let run = std::process::Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .arg(format!("-O{}", level.value().min(3)))
        .arg("-o")
        .arg(&output)
        .arg(&source)
        .output();
    let _ = std::fs::remove_file(&source);
    let cubin = std::fs::read(&output).ok();
    let _ = std::fs::remove_file(&output);
    let run = run.map_err(|e| {
        Error::new(
            ErrorKind::NoDriver,
            format!(
                "could not run ptxas ({}): {e}; set {PTXAS_ENV} to a working ptxas, or unset it and take ptxas \
                 off PATH to check PTX without assembling it",
                ptxas.display()
            ),
        )
    })?;
    if !run.status.success() {
        let log = format!("{}{}", String::from_utf8_lossy(&run.stderr), String::from_utf8_lossy(&run.stdout));
        let log = log.replace(&source.display().to_string(), name);
        if let Some(line) = log.lines().find(|l| l.contains("Unsupported .version")) {
            let why = line.split("fatal").last().unwrap_or(line).trim_start_matches([' ', ':']).trim();
            return Ok(Assembly::NotAssembled(format!(
                "the ptxas found ({}) is older than the PTX: {why}; a newer ptxas (pip install nvidia-cuda-nvcc) \
                 would assemble it",
                ptxas.display()
            )));
        }
        return Err(Error::new(
            ErrorKind::Cuda,
            format!(
                "the checked device could not compile PTX `{name}` at {level:?} for {arch} \
                 (CUDA_ERROR_INVALID_PTX: ptxas, as the driver's JIT, rejected it)\nJIT log:\n{}",
                log.trim()
            ),
        ));
    }
    ASSEMBLED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, Arc::new(cubin.unwrap_or_default()));
    Ok(Assembly::Assembled)
}

/// The number in `sm_90`, `sm_90a`, `compute_75`.
fn target_number(target: &str) -> Option<u32> {
    let digits: String = target
        .trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Whether a `.target` is architecture-specific (`sm_90a`: Hopper's wgmma and the like), which
/// the JIT compiles only for that very architecture.
fn arch_specific(target: &str) -> bool {
    target.ends_with('a') && target_number(target).is_some()
}

/// The architecture ptxas assembles a module for on the checked device: the device's, or its
/// architecture-specific variant (`sm_90a`) when the PTX targets that, as the JIT does.
pub(crate) fn assembly_arch(target: Option<&str>, properties: &GpuProperties) -> String {
    let device = properties.arch();
    match target {
        Some(t) if arch_specific(t) && t == format!("{device}a") => t.to_string(),
        _ => device,
    }
}

/// Refuses PTX built for a newer architecture than the device's, or for another
/// architecture's specific variant (the JIT refuses both).
pub(crate) fn check_target(target: Option<&str>, name: &str, properties: &GpuProperties) -> Result<()> {
    let (major, minor) = properties.compute_capability;
    let device = (major * 10 + minor) as u32;
    if let Some(t) = target.filter(|t| arch_specific(t) && target_number(t) != Some(device)) {
        return Err(Error::new(
            ErrorKind::Cuda,
            format!(
                "PTX `{name}` targets {t}, an architecture-specific target that runs on sm_{} alone, but the {} is \
                 sm_{device} (the driver's JIT refuses it: CUDA_ERROR_INVALID_PTX)",
                target_number(t).unwrap_or_default(),
                properties.name
            ),
        ));
    }
    match target.and_then(target_number) {
        Some(wanted) if wanted > device => Err(Error::new(
            ErrorKind::Cuda,
            format!(
                "PTX `{name}` targets {} but the {} is sm_{device} (the driver's JIT refuses it: \
                 CUDA_ERROR_INVALID_PTX): generate it for sm_{device} or older",
                target.unwrap_or_default(),
                properties.name
            ),
        )),
        _ => Ok(()),
    }
}

/// One kernel argument as passed.
#[derive(Clone, Debug)]
pub(crate) enum ArgValue {
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Buffer { address: u64, bytes: u64, alive: std::sync::Weak<()> },
}

impl ArgValue {
    /// The 8-byte slot the driver reads the argument from (little-endian).
    pub(crate) fn slot(&self) -> u64 {
        match self {
            ArgValue::U16(v) => u64::from(*v),
            ArgValue::U32(v) => u64::from(*v),
            ArgValue::U64(v) => *v,
            ArgValue::F32(v) => u64::from(v.to_bits()),
            ArgValue::F64(v) => v.to_bits(),
            ArgValue::Buffer { address, .. } => *address,
        }
    }

    fn size_bytes(&self) -> usize {
        match self {
            ArgValue::U16(_) => 2,
            ArgValue::U32(_) | ArgValue::F32(_) => 4,
            _ => 8,
        }
    }

    fn describe(&self) -> String {
        match self {
            ArgValue::U16(v) => format!("a u16 ({v})"),
            ArgValue::U32(v) => format!("a u32 ({v})"),
            ArgValue::U64(v) => format!("a u64 ({v})"),
            ArgValue::F32(v) => format!("an f32 ({v})"),
            ArgValue::F64(v) => format!("an f64 ({v})"),
            ArgValue::Buffer { bytes, .. } => format!("a buffer ({bytes} bytes)"),
        }
    }

    fn short(&self) -> &'static str {
        match self {
            ArgValue::U16(_) => "u16",
            ArgValue::U32(_) => "u32",
            ArgValue::U64(_) => "u64",
            ArgValue::F32(_) => "f32",
            ArgValue::F64(_) => "f64",
            ArgValue::Buffer { .. } => "buffer",
        }
    }

    fn is_float(&self) -> bool {
        matches!(self, ArgValue::F32(_) | ArgValue::F64(_))
    }
}

fn param_signature(p: &PtxParam) -> String {
    if p.array {
        format!("{}: .{}[{}]", p.name, p.ty, p.size_bytes)
    } else {
        format!("{}: .{}", p.name, p.ty)
    }
}

/// How to pass a value for parameter `p`.
fn how_to_pass(p: &PtxParam) -> String {
    if p.array {
        return format!("it is a {}-byte value passed by value; pass a value of that size", p.size_bytes);
    }
    match (p.ty.as_bytes()[0], p.size_bytes) {
        (b'f', 4) => "pass it with .f32(…)".into(),
        (b'f', 8) => "pass it with .f64(…)".into(),
        (_, 2) => "pass it with .u16(…)".into(),
        (_, 4) => "pass it with .u32(…)".into(),
        (_, 8) => "pass it with .u64(…), or .buffer(&buffer) for a pointer".into(),
        (_, n) => format!("the launch API passes 2-, 4- and 8-byte values; this parameter is {n} bytes"),
    }
}

/// Whether `arg` could be passed for `p`: the same size, and not a float for an integer
/// nor the other way round.
fn fits(arg: &ArgValue, p: &PtxParam) -> bool {
    let param_float = !p.array && p.ty.starts_with('f');
    let param_integer = !p.array && (p.ty.starts_with('u') || p.ty.starts_with('s'));
    arg.size_bytes() == p.size_bytes && (!param_float || arg.is_float()) && (!param_integer || !arg.is_float())
}

/// The positions `i` at which leaving one item out of `longer` makes it fit `shorter` item by
/// item (`fit(short, long)`).
fn one_left_out<S, L>(shorter: &[S], longer: &[L], fit: impl Fn(&S, &L) -> bool) -> Vec<usize> {
    (0..longer.len())
        .filter(|&i| {
            shorter[..i].iter().zip(&longer[..i]).all(|(s, l)| fit(s, l))
                && shorter[i..].iter().zip(&longer[i + 1..]).all(|(s, l)| fit(s, l))
        })
        .collect()
}

/// What to add when a launch passes fewer arguments than the kernel has parameters: the one
/// parameter whose absence makes the rest fit (not always the last: a forgotten second
/// argument shifts the others), the candidates when several would do, the trailing ones
/// otherwise.
fn missing_fix(params: &[PtxParam], args: &[ArgValue]) -> String {
    let n = params.len();
    if n == args.len() + 1 {
        let places = one_left_out(args, params, fits);
        match places.as_slice() {
            [i] => {
                return format!(
                    "add the missing {} (parameter {} of {n}) to its KernelArgs, at its place",
                    param_signature(&params[*i]),
                    i + 1
                )
            }
            [_, ..] => {
                let names: Vec<String> = places.iter().map(|&i| param_signature(&params[i])).collect();
                return format!(
                    "one of {} is missing (the arguments fit with any of them left out): add it to its KernelArgs, \
                     at its place",
                    names.join(", ")
                );
            }
            [] => {}
        }
    }
    let missing: Vec<String> = params[args.len()..].iter().map(param_signature).collect();
    format!("add the missing {} to its KernelArgs, in order", missing.join(", "))
}

/// What to remove when a launch passes more arguments than the kernel has parameters.
fn extra_fix(params: &[PtxParam], args: &[ArgValue]) -> String {
    if args.len() == params.len() + 1 {
        let places = one_left_out(params, args, |p, a| fits(a, p));
        match places.as_slice() {
            [i] if *i + 1 != args.len() => {
                return format!(
                    "remove argument {} ({}) from its KernelArgs: the others then fit the parameters",
                    i + 1,
                    args[*i].describe()
                )
            }
            [_, _, ..] if !places.contains(&(args.len() - 1)) => {
                let which: Vec<String> =
                    places.iter().map(|&i| format!("{} ({})", i + 1, args[i].describe())).collect();
                return format!(
                    "remove one of arguments {} from its KernelArgs: the others then fit the parameters",
                    which.join(", ")
                );
            }
            _ => {}
        }
    }
    format!("remove the last {} argument(s) from its KernelArgs", args.len() - params.len())
}

/// Checks a launch's arguments against the entry's parameters.
pub(crate) fn check_args(entry: &PtxEntry, module: &str, args: &[ArgValue]) -> Result<()> {
    let kernel = format!("kernel `{}` ({module})", entry.name);
    if args.len() != entry.params.len() {
        let params: Vec<String> = entry.params.iter().map(param_signature).collect();
        let given: Vec<&str> = args.iter().map(ArgValue::short).collect();
        let fix = if args.len() < entry.params.len() {
            missing_fix(&entry.params, args)
        } else {
            extra_fix(&entry.params, args)
        };
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{kernel} takes {} parameter(s) ({}) but the launch passes {} argument(s) ({}): {fix}",
                entry.params.len(),
                params.join(", "),
                args.len(),
                if given.is_empty() { "none".to_string() } else { given.join(", ") }
            ),
        ));
    }
    for (i, (arg, p)) in args.iter().zip(&entry.params).enumerate() {
        let position = i + 1;
        let mismatch = |why: &str| {
            Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{kernel}: argument {position} is {} but parameter {position} `{}` is .{}{} ({} bytes){why}: {}",
                    arg.describe(),
                    p.name,
                    p.ty,
                    if p.array { "[]" } else { "" },
                    p.size_bytes,
                    how_to_pass(p)
                ),
            )
        };
        if arg.size_bytes() != p.size_bytes {
            return Err(mismatch(""));
        }
        if !fits(arg, p) {
            return Err(mismatch(", and the kernel would read its bits as another type"));
        }
        if let ArgValue::Buffer { alive, .. } = arg {
            if alive.strong_count() == 0 {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{kernel}: argument {position} (`{}`) points to a buffer that was freed before the launch: \
                         keep the DeviceBuffer alive as long as the KernelArgs that point to it (keep it in the \
                         setup state)",
                        p.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Checks a launch configuration against the device's limits and the entry's
/// `.maxntid` / `.reqntid` directives.
pub(crate) fn check_config(
    kernel: &str,
    config: &LaunchConfig,
    properties: &GpuProperties,
    entry: Option<&PtxEntry>,
) -> Result<()> {
    let fail = |what: String, fix: &str| {
        Err(Error::new(ErrorKind::InvalidInput, format!("launch of kernel `{kernel}`: {what}: {fix}")))
    };
    let (bx, by, bz) = config.block;
    let (gx, gy, gz) = config.grid;
    if [bx, by, bz, gx, gy, gz].contains(&0) {
        return fail(
            format!("grid {gx}×{gy}×{gz} of blocks {bx}×{by}×{bz} has a zero dimension (CUDA_ERROR_INVALID_VALUE)"),
            "every dimension is at least 1",
        );
    }
    let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
    let max = u64::from(properties.max_threads_per_block);
    if threads > max || bx > 1024 || by > 1024 || bz > 64 {
        return fail(
            format!(
                "{threads} threads per block ({bx}×{by}×{bz}); the {} allows at most {max} (x, y ≤ 1024, z ≤ 64; \
                 CUDA_ERROR_INVALID_VALUE)",
                properties.name
            ),
            "use more blocks of fewer threads",
        );
    }
    if let Some(max) = entry.and_then(|e| e.max_threads_per_block).filter(|&m| threads > m) {
        return fail(
            format!(
                "{threads} threads per block ({bx}×{by}×{bz}) but its PTX declares `.maxntid` {max} \
                 (__launch_bounds__; CUDA_ERROR_INVALID_VALUE)"
            ),
            "launch at most that many threads per block, or raise the kernel's launch bounds",
        );
    }
    if let Some(required) = entry.and_then(|e| e.required_block).filter(|&r| r != config.block) {
        return fail(
            format!(
                "blocks of {bx}×{by}×{bz} but its PTX requires `.reqntid` {}×{}×{} (CUDA_ERROR_INVALID_VALUE)",
                required.0, required.1, required.2
            ),
            "launch with exactly that block shape",
        );
    }
    if gx > i32::MAX as u32 || gy > 65_535 || gz > 65_535 {
        return fail(
            format!("a grid of {gx}×{gy}×{gz} blocks exceeds the limits (x < 2³¹, y and z ≤ 65535)"),
            "split the work over several launches or fold it into x",
        );
    }
    if config.shared_mem_bytes > DEFAULT_SHARED_PER_BLOCK_BYTES {
        return fail(
            format!(
                "{} bytes of dynamic shared memory per block; a block gets at most {DEFAULT_SHARED_PER_BLOCK_BYTES} \
                 without opting in (the {} allows {} with cuFuncSetAttribute, which Kernel::launch does not set)",
                config.shared_mem_bytes, properties.name, properties.shared_per_block_optin_bytes
            ),
            "use at most 48 KiB per block",
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "checked_tests.rs"]
mod tests;
