//! The CUDA layer (cudarc, driver API, loaded at run time): PTX modules with a chosen JIT
//! optimization level, kernel launches, CUDA events, device buffers; and, behind the same
//! API, the checked device of a machine without a GPU ([`checked`]).
//!
//! Every entry point checks that libcuda can be loaded before touching cudarc (which
//! panics otherwise) and turns driver errors into [`crate::Error`]s naming the call.

pub mod checked;
mod cuda_c_scan;
mod fma;
mod jit;
mod kernel;
mod memory;
pub mod nvrtc;
mod properties;
pub mod ptx_interface;
pub mod spin;
#[cfg(test)]
mod testdata;
mod workload;

pub use fma::{fma_busy_workload, FmaLoop, FMA_LOOP_PTX};
use jit::jit_compile;
pub use jit::JitOptLevel;
use kernel::ModuleBackend;
pub use kernel::{Kernel, KernelArgs, PtxModule};
use memory::{BufferInner, StreamInner};
pub use memory::{DeviceBuffer, Stream};
use properties::real_properties;
pub use properties::GpuProperties;
pub use workload::{CudaWorkload, EventTimer, LibraryWorkload};

use std::ffi::CString;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, DeviceRepr, DriverError, ValidAsZeroBits};

pub use checked::CheckedActivity;
use checked::CheckedGpu;
use ptx_interface::parse_interface;

use crate::gpu::{cuda_library_present, NO_GPU_HINT};
use energy_results::error::{Error, ErrorKind, Result};

/// Whether two PCI bus ids name the same device, whatever their case and the width of their
/// domain (`00000000:41:00.0`, NVML's, and `0000:41:00.0`, the CUDA driver's and wgpu's,
/// are one device); a bus id without a domain is taken in domain 0.
pub fn same_pci_bus_id(a: &str, b: &str) -> bool {
    fn parts(id: &str) -> Option<(u32, u32, u32, u32)> {
        let id = id.trim().to_ascii_lowercase();
        let mut fields: Vec<&str> = id.split(':').collect();
        if fields.len() == 2 {
            fields.insert(0, "0");
        }
        let [domain, bus, rest] = fields.as_slice() else { return None };
        let (device, function) = rest.split_once('.')?;
        let hex = |s: &str| u32::from_str_radix(s, 16).ok();
        Some((hex(domain)?, hex(bus)?, hex(device)?, hex(function)?))
    }
    matches!((parts(a), parts(b)), (Some(x), Some(y)) if x == y)
}

/// Maps a driver error of `call` to a harness error.
pub fn cuda_error(call: &str, err: DriverError) -> Error {
    Error::new(ErrorKind::Cuda, format!("{call} failed: {err}"))
}

