//! The GPUs of this machine, on the ground floor: NVML access, CUDA visibility, NVML index
//! ↔ CUDA ordinal by UUID, and the device facts recorded with every measurement (name,
//! UUID, driver, power limit, clocks, temperature, throttle reasons, other processes on
//! the GPU). [`crate::device`] chooses between a real and a simulated GPU on top of it.
//!
//! NVML and the CUDA driver are loaded at run time. When either is missing the error
//! says which and what to do; nothing here panics (cudarc would, if called without
//! its library, so [`cuda_library_present`] is checked first).

use std::sync::OnceLock;

use nvml_wrapper::enum_wrappers::device::{Clock as NvmlClock, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device as NvmlDevice, Nvml};
use serde::{Deserialize, Serialize};

use energy_results::error::{Error, ErrorKind, Result};

/// What to do when no GPU can be used: the sentence every "no GPU" message ends with.
pub const NO_GPU_HINT: &str =
    "install the NVIDIA driver on a machine with an NVIDIA GPU, or set ENERGY_DEVICE=sim to measure on the simulated H100";

/// A process using the GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GpuProcess {
    /// Process id.
    pub pid: u32,
    /// GPU memory it holds, bytes, when the driver says.
    pub used_memory_bytes: Option<u64>,
}

/// Set to `1` on a GPU runner: every bench and budget test that would run on the simulated
/// GPU or be skipped fails instead, with the reason.
pub const REQUIRE_GPU_ENV: &str = "ENERGY_REQUIRE_GPU";

/// Whether [`REQUIRE_GPU_ENV`] is `1`.
pub fn gpu_required() -> bool {
    std::env::var(REQUIRE_GPU_ENV).is_ok_and(|v| v.trim() == "1")
}

/// Facts about a GPU at one moment. Fields the GPU does not report are `None`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeviceFacts {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// NVML UUID, e.g. "GPU-…"; the key calibrations are cached under.
    pub uuid: String,
    /// NVML index.
    pub nvml_index: u32,
    /// CUDA device ordinal with the same UUID (differs from the NVML index under
    /// `CUDA_VISIBLE_DEVICES`), when libcuda is present.
    pub cuda_ordinal: Option<u32>,
    /// Whether this is the simulated GPU: every figure from it is simulated, not measured.
    pub simulated: bool,
    /// Driver version.
    pub driver_version: Option<String>,
    /// NVML library version.
    pub nvml_version: Option<String>,
    /// Enforced power limit, W.
    pub power_limit_w: Option<f64>,
    /// Current SM clock, MHz.
    pub sm_clock_mhz: Option<u32>,
    /// Current memory clock, MHz.
    pub mem_clock_mhz: Option<u32>,
    /// Maximum SM clock, MHz.
    pub max_sm_clock_mhz: Option<u32>,
    /// Maximum memory clock, MHz.
    pub max_mem_clock_mhz: Option<u32>,
    /// GPU die temperature, °C.
    pub temperature_c: Option<u32>,
    /// Performance state (0 = P0).
    pub pstate: Option<u32>,
    /// Active clock throttle reasons (names; "GPU_IDLE" is the normal idle state).
    pub throttle_reasons: Vec<String>,
    /// Compute processes on the GPU (this one included).
    pub processes: Vec<GpuProcess>,
}

impl DeviceFacts {
    /// Throttle reasons that slow a busy kernel (idle and application-clock settings excluded).
    pub fn limiting_throttle_reasons(&self) -> Vec<&str> {
        self.throttle_reasons
            .iter()
            .map(String::as_str)
            .filter(|r| !matches!(*r, "GPU_IDLE" | "APPLICATIONS_CLOCKS_SETTING" | "NONE"))
            .collect()
    }

    /// Records the facts as `key: value` comments of a trace; `when` tells the moment
    /// (`start`, `end`) for the facts that change during a recording.
    pub fn annotate(&self, trace: &mut energy_results::trace::Trace, when: &str) {
        if when == "start" {
            trace.set_metadata("device", &self.name);
            trace.set_metadata("uuid", &self.uuid);
            trace.set_metadata("simulated", self.simulated);
            if let Some(v) = &self.driver_version {
                trace.set_metadata("driver", v);
            }
            if let Some(v) = self.power_limit_w {
                trace.set_metadata("power_limit_w", v);
            }
        }
        let clocks = format!(
            "SM {} MHz, memory {} MHz, {} °C, throttle [{}]",
            self.sm_clock_mhz.map_or("?".into(), |v| v.to_string()),
            self.mem_clock_mhz.map_or("?".into(), |v| v.to_string()),
            self.temperature_c.map_or("?".into(), |v| v.to_string()),
            self.throttle_reasons.join(" ")
        );
        trace.set_metadata(&format!("state_at_{when}"), clocks);
    }

