//! The CUDA layer (cudarc, driver API, loaded at run time): PTX modules with a chosen JIT
//! optimization level, kernel launches, CUDA events, device buffers.
//!
//! Every entry point checks that libcuda can be loaded before touching cudarc (which
//! panics otherwise) and turns driver errors into [`crate::Error`]s naming the call.

pub mod ptx_interface;

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::{
    result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, DriverError, ValidAsZeroBits,
};

use crate::device::{cuda_library_present, NO_GPU_HINT};
use crate::error::{Error, ErrorKind, Result};
use crate::measurement::run::Workload;

/// Maps a driver error of `call` to a harness error.
pub fn cuda_error(call: &str, err: DriverError) -> Error {
    Error::new(ErrorKind::Cuda, format!("{call} failed: {err}"))
}

/// The driver JIT's optimization level for PTX (`CU_JIT_OPTIMIZATION_LEVEL`, 0-4; 4 is the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    fn value(self) -> u32 {
        match self {
            JitOptLevel::O0 => 0,
            JitOptLevel::O1 => 1,
            JitOptLevel::O2 => 2,
            JitOptLevel::O3 => 3,
            JitOptLevel::O4 => 4,
        }
    }
}

/// Launch geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block (x, y, z).
    pub block: (u32, u32, u32),
    /// Dynamic shared memory, bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch.
    pub fn linear(blocks: u32, threads: u32) -> Self {
        LaunchConfig { grid: (blocks, 1, 1), block: (threads, 1, 1), shared_mem_bytes: 0 }
    }
}

/// Facts the suites size their kernels by.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuProperties {
    /// Name from the driver.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// L2 cache, bytes.
    pub l2_bytes: u64,
    /// Shared memory per SM, bytes.
    pub shared_per_sm_bytes: u64,
    /// Shared memory a block may opt in to, bytes.
    pub shared_per_block_optin_bytes: u64,
    /// Maximum threads per block.
    pub max_threads_per_block: u32,
    /// Global memory, bytes.
    pub total_memory_bytes: u64,
}

/// A CUDA device with one stream the harness launches on.
pub struct CudaGpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: u32,
}

impl CudaGpu {
    /// Opens CUDA device `ordinal` (its primary context) and a stream on it.
    pub fn open(ordinal: u32) -> Result<CudaGpu> {
        if !cuda_library_present() {
            return Err(Error::new(
                ErrorKind::NoDriver,
                format!("the CUDA driver library (libcuda.so) could not be loaded; {NO_GPU_HINT}"),
            ));
        }
        let count = CudaContext::device_count().map_err(|e| cuda_error("cuDeviceGetCount", e))?;
        if count <= 0 {
            return Err(Error::new(ErrorKind::NoGpu, format!("CUDA sees no device; {NO_GPU_HINT}")));
        }
        if ordinal as i32 >= count {
            return Err(Error::new(
                ErrorKind::NoGpu,
                format!("there is no CUDA device {ordinal}: {count} visible (check CUDA_VISIBLE_DEVICES)"),
            ));
        }
        let ctx =
            CudaContext::new(ordinal as usize).map_err(|e| cuda_error("cuCtxCreate/cuDevicePrimaryCtxRetain", e))?;
        let stream = ctx.new_stream().map_err(|e| cuda_error("cuStreamCreate", e))?;
        Ok(CudaGpu { ctx, stream, ordinal })
    }

