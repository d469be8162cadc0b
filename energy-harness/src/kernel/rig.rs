//! The GPU a kernel under test runs on: the device opened for it ([`open_device`]), and
//! what running kernels there takes besides ([`Rig`]): the GPU's cached calibration, CUDA
//! on it, and on the simulated GPU the checked device that runs the code instead.

use crate::engine::thermal::ThermalCalibration;
use std::sync::Arc;

use super::code::KernelCode;
use super::subject::KernelUnderTest;
use crate::cuda::CudaGpu;
use crate::device::{Device, DeviceRequest};
use crate::engine::calibration::{default_calibration_dir, Calibration};
use crate::engine::options::MeasureOptions;
use crate::engine::run::SimWorkload;
use crate::sim::SimGpu;
use crate::workload::Workload;
use energy_results::error::{Error, ErrorKind, Result};

/// Opens the device that `ENERGY_DEVICE` and a kernel's own CUDA device `ordinal`
/// ([`MeasureOptions::cuda_device`](crate::MeasureOptions::cuda_device)) select: a real
/// GPU, or the simulated one.
pub fn open_device(ordinal: Option<u32>) -> Result<Device> {
    let request = DeviceRequest::from_env()?;
    Device::open(&request, ordinal).map_err(|e| {
        if request == DeviceRequest::Nvml {
            e.context("ENERGY_DEVICE=nvml requires a real NVIDIA GPU")
        } else {
            e
        }
    })
}

/// What running kernels under test on one device takes besides the device: its cached
/// calibration, CUDA on the real GPU (opened for the first kernel that runs there) and, on
/// the simulated GPU, the checked device their code runs on (made for the first check).
/// One per device, shared by every kernel run there.
pub struct Rig {
    calibration: Option<Calibration>,
    thermal: Option<ThermalCalibration>,
    cuda: Option<Arc<CudaGpu>>,
    checked: Option<Arc<CudaGpu>>,
}

impl Rig {
    /// For kernels run on `device`; a cached calibration that cannot be read is ignored,
    /// with a warning.
    pub fn new(device: &Device) -> Rig {
        let calibration =
            Calibration::load_cached(&default_calibration_dir(), &device.facts().uuid).unwrap_or_else(|e| {
                eprintln!("warning: ignoring the cached calibration: {e}");
                None
            });
        let thermal =
            ThermalCalibration::load_cached(&default_calibration_dir(), &device.facts().uuid).unwrap_or_else(|e| {
                eprintln!("warning: ignoring the cached thermal calibration: {e}");
                None
            });
        Rig { calibration, thermal, cuda: None, checked: None }
    }

    /// The device's thermal calibration (dP/dT), when one is cached.
    pub fn thermal(&self) -> Option<&ThermalCalibration> {
        self.thermal.as_ref()
    }

    /// The device's calibration, when one is cached.
    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }

    /// `kernel` as the workload measured on `device`: its code on the real GPU (CUDA opened
    /// here, for a kernel that runs), its model on the simulated one (launch times jittered
    /// by 0.1 % from `seed`).
    pub fn workload(&mut self, device: &Device, kernel: &KernelUnderTest, seed: u64) -> Result<Box<dyn Workload>> {
        if let Some(gpu) = device.sim() {
            let model = kernel.sim.ok_or_else(|| {
                Error::new(ErrorKind::InvalidInput, format!("{} has no simulated model", kernel.name))
            })?;
            let graph = kernel.code.as_ref().map(KernelCode::checked_graph).transpose()?.flatten();
            let workload = SimWorkload::new(gpu.clone(), model).with_time_jitter(0.001, seed);
            return Ok(match graph {
                Some(launches) => Box::new(workload.with_graph(u64::from(launches))),
                None => Box::new(workload),
            });
        }
        let code = kernel.code.as_ref().ok_or_else(|| {
            Error::new(ErrorKind::InvalidInput, format!("{} has no launch for a real GPU", kernel.name))
        })?;
        code.workload(&self.cuda(device)?)
    }

    /// CUDA on `device`, opened on first use.
    fn cuda(&mut self, device: &Device) -> Result<Arc<CudaGpu>> {
        if let Some(gpu) = &self.cuda {
            return Ok(gpu.clone());
        }
        let ordinal = device.facts().cuda_ordinal.ok_or_else(|| {
            Error::new(
                ErrorKind::NoGpu,
                format!("no CUDA device has the UUID {} (hidden by CUDA_VISIBLE_DEVICES?)", device.facts().uuid),
            )
        })?;
        let gpu = Arc::new(CudaGpu::open(ordinal)?);
        self.cuda = Some(gpu.clone());
        Ok(gpu)
    }

    /// The checked device standing in for the simulated `sim`, made on first use.
    pub(super) fn checked(&mut self, sim: &SimGpu) -> &Arc<CudaGpu> {
        self.checked.get_or_insert_with(|| Arc::new(CudaGpu::checked(sim.preset().gpu_properties())))
    }
}

/// `options` as measured on `device`: `device` set to the CUDA ordinal it was opened at (a
/// UUID looked up, `ENERGY_DEVICE` followed), so a result's options say which GPU it was.
pub fn options_on(device: &Device, options: &MeasureOptions) -> MeasureOptions {
    MeasureOptions { device: device.facts().cuda_ordinal.or(options.device), ..options.clone() }
}
