//! What a GPU is (`GpuProperties`): a real device's read from the driver, the checked
//! device's given.

use cudarc::driver::{sys, CudaContext};

use super::cuda_error;
use energy_results::error::Result;

/// Facts the suites size their kernels by.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

impl GpuProperties {
    /// The architecture PTX is assembled for: `sm_90` for compute capability 9.0.
    pub fn arch(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("sm_{major}{minor}")
    }
}

pub(super) fn real_properties(ctx: &CudaContext) -> Result<GpuProperties> {
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