    /// The CUDA ordinal.
    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// The stream launches go to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Device attributes.
    pub fn properties(&self) -> Result<GpuProperties> {
        use sys::CUdevice_attribute as A;
        let attr = |a: A, name: &str| {
            self.ctx.attribute(a).map_err(|e| cuda_error(&format!("cuDeviceGetAttribute({name})"), e))
        };
        Ok(GpuProperties {
            name: self.ctx.name().map_err(|e| cuda_error("cuDeviceGetName", e))?,
            compute_capability: (
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "major")?,
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "minor")?,
            ),
            sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count")? as u32,
            l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size")? as u64,
            shared_per_sm_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared/SM")? as u64,
            shared_per_block_optin_bytes: attr(
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                "shared/block",
            )? as u64,
            max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads/block")? as u32,
            total_memory_bytes: self.ctx.total_mem().map_err(|e| cuda_error("cuDeviceTotalMem", e))? as u64,
        })
    }

    /// JIT-compiles PTX text at `level`; `name` labels errors. The JIT's error log is in the error.
    pub fn load_ptx(&self, ptx: &str, name: &str, level: JitOptLevel) -> Result<PtxModule> {
        self.ctx.bind_to_thread().map_err(|e| cuda_error("cuCtxSetCurrent", e))?;
        let source = CString::new(ptx)
            .map_err(|_| Error::new(ErrorKind::InvalidInput, format!("PTX `{name}` contains a NUL byte")))?;
        const LOG_BYTES: usize = 16 * 1024;
        let mut error_log = vec![0u8; LOG_BYTES];
        let mut options = [
            sys::CUjit_option::CU_JIT_OPTIMIZATION_LEVEL,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 3] =
            [level.value() as usize as *mut c_void, error_log.as_mut_ptr() as *mut c_void, LOG_BYTES as *mut c_void];
        let mut module = std::mem::MaybeUninit::<sys::CUmodule>::uninit();
        // SAFETY: the source is NUL-terminated, the option arrays have matching lengths
        // and the log buffer outlives the call.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                module.as_mut_ptr(),
                source.as_ptr() as *const c_void,
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            let log_end = error_log.iter().position(|&b| b == 0).unwrap_or(LOG_BYTES);
            let log = String::from_utf8_lossy(&error_log[..log_end]).trim().to_string();
            return Err(Error::new(
                ErrorKind::Cuda,
                format!(
                    "the driver could not JIT-compile PTX `{name}` at {level:?}: {}{}",
                    DriverError(status),
                    if log.is_empty() { String::new() } else { format!("\nJIT log:\n{log}") }
                ),
            ));
        }
        // SAFETY: initialized by the successful call above.
        let module = unsafe { module.assume_init() };
        Ok(PtxModule { inner: Arc::new(ModuleInner { module, ctx: self.ctx.clone() }), name: name.to_string() })
    }

    /// Reads a PTX file and JIT-compiles it.
    pub fn load_ptx_file(&self, path: &std::path::Path, level: JitOptLevel) -> Result<PtxModule> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the PTX file", &e))?;
        self.load_ptx(&text, &path.display().to_string(), level)
    }

    /// A zeroed device buffer of `len` elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros::<T>(len).map_err(|e| cuda_error("cuMemAlloc", e))
    }

    /// Copies host data to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        self.stream.clone_htod(data).map_err(|e| cuda_error("cuMemcpyHtoD", e))
    }

    /// Copies a device buffer back to the host.
    pub fn download<T: DeviceRepr + Default + Clone>(&self, buffer: &CudaSlice<T>) -> Result<Vec<T>> {
        self.stream.clone_dtoh(buffer).map_err(|e| cuda_error("cuMemcpyDtoH", e))
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| cuda_error("cuStreamSynchronize", e))
    }

    /// A pair of timing events.
    pub fn timer(&self) -> Result<EventTimer> {
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(EventTimer {
            start: self.ctx.new_event(flags).map_err(|e| cuda_error("cuEventCreate", e))?,
            stop: self.ctx.new_event(flags).map_err(|e| cuda_error("cuEventCreate", e))?,
        })
    }
}

struct ModuleInner {
    module: sys::CUmodule,
    ctx: Arc<CudaContext>,
}

// SAFETY: a CUmodule handle may be used from any thread with its context current.
unsafe impl Send for ModuleInner {}
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the module was loaded by cuModuleLoadDataEx and is unloaded once.
        unsafe {
            let _ = result::module::unload(self.module);
        }
    }
}

/// A loaded PTX module.
#[derive(Clone)]
pub struct PtxModule {
    inner: Arc<ModuleInner>,
    name: String,
}

impl PtxModule {
    /// A kernel (`.entry`) of the module.
    pub fn kernel(&self, entry: &str) -> Result<Kernel> {
        let c_name = CString::new(entry)
            .map_err(|_| Error::new(ErrorKind::InvalidInput, format!("kernel name `{entry}` contains a NUL byte")))?;
        // SAFETY: the module is loaded and stays alive through `inner`.
        let function = unsafe { result::module::get_function(self.inner.module, c_name) }
            .map_err(|e| cuda_error(&format!("cuModuleGetFunction({entry}) in {}", self.name), e))?;
        Ok(Kernel { function, _module: self.inner.clone(), name: entry.to_string() })
    }
}

/// A kernel ready to launch.
#[derive(Clone)]
pub struct Kernel {
    function: sys::CUfunction,
    _module: Arc<ModuleInner>,
    name: String,
}

