//! Which GPU a measurement runs on: `ENERGY_DEVICE` and the NVML index decide between
//! a real GPU and the simulated one.
//!
//! - unset or `auto`: the real GPU when NVML finds one, otherwise the simulated H100
//!   (every figure then says `simulated`);
//! - `nvml`: a real GPU is required; its absence is an error naming what is missing;
//! - `sim` or `sim:PRESET` (`h100`, `k20`): the simulated GPU.

use crate::error::{Error, ErrorKind, Result};
use crate::gpu::{device_facts, nvml_index_for_cuda_ordinal, DeviceFacts, NO_GPU_HINT};
use crate::sim::SimPreset;

/// The environment variable that chooses the device.
pub const DEVICE_ENV: &str = "ENERGY_DEVICE";

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceRequest {
    /// A real GPU if there is one, else the simulated H100.
    Auto,
    /// A real GPU, or an error.
    Nvml,
    /// The simulated GPU with this preset.
    Sim(SimPreset),
}

impl DeviceRequest {
    /// Parses an `ENERGY_DEVICE` value.
    pub fn parse(text: &str) -> Result<Self> {
        let value = text.trim().to_ascii_lowercase();
        match value.as_str() {
            "" | "auto" => Ok(DeviceRequest::Auto),
            "nvml" | "gpu" => Ok(DeviceRequest::Nvml),
            "sim" => Ok(DeviceRequest::Sim(SimPreset::h100())),
            other => match other.strip_prefix("sim:").and_then(SimPreset::by_name) {
                Some(preset) => Ok(DeviceRequest::Sim(preset)),
                None => Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!("{DEVICE_ENV}=`{text}` is not understood: use auto, nvml, sim, sim:h100 or sim:k20"),
                )),
            },
        }
    }

    /// Reads `ENERGY_DEVICE` (unset means [`DeviceRequest::Auto`]).
    pub fn from_env() -> Result<Self> {
        match std::env::var(DEVICE_ENV) {
            Ok(value) => DeviceRequest::parse(&value),
            Err(std::env::VarError::NotPresent) => Ok(DeviceRequest::Auto),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(Error::new(ErrorKind::InvalidInput, format!("{DEVICE_ENV} is not valid Unicode")))
            }
        }
    }
}

/// The device a measurement will use.
#[derive(Clone, Debug)]
pub enum Target {
    /// A real GPU.
    Nvml(DeviceFacts),
    /// The simulated GPU, and why it was chosen.
    Sim {
        /// Its preset.
        preset: SimPreset,
        /// Why: "ENERGY_DEVICE=sim", or what was missing for a real GPU.
        reason: String,
    },
}

/// The facts of CUDA device `ordinal` (counted after `CUDA_VISIBLE_DEVICES`), found in NVML
/// by its UUID.
fn real_gpu(ordinal: u32) -> Result<DeviceFacts> {
    device_facts(nvml_index_for_cuda_ordinal(ordinal)?)
}

/// Resolves a request for CUDA device `ordinal`: the GPU a kernel launched on that device
/// runs on, as this process sees devices (after `CUDA_VISIBLE_DEVICES`), matched to NVML by
/// UUID.
pub fn resolve(request: &DeviceRequest, ordinal: u32) -> Result<Target> {
    match request {
        DeviceRequest::Sim(preset) => Ok(Target::Sim {
            preset: preset.clone(),
            reason: format!("{DEVICE_ENV} asks for the simulated {}", preset.key),
        }),
        DeviceRequest::Nvml => real_gpu(ordinal).map(Target::Nvml),
        DeviceRequest::Auto => match real_gpu(ordinal) {
            Ok(facts) => Ok(Target::Nvml(facts)),
            Err(e) if matches!(e.kind(), ErrorKind::NoDriver | ErrorKind::NoGpu) => {
                // The hint to set ENERGY_DEVICE=sim is moot once the simulated GPU is chosen.
                let why = e.message().replace(&format!("; {NO_GPU_HINT}"), "");
                Ok(Target::Sim { preset: SimPreset::h100(), reason: format!("no NVIDIA GPU: {why}") })
            }
            Err(e) => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!(DeviceRequest::parse("").unwrap(), DeviceRequest::Auto);
        assert_eq!(DeviceRequest::parse("NVML").unwrap(), DeviceRequest::Nvml);
        assert_eq!(DeviceRequest::parse("sim").unwrap(), DeviceRequest::Sim(SimPreset::h100()));
        assert_eq!(DeviceRequest::parse("sim:k20").unwrap(), DeviceRequest::Sim(SimPreset::k20()));
        let err = DeviceRequest::parse("sim:a100").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("sim:k20"));
    }
}
