//! Streams and device buffers, on a real GPU or the checked device.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};

use super::checked::CheckedGpu;
use super::{cuda_error, no_raw_cuda};
use energy_results::error::{Error, ErrorKind, Result};

/// The stream a launch function is given: a real CUDA stream, or the checked device's.
/// Code that needs the raw cudarc stream on a real GPU takes it from [`Stream::cuda`].
///
/// The harness times this stream with CUDA events and waits for it at the end of each
/// window, so a launch function enqueues its work here and returns without waiting. Work on
/// another stream (a library's) needs `any_stream` or `wait = …`
/// ([`KernelCode::any_stream`](crate::KernelCode::any_stream)), or the measurement is
/// refused.
///
/// # Examples
///
/// ```no_run
/// use energy_harness::cudarc::driver::CudaSlice;
/// use energy_harness::prelude::*;
///
/// // The harness's own launches: enqueue on the stream given.
/// fn launch(kernel: &Kernel, args: &KernelArgs, stream: &Stream) -> Result<()> {
///     kernel.launch(stream, LaunchConfig::linear(4096, 256), args)
/// }
///
/// // Raw cudarc on the same stream, which the harness then times as it does its own launches.
/// // A real GPU only: such a benchmark or budget is declared `gpu_only`.
/// fn clear(y: &mut CudaSlice<f32>, stream: &Stream) -> Result<()> {
///     stream.cuda()?.memset_zeros(y)?;
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct Stream(pub(super) StreamInner);

#[derive(Clone)]
pub(super) enum StreamInner {
    Real(Arc<CudaStream>),
    /// The checked device's stream; the flag is set while a launch function runs as it would
    /// be captured into a CUDA graph ([`Stream::set_checked_capture`]).
    Checked(Arc<std::sync::atomic::AtomicBool>),
}

impl Stream {
    /// The raw cudarc stream on a real GPU; an error on the checked device (where code
    /// that needs it cannot run).
    pub fn cuda(&self) -> Result<&Arc<CudaStream>> {
        match &self.0 {
            StreamInner::Real(stream) => Ok(stream),
            StreamInner::Checked(_) => Err(no_raw_cuda("Stream::cuda")),
        }
    }

    /// Whether this is the checked device's stream (no GPU: nothing executes).
    pub fn is_checked(&self) -> bool {
        matches!(self.0, StreamInner::Checked(_))
    }

    /// Waits for everything enqueued on the stream. Refused while the stream is captured
    /// into a CUDA graph (`graph = N`): CUDA refuses it on a GPU, the checked device too.
    pub fn synchronize(&self) -> Result<()> {
        match &self.0 {
            StreamInner::Real(stream) => stream.synchronize().map_err(|e| cuda_error("cuStreamSynchronize", e)),
            StreamInner::Checked(capturing) if capturing.load(std::sync::atomic::Ordering::Relaxed) => Err(Error::new(
                ErrorKind::InvalidInput,
                "Stream::synchronize in a launch function captured into a CUDA graph (`graph = N`): a capture \
                     cannot hold a synchronize (CUDA refuses it on a GPU); the harness waits for every batch \
                     itself: remove the synchronize, or remove `graph`",
            )),
            StreamInner::Checked(_) => Ok(()),
        }
    }

    /// On the checked device, runs the launch function as a CUDA graph's capture would
    /// (`on`): what a capture cannot hold (a synchronize) is refused, as on a GPU. Nothing on
    /// a real GPU, where the capture itself refuses it.
    pub(crate) fn set_checked_capture(&self, on: bool) {
        if let StreamInner::Checked(capturing) = &self.0 {
            capturing.store(on, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A buffer in device memory (in host memory on the checked device, its size tracked).
/// Kernel arguments pointing to it are refused once it is dropped.
///
/// [`CudaGpu::upload`](crate::CudaGpu::upload) copies host data into a new one,
/// [`CudaGpu::alloc_zeros`](crate::CudaGpu::alloc_zeros) makes a zeroed one, and
/// [`CudaGpu::download`](crate::CudaGpu::download) copies one back. Keep it in the setup's
/// state as long as arguments point to it.
///
/// # Examples
///
/// ```
/// use energy_harness::prelude::*;
/// # use energy_harness::unstable::cuda::FMA_LOOP_PTX;
/// // FMA_LOOP_PTX: PTX with `.entry fma_loop(.param .u64 out, .param .u32 iters)`
///
/// # let gpu = energy_harness::CudaGpu::checked(energy_harness::unstable::device::SimPreset::h100().gpu_properties());
/// let x = gpu.upload(&[1.0f32, 2.0, 3.0])?;
/// assert_eq!((x.len(), x.size_bytes()), (3, 12));
/// // On the checked device kernels do not run: a download returns what was uploaded.
/// assert_eq!(gpu.download(&x)?, vec![1.0, 2.0, 3.0]);
///
/// let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
/// let config = LaunchConfig::linear(4, 256);
/// let out = gpu.alloc_zeros::<f32>(4 * 256)?;
/// kernel.launch(gpu.stream(), config, &KernelArgs::new().buffer(&out).u32(100))?;
///
/// // Arguments that outlive their buffer: the launch is refused, GPU or not.
/// let dangling = {
///     let scratch = gpu.alloc_zeros::<f32>(4 * 256)?;
///     KernelArgs::new().buffer(&scratch).u32(100)
/// };
/// let err = kernel.launch(gpu.stream(), config, &dangling).unwrap_err();
/// assert!(err.message().contains("freed before the launch"));
/// # Ok::<(), Error>(())
/// ```
pub struct DeviceBuffer<T: DeviceRepr> {
    pub(super) len: usize,
    pub(super) alive: Arc<()>,
    pub(super) inner: BufferInner<T>,
}

pub(super) enum BufferInner<T: DeviceRepr> {
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
    pub(super) fn real(slice: CudaSlice<T>) -> Self {
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
            BufferInner::Checked { .. } => Err(no_raw_cuda("DeviceBuffer::cuda_slice")),
        }
    }
}

/// Where the checked device's made-up buffer addresses start.
const CHECKED_ADDRESS_BASE: u64 = 0x7f00_0000_0000_0000;