// SAFETY: a CUfunction handle is valid from any thread while its module is loaded.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The entry name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many blocks of `threads_per_block` threads fit on one SM at once (the driver's
    /// occupancy calculator: registers, shared memory and block limits).
    pub fn max_active_blocks_per_sm(&self, threads_per_block: u32, shared_mem_bytes: u32) -> Result<u32> {
        let mut blocks: std::ffi::c_int = 0;
        // SAFETY: the function handle is valid while its module is loaded (held by `self`).
        let status = unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                self.function,
                threads_per_block as std::ffi::c_int,
                shared_mem_bytes as usize,
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(Error::new(
                ErrorKind::Cuda,
                format!("cuOccupancyMaxActiveBlocksPerMultiprocessor({}) failed: {}", self.name, DriverError(status)),
            ));
        }
        Ok(blocks.max(0) as u32)
    }

    /// Enqueues one launch on `stream`.
    pub fn launch(&self, stream: &CudaStream, config: LaunchConfig, args: &KernelArgs) -> Result<()> {
        let mut pointers: Vec<*mut c_void> = args.values.iter().map(|v| v as *const u64 as *mut c_void).collect();
        // SAFETY: each pointer addresses an 8-byte slot holding the argument (little-endian,
        // so a 4-byte argument is read from the slot's first bytes); the slots outlive the call.
        let status = unsafe {
            sys::cuLaunchKernel(
                self.function,
                config.grid.0,
                config.grid.1,
                config.grid.2,
                config.block.0,
                config.block.1,
                config.block.2,
                config.shared_mem_bytes,
                stream.cu_stream(),
                pointers.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(Error::new(
                ErrorKind::Cuda,
                format!("cuLaunchKernel({}) failed: {}", self.name, DriverError(status)),
            ));
        }
        Ok(())
    }
}

/// Kernel arguments, each kept in an 8-byte slot.
#[derive(Clone, Debug, Default)]
pub struct KernelArgs {
    values: Vec<u64>,
}

impl KernelArgs {
    /// No arguments yet.
    pub fn new() -> Self {
        KernelArgs::default()
    }

    /// A `.u32` / `.s32` parameter.
    pub fn u32(mut self, v: u32) -> Self {
        self.values.push(u64::from(v));
        self
    }

    /// A `.u64` / `.s64` parameter.
    pub fn u64(mut self, v: u64) -> Self {
        self.values.push(v);
        self
    }

    /// A `.f32` parameter.
    pub fn f32(mut self, v: f32) -> Self {
        self.values.push(u64::from(v.to_bits()));
        self
    }

    /// A `.f64` parameter.
    pub fn f64(mut self, v: f64) -> Self {
        self.values.push(v.to_bits());
        self
    }

    /// A pointer parameter to a device buffer.
    pub fn buffer<T>(mut self, buffer: &CudaSlice<T>, stream: &CudaStream) -> Self {
        self.values.push(device_address(buffer, stream));
        self
    }
}

/// The device address of a buffer's first element (what a kernel's pointer parameter
/// holds; for checking results that depend on addresses, such as pointer chains).
pub fn device_address<T>(buffer: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (ptr, _sync) = buffer.device_ptr(stream);
    ptr
}

/// Two CUDA events around a stretch of the stream.
pub struct EventTimer {
    start: CudaEvent,
    stop: CudaEvent,
}

impl EventTimer {
    /// Records the start event.
    pub fn start(&self, stream: &CudaStream) -> Result<()> {
        self.start.record(stream).map_err(|e| cuda_error("cuEventRecord", e))
    }

    /// Records the stop event.
    pub fn stop(&self, stream: &CudaStream) -> Result<()> {
        self.stop.record(stream).map_err(|e| cuda_error("cuEventRecord", e))
    }

    /// Waits for the stop event and returns the time between the two, s.
    pub fn elapsed_s(&self) -> Result<f64> {
        self.start
            .elapsed_ms(&self.stop)
            .map(|ms| f64::from(ms) * 1e-3)
            .map_err(|e| cuda_error("cuEventElapsedTime", e))
    }
}

/// A kernel under test on a real GPU: `launch` enqueues one launch on the stream it is
/// given; batches are timed with events.
pub struct CudaWorkload<F: FnMut(&CudaStream) -> Result<()>> {
    gpu: Arc<CudaGpu>,
    timer: EventTimer,
    launch: F,
}