/// A launch's geometry: the grid of blocks, the threads of each block, and the dynamic
/// shared memory each block gets.
///
/// [`LaunchConfig::linear`] makes a 1-D launch; a 2-D or 3-D launch is the struct written
/// out, its fields being public. A thread finds its place from its block's index and its own
/// index in the block: `%ctaid` and `%tid` (`.x`, `.y`, `.z`) in PTX, `blockIdx` and
/// `threadIdx` in CUDA C.
///
/// [`Kernel::launch`] checks the configuration before every launch, on a GPU and on the
/// checked device alike, and refuses it
/// ([`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput), with the fix in the
/// message) when:
///
/// - a dimension is 0;
/// - a block has more threads (x × y × z) than the device allows (1024 on an H100), x or y
///   is above 1024, or z above 64;
/// - the grid's x is above 2³¹ − 1 blocks, or its y or z above 65535;
/// - the block shape breaks the PTX's `.maxntid` or `.reqntid` (`__launch_bounds__`);
/// - `shared_mem_bytes` is above 48 KiB (49152 bytes). [`Kernel::launch`] does not opt in
///   to more (`cuFuncSetAttribute`), so the larger amounts a GPU offers per block (227 KiB on
///   an H100) are refused on a GPU too.
///
/// Static shared memory (`.shared` arrays of fixed size in the PTX, `__shared__` ones in CUDA
/// C) is not part of `shared_mem_bytes`, nor of this check.
///
/// # Examples
///
/// A 2-D launch over a 1000 × 600 matrix, blocks of 16 × 16 threads, enough blocks to cover
/// it (the kernel skips the threads beyond the edges; [`KernelArgs`] launches one):
///
/// ```
/// use energy_harness::prelude::*;
///
/// let (width, height) = (1000u32, 600u32);
/// let config = LaunchConfig {
///     grid: (width.div_ceil(16), height.div_ceil(16), 1),
///     block: (16, 16, 1),
///     shared_mem_bytes: 0,
/// };
/// assert_eq!(config.grid, (63, 38, 1));
///
/// // The 1-D form: 4096 blocks of 256 threads.
/// assert_eq!(LaunchConfig::linear(4096, 256).block, (256, 1, 1));
/// ```
///
/// Dynamic shared memory: the kernel declares an array without a size, `extern __shared__
/// float tile[];` in CUDA C, `.extern .shared .align 4 .b8 tile[];` at module scope in PTX,
/// and each block gets `shared_mem_bytes` of it, chosen per launch. This kernel reverses each
/// block's floats through `tile`, one float (4 bytes) per thread:
///
/// ```
/// use energy_harness::prelude::*;
///
/// # const REVERSE_PTX: &str = "
/// # .version 7.0
/// # .target sm_70
/// # .address_size 64
/// # .extern .shared .align 4 .b8 tile[];
/// # .visible .entry reverse_blocks(.param .u64 x)
/// # {
/// # .reg .b32 %r<9>; .reg .f32 %f<3>; .reg .b64 %rd<5>;
/// # ld.param.u64 %rd1, [x]; cvta.to.global.u64 %rd2, %rd1;
/// # mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x; mad.lo.s32 %r4, %r1, %r2, %r3;
/// # mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %rd2, %rd3; ld.global.f32 %f1, [%rd4];
/// # mov.u32 %r5, tile; shl.b32 %r6, %r3, 2; add.s32 %r7, %r5, %r6; st.shared.f32 [%r7], %f1;
/// # bar.sync 0;
/// # sub.s32 %r6, %r2, %r3; sub.s32 %r6, %r6, 1; shl.b32 %r6, %r6, 2; add.s32 %r8, %r5, %r6;
/// # ld.shared.f32 %f2, [%r8]; st.global.f32 [%rd4], %f2;
/// # ret;
/// # }";
/// // REVERSE_PTX: `.extern .shared .align 4 .b8 tile[];` and
/// // `.entry reverse_blocks(.param .u64 x)`
/// const N: u32 = 1 << 20;
/// const THREADS: u32 = 256;
///
/// struct Reverse { kernel: Kernel, args: KernelArgs, _x: DeviceBuffer<f32> }
///
/// fn setup(gpu: &CudaGpu) -> Result<Reverse> {
///     let kernel = gpu.load_ptx(REVERSE_PTX, "reverse.ptx", JitOptLevel::O4)?.kernel("reverse_blocks")?;
///     let x = gpu.upload(&vec![1.0f32; N as usize])?;
///     let args = KernelArgs::new().buffer(&x);
///     Ok(Reverse { kernel, args, _x: x })
/// }
///
/// fn launch(s: &mut Reverse, stream: &Stream) -> Result<()> {
///     let config = LaunchConfig {
///         grid: (N / THREADS, 1, 1),
///         block: (THREADS, 1, 1),
///         shared_mem_bytes: THREADS * std::mem::size_of::<f32>() as u32,
///     };
///     s.kernel.launch(stream, config, &s.args)
/// }
///
/// // What the harness does with them, here on the checked device (no GPU: nothing executes,
/// // the launch is checked):
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// let mut s = setup(&gpu)?;
/// launch(&mut s, gpu.stream())?;
///
/// // 64 KiB per block is more than a launch gets without opting in: refused, GPU or not.
/// let too_much = LaunchConfig { shared_mem_bytes: 64 * 1024, ..LaunchConfig::linear(N / THREADS, THREADS) };
/// let err = s.kernel.launch(gpu.stream(), too_much, &s.args).unwrap_err();
/// assert!(err.message().contains("65536 bytes of dynamic shared memory per block"));
/// # Ok::<(), Error>(())
/// ```
/// [`Kernel::max_active_blocks_per_sm`] says how many blocks of a given size and shared
/// memory fit on one SM at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y and z (`gridDim`); each at least 1.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y and z (`blockDim`); each at least 1.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, bytes (at most 49152); 0 when the kernel declares none.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch: `blocks` blocks of `threads` threads, no dynamic shared memory.
    pub fn linear(blocks: u32, threads: u32) -> Self {
        LaunchConfig { grid: (blocks, 1, 1), block: (threads, 1, 1), shared_mem_bytes: 0 }
    }
}

