//! The CUDA layer (cudarc, driver API, loaded at run time): PTX modules with a chosen JIT
//! optimization level, kernel launches, CUDA events, device buffers; and, behind the same
//! API, the checked device of a machine without a GPU ([`checked`]).
//!
//! Every entry point checks that libcuda can be loaded before touching cudarc (which
//! panics otherwise) and turns driver errors into [`crate::Error`]s naming the call.

pub mod checked;
pub mod ptx_interface;

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::{
    result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, DriverError, ValidAsZeroBits,
};

pub use checked::CheckedActivity;
use checked::{ArgValue, CheckedGpu};
use ptx_interface::{parse_interface, PtxEntry, PtxInterface};

use crate::error::{Error, ErrorKind, Result};
use crate::gpu::{cuda_library_present, NO_GPU_HINT};
use crate::workload::Workload;

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

/// A CUDA device with one stream the harness launches on: a real GPU, or the checked
/// device of a machine without one ([`CudaGpu::checked`]), behind the same API.
pub struct CudaGpu {
    backend: GpuBackend,
    stream: Stream,
    properties: GpuProperties,
    ordinal: u32,
}

enum GpuBackend {
    Real(Arc<CudaContext>),
    Checked(Arc<CheckedGpu>),
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
        let properties = real_properties(&ctx)?;
        Ok(CudaGpu { backend: GpuBackend::Real(ctx), stream: Stream(StreamInner::Real(stream)), properties, ordinal })
    }

    /// The checked device with `properties` (the simulated GPU's): PTX is read and, where
    /// `ptxas` is found (`PTXAS` or `PATH`), assembled for its architecture; kernels are
    /// looked up, launches checked against their parameters and the device's limits, and
    /// buffers kept in host memory. Kernels do not execute (see [`checked`]).
    pub fn checked(properties: GpuProperties) -> CudaGpu {
        let gpu = Arc::new(CheckedGpu::new(properties.clone()));
        CudaGpu {
            backend: GpuBackend::Checked(gpu.clone()),
            stream: Stream(StreamInner::Checked),
            properties,
            ordinal: 0,
        }
    }

    /// Whether this is the checked device (no GPU: nothing executes).
    pub fn is_checked(&self) -> bool {
        matches!(self.backend, GpuBackend::Checked(_))
    }

    /// What the checked device has seen (modules, launches, buffers); `None` on a real GPU.
    pub fn checked_activity(&self) -> Option<CheckedActivity> {
        match &self.backend {
            GpuBackend::Checked(gpu) => Some(gpu.activity()),
            GpuBackend::Real(_) => None,
        }
    }

    /// The CUDA ordinal.
    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// The stream launches go to.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The cudarc context, for code that needs raw CUDA on a real GPU; an error on the
    /// checked device.
    pub fn cuda_context(&self) -> Result<&Arc<CudaContext>> {
        match &self.backend {
            GpuBackend::Real(ctx) => Ok(ctx),
            GpuBackend::Checked(_) => Err(no_raw_cuda("the CUDA context")),
        }
    }

    /// Device attributes (read once when the device was opened).
    pub fn properties(&self) -> Result<GpuProperties> {
        Ok(self.properties.clone())
    }

    /// Compiles PTX text at `level`; `name` labels errors. On a real GPU the driver's JIT
    /// compiles it and its error log is in the error; on the checked device `ptxas` does,
    /// where it is found. In both, the module's interface is read so that kernel names and
    /// launch arguments are checked before the driver sees them.
    pub fn load_ptx(&self, ptx: &str, name: &str, level: JitOptLevel) -> Result<PtxModule> {
        let source = CString::new(ptx)
            .map_err(|_| Error::new(ErrorKind::InvalidInput, format!("PTX `{name}` contains a NUL byte")))?;
        let (backend, interface) = match &self.backend {
            GpuBackend::Real(ctx) => {
                let module = jit_compile(ctx, &source, name, level)?;
                // A module the JIT took but this reader cannot read is launched unchecked.
                (ModuleBackend::Real(Arc::new(module)), parse_interface(ptx, name).ok())
            }
            GpuBackend::Checked(gpu) => {
                let assembled = checked::assemble(ptx, name, &gpu.arch(), level)?;
                let interface = parse_interface(ptx, name)
                    .map_err(|e| e.context(format!("PTX `{name}` could not be read on the checked device (no GPU)")))?;
                checked::check_target(interface.target.as_deref(), name, &self.properties)?;
                gpu.record_module(assembled);
                (ModuleBackend::Checked(gpu.clone()), Some(interface))
            }
        };
        Ok(PtxModule {
            backend,
            interface: interface.map(Arc::new),
            name: name.to_string(),
            properties: Arc::new(self.properties.clone()),
        })
    }

    /// Reads a PTX file and compiles it.
    pub fn load_ptx_file(&self, path: &std::path::Path, level: JitOptLevel) -> Result<PtxModule> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the PTX file", e))?;
        self.load_ptx(&text, &path.display().to_string(), level)
    }

    /// A zeroed device buffer of `len` elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        match (&self.backend, &self.stream.0) {
            (GpuBackend::Real(_), StreamInner::Real(stream)) => {
                let slice = stream.alloc_zeros::<T>(len).map_err(|e| cuda_error("cuMemAlloc", e))?;
                Ok(DeviceBuffer::real(slice))
            }
            _ => self.checked_buffer(len, None),
        }
    }

    /// Copies host data to a new device buffer.
    pub fn upload<T: DeviceRepr + Clone>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        match (&self.backend, &self.stream.0) {
            (GpuBackend::Real(_), StreamInner::Real(stream)) => {
                let slice = stream.clone_htod(data).map_err(|e| cuda_error("cuMemcpyHtoD", e))?;
                Ok(DeviceBuffer::real(slice))
            }
            _ => self.checked_buffer(data.len(), Some(data.to_vec())),
        }
    }

    fn checked_buffer<T: DeviceRepr>(&self, len: usize, data: Option<Vec<T>>) -> Result<DeviceBuffer<T>> {
        let GpuBackend::Checked(gpu) = &self.backend else {
            return Err(Error::new(ErrorKind::Cuda, "a real GPU without its stream (internal error)"));
        };
        let bytes = (len as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        let id = gpu.allocate(bytes)?;
        Ok(DeviceBuffer { len, alive: Arc::new(()), inner: BufferInner::Checked { gpu: gpu.clone(), id, data } })
    }

    /// Copies a device buffer back to the host. On the checked device kernels do not run,
    /// so this is what was uploaded (zeros for `alloc_zeros`).
    pub fn download<T: DeviceRepr + Default + Clone>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        match (&buffer.inner, &self.stream.0) {
            (BufferInner::Real(slice), StreamInner::Real(stream)) => {
                stream.clone_dtoh(slice).map_err(|e| cuda_error("cuMemcpyDtoH", e))
            }
            (BufferInner::Checked { data, .. }, StreamInner::Checked) => {
                Ok(data.clone().unwrap_or_else(|| vec![T::default(); buffer.len]))
            }
            _ => Err(Error::new(ErrorKind::InvalidInput, "download of a buffer from another device")),
        }
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize()
    }

    /// A pair of timing events; an error on the checked device (nothing runs there to time).
    pub fn timer(&self) -> Result<EventTimer> {
        let ctx = match &self.backend {
            GpuBackend::Real(ctx) => ctx,
            GpuBackend::Checked(_) => {
                return Err(Error::new(
                    ErrorKind::NoGpu,
                    "CUDA events time nothing on the checked device: kernels do not execute without a GPU",
                ))
            }
        };
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(EventTimer {
            start: ctx.new_event(flags).map_err(|e| cuda_error("cuEventCreate", e))?,
            stop: ctx.new_event(flags).map_err(|e| cuda_error("cuEventCreate", e))?,
        })
    }
}