impl<F: FnMut(&CudaStream) -> Result<()>> CudaWorkload<F> {
    /// Wraps a launch closure.
    pub fn new(gpu: Arc<CudaGpu>, launch: F) -> Result<Self> {
        let timer = gpu.timer()?;
        Ok(CudaWorkload { gpu, timer, launch })
    }
}

impl<F: FnMut(&CudaStream) -> Result<()>> Workload for CudaWorkload<F> {
    fn run_batch(&mut self, launches: u64) -> Result<f64> {
        let stream = self.gpu.stream().clone();
        self.timer.start(&stream)?;
        for _ in 0..launches {
            (self.launch)(&stream)?;
        }
        self.timer.stop(&stream)?;
        self.gpu.synchronize()?;
        self.timer.elapsed_s()
    }
}

/// The busy kernel of calibration: independent FMA chains on every thread, sized by
/// the iteration count (`ptx/busy` holds the source; it is embedded here).
pub const FMA_LOOP_PTX: &str = include_str!("fma_loop.ptx");

/// The FMA loop loaded on a GPU: 8 blocks of 256 threads per SM, 16 FMAs per thread
/// per iteration.
pub struct FmaLoop {
    gpu: Arc<CudaGpu>,
    kernel: Kernel,
    config: LaunchConfig,
    out: Arc<CudaSlice<f32>>,
}

impl FmaLoop {
    /// FMAs each thread does per loop iteration.
    pub const FMAS_PER_ITERATION: u64 = 16;

    /// JIT-compiles the loop (optimization level 4) and allocates its output.
    pub fn load(gpu: Arc<CudaGpu>) -> Result<Self> {
        let props = gpu.properties()?;
        let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
        let config = LaunchConfig::linear(props.sm_count * 8, 256);
        let out = Arc::new(gpu.alloc_zeros::<f32>((props.sm_count * 8 * 256) as usize)?);
        Ok(FmaLoop { gpu, kernel, config, out })
    }

    /// FMAs in one launch of `iterations`.
    pub fn fmas_per_launch(&self, iterations: u32) -> u64 {
        u64::from(self.config.grid.0)
            * u64::from(self.config.block.0)
            * Self::FMAS_PER_ITERATION
            * u64::from(iterations)
    }

    /// The iteration count that makes one launch last about `target_s` (timed on the GPU).
    /// Short launches carry a fixed cost besides the loop, so the estimate is refined by
    /// timing launches of the estimated size until it is within 2 %.
    pub fn iterations_for(&self, target_s: f64) -> Result<u32> {
        let mut iterations = 20_000u32;
        for _ in 0..6 {
            let launch_s = self.time_launch(iterations)?.max(1e-7);
            if (launch_s / target_s - 1.0).abs() < 0.02 {
                break;
            }
            let scaled = (f64::from(iterations) * target_s / launch_s).round();
            iterations = scaled.clamp(1.0, f64::from(u32::MAX)) as u32;
        }
        Ok(iterations)
    }

    /// GPU time of one launch of `iterations` (after one untimed launch), s.
    fn time_launch(&self, iterations: u32) -> Result<f64> {
        let stream = self.gpu.stream().clone();
        let args = KernelArgs::new().buffer(&self.out, &stream).u32(iterations);
        self.kernel.launch(&stream, self.config, &args)?;
        let timer = self.gpu.timer()?;
        timer.start(&stream)?;
        self.kernel.launch(&stream, self.config, &args)?;
        timer.stop(&stream)?;
        self.gpu.synchronize()?;
        timer.elapsed_s()
    }

    /// A workload launching the loop with `iterations`.
    pub fn workload(&self, iterations: u32) -> Result<CudaWorkload<impl FnMut(&CudaStream) -> Result<()>>> {
        let args = KernelArgs::new().buffer(&self.out, self.gpu.stream()).u32(iterations);
        let (kernel, config, out) = (self.kernel.clone(), self.config, self.out.clone());
        let launch = move |stream: &CudaStream| {
            let _keep_alive = &out;
            kernel.launch(stream, config, &args)
        };
        CudaWorkload::new(self.gpu.clone(), launch)
    }
}

/// An FMA loop over the whole GPU taking about `target_s` per launch.
pub fn fma_busy_workload(
    gpu: Arc<CudaGpu>,
    target_s: f64,
) -> Result<CudaWorkload<impl FnMut(&CudaStream) -> Result<()>>> {
    let fma = FmaLoop::load(gpu)?;
    let iterations = fma.iterations_for(target_s)?;
    fma.workload(iterations)
}
