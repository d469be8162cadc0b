//! The device a measurement runs on: a real GPU (NVML, [`crate::gpu`]) or the simulated
//! one, chosen by `ENERGY_DEVICE` ([`select`]), with the clock everything is stamped on.

pub mod select;

use crate::clock::{MonotonicClock, SharedClock};
use crate::gpu::{gpu_required, refresh_device_state, DeviceFacts, REQUIRE_GPU_ENV};
use crate::sensors::nvml::NvmlSource;
use crate::sensors::{SensorSource, SourceError, SourceKind};
use crate::sim::SimGpu;
use energy_results::error::{Error, ErrorKind, Result};
pub use select::{DeviceRequest, GpuChoice, Target};

/// A GPU ready to measure on: the clock everything is stamped on, its facts, and for
/// the simulated GPU the simulator itself (to launch simulated kernels on).
#[derive(Clone)]
pub struct Device {
    clock: SharedClock,
    facts: DeviceFacts,
    sim: Option<SimGpu>,
    /// Why the simulated GPU was chosen, when it was.
    sim_reason: Option<String>,
}

impl Device {
    /// Opens the device `ENERGY_DEVICE` and the measurement's own CUDA device `device` (or
    /// `None`) select: counted as this process sees CUDA devices, after
    /// `CUDA_VISIBLE_DEVICES` (the GPU its kernels launch on, matched to NVML by UUID); a GPU
    /// that `ENERGY_DEVICE` names is used when `device` is `None`. On a new monotonic clock.
    pub fn open(request: &DeviceRequest, device: Option<u32>) -> Result<Device> {
        let clock = MonotonicClock::shared();
        Ok(match select::resolve(request, device)? {
            Target::Nvml(facts) => Device { clock, facts, sim: None, sim_reason: None },
            Target::Sim { preset, reason } => Device::simulated(SimGpu::new(preset, clock), reason),
        })
    }

    /// Wraps a simulated GPU (on whatever clock it runs).
    pub fn simulated(gpu: SimGpu, reason: impl Into<String>) -> Device {
        Device { clock: gpu.clock().clone(), facts: gpu.facts(), sim: Some(gpu), sim_reason: Some(reason.into()) }
    }

    /// The clock readings and marks are stamped on.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// The facts read when the device was opened (or last refreshed).
    pub fn facts(&self) -> &DeviceFacts {
        &self.facts
    }

    /// Re-reads clocks, temperature, throttle reasons and processes.
    pub fn refresh(&mut self) -> Result<&DeviceFacts> {
        refresh_device_state(&mut self.facts)?;
        Ok(&self.facts)
    }

    /// The simulator, on the simulated GPU.
    pub fn sim(&self) -> Option<&SimGpu> {
        self.sim.as_ref()
    }

    /// Why the simulated GPU is in use, when it is.
    pub fn sim_reason(&self) -> Option<&str> {
        self.sim_reason.as_deref()
    }

    /// Whether figures from this device are simulated.
    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// `Err` when [`REQUIRE_GPU_ENV`] is `1` and this device is simulated: on a GPU runner a
    /// missing driver or GPU must fail the job, not turn it into a simulated pass. `what`
    /// names the bench or test for the message.
    pub fn check_gpu_required(&self, what: &str) -> Result<()> {
        if !gpu_required() || !self.is_simulated() {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::NoGpu,
            format!(
                "{what}: {REQUIRE_GPU_ENV}=1 requires a real NVIDIA GPU, but this would run on the simulated one ({}); install the driver or unset {REQUIRE_GPU_ENV}",
                self.sim_reason().unwrap_or("simulated device")
            ),
        ))
    }

    /// Opens one source.
    pub fn open_source(&self, kind: SourceKind) -> Result<Box<dyn SensorSource>, SourceError> {
        match &self.sim {
            Some(gpu) => gpu.open_source(kind).map(|s| Box::new(s) as Box<dyn SensorSource>),
            None => NvmlSource::open(self.facts.nvml_index, kind)
                .map(|s| Box::new(s) as Box<dyn SensorSource>)
                .map_err(|e| match e.kind() {
                    ErrorKind::NotSupported => SourceError::NotSupported { kind, detail: e.message().to_string() },
                    _ => SourceError::Failed { kind, detail: e.message().to_string() },
                }),
        }
    }

    /// Opens each of `kinds` that works; returns them and the failures (NotSupported
    /// for what the GPU lacks).
    pub fn open_sources(&self, kinds: &[SourceKind]) -> (Vec<Box<dyn SensorSource>>, Vec<SourceError>) {
        let mut opened = Vec::new();
        let mut failed = Vec::new();
        for &kind in kinds {
            match self.open_source(kind) {
                Ok(source) => opened.push(source),
                Err(e) => failed.push(e),
            }
        }
        (opened, failed)
    }

    /// A reader of the GPU's SM clock and temperature for the sampler thread (the
    /// simulated GPU reports its fixed facts); `None` when NVML cannot give one.
    pub fn state_probe(&self) -> Option<crate::sampling::StateProbe> {
        if let Some(gpu) = &self.sim {
            let (gpu, sm_clock_mhz) = (gpu.clone(), self.facts.sm_clock_mhz);
            return Some(Box::new(move || crate::gpu::GpuState {
                sm_clock_mhz,
                temperature_c: Some(gpu.temperature_c().round() as u32),
            }));
        }
        let probe = crate::gpu::GpuStateProbe::open(self.facts.nvml_index).ok()?;
        Some(Box::new(move || probe.current_state()))
    }
}