fn no_raw_cuda(what: &str) -> Error {
    Error::new(
        ErrorKind::NoGpu,
        format!("{what} exists only on a real GPU; this is the checked device (no GPU): code that needs raw cudarc runs only with a GPU"),
    )
}

fn real_properties(ctx: &CudaContext) -> Result<GpuProperties> {
    use sys::CUdevice_attribute as A;
    let attr = |a: A, name: &str| ctx.attribute(a).map_err(|e| cuda_error(&format!("cuDeviceGetAttribute({name})"), e));
    Ok(GpuProperties {
        name: ctx.name().map_err(|e| cuda_error("cuDeviceGetName", e))?,
        compute_capability: (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "major")?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "minor")?,
        ),
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count")? as u32,
        l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size")? as u64,
        shared_per_sm_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared/SM")? as u64,
        shared_per_block_optin_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared/block")?
            as u64,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads/block")? as u32,
        total_memory_bytes: ctx.total_mem().map_err(|e| cuda_error("cuDeviceTotalMem", e))? as u64,
    })
}

fn jit_compile(ctx: &Arc<CudaContext>, source: &CString, name: &str, level: JitOptLevel) -> Result<ModuleInner> {
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
                "the driver could not compile PTX `{name}` at {level:?}: {}{}",
                DriverError(status),
                if log.is_empty() { String::new() } else { format!("\nJIT log:\n{log}") }
            ),
        ));
    }
    // SAFETY: initialized by the successful call above.
    let module = unsafe { module.assume_init() };
    Ok(ModuleInner { module, ctx: ctx.clone() })
}