    /// Processes on the GPU other than this one.
    pub fn other_processes(&self) -> Vec<&GpuProcess> {
        let me = std::process::id();
        self.processes.iter().filter(|p| p.pid != me).collect()
    }
}

/// The process-wide NVML handle, loaded on first use.
pub fn nvml() -> Result<&'static Nvml> {
    static NVML: OnceLock<std::result::Result<Nvml, Error>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().map_err(nvml_init_error)).as_ref().map_err(Clone::clone)
}

fn nvml_init_error(err: NvmlError) -> Error {
    match err {
        NvmlError::LibloadingError(e) => Error::new(
            ErrorKind::NoDriver,
            format!("the NVIDIA Management Library (libnvidia-ml.so) could not be loaded ({e}); {NO_GPU_HINT}"),
        ),
        NvmlError::DriverNotLoaded => Error::new(
            ErrorKind::NoDriver,
            format!("libnvidia-ml.so is present but the NVIDIA kernel driver is not loaded; {NO_GPU_HINT}"),
        ),
        NvmlError::NoPermission => Error::new(
            ErrorKind::NoDriver,
            "NVML refused access to the driver (no permission): run as a user allowed to use the GPU",
        ),
        other => Error::new(ErrorKind::Nvml, format!("NVML failed to initialize: {other}; {NO_GPU_HINT}")),
    }
}

/// Maps an NVML error of `call` to a harness error.
pub(crate) fn nvml_error(call: &str, err: NvmlError) -> Error {
    let kind = match err {
        NvmlError::NotSupported => ErrorKind::NotSupported,
        NvmlError::GpuLost => ErrorKind::NoGpu,
        _ => ErrorKind::Nvml,
    };
    Error::new(kind, format!("{call} failed: {err}"))
}

/// Number of NVIDIA GPUs NVML sees.
pub fn gpu_count() -> Result<u32> {
    nvml()?.device_count().map_err(|e| nvml_error("nvmlDeviceGetCount", e))
}

/// The NVML device with index `index`, with a clear error when it does not exist.
pub fn nvml_device(index: u32) -> Result<NvmlDevice<'static>> {
    let nvml = nvml()?;
    let count = gpu_count()?;
    if count == 0 {
        return Err(Error::new(ErrorKind::NoGpu, format!("NVML is loaded but sees no NVIDIA GPU; {NO_GPU_HINT}")));
    }
    if index >= count {
        return Err(Error::new(
            ErrorKind::NoGpu,
            format!("there is no GPU with NVML index {index}: this machine has {count} (indices 0..{})", count - 1),
        ));
    }
    nvml.device_by_index(index).map_err(|e| nvml_error("nvmlDeviceGetHandleByIndex", e))
}

/// Whether the CUDA driver library (libcuda.so) can be loaded. cudarc panics when
/// called without it, so every CUDA entry point checks this first.
pub fn cuda_library_present() -> bool {
    crate::dl::library_loadable("cuda")
}

/// The CUDA device ordinal whose UUID matches the NVML UUID (`GPU-xxxxxxxx-…`).
///
/// Errors: [`ErrorKind::NoDriver`] when libcuda is missing, [`ErrorKind::Cuda`] when a
/// driver call fails. `Ok(None)` when no visible CUDA device has that UUID (it was hidden
/// by `CUDA_VISIBLE_DEVICES`, say).
pub fn cuda_ordinal_for_uuid(nvml_uuid: &str) -> Result<Option<u32>> {
    if !cuda_library_present() {
        return Err(Error::new(
            ErrorKind::NoDriver,
            format!("the CUDA driver library (libcuda.so) could not be loaded; {NO_GPU_HINT}"),
        ));
    }
    let wanted = normalize_uuid(nvml_uuid);
    Ok(cuda_uuids()?.iter().position(|u| *u == wanted).map(|o| o as u32))
}

