//! Streams and device buffers, on a real GPU or the checked device.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};

use super::checked::CheckedGpu;
use super::{cuda_error, no_raw_cuda};
use crate::error::Result;

/// The stream a launch function is given: a real CUDA stream, or the checked device's.
/// Code that needs the raw cudarc stream on a real GPU takes it from [`Stream::cuda`].
#[derive(Clone)]
pub struct Stream(pub(super) StreamInner);

#[derive(Clone)]
pub(super) enum StreamInner {
    Real(Arc<CudaStream>),
    Checked,
}

impl Stream {
    /// The raw cudarc stream on a real GPU; an error on the checked device (where code
    /// that needs it cannot run).
    pub fn cuda(&self) -> Result<&Arc<CudaStream>> {
        match &self.0 {
            StreamInner::Real(stream) => Ok(stream),
            StreamInner::Checked => Err(no_raw_cuda("Stream::cuda")),
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
