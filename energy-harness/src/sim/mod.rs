//! The simulated GPU: a ground-truth power signal ([`truth`]) pushed through sensor
//! models ([`sensor`]) that behave like a real GPU's ([`preset`]), behind the same
//! [`SensorSource`] interface as NVML. The truth is exposed, so tests can assert the
//! accuracy of a measurement against it. A rail of the board (its memory, say) has a truth
//! of its own ([`RailTruth`]: an idle level and a share of the board's power above idle),
//! scheduled with the board's, which the rail's sensor reads.
//!
//! On a [`MonotonicClock`](crate::clock::MonotonicClock) the simulated GPU runs in real
//! time (a bench without a GPU); on a [`VirtualClock`](crate::clock::VirtualClock) hours
//! of sensor traces are synthesized in milliseconds, deterministically.

pub mod noise;
pub mod preset;
pub mod sensor;
pub mod thermal;
pub mod truth;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub use preset::SimPreset;
pub use sensor::{SensorFault, SensorSpec, SimSensor};
pub use thermal::{SimThermal, ThermalState};
pub use truth::{ActiveIdleTail, PowerTimeline, RailTruth, SimKernel};

use crate::clock::{Clock, SharedClock};
use crate::gpu::DeviceFacts;
use crate::sensors::{Delivery, SensorModel, SensorSource, SourceError, SourceKind};
use energy_results::trace::Reading;

struct SimState {
    truth: PowerTimeline,
    /// Each rail's own truth, scheduled with the board's.
    rails: BTreeMap<SourceKind, PowerTimeline>,
    sensors: BTreeMap<SourceKind, SimSensor>,
    /// The die's temperature, when the preset models it.
    thermal: Option<ThermalState>,
}

/// A simulated GPU. Cheap to clone: clones share one device.
#[derive(Clone)]
pub struct SimGpu {
    state: Arc<Mutex<SimState>>,
    preset: Arc<SimPreset>,
    clock: SharedClock,
}

