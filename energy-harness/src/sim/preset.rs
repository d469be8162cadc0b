//! The simulated GPUs: an H100 as measured (DESIGN.md §1, `shared/traces/h100/`) and
//! a K20 as Burtscher et al. describe it (DESIGN.md §2).

use std::collections::BTreeMap;

use super::sensor::{CallLatency, Response, SensorFault, SensorSpec, UpdateTicks};
use super::thermal::SimThermal;
use super::truth::{ActiveIdleTail, RailTruth};
use crate::sensors::SourceKind;

/// A simulated GPU model: its truth parameters and its sensors.
#[derive(Clone, Debug, PartialEq)]
pub struct SimPreset {
    /// Preset name (`h100`, `k20`).
    pub key: &'static str,
    /// Device name reported in facts and traces.
    pub device_name: &'static str,
    /// Idle board power, W.
    pub idle_w: f64,
    /// Active-idle tail after kernels.
    pub tail: Option<ActiveIdleTail>,
    /// Power of a typical busy kernel (an FMA loop over all SMs), W.
    pub busy_kernel_w: f64,
    /// Enforced power limit, W.
    pub power_limit_w: f64,
    /// Nominal (SM, memory) clocks reported as the simulated device state, MHz.
    pub clocks_mhz: (u32, u32),
    /// The sources this GPU offers (its rails' sensors among them).
    pub sensors: BTreeMap<SourceKind, SensorSpec>,
    /// The truth of each rail whose sensor it has: its idle level and share of the board's
    /// power above idle.
    pub rails: BTreeMap<SourceKind, RailTruth>,
    /// Seed of every random choice (jitter, noise, latency).
    pub seed: u64,
    /// The die's temperature and leakage; `None`: a constant temperature, no leakage.
    pub thermal: Option<SimThermal>,
}

impl SimPreset {
    /// Looks a preset up by name.
    pub fn by_name(name: &str) -> Option<SimPreset> {
        match name.to_ascii_lowercase().as_str() {
            "h100" => Some(SimPreset::h100()),
            "h100-warming" => Some(SimPreset::h100_warming()),
            "k20" => Some(SimPreset::k20()),
            _ => None,
        }
    }

    /// The same GPU model as another board, named `board` (`n2-gpu1`: a node and a GPU index,
    /// as a Slurm task of `cargo energy slurm` on the simulated GPU names it): its own seed,
    /// so its own noise and its own UUID (`SIM-<preset>-<seed>`), the model's physics alike.
    pub fn on_board(mut self, board: &str) -> SimPreset {
        self.seed ^= energy_results::hash::fnv1a(board.as_bytes());
        self
    }

    /// The CUDA properties of the simulated GPU: what the checked device
    /// ([`crate::CudaGpu::checked`]) enforces and reports (the H100 SXM's and the K20's data
    /// sheet figures).
    pub fn gpu_properties(&self) -> crate::cuda::GpuProperties {
        let name = self.device_name.to_string();
        match self.key {
            "k20" => crate::cuda::GpuProperties {
                name,
                compute_capability: (3, 5),
                sm_count: 13,
                l2_bytes: 1_310_720,
                shared_per_sm_bytes: 49_152,
                shared_per_block_optin_bytes: 49_152,
                max_threads_per_block: 1024,
                total_memory_bytes: 5 * (1 << 30),
            },
            _ => crate::cuda::GpuProperties {
                name,
                compute_capability: (9, 0),
                sm_count: 132,
                l2_bytes: 52_428_800,
                shared_per_sm_bytes: 233_472,
                shared_per_block_optin_bytes: 232_448,
                max_threads_per_block: 1024,
                total_memory_bytes: 80 * (1 << 30),
            },
        }
    }

    /// Same preset with `fault` in its `source` (a no-op where the preset lacks it): a
    /// deliberately wrong sensor, to check that a check of sensors fails on it.
    pub fn with_fault(mut self, source: SourceKind, fault: SensorFault) -> Self {
        if let Some(spec) = self.sensors.get_mut(&source) {
            spec.fault = Some(fault);
        }
        self
    }