/// The CUDA device ordinal a measurement that names its GPU by UUID (`device = "GPU-…"`)
/// runs on. Where there is no CUDA driver or GPU the UUID cannot be looked up and
/// `fallback` (the measurement's device without the UUID) is returned, so the machine's
/// usual no-GPU path follows (the simulated or checked device, or the error
/// `ENERGY_REQUIRE_GPU=1` gives). A UUID no visible CUDA device has is an error naming
/// `CUDA_VISIBLE_DEVICES`.
pub fn cuda_ordinal_for_named_gpu(uuid: &str, fallback: Option<u32>) -> Result<Option<u32>> {
    match cuda_ordinal_for_uuid(uuid) {
        Ok(Some(ordinal)) => Ok(Some(ordinal)),
        Ok(None) => Err(Error::new(
            ErrorKind::NoGpu,
            format!(
                "no CUDA device has the UUID {uuid} named by `device =` (CUDA_VISIBLE_DEVICES={}): `cargo energy \
                 info` lists the GPUs and their UUIDs",
                std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into())
            ),
        )),
        Err(e) if matches!(e.kind(), ErrorKind::NoDriver | ErrorKind::NoGpu) => Ok(fallback),
        Err(e) if visible_cuda_uuids().ok().flatten().is_none() => {
            // The driver is there but does not initialize (no GPU): the no-GPU path.
            let _ = e;
            Ok(fallback)
        }
        Err(e) => Err(e),
    }
}

/// The UUIDs of the CUDA devices this process sees, in ordinal order, formatted as NVML
/// prints them without `GPU-`. Needs libcuda; a failing driver call is an
/// [`ErrorKind::Cuda`] error.
fn cuda_uuids() -> Result<Vec<String>> {
    use cudarc::driver::result;
    let cuda_error = |call: &str, e: result::DriverError| Error::new(ErrorKind::Cuda, format!("{call} failed: {e}"));
    result::init().map_err(|e| cuda_error("cuInit", e))?;
    let count = result::device::get_count().map_err(|e| cuda_error("cuDeviceGetCount", e))?;
    (0..count)
        .map(|ordinal| {
            let device = result::device::get(ordinal).map_err(|e| cuda_error("cuDeviceGet", e))?;
            let uuid = result::device::get_uuid(device).map_err(|e| cuda_error("cuDeviceGetUuid", e))?;
            let bytes: Vec<u8> = uuid.bytes.iter().map(|&b| b as u8).collect();
            Ok(format_cuda_uuid(&bytes))
        })
        .collect()
}

/// The UUIDs of the CUDA devices this process sees, in ordinal order (after
/// `CUDA_VISIBLE_DEVICES`), formatted as NVML prints them without `GPU-`; `None` when
/// libcuda is missing or the CUDA driver does not initialize (then no kernel launches, and
/// opening CUDA later says why).
fn visible_cuda_uuids() -> Result<Option<Vec<String>>> {
    use cudarc::driver::result;
    if !cuda_library_present() || result::init().is_err() || result::device::get_count().is_err() {
        return Ok(None);
    }
    cuda_uuids().map(Some)
}

/// The NVML index of the GPU that CUDA device `ordinal` is, matched by UUID, given the
/// UUIDs CUDA sees (in ordinal order) and those NVML sees (in index order): the two
/// enumerations differ whenever `CUDA_VISIBLE_DEVICES` hides or reorders GPUs, or CUDA
/// orders by speed and NVML by PCI bus.
pub fn match_cuda_ordinal(ordinal: u32, cuda_uuids: &[String], nvml_uuids: &[String]) -> Result<u32> {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let Some(cuda_uuid) = cuda_uuids.get(ordinal as usize) else {
        return Err(Error::new(
            ErrorKind::NoGpu,
            format!(
                "there is no CUDA device {ordinal}: this process sees {} ({}); device numbers are CUDA ordinals, \
                 counted after CUDA_VISIBLE_DEVICES",
                cuda_uuids.len(),
                visible
                    .map(|v| format!("CUDA_VISIBLE_DEVICES={v}"))
                    .unwrap_or_else(|| "CUDA_VISIBLE_DEVICES unset".into())
            ),
        ));
    };
    let wanted = normalize_uuid(cuda_uuid);
    nvml_uuids.iter().position(|u| normalize_uuid(u) == wanted).map(|i| i as u32).ok_or_else(|| {
        Error::new(
            ErrorKind::NoGpu,
            format!(
                "CUDA device {ordinal} (GPU-{wanted}) is not among the {} GPUs NVML sees: a MIG instance or a \
                 GPU in another container cannot be measured",
                nvml_uuids.len()
            ),
        )
    })
}