/// The stream a launch function is given: a real CUDA stream, or the checked device's.
/// Code that needs the raw cudarc stream on a real GPU takes it from [`Stream::cuda`].
#[derive(Clone)]
pub struct Stream(StreamInner);

#[derive(Clone)]
enum StreamInner {
    Real(Arc<CudaStream>),
    Checked,
}

impl Stream {
    /// The raw cudarc stream on a real GPU; an error on the checked device (where code
    /// that needs it cannot run).
    pub fn cuda(&self) -> Result<&Arc<CudaStream>> {
        match &self.0 {
            StreamInner::Real(stream) => Ok(stream),
            StreamInner::Checked => Err(no_raw_cuda("the raw cudarc stream (Stream::cuda)")),
        }
    }

    /// Whether this is the checked device's stream (no GPU: nothing executes).
    pub fn is_checked(&self) -> bool {
        matches!(self.0, StreamInner::Checked)
    }

    /// Waits for everything enqueued on the stream.
    pub fn synchronize(&self) -> Result<()> {
        match &self.0 {
            StreamInner::Real(stream) => stream.synchronize().map_err(|e| cuda_error("cuStreamSynchronize", e)),
            StreamInner::Checked => Ok(()),
        }
    }
}

/// A buffer in device memory (in host memory on the checked device, its size tracked).
/// Kernel arguments pointing to it are refused once it is dropped.
pub struct DeviceBuffer<T: DeviceRepr> {
    len: usize,
    alive: Arc<()>,
    inner: BufferInner<T>,
}

enum BufferInner<T: DeviceRepr> {
    Real(CudaSlice<T>),
    Checked { gpu: Arc<CheckedGpu>, id: u64, data: Option<Vec<T>> },
}

impl<T: DeviceRepr> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("len", &self.len)
            .field("size_bytes", &self.size_bytes())
            .field("checked", &matches!(self.inner, BufferInner::Checked { .. }))
            .finish()
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let BufferInner::Checked { gpu, id, .. } = &self.inner {
            gpu.release(*id);
        }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    fn real(slice: CudaSlice<T>) -> Self {
        DeviceBuffer { len: slice.len(), alive: Arc::new(()), inner: BufferInner::Real(slice) }
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size, bytes.
    pub fn size_bytes(&self) -> u64 {
        (self.len as u64).saturating_mul(std::mem::size_of::<T>() as u64)
    }

    /// The device address of its first element (what a kernel's pointer parameter holds;
    /// for results that depend on addresses, such as pointer chains). On the checked
    /// device, a made-up address unique to the buffer.
    pub fn device_address(&self) -> u64 {
        match &self.inner {
            BufferInner::Real(slice) => {
                let (ptr, _sync) = slice.device_ptr(slice.stream());
                ptr
            }
            BufferInner::Checked { id, .. } => CHECKED_ADDRESS_BASE.wrapping_add(id.wrapping_mul(1 << 32)),
        }
    }

    /// The cudarc slice on a real GPU, for code that needs raw cudarc; an error on the
    /// checked device.
    pub fn cuda_slice(&self) -> Result<&CudaSlice<T>> {
        match &self.inner {
            BufferInner::Real(slice) => Ok(slice),
            BufferInner::Checked { .. } => Err(no_raw_cuda("a cudarc CudaSlice")),
        }
    }
}

/// Where the checked device's made-up buffer addresses start.
const CHECKED_ADDRESS_BASE: u64 = 0x7f00_0000_0000_0000;

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

#[derive(Clone)]
enum ModuleBackend {
    Real(Arc<ModuleInner>),
    Checked(Arc<CheckedGpu>),
}

