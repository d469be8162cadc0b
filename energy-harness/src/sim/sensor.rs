//! Simulated sensors: ground truth pushed through a sensor model, updated at jittered
//! ticks, with noise, resolution, report delay and call latency.
//!
//! A reading is a pure function of the truth and the update index (noise comes from
//! [`super::noise`]), so the same update reads the same however often it is polled:
//! polling faster than the sensor updates yields stale repeats, as on the K20.

use super::noise;
use super::truth::PowerTimeline;
use crate::sensors::SensorModel;

/// How a sensor responds to true power between its updates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Response {
    /// Cumulative energy (mJ) up to the update: the NVML energy counter.
    Integral,
    /// True power at the update instant.
    Instantaneous,
    /// Mean power over the `width_s` before the update (a boxcar; a gate when narrower
    /// than the update period).
    WindowMean {
        /// Averaging width, s.
        width_s: f64,
    },
    /// First-order lag with time constant `tau_s`, read at the update.
    FirstOrder {
        /// Time constant, s.
        tau_s: f64,
    },
}

/// A deliberate defect of a simulated sensor, for checking that `cargo energy selftest`
/// (and anything else that claims to judge a sensor) notices a sensor that is wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SensorFault {
    /// Every reading (power, or the counter's energy) is `gain` times the truth.
    Gain(f64),
    /// The counter adds the power at each update × the update period instead of the
    /// integral since the last update: steady power reads right, a burst between two
    /// updates is missed or counted as a whole period.
    SampledIntegral,
}

/// When a sensor updates: `phase + k·period`, each tick moved by Gaussian jitter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpdateTicks {
    /// Update period, s.
    pub period_s: f64,
    /// Time of update 0, s.
    pub phase_s: f64,
    /// Standard deviation of each tick's displacement, s (clamped to ±40 % of the period).
    pub jitter_s: f64,
}

/// How long one read call of the source takes (it blocks the sampler for that long).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallLatency {
    /// Usual duration, s.
    pub typical_s: f64,
    /// Uniform spread around it, ± s.
    pub spread_s: f64,
    /// Probability that a call stalls (driver busy).
    pub stall_probability: f64,
    /// Duration of a stalled call, s.
    pub stall_s: f64,
    /// Duration of a call during which the sensor takes a new measurement (the K20's
    /// ~4.7 ms gaps between sets of identical readings), if different.
    pub update_call_s: Option<f64>,
}

impl CallLatency {
    /// A fixed latency with a small spread and no stalls.
    pub const fn steady(typical_s: f64, spread_s: f64) -> Self {
        CallLatency { typical_s, spread_s, stall_probability: 0.0, stall_s: 0.0, update_call_s: None }
    }
}

/// Everything that defines one simulated sensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SensorSpec {
    /// Response to true power.
    pub response: Response,
    /// Update instants.
    pub ticks: UpdateTicks,
    /// How late readings are against the power they describe, s: a polled sensor's
    /// update is seen this long after it happens; a buffered sample describes the power
    /// this long before its timestamp.
    pub report_delay_s: f64,
    /// Gaussian noise per update, W (power responses only).
    pub noise_w: f64,
    /// Reading resolution in the channel's unit (mW, or mJ for the counter).
    pub resolution: f64,
    /// Counter value at time 0, mJ (counter only).
    pub offset_mj: f64,
    /// Samples the driver buffer keeps (a buffer source, drained since the last-seen
    /// sample), or `None` for a polled value.
    pub buffer_depth: Option<u32>,
    /// Cost of one read call.
    pub latency: CallLatency,
    /// Noise stream: two sources with the same stream read the same sensor.
    pub stream: u64,
    /// A deliberate defect (`None` for the sensors the presets model).
    pub fault: Option<SensorFault>,
}

impl SensorSpec {
    /// The sensor model this spec implements (what a correction must invert).
    pub fn sensor_model(&self) -> SensorModel {
        match self.response {
            Response::Integral => SensorModel::Counter { period_s: self.ticks.period_s },
            Response::Instantaneous => SensorModel::Identity,
            Response::WindowMean { width_s } if width_s < self.ticks.period_s => {
                SensorModel::Gated { gate_s: width_s, period_s: self.ticks.period_s }
            }
            Response::WindowMean { width_s } => SensorModel::Boxcar { width_s },
            Response::FirstOrder { tau_s } => SensorModel::FirstOrder { tau_s },
        }
    }
}

