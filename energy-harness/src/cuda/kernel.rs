//! PTX modules, kernels and their arguments, on a real GPU or the checked device.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, DeviceRepr, DriverError};

use super::checked::{self, ArgValue, CheckedGpu};
use super::memory::{DeviceBuffer, Stream, StreamInner};
use super::ptx_interface::{PtxEntry, PtxInterface};
use super::{cuda_error, GpuProperties, LaunchConfig};
use crate::error::{Error, ErrorKind, Result};

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

/// A loaded PTX module.
#[derive(Clone)]
pub struct PtxModule {
    pub(super) backend: ModuleBackend,
    pub(super) machine_code: Option<Arc<Vec<u8>>>,
    pub(super) level: super::JitOptLevel,
    pub(super) interface: Option<Arc<PtxInterface>>,
    pub(super) name: String,
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