/// A loaded PTX module.
#[derive(Clone)]
pub struct PtxModule {
    backend: ModuleBackend,
    interface: Option<Arc<PtxInterface>>,
    name: String,
    properties: Arc<GpuProperties>,
}

impl PtxModule {
    /// A kernel (`.entry`) of the module; a missing one is an error listing the module's
    /// entries and the closest name.
    pub fn kernel(&self, entry: &str) -> Result<Kernel> {
        let described = match &self.interface {
            Some(interface) => Some(interface.entry(entry, &format!("PTX `{}`", self.name))?.clone()),
            None => None,
        };
        let backend = match &self.backend {
            ModuleBackend::Real(module) => {
                let c_name = CString::new(entry).map_err(|_| {
                    Error::new(ErrorKind::InvalidInput, format!("kernel name `{entry}` contains a NUL byte"))
                })?;
                // SAFETY: the module is loaded and stays alive through `module`.
                let function = unsafe { result::module::get_function(module.module, c_name) }
                    .map_err(|e| cuda_error(&format!("cuModuleGetFunction({entry}) in {}", self.name), e))?;
                KernelBackend::Real { function, _module: module.clone() }
            }
            ModuleBackend::Checked(gpu) => KernelBackend::Checked(gpu.clone()),
        };
        Ok(Kernel {
            backend,
            entry: described.map(Arc::new),
            name: entry.to_string(),
            module: self.name.clone(),
            properties: self.properties.clone(),
        })
    }
}

#[derive(Clone)]
enum KernelBackend {
    Real { function: sys::CUfunction, _module: Arc<ModuleInner> },
    Checked(Arc<CheckedGpu>),
}

/// A kernel ready to launch.
#[derive(Clone)]
pub struct Kernel {
    backend: KernelBackend,
    entry: Option<Arc<PtxEntry>>,
    name: String,
    module: String,
    properties: Arc<GpuProperties>,
}

