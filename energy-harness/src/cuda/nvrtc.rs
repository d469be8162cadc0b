//! CUDA C compiled at run time with NVRTC (through cudarc, the library loaded when first
//! needed), for benchmarks written in CUDA C rather than PTX.
//!
//! The PTX NVRTC produces is cached under `<target>/energy/cache/nvrtc/`, keyed by the
//! source, the options, the architecture and the NVRTC version, so a benchmark binary
//! compiles each source once per machine, not once per process. Where the NVRTC library
//! lives: `NVRTC_LIBRARY` (a path, such as the `nvidia-cuda-nvrtc-cu12` wheel's
//! `nvidia/cuda_nvrtc/lib/libnvrtc.so.12`), else the places cudarc searches (the system's
//! CUDA toolkit, `LD_LIBRARY_PATH`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nvrtc::CompileOptions;

use energy_results::error::{Error, ErrorKind, Result};

/// The environment variable naming the NVRTC library to load (a file path).
pub const NVRTC_LIBRARY_ENV: &str = "NVRTC_LIBRARY";

/// How to get an NVRTC library without a CUDA toolkit (said where one is missing).
pub const NVRTC_INSTALL_HINT: &str =
    "install NVIDIA's wheel (`python3 -m pip install nvidia-cuda-nvrtc-cu12`) and set \
     NVRTC_LIBRARY to its nvidia/cuda_nvrtc/lib/libnvrtc.so.12, or install the CUDA toolkit";

/// Whether an NVRTC library can be used in this process: `Err` says why not.
pub fn nvrtc_available() -> std::result::Result<(), String> {
    static AVAILABLE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    AVAILABLE.get_or_init(probe_nvrtc).clone()
}

fn probe_nvrtc() -> std::result::Result<(), String> {
    if let Some(path) = std::env::var_os(NVRTC_LIBRARY_ENV).filter(|p| !p.is_empty()) {
        preload(Path::new(&path))?;
    }
    if crate::dl::library_loadable("nvrtc") {
        Ok(())
    } else {
        Err(format!("no NVRTC library (libnvrtc) could be loaded; {NVRTC_INSTALL_HINT}"))
    }
}

/// Loads the library at `path` once, globally: cudarc then finds it by its soname
/// (`libnvrtc.so.12`) among the loaded libraries, wherever the file lives.
fn preload(path: &Path) -> std::result::Result<(), String> {
    if !path.is_file() {
        return Err(format!("{NVRTC_LIBRARY_ENV}={} is not a file; {NVRTC_INSTALL_HINT}", path.display()));
    }
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{NVRTC_LIBRARY_ENV}={} contains a NUL byte", path.display()))?;
    // SAFETY: dlopen with a valid C string; the handle is kept for the life of the process.
    let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a C string or null right after the failed call.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "dlopen failed".to_string()
            } else {
                std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(format!("{NVRTC_LIBRARY_ENV}={} could not be loaded: {why}", path.display()));
    }
    Ok(())
}

/// The loaded NVRTC's version (major, minor).
fn nvrtc_version() -> Result<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked by the caller); two valid out-pointers.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::new(ErrorKind::Cuda, format!("nvrtcVersion failed: {e}")))?;
    Ok((major, minor))
}

/// Where compiled PTX is cached.
pub fn nvrtc_cache_dir() -> PathBuf {
    energy_results::dirs::energy_dir().join("cache").join("nvrtc")
}

/// Compiles CUDA C `source` (labelled `name` in messages) to PTX for `arch` (`sm_90`) with
/// NVRTC, `options` passed to it as they are (`-use_fast_math`, `-I…`); the result is taken
/// from the cache when the same source, options, architecture and NVRTC made it before.
pub fn compile_cuda_c(source: &str, name: &str, options: &[&str], arch: &str) -> Result<String> {
    nvrtc_available()
        .map_err(|why| Error::new(ErrorKind::NoDriver, format!("CUDA C `{name}` cannot be compiled: {why}")))?;
    if source.contains('\0') || name.contains('\0') || options.iter().any(|o| o.contains('\0')) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("CUDA C `{name}`: a NUL byte in its source, name or options"),
        ));
    }
    let compute = arch.replacen("sm_", "compute_", 1);
    let version = nvrtc_version()?;
    let mut all_options = vec![format!("--gpu-architecture={compute}")];
    all_options.extend(options.iter().map(|o| o.to_string()));
    let key = {
        let mut keyed = format!("nvrtc {}.{}\n{}\n", version.0, version.1, all_options.join("\n"));
        keyed.push_str(source);
        energy_results::hash::content_hash(keyed.as_bytes())
    };
    let cached = nvrtc_cache_dir().join(format!("{key}.ptx"));
    if let Ok(ptx) = std::fs::read_to_string(&cached) {
        if ptx.contains(".entry") || ptx.contains(".version") {
            return Ok(ptx);
        }
    }
    let compiled = cudarc::nvrtc::compile_ptx_with_opts(
        source,
        CompileOptions { options: all_options.clone(), name: Some(name.to_string()), ..Default::default() },
    )
    .map_err(|e| energy_results::error::nvrtc_compile_error(name, e))?;
    let ptx = compiled.to_src();
    // The cache only saves time: a target directory that cannot be written costs a
    // compile per process, nothing else.
    let _ = energy_results::trace::format::write_atomically(&cached, ptx.as_bytes());
    Ok(ptx)
}
