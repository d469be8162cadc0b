//! PTX modules, kernels and their arguments, on a real GPU or the checked device.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, DeviceRepr, DriverError};

use super::checked::{self, ArgValue, CheckedGpu};
use super::cuda_c_scan::GlobalFunction;
use super::memory::{DeviceBuffer, Stream, StreamInner};
use super::ptx_interface::{PtxEntry, PtxInterface};
use super::{cuda_error, GpuProperties, LaunchConfig};
use energy_results::error::{Error, ErrorKind, Result};

pub(super) struct ModuleInner {
    pub(super) module: sys::CUmodule,
    pub(super) ctx: Arc<CudaContext>,
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
pub(super) enum ModuleBackend {
    Real(Arc<ModuleInner>),
    Checked(Arc<CheckedGpu>),
}

/// A compiled module: PTX compiled by the driver's JIT
/// ([`CudaGpu::load_ptx`](crate::CudaGpu::load_ptx)), or CUDA C compiled by NVRTC and then
/// loaded the same way ([`CudaGpu::load_cuda_c`](crate::CudaGpu::load_cuda_c)). Its
/// interface (each entry's parameters) is read from the PTX text, so that
/// [`Kernel::launch`] can check arguments before the driver sees them.
///
/// # Examples
///
/// ```
/// use energy_harness::prelude::*;
/// # use energy_harness::unstable::cuda::FMA_LOOP_PTX;
/// // FMA_LOOP_PTX: PTX with `.entry fma_loop(.param .u64 out, .param .u32 iters)`
///
/// fn setup(gpu: &CudaGpu) -> Result<Kernel> {
///     let module = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?;
///     // The machine code that runs, for `cuobjdump -sass` or `nvdisasm` (on the checked
///     // device only where ptxas assembled the module).
///     if let Some(cubin) = module.machine_code() {
///         assert!(cubin.starts_with(b"\x7fELF"));
///     }
///     // A name that is no entry of the module is an error that lists the entries.
///     assert!(module.kernel("fma").is_err());
///     module.kernel("fma_loop")
/// }
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// # setup(&gpu)?;
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone)]
pub struct PtxModule {
    pub(super) backend: ModuleBackend,
    pub(super) machine_code: Option<Arc<Vec<u8>>>,
    pub(super) level: super::JitOptLevel,
    pub(super) interface: Option<Arc<PtxInterface>>,
    pub(super) name: String,
    /// What the module was made from, for messages: `PTX`, or `CUDA C` (compiled by NVRTC).
    pub(super) source: &'static str,
    /// CUDA C read without compiling (no NVRTC on the checked device): its `__global__`
    /// functions, so that one looked up by a name it will not have is an error.
    pub(super) uncompiled_kernels: Option<Arc<Vec<GlobalFunction>>>,
    pub(super) properties: Arc<GpuProperties>,
}

impl PtxModule {
    /// The machine code (an ELF cubin) this module runs: on a real GPU, the cubin the
    /// driver's JIT produced at the module's level, which is the one loaded; on the checked
    /// device, the cubin ptxas assembled, where one was found (`None` otherwise). Write it to
    /// a file and `cuobjdump -sass` or `nvdisasm` show the instructions that run.
    pub fn machine_code(&self) -> Option<&[u8]> {
        self.machine_code.as_deref().map(Vec::as_slice)
    }

    /// The JIT level it was compiled at.
    pub fn level(&self) -> super::JitOptLevel {
        self.level
    }

    /// A kernel (`.entry`) of the module; a missing one is an error listing the module's
    /// entries and the closest name.
    pub fn kernel(&self, entry: &str) -> Result<Kernel> {
        let described = match &self.interface {
            Some(interface) => Some(interface.entry(entry, &format!("{} `{}`", self.source, self.name))?.clone()),
            None => {
                self.refuse_mangled(entry)?;
                None
            }
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
            module: format!("{} {}", self.source, self.name),
            properties: self.properties.clone(),
        })
    }
}