// SAFETY: a CUfunction handle is valid from any thread while its module is loaded.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The entry name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many blocks of `threads_per_block` threads fit on one SM at once. On a real GPU,
    /// the driver's occupancy calculator (registers, shared memory, block limits); on the
    /// checked device, the bound from threads and shared memory alone (32 blocks and 2048
    /// threads per SM), which ignores registers.
    pub fn max_active_blocks_per_sm(&self, threads_per_block: u32, shared_mem_bytes: u32) -> Result<u32> {
        let function = match &self.backend {
            KernelBackend::Real { function, .. } => *function,
            KernelBackend::Checked(gpu) => {
                let by_threads = 2048 / threads_per_block.max(1);
                let by_shared = if shared_mem_bytes == 0 {
                    u32::MAX
                } else {
                    (gpu.properties.shared_per_sm_bytes / u64::from(shared_mem_bytes)).min(u64::from(u32::MAX)) as u32
                };
                return Ok(by_threads.min(by_shared).min(32));
            }
        };
        let mut blocks: std::ffi::c_int = 0;
        // SAFETY: the function handle is valid while its module is loaded (held by `self`).
        let status = unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                function,
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

    /// Enqueues one launch on `stream`, after checking the arguments against the entry's
    /// parameters (count, sizes, pointer or value, buffers alive) and the configuration
    /// against the device's limits: the same checks with and without a GPU.
    pub fn launch(&self, stream: &Stream, config: LaunchConfig, args: &KernelArgs) -> Result<()> {
        if let Some(entry) = &self.entry {
            checked::check_args(entry, &self.module, &args.values)?;
        }
        checked::check_config(&self.name, &config, &self.properties, self.entry.as_deref())?;
        let (function, cu_stream) = match (&self.backend, &stream.0) {
            (KernelBackend::Checked(gpu), StreamInner::Checked) => {
                gpu.record_launch();
                return Ok(());
            }
            (KernelBackend::Real { function, .. }, StreamInner::Real(s)) => (*function, s.cu_stream()),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!("kernel `{}` launched on a stream of another device", self.name),
                ))
            }
        };
        let mut slots: Vec<u64> = args.values.iter().map(ArgValue::slot).collect();
        let mut pointers: Vec<*mut c_void> = slots.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
        // SAFETY: each pointer addresses an 8-byte slot holding the argument (little-endian,
        // so a 4-byte argument is read from the slot's first bytes); the slots outlive the call.
        let status = unsafe {
            sys::cuLaunchKernel(
                function,
                config.grid.0,
                config.grid.1,
                config.grid.2,
                config.block.0,
                config.block.1,
                config.block.2,
                config.shared_mem_bytes,
                cu_stream,
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

/// Kernel arguments, in the entry's parameter order.
#[derive(Clone, Debug, Default)]
pub struct KernelArgs {
    values: Vec<ArgValue>,
}

impl KernelArgs {
    /// No arguments yet.
    pub fn new() -> Self {
        KernelArgs::default()
    }

    /// A `.u16` / `.s16` / `.b16` parameter.
    pub fn u16(mut self, v: u16) -> Self {
        self.values.push(ArgValue::U16(v));
        self
    }

    /// A `.u32` / `.s32` / `.b32` parameter.
    pub fn u32(mut self, v: u32) -> Self {
        self.values.push(ArgValue::U32(v));
        self
    }

    /// A `.u64` / `.s64` / `.b64` parameter (a raw address too).
    pub fn u64(mut self, v: u64) -> Self {
        self.values.push(ArgValue::U64(v));
        self
    }

    /// A `.f32` parameter.
    pub fn f32(mut self, v: f32) -> Self {
        self.values.push(ArgValue::F32(v));
        self
    }

    /// A `.f64` parameter.
    pub fn f64(mut self, v: f64) -> Self {
        self.values.push(ArgValue::F64(v));
        self
    }

    /// A pointer parameter to a device buffer. The buffer must outlive the launches that
    /// use these arguments (a launch after it is dropped is refused).
    pub fn buffer<T: DeviceRepr>(mut self, buffer: &DeviceBuffer<T>) -> Self {
        self.values.push(ArgValue::Buffer {
            address: buffer.device_address(),
            bytes: buffer.size_bytes(),
            alive: Arc::downgrade(&buffer.alive),
        });
        self
    }

    /// How many arguments.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Two CUDA events around a stretch of the stream.
pub struct EventTimer {
    start: CudaEvent,
    stop: CudaEvent,
}

impl EventTimer {
    /// Records the start event.
    pub fn start(&self, stream: &Stream) -> Result<()> {
        self.start.record(stream.cuda()?).map_err(|e| cuda_error("cuEventRecord", e))
    }

    /// Records the stop event.
    pub fn stop(&self, stream: &Stream) -> Result<()> {
        self.stop.record(stream.cuda()?).map_err(|e| cuda_error("cuEventRecord", e))
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
pub struct CudaWorkload<F: FnMut(&Stream) -> Result<()>> {
    gpu: Arc<CudaGpu>,
    timer: EventTimer,
    launch: F,
}

impl<F: FnMut(&Stream) -> Result<()>> CudaWorkload<F> {
    /// Wraps a launch closure.
    pub fn new(gpu: Arc<CudaGpu>, launch: F) -> Result<Self> {
        let timer = gpu.timer()?;
        Ok(CudaWorkload { gpu, timer, launch })
    }
}

impl<F: FnMut(&Stream) -> Result<()>> Workload for CudaWorkload<F> {
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
    out: Arc<DeviceBuffer<f32>>,
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
        let args = KernelArgs::new().buffer(&self.out).u32(iterations);
        self.kernel.launch(&stream, self.config, &args)?;
        let timer = self.gpu.timer()?;
        timer.start(&stream)?;
        self.kernel.launch(&stream, self.config, &args)?;
        timer.stop(&stream)?;
        self.gpu.synchronize()?;
        timer.elapsed_s()
    }

    /// A workload launching the loop with `iterations`.
    pub fn workload(&self, iterations: u32) -> Result<CudaWorkload<impl FnMut(&Stream) -> Result<()>>> {
        let args = KernelArgs::new().buffer(&self.out).u32(iterations);
        let (kernel, config, out) = (self.kernel.clone(), self.config, self.out.clone());
        let launch = move |stream: &Stream| {
            let _keep_alive = &out;
            kernel.launch(stream, config, &args)
        };
        CudaWorkload::new(self.gpu.clone(), launch)
    }
}

/// An FMA loop over the whole GPU taking about `target_s` per launch.
pub fn fma_busy_workload(gpu: Arc<CudaGpu>, target_s: f64) -> Result<CudaWorkload<impl FnMut(&Stream) -> Result<()>>> {
    let fma = FmaLoop::load(gpu)?;
    let iterations = fma.iterations_for(target_s)?;
    fma.workload(iterations)
}