/// The NVML index of CUDA device `ordinal` (as this process sees it, after
/// `CUDA_VISIBLE_DEVICES`), matched by UUID. Without libcuda nothing launches kernels and
/// the ordinal is taken as the NVML index.
pub fn nvml_index_for_cuda_ordinal(ordinal: u32) -> Result<u32> {
    // NVML first: without it there is no GPU to measure, whatever CUDA says.
    let count = gpu_count()?;
    let Some(cuda_uuids) = visible_cuda_uuids()? else { return Ok(ordinal) };
    let nvml_uuids = (0..count)
        .map(|i| nvml_device(i)?.uuid().map_err(|e| nvml_error("nvmlDeviceGetUUID", e)))
        .collect::<Result<Vec<String>>>()?;
    match_cuda_ordinal(ordinal, &cuda_uuids, &nvml_uuids)
}

/// One GPU of the machine, as `cargo energy info` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GpuListing {
    /// NVML index.
    pub nvml_index: u32,
    /// Name.
    pub name: String,
    /// UUID.
    pub uuid: String,
    /// Its CUDA ordinal in this process, `None` when CUDA does not see it (hidden by
    /// `CUDA_VISIBLE_DEVICES`, or no libcuda).
    pub cuda_ordinal: Option<u32>,
}

/// Every GPU NVML sees, with the CUDA ordinal each has in this process.
pub fn list_gpus() -> Result<Vec<GpuListing>> {
    let cuda = visible_cuda_uuids().ok().flatten().unwrap_or_default();
    (0..gpu_count()?)
        .map(|i| {
            let device = nvml_device(i)?;
            let uuid = device.uuid().map_err(|e| nvml_error("nvmlDeviceGetUUID", e))?;
            let wanted = normalize_uuid(&uuid);
            Ok(GpuListing {
                nvml_index: i,
                name: device.name().map_err(|e| nvml_error("nvmlDeviceGetName", e))?,
                cuda_ordinal: cuda.iter().position(|u| normalize_uuid(u) == wanted).map(|o| o as u32),
                uuid,
            })
        })
        .collect()
}

/// Formats CUDA's 16 UUID bytes the way NVML prints UUIDs, without the `GPU-` prefix.
pub fn format_cuda_uuid(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if hex.len() != 32 {
        return hex;
    }
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

fn normalize_uuid(uuid: &str) -> String {
    let lower = uuid.trim().to_ascii_lowercase();
    lower.strip_prefix("gpu-").or_else(|| lower.strip_prefix("mig-")).unwrap_or(&lower).to_string()
}

/// Reads the facts of the GPU with NVML index `nvml_index`.
///
/// Only the name and UUID are required; everything else the GPU does not report stays
/// `None`. The CUDA ordinal is looked up by UUID when libcuda is present.
pub fn device_facts(nvml_index: u32) -> Result<DeviceFacts> {
    let device = nvml_device(nvml_index)?;
    let nvml = nvml()?;
    let name = device.name().map_err(|e| nvml_error("nvmlDeviceGetName", e))?;
    let uuid = device.uuid().map_err(|e| nvml_error("nvmlDeviceGetUUID", e))?;
    let mut facts = DeviceFacts {
        cuda_ordinal: cuda_ordinal_for_uuid(&uuid).ok().flatten(),
        name,
        uuid,
        nvml_index,
        simulated: false,
        driver_version: nvml.sys_driver_version().ok(),
        nvml_version: nvml.sys_nvml_version().ok(),
        ..DeviceFacts::default()
    };
    refresh_state(&device, &mut facts);
    Ok(facts)
}

/// Re-reads the facts that change while a measurement runs (clocks, temperature,
/// throttle reasons, processes, power limit).
pub fn refresh_device_state(facts: &mut DeviceFacts) -> Result<()> {
    if facts.simulated {
        return Ok(());
    }
    let device = nvml_device(facts.nvml_index)?;
    refresh_state(&device, facts);
    Ok(())
}

/// The state a measurement follows while it runs, read alongside the sensors: the SM
/// clock and the die temperature.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuState {
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<u32>,
    /// Die temperature, °C.
    pub temperature_c: Option<u32>,
}