impl SimGpu {
    /// A simulated GPU following `preset`, on `clock`.
    pub fn new(preset: SimPreset, clock: SharedClock) -> Self {
        let sensors = preset.sensors.iter().map(|(&kind, &spec)| (kind, SimSensor::new(spec, preset.seed))).collect();
        let truth = PowerTimeline::new(preset.idle_w, preset.tail);
        let rails =
            preset.rails.iter().map(|(&kind, rail)| (kind, rail.timeline(preset.idle_w, preset.tail))).collect();
        let thermal = preset.thermal.map(|params| ThermalState::idle(&params, clock.now_s()));
        SimGpu {
            state: Arc::new(Mutex::new(SimState { truth, rails, sensors, thermal })),
            preset: Arc::new(preset),
            clock,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SimState> {
        // A panic while holding the lock leaves plain data behind; keep using it.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The preset.
    pub fn preset(&self) -> &SimPreset {
        &self.preset
    }

    /// The clock the GPU runs on.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// Enqueues a kernel on the GPU's one stream now: it starts when the stream is free.
    /// Returns its (start, end) on the clock.
    pub fn launch(&self, kernel: SimKernel) -> (f64, f64) {
        self.schedule(self.clock.now_s(), kernel)
    }

    /// Places a kernel at `start_s` (or when the stream is free, if later).
    pub fn schedule(&self, start_s: f64, kernel: SimKernel) -> (f64, f64) {
        let mut guard = self.lock();
        let state = &mut *guard;
        // A warm die leaks: the kernel draws more than its nominal power (fixed at its start).
        let kernel = match (self.preset.thermal, state.thermal.as_mut()) {
            (Some(params), Some(thermal)) => {
                let start = start_s.max(state.truth.busy_until_s().unwrap_or(start_s));
                advance_thermal(thermal, &params, &state.truth, self.preset.idle_w, start);
                SimKernel { power_w: kernel.power_w + thermal.leakage_w(&params), ..kernel }
            }
            _ => kernel,
        };
        let placed = state.truth.schedule(start_s, kernel);
        for (kind, rail) in &mut state.rails {
            rail.schedule(start_s, self.preset.rails[kind].kernel(kernel, self.preset.idle_w));
        }
        for sensor in state.sensors.values_mut() {
            sensor.invalidate_after(placed.0);
        }
        placed
    }

    /// The die's temperature now, °C: the preset's model, else a constant 40 °C.
    pub fn temperature_c(&self) -> f64 {
        let now = self.clock.now_s();
        let mut guard = self.lock();
        let state = &mut *guard;
        match (self.preset.thermal, state.thermal.as_mut()) {
            (Some(params), Some(thermal)) => {
                advance_thermal(thermal, &params, &state.truth, self.preset.idle_w, now);
                thermal.temperature_c
            }
            _ => 40.0,
        }
    }

    /// Waits until every enqueued kernel has finished.
    pub fn synchronize(&self) {
        if let Some(end) = self.busy_until_s() {
            let now = self.clock.now_s();
            if end > now {
                self.clock.sleep_s(end - now);
            }
        }
    }

    /// When the last enqueued kernel ends.
    pub fn busy_until_s(&self) -> Option<f64> {
        self.lock().truth.busy_until_s()
    }

    /// True energy between two clock times, J.
    pub fn truth_energy_j(&self, start_s: f64, end_s: f64) -> f64 {
        self.lock().truth.energy_j(start_s, end_s)
    }

    /// True power at a clock time, W.
    pub fn truth_power_w(&self, t_s: f64) -> f64 {
        self.lock().truth.power_at(t_s)
    }

    /// A copy of the truth, for analysis in tests.
    pub fn truth(&self) -> PowerTimeline {
        self.lock().truth.clone()
    }

    /// A copy of a rail's truth (`None` for a source that is not one of the preset's rails).
    pub fn rail_truth(&self, kind: SourceKind) -> Option<PowerTimeline> {
        self.lock().rails.get(&kind).cloned()
    }

    /// The source kinds this GPU offers.
    pub fn supported_sources(&self) -> Vec<SourceKind> {
        self.preset.sensors.keys().copied().collect()
    }

    /// The sensor model behind a source (what the simulator really does).
    pub fn sensor_model(&self, kind: SourceKind) -> Option<SensorModel> {
        self.preset.sensors.get(&kind).map(SensorSpec::sensor_model)
    }

    /// Opens a source; `NotSupported` when the preset lacks it (a K20 has no counter).
    pub fn open_source(&self, kind: SourceKind) -> Result<SimSource, SourceError> {
        let Some(spec) = self.preset.sensors.get(&kind) else {
            return Err(SourceError::NotSupported {
                kind,
                detail: format!("the simulated {} has no such source", self.preset.key),
            });
        };
        let last_seen = spec.buffer_depth.map(|_| self.lock().sensors[&kind].visible_update(self.clock.now_s()));
        Ok(SimSource { gpu: self.clone(), kind, calls: 0, last_seen_update: last_seen })
    }

    /// Opens every source the preset has.
    pub fn open_all_sources(&self) -> Vec<Box<dyn SensorSource>> {
        self.supported_sources()
            .into_iter()
            .filter_map(|kind| self.open_source(kind).ok())
            .map(|s| Box::new(s) as Box<dyn SensorSource>)
            .collect()
    }

    /// Device facts; `simulated` is set.
    pub fn facts(&self) -> DeviceFacts {
        DeviceFacts {
            name: self.preset.device_name.to_string(),
            uuid: format!("SIM-{}-{:016x}", self.preset.key, self.preset.seed),
            nvml_index: 0,
            cuda_ordinal: None,
            simulated: true,
            driver_version: Some(format!("simulated ({} preset)", self.preset.key)),
            power_limit_w: Some(self.preset.power_limit_w),
            sm_clock_mhz: Some(self.preset.clocks_mhz.0),
            mem_clock_mhz: Some(self.preset.clocks_mhz.1),
            max_sm_clock_mhz: Some(self.preset.clocks_mhz.0),
            max_mem_clock_mhz: Some(self.preset.clocks_mhz.1),
            temperature_c: Some(self.temperature_c().round() as u32),
            pstate: Some(0),
            ..DeviceFacts::default()
        }
    }
}

/// Moves `thermal` to `time_s` under the mean power the truth drew since its last update.
fn advance_thermal(thermal: &mut ThermalState, params: &SimThermal, truth: &PowerTimeline, idle_w: f64, time_s: f64) {
    let from = thermal.time_s;
    if time_s > from {
        let mean = truth.energy_j(from, time_s) / (time_s - from);
        thermal.advance(params, idle_w, time_s, mean);
    }
}

/// A source on the simulated GPU.
pub struct SimSource {
    gpu: SimGpu,
    kind: SourceKind,
    calls: i64,
    /// For a buffer source: the newest update already handed over.
    last_seen_update: Option<i64>,
}

impl SensorSource for SimSource {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn poll_period_s(&self) -> f64 {
        // The source's own period; the K20 study polled its one power sensor back to back,
        // with no pause between reads, which the K20 preset reproduces (a fixed rate shorter
        // than a read: the sampler's pause after sources polled as fast as they answer,
        // `SamplerConfig::poll_gap_s`, is not the study's).
        if self.gpu.preset.key == "k20" && self.kind.delivery() == Delivery::Polled {
            1e-9
        } else {
            self.kind.poll_period_s()
        }
    }

    fn read(&mut self, clock: &dyn Clock, out: &mut Vec<Reading>) -> Result<(), SourceError> {
        let call = self.calls;
        self.calls += 1;
        let t0 = clock.now_s();
        let duration = self.gpu.lock().sensors[&self.kind].call_duration(call, t0);
        clock.sleep_s(duration);
        let t1 = clock.now_s();
        let mut guard = self.gpu.lock();
        let state = &mut *guard;
        let sensor = state.sensors.get_mut(&self.kind).expect("opened sources exist");
        let truth = state.rails.get(&self.kind).unwrap_or(&state.truth);
        match sensor.spec().buffer_depth {
            None => {
                let mid = 0.5 * (t0 + t1);
                out.push(Reading { time_s: mid, value: sensor.read_at(truth, mid) });
            }
            Some(depth) => {
                let newest = sensor.visible_update(t1);
                let oldest_kept = newest - i64::from(depth) + 1;
                let first = self.last_seen_update.map_or(oldest_kept, |seen| (seen + 1).max(oldest_kept));
                for k in first..=newest {
                    out.push(Reading { time_s: sensor.tick(k), value: sensor.update_value(truth, k) });
                }
                if newest >= first {
                    self.last_seen_update = Some(newest);
                }
            }
        }
        Ok(())
    }
}