impl PtxModule {
    /// For CUDA C read without compiling: an error when `entry` is a `__global__` function
    /// declared without `extern "C"` (and not also with it), whose compiled name is mangled.
    fn refuse_mangled(&self, entry: &str) -> Result<()> {
        let Some(kernels) = &self.uncompiled_kernels else { return Ok(()) };
        if kernels.iter().any(|k| k.name == entry && !k.c_linkage) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{} `{}` declares `{entry}` `__global__` without `extern \"C\"` (read without compiling: no NVRTC \
                     here): compiled as C++, its name is mangled with its parameter types (`_Z…`), so no kernel \
                     `{entry}` exists on any GPU; declare it `extern \"C\" __global__` in the CUDA C source so that it \
                     keeps its name",
                    self.source, self.name
                ),
            ));
        }
        Ok(())
    }
}

#[derive(Clone)]
enum KernelBackend {
    Real { function: sys::CUfunction, _module: Arc<ModuleInner> },
    Checked(Arc<CheckedGpu>),
}

/// A kernel ready to launch: one entry of a [`PtxModule`], from [`PtxModule::kernel`].
///
/// # Examples
///
/// A grid of exactly as many blocks as the GPU holds at once (what a persistent kernel is
/// launched with), from the occupancy of blocks of 256 threads without dynamic shared
/// memory. On the checked device the occupancy is a bound from threads and shared memory
/// alone ([`Kernel::max_active_blocks_per_sm`]):
///
/// ```
/// use energy_harness::prelude::*;
/// # use energy_harness::unstable::cuda::FMA_LOOP_PTX;
/// // FMA_LOOP_PTX: PTX with `.entry fma_loop(.param .u64 out, .param .u32 iters)`
///
/// fn resident_grid(gpu: &CudaGpu, kernel: &Kernel) -> Result<LaunchConfig> {
///     let per_sm = kernel.max_active_blocks_per_sm(256, 0)?;
///     Ok(LaunchConfig::linear(per_sm * gpu.properties()?.sm_count, 256))
/// }
///
/// fn setup(gpu: &CudaGpu) -> Result<(Kernel, LaunchConfig)> {
///     let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
///     let config = resident_grid(gpu, &kernel)?;
///     Ok((kernel, config))
/// }
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// # let (kernel, config) = setup(&gpu)?;
/// # let out = gpu.alloc_zeros::<f32>((config.grid.0 * 256) as usize)?;
/// # kernel.launch(gpu.stream(), config, &KernelArgs::new().buffer(&out).u32(10))?;
/// # Ok::<(), Error>(())
/// ```
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
            (KernelBackend::Checked(gpu), StreamInner::Checked(_)) => {
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
///
/// Each method appends one argument. Which method fills which PTX parameter:
///
/// | method | Rust value | PTX parameter | CUDA C parameter (nvcc, NVRTC) |
/// |---|---|---|---|
/// | [`u16`](KernelArgs::u16) | `u16` (an `i16` as `v as u16`) | `.u16`, `.s16`, `.b16` | `unsigned short`, `short` |
/// | [`u32`](KernelArgs::u32) | `u32` (an `i32` as `v as u32`) | `.u32`, `.s32`, `.b32` | `unsigned`, `int` |
/// | [`u64`](KernelArgs::u64) | `u64` (an `i64` as `v as u64`, a raw device address) | `.u64`, `.s64`, `.b64` | `unsigned long long`, `long long`, `size_t` |
/// | [`f32`](KernelArgs::f32) | `f32` | `.f32`, `.b32` | `float` |
/// | [`f64`](KernelArgs::f64) | `f64` | `.f64`, `.b64` | `double` |
/// | [`buffer`](KernelArgs::buffer) | `&DeviceBuffer<T>` (its device address) | `.u64`, `.s64`, `.b64` | `T *`, `const T *` |
///
/// [`Kernel::launch`] checks the arguments against the entry, on a GPU and on the checked
/// device alike: their count; each one's size (2, 4 or 8 bytes) against the parameter's; an
/// integer or a buffer for a `.u`/`.s` parameter and a float for an `.f` one (a `.b`
/// parameter takes either of its size); and that every buffer is still alive. An array
/// parameter, `.param .align A .b8 p[N]` (a struct passed by value), takes one argument of
/// exactly N bytes, so only structs of 2, 4 or 8 bytes can be passed, their fields packed
/// little-endian into one value: `struct { float a, b; }` (`.b8 p[8]`) as
/// `.u64(u64::from(a.to_bits()) | u64::from(b.to_bits()) << 32)`. The element type of a
/// buffer is not checked: PTX pointers have none.
///
/// A parameter of 1 byte (`.u8`, `.s8`, `.b8`; a `bool` or `char` in CUDA C) cannot be
/// passed, nor an `.f16` one: widen it to 32 bits in the kernel, or declare half-precision
/// bits `.b16` and pass them with [`u16`](KernelArgs::u16). Where the module's interface is
/// unknown (PTX the reader cannot read, which the driver's JIT took; CUDA C on the checked
/// device without NVRTC) the arguments are passed unchecked, each as 8 little-endian bytes of
/// which the kernel reads its parameter's size.
///
/// # Examples
///
/// The entry `scale2d(.param .u32 width, .param .u32 height, .param .f32 a, .param .u64 m)`
/// multiplies a `width` × `height` matrix of floats by `a`, one element per thread of a 2-D
/// grid (CUDA C: `scale2d(unsigned width, unsigned height, float a, float *m)`):
///
/// ```
/// use energy_harness::prelude::*;
///
/// # const SCALE2D_PTX: &str = "
/// # .version 7.0
/// # .target sm_70
/// # .address_size 64
/// # .visible .entry scale2d(.param .u32 width, .param .u32 height, .param .f32 a, .param .u64 m)
/// # {
/// # .reg .pred %p<3>; .reg .b32 %r<12>; .reg .f32 %f<3>; .reg .b64 %rd<5>;
/// # ld.param.u32 %r1, [width]; ld.param.u32 %r2, [height];
/// # mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x; mad.lo.s32 %r6, %r3, %r4, %r5;
/// # mov.u32 %r7, %ctaid.y; mov.u32 %r8, %ntid.y; mov.u32 %r9, %tid.y; mad.lo.s32 %r10, %r7, %r8, %r9;
/// # setp.ge.u32 %p1, %r6, %r1; setp.ge.u32 %p2, %r10, %r2; or.pred %p1, %p1, %p2; @%p1 bra DONE;
/// # mad.lo.s32 %r11, %r10, %r1, %r6; ld.param.f32 %f1, [a]; ld.param.u64 %rd1, [m];
/// # cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r11, 4; add.s64 %rd4, %rd2, %rd3;
/// # ld.global.f32 %f2, [%rd4]; mul.f32 %f2, %f2, %f1; st.global.f32 [%rd4], %f2;
/// # DONE: ret;
/// # }";
/// // SCALE2D_PTX: PTX with the entry above
/// const W: u32 = 1000;
/// const H: u32 = 600;
///
/// struct Scale { kernel: Kernel, config: LaunchConfig, args: KernelArgs, m: DeviceBuffer<f32> }
///
/// fn setup(gpu: &CudaGpu) -> Result<Scale> {
///     let kernel = gpu.load_ptx(SCALE2D_PTX, "scale2d.ptx", JitOptLevel::O4)?.kernel("scale2d")?;
///     let m = gpu.upload(&vec![1.0f32; (W * H) as usize])?;
///     let args = KernelArgs::new().u32(W).u32(H).f32(0.5).buffer(&m);
///     let config = LaunchConfig { grid: (W.div_ceil(16), H.div_ceil(16), 1), block: (16, 16, 1), shared_mem_bytes: 0 };
///     Ok(Scale { kernel, config, args, m })
/// }
///
/// fn launch(s: &mut Scale, stream: &Stream) -> Result<()> {
///     s.kernel.launch(stream, s.config, &s.args)
/// }
///
/// // What the harness does with them, here on the checked device (no GPU: nothing executes,
/// // the launch is checked):
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// let mut s = setup(&gpu)?;
/// launch(&mut s, gpu.stream())?;
///
/// // `height` passed as a u64: refused before the driver sees it, with the fix.
/// let wrong = KernelArgs::new().u32(W).u64(H as u64).f32(0.5).buffer(&s.m);
/// let err = s.kernel.launch(gpu.stream(), s.config, &wrong).unwrap_err();
/// assert!(err.message().contains("argument 2 is a u64 (600) but parameter 2 `height` is .u32"));
/// assert!(err.message().contains("pass it with .u32(…)"));
///
/// // A float where the PTX has an integer: same size, refused all the same.
/// let wrong = KernelArgs::new().u32(W).f32(600.0).f32(0.5).buffer(&s.m);
/// assert!(s.kernel.launch(gpu.stream(), s.config, &wrong).is_err());
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct KernelArgs {
    pub(super) values: Vec<ArgValue>,
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
