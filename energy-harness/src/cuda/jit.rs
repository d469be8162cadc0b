//! The driver's JIT: the optimization level PTX is compiled at (`JitOptLevel`), and the
//! compilation through the driver's linker that hands back the machine code it loads.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, DriverError};

use super::cuda_error;
use super::kernel::ModuleInner;
use energy_results::error::{Error, ErrorKind, Result};

/// The driver JIT's optimization level for PTX (`CU_JIT_OPTIMIZATION_LEVEL`, 0-4; 4 is the default).
///
/// On a GPU the driver's JIT compiles the PTX at this level; on the checked device `ptxas`
/// assembles it at `-O0` to `-O3` (level 4 is `-O3`), where `ptxas` is found. CUDA C
/// ([`CudaGpu::load_cuda_c`](super::CudaGpu::load_cuda_c)) is loaded at `O4`.
///
/// # Examples
///
/// The same PTX at two levels, one module each: two benchmarks of the two kernels show what
/// the JIT's optimization changes in energy per launch.
///
/// ```
/// use energy_harness::prelude::*;
/// # use energy_harness::unstable::cuda::FMA_LOOP_PTX;
/// // FMA_LOOP_PTX: PTX with `.entry fma_loop(.param .u64 out, .param .u32 iters)`
///
/// fn kernels(gpu: &CudaGpu) -> Result<(Kernel, Kernel)> {
///     let unoptimized = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O0)?;
///     let optimized = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?;
///     assert_eq!(unoptimized.level(), JitOptLevel::O0);
///     Ok((unoptimized.kernel("fma_loop")?, optimized.kernel("fma_loop")?))
/// }
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// # kernels(&gpu)?;
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum JitOptLevel {
    /// No optimization ("non-optimized" in Arafa et al.).
    O0,
    /// Level 1.
    O1,
    /// Level 2.
    O2,
    /// Level 3.
    O3,
    /// Full optimization, the driver's default ("optimized").
    O4,
}

impl JitOptLevel {
    pub(super) fn value(self) -> u32 {
        match self {
            JitOptLevel::O0 => 0,
            JitOptLevel::O1 => 1,
            JitOptLevel::O2 => 2,
            JitOptLevel::O3 => 3,
            JitOptLevel::O4 => 4,
        }
    }
}

/// Compiles PTX with the driver's JIT at `level` through the driver's linker, which hands
/// back the machine code (a cubin) it produced; the module is loaded from that cubin, so the
/// code a disassembler reads from [`PtxModule::machine_code`] is the code that runs.
pub(super) fn jit_compile(
    ctx: &Arc<CudaContext>,
    source: &CString,
    name: &str,
    level: JitOptLevel,
) -> Result<(ModuleInner, Vec<u8>)> {
    ctx.bind_to_thread().map_err(|e| cuda_error("cuCtxSetCurrent", e))?;
    const LOG_BYTES: usize = 16 * 1024;
    let mut error_log = vec![0u8; LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_OPTIMIZATION_LEVEL,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 3] =
        [level.value() as usize as *mut c_void, error_log.as_mut_ptr() as *mut c_void, LOG_BYTES as *mut c_void];
    let failed = |call: &str, status: sys::CUresult, log: &[u8]| {
        let log_end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let log = String::from_utf8_lossy(&log[..log_end]).trim().to_string();
        Error::new(
            ErrorKind::Cuda,
            format!(
                "the driver could not compile PTX `{name}` at {level:?} ({call}): {}{}",
                DriverError(status),
                if log.is_empty() { String::new() } else { format!("\nJIT log:\n{log}") }
            ),
        )
    };
    let mut state = std::mem::MaybeUninit::<sys::CUlinkState>::uninit();
    // SAFETY: the option arrays have matching lengths and the log buffer outlives the link
    // state (destroyed below on every path).
    let status = unsafe {
        sys::cuLinkCreate_v2(options.len() as u32, options.as_mut_ptr(), values.as_mut_ptr(), state.as_mut_ptr())
    };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(failed("cuLinkCreate", status, &error_log));
    }
    // SAFETY: initialized by the successful call above.
    let state = unsafe { state.assume_init() };
    let link_name = CString::new(name.replace('\0', "")).unwrap_or_default();
    let bytes = source.as_bytes_with_nul();
    // SAFETY: `bytes` is the NUL-terminated PTX, alive for the call; no per-input options.
    let added = unsafe {
        sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            bytes.as_ptr() as *mut c_void,
            bytes.len(),
            link_name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    let mut cubin_ptr: *mut c_void = std::ptr::null_mut();
    let mut cubin_len: usize = 0;
    let completed = if added == sys::CUresult::CUDA_SUCCESS {
        // SAFETY: the state holds one PTX input; the cubin stays owned by the state.
        unsafe { sys::cuLinkComplete(state, &mut cubin_ptr, &mut cubin_len) }
    } else {
        added
    };
    let cubin = if completed == sys::CUresult::CUDA_SUCCESS && !cubin_ptr.is_null() {
        // SAFETY: cuLinkComplete returned `cubin_len` bytes at `cubin_ptr`, valid until the
        // state is destroyed: copied before that.
        Some(unsafe { std::slice::from_raw_parts(cubin_ptr as *const u8, cubin_len) }.to_vec())
    } else {
        None
    };
    // SAFETY: created above, destroyed once.
    unsafe {
        let _ = sys::cuLinkDestroy(state);
    }
    let Some(cubin) = cubin else {
        let call = if added != sys::CUresult::CUDA_SUCCESS { "cuLinkAddData" } else { "cuLinkComplete" };
        return Err(failed(call, completed, &error_log));
    };
    let mut module = std::mem::MaybeUninit::<sys::CUmodule>::uninit();
    // SAFETY: `cubin` is a complete cubin image, alive for the call.
    let status = unsafe { sys::cuModuleLoadData(module.as_mut_ptr(), cubin.as_ptr() as *const c_void) };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(failed("cuModuleLoadData of the JIT's cubin", status, &[]));
    }
    // SAFETY: initialized by the successful call above.
    let module = unsafe { module.assume_init() };
    Ok((ModuleInner { module, ctx: ctx.clone() }, cubin))
}