/// A simulated sensor with its cached filter state.
#[derive(Clone, Debug)]
pub struct SimSensor {
    spec: SensorSpec,
    seed: u64,
    /// First-order lag state: output `y` at time `t`.
    lag: Option<(f64, f64)>,
    /// [`SensorFault::SampledIntegral`] state: the first update counted, then the newest
    /// update summed and the sum (J) up to it.
    sampled: Option<(i64, i64, f64)>,
}

const STREAM_JITTER: u64 = 0x11;
const STREAM_NOISE: u64 = 0x22;
const STREAM_LATENCY: u64 = 0x33;
const STREAM_STALL: u64 = 0x44;

impl SimSensor {
    /// A sensor following `spec`, its randomness drawn from `seed`.
    pub fn new(spec: SensorSpec, seed: u64) -> Self {
        SimSensor { spec, seed, lag: None, sampled: None }
    }

    /// The spec.
    pub fn spec(&self) -> &SensorSpec {
        &self.spec
    }

    /// Time of update `k`.
    pub fn tick(&self, k: i64) -> f64 {
        let t = &self.spec.ticks;
        let bound = 0.4 * t.period_s;
        let jitter =
            (t.jitter_s * noise::gaussian(self.seed, self.spec.stream ^ STREAM_JITTER, k)).clamp(-bound, bound);
        t.phase_s + k as f64 * t.period_s + jitter
    }

    /// The newest update at or before `t`.
    pub fn latest_update(&self, t: f64) -> i64 {
        let ticks = &self.spec.ticks;
        let k0 = ((t - ticks.phase_s) / ticks.period_s).floor() as i64;
        if self.tick(k0 + 1) <= t {
            k0 + 1
        } else if self.tick(k0) <= t {
            k0
        } else {
            k0 - 1
        }
    }

    /// The newest update a read at `t` returns (a polled sensor's report delay included).
    pub fn visible_update(&self, t: f64) -> i64 {
        if self.spec.buffer_depth.is_some() {
            self.latest_update(t)
        } else {
            self.latest_update(t - self.spec.report_delay_s)
        }
    }

    /// The value of update `k` in the channel's unit (mJ or mW). A buffered sensor's
    /// update describes the power `report_delay_s` before its tick (it is stamped at the
    /// tick); a polled sensor's describes its tick (reads see it `report_delay_s` later).
    pub fn update_value(&mut self, truth: &PowerTimeline, k: i64) -> f64 {
        let t = if self.spec.buffer_depth.is_some() { self.tick(k) - self.spec.report_delay_s } else { self.tick(k) };
        let noise_w = self.spec.noise_w * noise::gaussian(self.seed, self.spec.stream ^ STREAM_NOISE, k);
        let gain = match self.spec.fault {
            Some(SensorFault::Gain(gain)) => gain,
            _ => 1.0,
        };
        let value = match self.spec.response {
            Response::Integral => {
                let joules = match self.spec.fault {
                    Some(SensorFault::SampledIntegral) => self.sampled_integral(truth, k),
                    _ => truth.energy_to(t),
                };
                let mj = self.spec.offset_mj + 1000.0 * gain * joules;
                return quantize_down(mj, self.spec.resolution);
            }
            Response::Instantaneous => truth.power_at(t) + noise_w,
            Response::WindowMean { width_s } => truth.energy_j(t - width_s, t) / width_s + noise_w,
            Response::FirstOrder { tau_s } => self.lag_at(truth, tau_s, t) + noise_w,
        };
        quantize_nearest(1000.0 * gain * value, self.spec.resolution)
    }

    /// [`SensorFault::SampledIntegral`]: the sum of power at each update × the period,
    /// from the first update this sensor was asked for up to update `k`.
    fn sampled_integral(&mut self, truth: &PowerTimeline, k: i64) -> f64 {
        let period = self.spec.ticks.period_s;
        let (first, mut newest, mut sum) = match self.sampled {
            Some((first, newest, sum)) if newest <= k => (first, newest, sum),
            Some((first, _, _)) => (first, first, 0.0),
            None => (k, k, 0.0),
        };
        while newest < k {
            newest += 1;
            sum += truth.power_at(self.tick(newest)) * period;
        }
        self.sampled = Some((first, newest, sum));
        sum
    }

    /// The reading a poll at `t` returns.
    pub fn read_at(&mut self, truth: &PowerTimeline, t: f64) -> f64 {
        let k = self.visible_update(t);
        self.update_value(truth, k)
    }

