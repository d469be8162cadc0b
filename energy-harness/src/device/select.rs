//! Which GPU a measurement runs on: `ENERGY_DEVICE` and the NVML index decide between
//! a real GPU and the simulated one.
//!
//! - unset or `auto`: the real GPU when NVML finds one, otherwise the simulated H100
//!   (every figure then says `simulated`);
//! - `nvml`: a real GPU is required; its absence is an error naming what is missing;
//! - `sim` or `sim:PRESET` (`h100`, `h100-warming`, `k20`): the simulated GPU; with `@BOARD`
//!   (`sim:h100@n2-gpu1`) one board of that model, its own UUID and noise (the tasks of
//!   `cargo energy slurm --device sim` name theirs after their node and GPU index);
//! - a CUDA device ordinal (`1`) or a GPU's UUID (`GPU-…`): that real GPU, for every
//!   measurement that names no device of its own (`device =`, `--device` win).

use crate::gpu::{device_facts, nvml_index_for_cuda_ordinal, DeviceFacts, NO_GPU_HINT};
use crate::sim::SimPreset;
use energy_results::error::{Error, ErrorKind, Result};

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
    /// This real GPU, unless a measurement names its own device.
    Gpu(GpuChoice),
}

/// A real GPU named in `ENERGY_DEVICE`.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuChoice {
    /// A CUDA device ordinal, counted after `CUDA_VISIBLE_DEVICES`.
    Ordinal(u32),
    /// A UUID as NVML prints it (`GPU-…`).
    Uuid(String),
}

impl DeviceRequest {
    /// Parses an `ENERGY_DEVICE` value.
    pub fn parse(text: &str) -> Result<Self> {
        let value = text.trim().to_ascii_lowercase();
        match value.as_str() {
            "" | "auto" => Ok(DeviceRequest::Auto),
            "nvml" | "gpu" => Ok(DeviceRequest::Nvml),
            "sim" => Ok(DeviceRequest::Sim(SimPreset::h100())),
            "all" => Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{DEVICE_ENV}=all: one process measures one GPU; `cargo energy run --gpus all` runs one process \
                     per GPU"
                ),
            )),
            other if other.starts_with("gpu-") || other.starts_with("mig-") => {
                Ok(DeviceRequest::Gpu(GpuChoice::Uuid(text.trim().to_string())))
            }
            other if other.starts_with("sim") && other.contains('@') => {
                let (model, board) = text.trim().split_once('@').unwrap_or_default();
                let preset = match model.to_ascii_lowercase().as_str() {
                    "sim" => Some(SimPreset::h100()),
                    m => m.strip_prefix("sim:").and_then(SimPreset::by_name),
                };
                let board_ok = !board.is_empty()
                    && board.len() <= 64
                    && board.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
                match preset {
                    Some(preset) if board_ok => Ok(DeviceRequest::Sim(preset.on_board(board))),
                    _ => Err(Error::new(
                        ErrorKind::InvalidInput,
                        format!(
                            "{DEVICE_ENV}=`{text}` is not understood: a simulated board is sim@BOARD or sim:PRESET@BOARD \
                             (PRESET h100, h100-warming or k20; BOARD up to 64 letters, digits, `-`, `_`, `.`)"
                        ),
                    )),
                }
            }
            other => match (other.parse::<u32>(), other.strip_prefix("sim:").and_then(SimPreset::by_name)) {
                (Ok(ordinal), _) => Ok(DeviceRequest::Gpu(GpuChoice::Ordinal(ordinal))),
                (_, Some(preset)) => Ok(DeviceRequest::Sim(preset)),
                _ => Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{DEVICE_ENV}=`{text}` is not understood: use auto, nvml, sim, sim:h100, sim:h100-warming, sim:k20, a CUDA \
                         device ordinal or a GPU UUID"
                    ),
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

/// Resolves a request for CUDA device `device` (the measurement's own `device =`, or
/// `None`): the GPU a kernel launched on that device runs on, as this process sees devices
/// (after `CUDA_VISIBLE_DEVICES`), matched to NVML by UUID. Without a device of its own, the
/// GPU `ENERGY_DEVICE` names, else device 0.
pub fn resolve(request: &DeviceRequest, device: Option<u32>) -> Result<Target> {
    let ordinal = device.unwrap_or(0);
    match request {
        DeviceRequest::Gpu(choice) => {
            let ordinal = match (device, choice) {
                (Some(own), _) => own,
                (None, GpuChoice::Ordinal(o)) => *o,
                (None, GpuChoice::Uuid(uuid)) => crate::gpu::cuda_ordinal_for_uuid(uuid)?.ok_or_else(|| {
                    Error::new(
                        ErrorKind::NoGpu,
                        format!(
                            "{DEVICE_ENV}={uuid}: no CUDA device here has that UUID (hidden by CUDA_VISIBLE_DEVICES, or \
                             another machine's GPU); `cargo energy info` lists the GPUs"
                        ),
                    )
                })?,
            };
            real_gpu(ordinal).map(Target::Nvml)
        }
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
        assert_eq!(DeviceRequest::parse("1").unwrap(), DeviceRequest::Gpu(GpuChoice::Ordinal(1)));
        assert_eq!(
            DeviceRequest::parse("GPU-c744a1b2-0000").unwrap(),
            DeviceRequest::Gpu(GpuChoice::Uuid("GPU-c744a1b2-0000".into()))
        );
        assert!(DeviceRequest::parse("all").unwrap_err().message().contains("cargo energy run --gpus all"));
        // A measurement's own device wins over the environment's; the simulated GPU ignores both.
        assert!(matches!(resolve(&DeviceRequest::Sim(SimPreset::h100()), Some(3)).unwrap(), Target::Sim { .. }));
        let err = DeviceRequest::parse("sim:a100").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("sim:k20"));
    }

    #[test]
    fn a_simulated_board_has_its_own_identity_and_the_models_physics() {
        let board = |text: &str| match DeviceRequest::parse(text).unwrap() {
            DeviceRequest::Sim(p) => p,
            other => panic!("{text}: {other:?}"),
        };
        let (n1, n2, again) = (board("sim@n1-gpu0"), board("sim:h100@n2-gpu0"), board("SIM@n1-gpu0"));
        assert_eq!(n1, again, "the same board each time it is named");
        assert_ne!(n1.seed, n2.seed);
        assert_ne!(n1.seed, SimPreset::h100().seed);
        assert_eq!((n1.key, n1.idle_w, n1.busy_kernel_w), (n2.key, n2.idle_w, n2.busy_kernel_w));
        assert_eq!(board("sim:k20@a").key, "k20");
        for bad in ["sim@", "sim:a100@n1", "sim@n1 gpu0", "sim@n1/gpu0"] {
            let err = DeviceRequest::parse(bad).unwrap_err();
            assert!(err.message().contains("sim:PRESET@BOARD"), "{bad}: {err}");
        }
    }
}