/// A CUDA device with one stream the harness launches on: a real GPU, or the checked
/// device of a machine without one ([`CudaGpu::checked`]), behind the same API.
///
/// # Examples
///
/// A setup function gets the `CudaGpu` the kernel runs on: it compiles the kernel, allocates
/// its buffers and builds its arguments, which the launch function then uses. This one sizes
/// the grid by the device: 8 blocks of 256 threads on every SM.
///
/// ```
/// use energy_harness::prelude::*;
/// # use energy_harness::unstable::cuda::FMA_LOOP_PTX;
/// // FMA_LOOP_PTX: PTX with `.entry fma_loop(.param .u64 out, .param .u32 iters)`: each
/// // thread runs `iters` iterations of 16 FMAs and stores one float to `out`.
///
/// struct Fma { kernel: Kernel, config: LaunchConfig, args: KernelArgs, _out: DeviceBuffer<f32> }
///
/// fn setup(gpu: &CudaGpu) -> Result<Fma> {
///     let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
///     let blocks = 8 * gpu.properties()?.sm_count;
///     let out = gpu.alloc_zeros::<f32>(blocks as usize * 256)?;
///     let args = KernelArgs::new().buffer(&out).u32(1000);
///     Ok(Fma { kernel, config: LaunchConfig::linear(blocks, 256), args, _out: out })
/// }
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// # let s = setup(&gpu)?;
/// # s.kernel.launch(gpu.stream(), s.config, &s.args)?;
/// # Ok::<(), Error>(())
/// ```
///
/// CUDA C goes through NVRTC ([`CudaGpu::load_cuda_c`]), its kernels declared `extern "C"` so
/// that their names are not mangled:
///
/// ```
/// use energy_harness::prelude::*;
///
/// const SCALE_CU: &str = r#"
/// extern "C" __global__ void scale(unsigned n, float a, float *x) {
///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) x[i] *= a;
/// }
/// "#;
///
/// fn setup(gpu: &CudaGpu) -> Result<(Kernel, KernelArgs, DeviceBuffer<f32>)> {
///     let kernel = gpu.load_cuda_c(SCALE_CU, "scale.cu", &["-use_fast_math"])?.kernel("scale")?;
///     let x = gpu.upload(&vec![1.0f32; 1 << 20])?;
///     let args = KernelArgs::new().u32(1 << 20).f32(0.5).buffer(&x);
///     Ok((kernel, args, x))
/// }
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// # let (kernel, args, _x) = setup(&gpu)?;
/// # kernel.launch(gpu.stream(), LaunchConfig::linear(4096, 256), &args)?;
/// # Ok::<(), Error>(())
/// ```
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
    /// buffers kept in host memory. Kernels do not execute (see the checked device in `docs/ARCHITECTURE.md`).
    pub fn checked(properties: GpuProperties) -> CudaGpu {
        let gpu = Arc::new(CheckedGpu::new(properties.clone()));
        CudaGpu {
            backend: GpuBackend::Checked(gpu.clone()),
            stream: Stream(StreamInner::Checked(Arc::new(std::sync::atomic::AtomicBool::new(false)))),
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
            GpuBackend::Checked(_) => Err(no_raw_cuda("CudaGpu::cuda_context")),
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
        let (backend, interface, machine_code) = match &self.backend {
            GpuBackend::Real(ctx) => {
                let (module, cubin) = jit_compile(ctx, &source, name, level)?;
                // A module the JIT took but this reader cannot read is launched unchecked.
                (ModuleBackend::Real(Arc::new(module)), parse_interface(ptx, name).ok(), Some(Arc::new(cubin)))
            }
            GpuBackend::Checked(gpu) => {
                let interface = parse_interface(ptx, name)
                    .map_err(|e| e.context(format!("PTX `{name}` could not be read on the checked device (no GPU)")))?;
                checked::check_target(interface.target.as_deref(), name, &self.properties)?;
                let arch = checked::assembly_arch(interface.target.as_deref(), &self.properties);
                let assembled = checked::assemble(ptx, name, &arch, level)?;
                let cubin = checked::assembled_cubin(ptx, &arch, level).filter(|c| !c.is_empty());
                gpu.record_module(assembled);
                (ModuleBackend::Checked(gpu.clone()), Some(interface), cubin)
            }
        };
        Ok(PtxModule {
            backend,
            machine_code,
            level,
            interface: interface.map(Arc::new),
            uncompiled_kernels: None,
            name: name.to_string(),
            source: "PTX",
            properties: Arc::new(self.properties.clone()),
        })
    }

    /// Compiles CUDA C `source` (its kernels declared `extern "C" __global__`) with NVRTC
    /// for this device's architecture and loads the PTX at the JIT's default level, as
    /// [`CudaGpu::load_ptx`] would; `name` labels errors (`"saxpy.cu"`), `options` go to
    /// NVRTC as they are (`&["-use_fast_math"]`). The PTX is cached under
    /// `<target>/energy/cache/nvrtc/`. The NVRTC library is loaded at run time
    /// (`NVRTC_LIBRARY`, else the system's). On the checked device the source is compiled
    /// and checked like PTX where an NVRTC library is found; where none is, the module is
    /// *checked without compiling* (said in the check line; an error under `ENERGY_STRICT=1`):
    /// its `__global__` functions are read from the source, so looking up one declared
    /// without `extern "C"` is an error (its compiled name is mangled), and its kernels'
    /// launches are accepted unchecked.
    pub fn load_cuda_c(&self, source: &str, name: &str, options: &[&str]) -> Result<PtxModule> {
        if let GpuBackend::Checked(gpu) = &self.backend {
            if let Err(why) = nvrtc::nvrtc_available() {
                gpu.record_module(checked::Assembly::CudaCNotCompiled(format!(
                    "CUDA C `{name}` {}: {why}",
                    checked::NOT_COMPILED
                )));
                return Ok(PtxModule {
                    backend: ModuleBackend::Checked(gpu.clone()),
                    machine_code: None,
                    level: JitOptLevel::O4,
                    interface: None,
                    name: name.to_string(),
                    source: "CUDA C",
                    uncompiled_kernels: Some(Arc::new(cuda_c_scan::global_functions(source))),
                    properties: Arc::new(self.properties.clone()),
                });
            }
        }
        let ptx = nvrtc::compile_cuda_c(source, name, options, &self.properties.arch())?;
        if let GpuBackend::Checked(gpu) = &self.backend {
            gpu.record_nvrtc_compile();
        }
        let mut module = self.load_ptx(&ptx, name, JitOptLevel::O4)?;
        module.source = "CUDA C";
        Ok(module)
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
            (BufferInner::Checked { data, .. }, StreamInner::Checked(_)) => {
                Ok(data.clone().unwrap_or_else(|| vec![T::default(); buffer.len]))
            }
            _ => Err(Error::new(ErrorKind::InvalidInput, "download of a buffer from another device")),
        }
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize()
    }

    /// The GPU's PCI bus id, `domain:bus:device.function` in lower-case hex
    /// (`0000:41:00.0`), as the driver gives it: to pick the same GPU in an API that does not
    /// speak CUDA (a wgpu adapter's `AdapterInfo::device_pci_bus_id`, compared with
    /// [`same_pci_bus_id`]). An error on the checked device.
    pub fn pci_bus_id(&self) -> Result<String> {
        let ctx = match &self.backend {
            GpuBackend::Real(ctx) => ctx,
            GpuBackend::Checked(_) => return Err(no_raw_cuda("CudaGpu::pci_bus_id")),
        };
        let mut buffer = [0 as std::ffi::c_char; 32];
        // SAFETY: the buffer holds 32 bytes (the driver writes at most 13 and a NUL).
        let status = unsafe { sys::cuDeviceGetPCIBusId(buffer.as_mut_ptr(), buffer.len() as i32, ctx.cu_device()) };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(cuda_error("cuDeviceGetPCIBusId", DriverError(status)));
        }
        // SAFETY: the driver wrote a NUL-terminated string into the buffer.
        let id = unsafe { std::ffi::CStr::from_ptr(buffer.as_ptr()) };
        Ok(id.to_string_lossy().to_ascii_lowercase())
    }

    /// Waits for every stream of the device's primary context (`cuCtxSynchronize`): the
    /// harness's, and any a library opened there, with any cudarc version (all retain the
    /// same primary context). Nothing to wait for on the checked device.
    pub fn synchronize_context(&self) -> Result<()> {
        match &self.backend {
            GpuBackend::Real(ctx) => ctx.synchronize().map_err(|e| cuda_error("cuCtxSynchronize", e)),
            GpuBackend::Checked(_) => Ok(()),
        }
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

pub(super) fn no_raw_cuda(api: &str) -> Error {
    Error::new(
        ErrorKind::NeedsGpu,
        format!("{api} (raw cudarc) exists only on a real GPU; this is the checked device (no GPU): code that needs raw cudarc runs only with a GPU"),
    )
}