    /// First-order lag output at `t`, advanced exactly over the truth's linear pieces.
    fn lag_at(&mut self, truth: &PowerTimeline, tau_s: f64, t: f64) -> f64 {
        let (mut t_state, mut y) = match self.lag {
            Some((ts, y)) if ts <= t => (ts, y),
            // The truth is idle before its first breakpoint, so the lag rests at idle there.
            _ => {
                let start = truth.start_s().map_or(t, |s| s.min(t));
                (start, truth.idle_w())
            }
        };
        for seg in truth.segments(t_state, t) {
            let dt = seg.t1_s - seg.t0_s;
            let slope = (seg.p1_w - seg.p0_w) / dt;
            y = seg.p1_w - slope * tau_s + (y - seg.p0_w + slope * tau_s) * (-dt / tau_s).exp();
            t_state = seg.t1_s;
        }
        self.lag = Some((t_state.max(t), y));
        y
    }

    /// Forgets filter state computed past `t_s` (the truth changed after `t_s`).
    pub fn invalidate_after(&mut self, t_s: f64) {
        if self.lag.is_some_and(|(ts, _)| ts > t_s) {
            self.lag = None;
        }
        if let Some((first, newest, _)) = self.sampled {
            if self.tick(newest) > t_s {
                self.sampled = Some((first, first, 0.0));
            }
        }
    }

    /// Duration of read call number `call` starting at `t0`.
    pub fn call_duration(&self, call: i64, t0: f64) -> f64 {
        let l = &self.spec.latency;
        if l.stall_probability > 0.0
            && noise::uniform(self.seed, self.spec.stream ^ STREAM_STALL, call) < l.stall_probability
        {
            return l.stall_s;
        }
        if let Some(update_call) = l.update_call_s {
            if self.latest_update(t0 + l.typical_s) != self.latest_update(t0) {
                return update_call;
            }
        }
        let u = noise::uniform(self.seed, self.spec.stream ^ STREAM_LATENCY, call);
        (l.typical_s + l.spread_s * (2.0 * u - 1.0)).max(0.0)
    }
}

fn quantize_nearest(value: f64, resolution: f64) -> f64 {
    if resolution > 0.0 {
        (value / resolution).round() * resolution
    } else {
        value
    }
}

fn quantize_down(value: f64, resolution: f64) -> f64 {
    if resolution > 0.0 {
        (value / resolution).floor() * resolution
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::truth::SimKernel;

    fn spec(response: Response, period_s: f64) -> SensorSpec {
        SensorSpec {
            response,
            ticks: UpdateTicks { period_s, phase_s: 0.0, jitter_s: 0.0 },
            report_delay_s: 0.0,
            noise_w: 0.0,
            resolution: 0.0,
            offset_mj: 0.0,
            buffer_depth: None,
            latency: CallLatency::steady(1e-3, 0.0),
            stream: 1,
            fault: None,
        }
    }

    #[test]
    fn first_order_lag_matches_the_exponential() {
        let mut truth = PowerTimeline::new(50.0, None);
        truth.schedule(1.0, SimKernel::new(10.0, 150.0));
        let mut s = SimSensor::new(spec(Response::FirstOrder { tau_s: 0.8 }, 0.01), 1);
        for dt in [0.1, 0.5, 0.8, 2.0] {
            let expected = 1000.0 * (150.0 - 100.0 * (-dt / 0.8f64).exp());
            let got = s.read_at(&truth, 1.0 + dt + 1e-9);
            assert!((got - expected).abs() < 1.0, "dt {dt}: {got} vs {expected}");
        }
        // Asking for an earlier time recomputes from the start rather than using stale state.
        let early = s.read_at(&truth, 1.1 + 1e-9);
        assert!((early - 1000.0 * (150.0 - 100.0 * (-0.1f64 / 0.8).exp())).abs() < 1.0);
    }

    #[test]
    fn readings_repeat_between_updates() {
        let truth = PowerTimeline::new(50.0, None);
        let mut s = SimSensor::new(spec(Response::Instantaneous, 0.015), 1);
        let a = s.read_at(&truth, 0.0151);
        let b = s.read_at(&truth, 0.0290);
        assert_eq!(a, b);
        assert_eq!(s.visible_update(0.0151), s.visible_update(0.029));
    }

    #[test]
    fn counter_is_quantized_integral() {
        let mut truth = PowerTimeline::new(100.0, None);
        truth.schedule(0.0, SimKernel::new(1.0, 300.0));
        let mut c = SensorSpec { resolution: 1.0, offset_mj: 5000.0, ..spec(Response::Integral, 0.1) };
        c.ticks.phase_s = 0.05;
        let mut s = SimSensor::new(c, 3);
        // Update at 0.45 s: 300 W × 0.45 s = 135 J.
        assert_eq!(s.read_at(&truth, 0.5), 5000.0 + 135_000.0);
    }
}