/// Reads [`GpuState`] of one NVML GPU (for the sampler thread: two cheap cached reads).
pub struct GpuStateProbe {
    device: NvmlDevice<'static>,
}

impl GpuStateProbe {
    /// A probe of the GPU with NVML index `nvml_index`.
    pub fn open(nvml_index: u32) -> Result<Self> {
        Ok(GpuStateProbe { device: nvml_device(nvml_index)? })
    }

    /// The state now.
    pub fn current_state(&self) -> GpuState {
        GpuState {
            sm_clock_mhz: self.device.clock_info(NvmlClock::SM).ok(),
            temperature_c: self.device.temperature(TemperatureSensor::Gpu).ok(),
        }
    }
}

fn refresh_state(device: &NvmlDevice<'static>, facts: &mut DeviceFacts) {
    facts.power_limit_w = device.enforced_power_limit().ok().map(|mw| f64::from(mw) / 1000.0);
    facts.sm_clock_mhz = device.clock_info(NvmlClock::SM).ok();
    facts.mem_clock_mhz = device.clock_info(NvmlClock::Memory).ok();
    facts.max_sm_clock_mhz = device.max_clock_info(NvmlClock::SM).ok();
    facts.max_mem_clock_mhz = device.max_clock_info(NvmlClock::Memory).ok();
    facts.temperature_c = device.temperature(TemperatureSensor::Gpu).ok();
    facts.pstate = device.performance_state().ok().map(|p| p.as_c());
    facts.throttle_reasons = device
        .current_throttle_reasons()
        .map(|reasons| reasons.iter_names().map(|(name, _)| name.to_string()).collect())
        .unwrap_or_default();
    facts.processes = device
        .running_compute_processes()
        .map(|list| {
            list.into_iter()
                .map(|p| GpuProcess {
                    pid: p.pid,
                    used_memory_bytes: match p.used_gpu_memory {
                        UsedGpuMemory::Used(bytes) => Some(bytes),
                        UsedGpuMemory::Unavailable => None,
                    },
                })
                .collect()
        })
        .unwrap_or_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cuda_ordinal_is_matched_to_nvml_by_uuid_whatever_the_order() {
        let nvml: Vec<String> =
            ["GPU-aaaa0000-0000-0000-0000-000000000000", "GPU-c7440000-0000-0000-0000-000000000000"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        // CUDA_VISIBLE_DEVICES=1: CUDA's device 0 is NVML's GPU 1.
        let cuda = vec!["c7440000-0000-0000-0000-000000000000".to_string()];
        assert_eq!(match_cuda_ordinal(0, &cuda, &nvml).unwrap(), 1);
        let err = match_cuda_ordinal(1, &cuda, &nvml).unwrap_err();
        assert!(err.message().contains("no CUDA device 1") && err.message().contains("sees 1"), "{err}");
        // Both visible, CUDA ordering them the other way round.
        let both =
            vec!["c7440000-0000-0000-0000-000000000000".to_string(), "aaaa0000-0000-0000-0000-000000000000".into()];
        assert_eq!(match_cuda_ordinal(1, &both, &nvml).unwrap(), 0);
        let mig = vec!["ffff0000-0000-0000-0000-000000000000".to_string()];
        assert!(match_cuda_ordinal(0, &mig, &nvml).unwrap_err().message().contains("not among"));
    }

    #[test]
    fn cuda_uuid_formats_like_nvml() {
        let bytes: Vec<u8> = (0u8..16).map(|i| i * 17).collect();
        assert_eq!(format_cuda_uuid(&bytes), "00112233-4455-6677-8899-aabbccddeeff");
        assert_eq!(normalize_uuid("GPU-00112233-4455-6677-8899-AABBCCDDEEFF"), "00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn limiting_throttle_reasons_skip_idle() {
        let facts = DeviceFacts {
            throttle_reasons: vec!["GPU_IDLE".into(), "SW_THERMAL_SLOWDOWN".into()],
            ..DeviceFacts::default()
        };
        assert_eq!(facts.limiting_throttle_reasons(), vec!["SW_THERMAL_SLOWDOWN"]);
    }
}
