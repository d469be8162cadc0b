//! The busy kernel that calibration, the thermal calibration and the selftest run.

use energy_harness::{Error, ErrorKind};

/// The FMA loop sized to `launch_s` per launch on the device's GPU, or the simulated
/// GPU's busy kernel of that length: what calibration and the selftest run.
pub fn busy_workload(
    device: &energy_harness::unstable::device::Device,
    launch_s: f64,
) -> energy_harness::Result<Box<dyn energy_harness::unstable::engine::Workload>> {
    use energy_harness::unstable::cuda::fma_busy_workload;
    use energy_harness::unstable::device::SimKernel;
    use energy_harness::unstable::engine::SimWorkload;
    use energy_harness::CudaGpu;
    if let Some(gpu) = device.sim() {
        return Ok(Box::new(SimWorkload::new(gpu.clone(), SimKernel::new(launch_s, gpu.preset().busy_kernel_w))));
    }
    let ordinal = device.facts().cuda_ordinal.ok_or_else(|| {
        Error::new(
            ErrorKind::NoGpu,
            format!(
                "no CUDA device has the UUID {} of NVML device {} (is it hidden by CUDA_VISIBLE_DEVICES?)",
                device.facts().uuid,
                device.facts().nvml_index
            ),
        )
    })?;
    let gpu = std::sync::Arc::new(CudaGpu::open(ordinal)?);
    Ok(Box::new(fma_busy_workload(gpu, launch_s)?))
}