    /// Same preset with another seed (independent jitter, noise and latencies).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The H100 80GB HBM3 as measured with driver 580.159.04:
    /// - energy counter: 1 mJ steps, updated every 100 ms at a stable phase, the exact
    ///   integral of power, seen 12 ms after the instant it describes; the call blocks ~2.4 ms;
    /// - field 185 / `nvmlDeviceGetPowerUsage`: a 1 s boxcar updated every 100 ms
    ///   (the recorded step response is a linear 1 s ramp);
    /// - field 186: gated, averaging only ~25 ms of each 100 ms period;
    /// - sample buffer: 20 ms spacing (±~10 ms seen), 120 deep, a short lag (the recorded
    ///   fall after a kernel fits a time constant of ~14 ms), ~0.33 W steps;
    /// - reporting delays as `cargo energy calibrate` measured them (counter 12 ms, fields
    ///   ~15 ms, buffer 6 ms; research/results/2026-11-22-h100-calibrate);
    /// - idle 120 W, an FMA loop ~272 W, ~1.5 W of active idle for a few seconds after a
    ///   kernel (121-122 W in the recordings, against 119-120 W before);
    /// - a GPU-memory power rail (DESIGN.md §7): idle 58 W, drawing 35 % of the board's power
    ///   above idle (5.3-6.7 of 16-17.5 pJ/bit while streaming HBM; saxpy on an H100: 7.7 of
    ///   22 mJ above idle; the simulator's kernels are a duration and a power, so one share
    ///   serves them all; compute-bound kernels draw less on the rail), read as the memory
    ///   source's default model assumes (the average field's 1 s boxcar every 100 ms).
    pub fn h100() -> SimPreset {
        let average = SensorSpec {
            response: Response::WindowMean { width_s: 1.0 },
            ticks: UpdateTicks { period_s: 0.1, phase_s: 0.0612, jitter_s: 0.002 },
            report_delay_s: SourceKind::AverageField.default_delay_s(),
            noise_w: 0.15,
            resolution: 1.0,
            offset_mj: 0.0,
            buffer_depth: None,
            latency: CallLatency::steady(15e-6, 5e-6),
            stream: 2,
            fault: None,
        };
        let mut sensors = BTreeMap::new();
        sensors.insert(
            SourceKind::Counter,
            SensorSpec {
                response: Response::Integral,
                ticks: UpdateTicks { period_s: 0.1, phase_s: 0.0371, jitter_s: 0.0003 },
                report_delay_s: SourceKind::Counter.default_delay_s(),
                noise_w: 0.0,
                resolution: 1.0,
                offset_mj: 2.5e6,
                buffer_depth: None,
                latency: CallLatency::steady(2.4e-3, 0.1e-3),
                stream: 1,
                fault: None,
            },
        );
        sensors.insert(SourceKind::AverageField, average);
        sensors.insert(SourceKind::PowerUsage, SensorSpec { latency: CallLatency::steady(2e-6, 1e-6), ..average });
        sensors.insert(
            SourceKind::InstantField,
            SensorSpec {
                response: Response::WindowMean { width_s: 0.025 },
                noise_w: 0.6,
                report_delay_s: SourceKind::InstantField.default_delay_s(),
                stream: 3,
                ..average
            },
        );
        sensors.insert(
            SourceKind::SampleBuffer,
            SensorSpec {
                response: Response::FirstOrder { tau_s: 0.014 },
                ticks: UpdateTicks { period_s: 0.02, phase_s: 0.0043, jitter_s: 0.003 },
                report_delay_s: SourceKind::SampleBuffer.default_delay_s(),
                noise_w: 0.25,
                resolution: 325.0,
                offset_mj: 0.0,
                buffer_depth: Some(120),
                latency: CallLatency::steady(60e-6, 20e-6),
                stream: 4,
                fault: None,
            },
        );
        sensors.insert(
            SourceKind::MemoryRail,
            SensorSpec {
                ticks: UpdateTicks { period_s: 0.1, phase_s: 0.0531, jitter_s: 0.002 },
                report_delay_s: SourceKind::MemoryRail.default_delay_s(),
                stream: 6,
                ..average
            },
        );
        let rails = BTreeMap::from([(SourceKind::MemoryRail, RailTruth { idle_w: 58.0, share: 0.35 })]);
        SimPreset {
            key: "h100",
            device_name: "NVIDIA H100 80GB HBM3 (simulated)",
            idle_w: 120.0,
            tail: Some(ActiveIdleTail { level_w: 121.5, hold_s: 3.0, step_s: 1.0, steps: 1 }),
            busy_kernel_w: 272.0,
            power_limit_w: 700.0,
            clocks_mhz: (1980, 2619),
            sensors,
            rails,
            seed: 0x4831_3030,
            thermal: None,
        }
    }

    /// The H100 with a die that warms under load and leaks more as it does
    /// ([`SimThermal::h100`]): one kernel reads about 0.4 % more per °C, as on the boards
    /// measured. `ENERGY_DEVICE=sim:h100-warming`.
    pub fn h100_warming() -> SimPreset {
        SimPreset {
            key: "h100-warming",
            device_name: "NVIDIA H100 80GB HBM3 (simulated, warming)",
            thermal: Some(SimThermal::h100()),
            ..SimPreset::h100()
        }
    }

    /// The Tesla K20 of Burtscher et al. (2014):
    /// - one power reading (`nvmlDeviceGetPowerUsage`) that lags true power like a charging
    ///   capacitor, time constant 0.83 s (the paper's C = 833.333);
    /// - the sensor updates at 66.7 Hz (15 ms) while reads take ~0.28 ms, so reads repeat
    ///   the last value ~38 times; a read during which the sensor updates takes ~4.7 ms,
    ///   and rare driver stalls take up to 130 ms;
    /// - 10 mW resolution; no energy counter (Volta and later only), no fields, no buffer;
    /// - active idle of 52.5 W held ~3.5 s after a kernel, then stepping down each second.
    ///   The paper gives no idle level; 25 W is assumed here.
    pub fn k20() -> SimPreset {
        let mut sensors = BTreeMap::new();
        sensors.insert(
            SourceKind::PowerUsage,
            SensorSpec {
                response: Response::FirstOrder { tau_s: 0.833 },
                ticks: UpdateTicks { period_s: 0.015, phase_s: 0.0021, jitter_s: 0.0003 },
                report_delay_s: 0.0,
                noise_w: 0.02,
                resolution: 10.0,
                offset_mj: 0.0,
                buffer_depth: None,
                latency: CallLatency {
                    typical_s: 0.283e-3,
                    spread_s: 0.02e-3,
                    stall_probability: 2e-5,
                    stall_s: 0.13,
                    update_call_s: Some(4.7e-3),
                },
                stream: 5,
                fault: None,
            },
        );
        SimPreset {
            key: "k20",
            device_name: "Tesla K20c (simulated)",
            idle_w: 25.0,
            tail: Some(ActiveIdleTail { level_w: 52.5, hold_s: 3.5, step_s: 1.0, steps: 3 }),
            busy_kernel_w: 110.0,
            power_limit_w: 225.0,
            clocks_mhz: (705, 2600),
            sensors,
            rails: BTreeMap::new(),
            seed: 0x4B32_3043,
            thermal: None,
        }
    }
}
