//! Fitting each source's sensor model to a step response (idle, one busy stretch, idle).
//!
//! The true power of a step response is three levels: idle before (P0), busy (P1),
//! idle after (P2), switching at the kernel's start and end. For a candidate model with
//! parameter θ and reporting delay d, each reading is a linear combination of the three
//! levels (the model's response to each level's indicator), so the best levels for
//! (model, θ, d) come from a 3×3 least-squares solve and the fit reduces to a search
//! over θ and d: a coarse grid, then a fine one around the best point. The model with
//! the smallest RMS residual wins; a boxcar narrower than the update period is reported
//! as a gate. The counter's tick grid comes from its ticks; its delay from where the
//! edge ticks put the two transitions (an idle/busy split of each edge interval).

use std::collections::BTreeMap;

use super::{Calibration, CounterCalibration, SourceCalibration, CALIBRATION_SCHEMA};
use crate::engine::clean::{clean_buffered, clean_polled, median_change_interval_s, sorted_finite};
use crate::engine::counter::counter_ticks;
use crate::engine::curve::fit_tick_grid;
use crate::engine::stats::solve_linear;
use crate::gpu::DeviceFacts;
use crate::sensors::{Delivery, Quantity, SensorModel, SourceKind};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{Channel, Reading, Trace, Window};

/// The kernels' true busy intervals in a step-response trace: each window from its start
/// mark for the GPU time recorded as `window I gpu_time_s` (or `window I cuda_event_ms`),
/// else to its end mark. Window 0 is the step; any others are calibration pulses.
pub fn busy_intervals(trace: &Trace) -> Result<Vec<Window>> {
    let windows = trace.windows()?;
    if !windows.iter().any(|w| w.index == 0) {
        return Err(Error::new(ErrorKind::Analysis, "a step response needs its step as window 0; this trace has none"));
    }
    Ok(windows
        .iter()
        .map(|w| {
            let gpu_s = trace
                .metadata(&format!("window {} gpu_time_s", w.index))
                .and_then(|v| v.parse::<f64>().ok())
                .or_else(|| {
                    trace
                        .metadata(&format!("window {} cuda_event_ms", w.index))
                        .and_then(|v| v.parse::<f64>().ok())
                        .map(|ms| ms * 1e-3)
                })
                .filter(|s| s.is_finite() && *s > 0.0 && *s <= w.duration_s() * 1.01);
            Window { index: w.index, start_s: w.start_s, end_s: gpu_s.map_or(w.end_s, |g| w.start_s + g) }
        })
        .collect())
}

/// The response of a unit step at time `s`, seen at reading time `t`, under `model`
/// with delay `d`.
fn step_response(model: &Candidate, s: f64, t: f64, d: f64) -> f64 {
    let x = t - d - s;
    match *model {
        Candidate::Identity => {
            if x >= 0.0 {
                1.0
            } else {
                0.0
            }
        }
        Candidate::Boxcar(w) => (x / w).clamp(0.0, 1.0),
        Candidate::FirstOrder(tau) => {
            if x > 0.0 {
                1.0 - (-x / tau).exp()
            } else {
                0.0
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Candidate {
    Identity,
    Boxcar(f64),
    FirstOrder(f64),
}

impl Candidate {
    fn name(&self) -> &'static str {
        match self {
            Candidate::Identity => "none",
            Candidate::Boxcar(_) => "boxcar",
            Candidate::FirstOrder(_) => "first-order",
        }
    }

    fn with_param(&self, p: f64) -> Candidate {
        match self {
            Candidate::Identity => Candidate::Identity,
            Candidate::Boxcar(_) => Candidate::Boxcar(p),
            Candidate::FirstOrder(_) => Candidate::FirstOrder(p),
        }
    }

    fn param(&self) -> f64 {
        match *self {
            Candidate::Identity => 0.0,
            Candidate::Boxcar(p) | Candidate::FirstOrder(p) => p,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Fit {
    model: Candidate,
    delay_s: f64,
    rms_w: f64,
}

/// What the true power of the step response is taken to be.
#[derive(Clone, Debug)]
pub enum StepTruth {
    /// Three unknown levels (idle, busy, idle) switching at the busy interval's edges,
    /// fitted with the model: for GPUs without an energy counter.
    Levels(Window),
    /// The counter's own power, interval by interval (its edge intervals split at the
    /// busy edges): piecewise-constant `(start, end, watts)` segments in time order.
    /// It captures what three levels cannot (the H100's busy power creeps up with
    /// temperature), so the fitted widths are not bent to absorb it.
    Profile(Vec<(f64, f64, f64)>),
}

/// Least-squares levels and RMS residual of `readings` (W) for one (model, delay).
fn fit_levels(readings: &[(f64, f64)], busy: &Window, model: &Candidate, d: f64) -> Option<([f64; 3], f64)> {
    let mut ata = [[0.0f64; 3]; 3];
    let mut atb = [0.0f64; 3];
    let mut rows = Vec::with_capacity(readings.len());
    for &(t, y) in readings {
        let s_rise = step_response(model, busy.start_s, t, d);
        let s_fall = step_response(model, busy.end_s, t, d);
        let row = [1.0 - s_rise, s_rise - s_fall, s_fall];
        for i in 0..3 {
            atb[i] += row[i] * y;
            for j in 0..3 {
                ata[i][j] += row[i] * row[j];
            }
        }
        rows.push((row, y));
    }
    let levels = solve_linear(ata.iter().map(|r| r.to_vec()).collect(), atb.to_vec())?;
    let levels = [levels[0], levels[1], levels[2]];
    let ss: f64 =
        rows.iter().map(|(row, y)| (y - (row[0] * levels[0] + row[1] * levels[1] + row[2] * levels[2])).powi(2)).sum();
    Some((levels, (ss / rows.len() as f64).sqrt()))
}

/// The model's response to a piecewise-constant profile at each (sorted) time − d.
fn profile_response(segments: &[(f64, f64, f64)], model: &Candidate, times: &[f64], d: f64) -> Vec<f64> {
    let first_level = segments.first().map_or(0.0, |s| s.2);
    let last_level = segments.last().map_or(0.0, |s| s.2);
    // Cumulative energy at each segment start, from the first segment's start.
    let mut cumulative = Vec::with_capacity(segments.len() + 1);
    let mut e = 0.0;
    for seg in segments {
        cumulative.push(e);
        e += (seg.1 - seg.0) * seg.2;
    }
    let start = segments.first().map_or(0.0, |s| s.0);
    let end = segments.last().map_or(0.0, |s| s.1);
    let energy_to = |t: f64| -> f64 {
        if t <= start {
            return first_level * (t - start);
        }
        if t >= end {
            return e + last_level * (t - end);
        }
        let i = segments.partition_point(|s| s.0 <= t) - 1;
        cumulative[i] + (t - segments[i].0) * segments[i].2
    };
    let power_at = |t: f64| -> f64 {
        if t < start {
            return first_level;
        }
        if t >= end {
            return last_level;
        }
        segments[segments.partition_point(|s| s.0 <= t) - 1].2
    };
    match *model {
        Candidate::Identity => times.iter().map(|&t| power_at(t - d)).collect(),
        Candidate::Boxcar(w) => times.iter().map(|&t| (energy_to(t - d) - energy_to(t - d - w)) / w).collect(),
        Candidate::FirstOrder(tau) => {
            // Exact lag of a piecewise-constant input, swept forward (times sorted).
            let mut out = Vec::with_capacity(times.len());
            let (mut t_state, mut y) = (start, first_level);
            let mut seg = 0;
            for &t in times {
                let target = t - d;
                while t_state < target {
                    let (level, seg_end) = if t_state < start {
                        (first_level, start)
                    } else {
                        while seg < segments.len() && segments[seg].1 <= t_state {
                            seg += 1;
                        }
                        if seg < segments.len() {
                            (segments[seg].2, segments[seg].1)
                        } else {
                            (last_level, f64::INFINITY)
                        }
                    };
                    let step_to = seg_end.min(target);
                    y = level + (y - level) * (-(step_to - t_state) / tau).exp();
                    t_state = step_to;
                }
                out.push(y);
            }
            out
        }
    }
}

/// RMS residual of readings (W) against the model's prediction of the truth.
fn residual(readings: &[(f64, f64)], truth: &StepTruth, model: &Candidate, d: f64) -> Option<f64> {
    match truth {
        StepTruth::Levels(busy) => fit_levels(readings, busy, model, d).map(|(_, rms)| rms),
        StepTruth::Profile(segments) => {
            let times: Vec<f64> = readings.iter().map(|r| r.0).collect();
            let predicted = profile_response(segments, model, &times, d);
            // Readings ≈ gain · prediction + offset: a sensor's scale need not match the counter's.
            let n = readings.len() as f64;
            let (mx, my) = (predicted.iter().sum::<f64>() / n, readings.iter().map(|r| r.1).sum::<f64>() / n);
            let sxx: f64 = predicted.iter().map(|x| (x - mx).powi(2)).sum();
            let sxy: f64 = predicted.iter().zip(readings).map(|(x, r)| (x - mx) * (r.1 - my)).sum();
            if sxx <= 0.0 {
                return None;
            }
            let gain = sxy / sxx;
            let ss: f64 = predicted.iter().zip(readings).map(|(x, r)| (r.1 - my - gain * (x - mx)).powi(2)).sum();
            Some((ss / n).sqrt())
        }
    }
}

fn grid_search(
    readings: &[(f64, f64)],
    truth: &StepTruth,
    family: Candidate,
    params: &[f64],
    delays: &[f64],
) -> Option<Fit> {
    let mut best: Option<Fit> = None;
    let params: Vec<f64> = if family == Candidate::Identity { vec![0.0] } else { params.to_vec() };
    for &p in &params {
        let model = family.with_param(p);
        for &d in delays {
            if let Some(rms) = residual(readings, truth, &model, d) {
                if best.is_none_or(|b| rms < b.rms_w) {
                    best = Some(Fit { model, delay_s: d, rms_w: rms });
                }
            }
        }
    }
    best
}

fn linspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n).map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64).collect()
}

fn logspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    linspace(lo.ln(), hi.ln(), n).into_iter().map(f64::exp).collect()
}

/// Fits one family: a coarse grid, then a finer one around its best point. Width and
/// delay trade off (a boxcar's ramp runs from d to d + W), so the fine grid spans the
/// delays that the coarse width step could have displaced.
fn fit_family(readings: &[(f64, f64)], truth: &StepTruth, family: Candidate, max_param_s: f64) -> Option<Fit> {
    let coarse = grid_search(readings, truth, family, &logspace(0.002, max_param_s, 120), &linspace(-0.05, 0.05, 51))?;
    let p = coarse.model.param();
    let (fine_params, reach) = if family == Candidate::Identity {
        (vec![0.0], 0.002)
    } else {
        (linspace(p * 0.93, p * 1.07, 57), (0.07 * p).max(0.002))
    };
    grid_search(readings, truth, family, &fine_params, &linspace(coarse.delay_s - reach, coarse.delay_s + reach, 81))
}

/// Fits a power source's model to its readings (mW) of the step `busy`.
///
/// Readings before `fit_from_s` are not used: with three-level truth they may still
/// carry the warm-up's transient, which three levels cannot describe.
pub fn fit_power_source(
    kind: SourceKind,
    raw_mw: &[Reading],
    busy: &Window,
    truth: &StepTruth,
    fit_from_s: f64,
    fit_until_s: f64,
) -> Result<SourceCalibration> {
    let buffered = kind.delivery() == Delivery::Buffered;
    let clean = if buffered { clean_buffered(raw_mw) } else { clean_polled(raw_mw) };
    let update_period_s = if buffered {
        let gaps: Vec<f64> = clean.windows(2).map(|w| w[1].time_s - w[0].time_s).collect();
        let mut g = gaps.clone();
        g.sort_by(f64::total_cmp);
        g.get(g.len() / 2).copied()
    } else {
        median_change_interval_s(&sorted_finite(raw_mw))
    };
    let readings: Vec<(f64, f64)> = clean
        .iter()
        .filter(|r| r.time_s >= fit_from_s && r.time_s < fit_until_s)
        .map(|r| (r.time_s, r.value * 1e-3))
        .collect();
    if readings.len() < 8 {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("only {} {kind} readings around the step: too few to fit a model", readings.len()),
        ));
    }
    let max_param = (busy.duration_s() * 0.8).min(3.0);
    let fits: Vec<Fit> = [Candidate::Identity, Candidate::Boxcar(1.0), Candidate::FirstOrder(1.0)]
        .into_iter()
        .filter_map(|family| fit_family(&readings, truth, family, max_param))
        .collect();
    let best =
        fits.iter().min_by(|a, b| a.rms_w.total_cmp(&b.rms_w)).copied().ok_or_else(|| {
            Error::new(ErrorKind::Analysis, format!("no model could be fitted to the {kind} readings"))
        })?;
    // A response shorter than the update period cannot be inverted between updates,
    // whatever its shape: the source sees only part of each period (a gate). The
    // equivalent width of a first-order lag is 2τ (both have mean delay W/2 = τ).
    let equivalent_width = match best.model {
        Candidate::Identity => 0.0,
        Candidate::Boxcar(w) => w,
        Candidate::FirstOrder(tau) => 2.0 * tau,
    };
    let model = match (best.model, update_period_s) {
        (_, Some(period)) if equivalent_width < 0.8 * period => {
            SensorModel::Gated { gate_s: equivalent_width.max(1e-3), period_s: period }
        }
        (Candidate::Identity, _) => SensorModel::Identity,
        (Candidate::FirstOrder(tau_s), _) => SensorModel::FirstOrder { tau_s },
        (Candidate::Boxcar(width_s), _) => SensorModel::Boxcar { width_s },
    };
    let alternatives = fits
        .iter()
        .map(|f| (format!("{}:{:.4}", f.model.name(), f.model.param()), f.rms_w))
        .collect::<BTreeMap<_, _>>();
    Ok(SourceCalibration { model, delay_s: best.delay_s, rms_residual_w: best.rms_w, update_period_s, alternatives })
}

/// Mean power of the counter intervals wholly inside [from, to], W.
fn counter_level(ticks: &[(f64, f64)], from: f64, to: f64) -> Option<f64> {
    let (e, t) = ticks
        .windows(2)
        .filter(|w| w[0].0 >= from && w[1].0 <= to)
        .fold((0.0, 0.0), |(e, t), w| (e + (w[1].1 - w[0].1), t + (w[1].0 - w[0].0)));
    (t > 0.0).then(|| e / t)
}

/// What [`fit_counter`] finds: the calibration, the three levels (idle before, busy,
/// idle after, W) and the counter's power profile on the host clock.
pub type CounterFit = (CounterCalibration, [f64; 3], StepTruth);

/// The step of a step response: window 0.
fn step_window(windows: &[Window]) -> Result<Window> {
    windows.iter().find(|w| w.index == 0).copied().ok_or_else(|| {
        Error::new(ErrorKind::Analysis, "a step response needs its step as window 0; this trace has none")
    })
}

/// Fits the counter: tick grid, levels, the delay at each edge of the step (window 0),
/// and its power profile with every window's edges placed inside the ticks.
pub fn fit_counter(raw_mj: &[Reading], windows: &[Window]) -> Result<CounterFit> {
    let busy = &step_window(windows)?;
    let raw_ticks = counter_ticks(&sorted_finite(raw_mj));
    let fit = fit_tick_grid(&raw_ticks)
        .ok_or_else(|| Error::new(ErrorKind::Analysis, "too few counter ticks to fit their grid (record longer)"))?;
    let base = raw_ticks[0].time_s;
    let ticks: Vec<(f64, f64)> = raw_ticks
        .iter()
        .map(|k| {
            let t = if fit.grid_used {
                fit.phase_s + fit.period_s * ((k.time_s - base) / fit.period_s).round()
            } else {
                k.time_s
            };
            (t, k.energy_mj * 1e-3)
        })
        .collect();
    let missing =
        |what: &str| Error::new(ErrorKind::Analysis, format!("no counter intervals {what} the step: record longer"));
    let p0 = counter_level(&ticks, busy.start_s - 2.0, busy.start_s).ok_or_else(|| missing("before"))?;
    let p1 = counter_level(&ticks, busy.start_s, busy.end_s).ok_or_else(|| missing("during"))?;
    let p2 = counter_level(&ticks, busy.end_s, busy.end_s + 2.0).ok_or_else(|| missing("after"))?;
    let edge = |at: f64| ticks.windows(2).find(|w| w[0].0 <= at && w[1].0 > at).map(|w| (w[0], w[1]));
    let (a0, a1) = edge(busy.start_s).ok_or_else(|| missing("across the start of"))?;
    let (b0, b1) = edge(busy.end_s).ok_or_else(|| missing("across the end of"))?;
    // Busy fraction of each edge interval → where the transition is on the counter's clock.
    let rise_power = (a1.1 - a0.1) / (a1.0 - a0.0);
    let rise_fraction = ((rise_power - p0) / (p1 - p0)).clamp(0.0, 1.0);
    let rise_at = a1.0 - rise_fraction * (a1.0 - a0.0);
    let fall_power = (b1.1 - b0.1) / (b1.0 - b0.0);
    let fall_fraction = ((fall_power - p2) / (p1 - p2)).clamp(0.0, 1.0);
    let fall_at = b0.0 + fall_fraction * (b1.0 - b0.0);
    let delay_rise_s = rise_at - busy.start_s;
    let delay_fall_s = fall_at - busy.end_s;
    let delay_s = 0.5 * (delay_rise_s + delay_fall_s);
    // The counter's power on the host clock. An interval holding window edges is split
    // at them: its idle part at the idle level (before or after the step), the rest of
    // its energy spread over its busy part.
    let mut segments = Vec::with_capacity(ticks.len() + 4 * windows.len());
    for w in ticks.windows(2) {
        let (t0, t1) = (w[0].0 - delay_s, w[1].0 - delay_s);
        let energy = w[1].1 - w[0].1;
        if t1 <= t0 {
            continue;
        }
        let mut cuts = vec![t0];
        for win in windows {
            for edge in [win.start_s, win.end_s] {
                if edge > t0 && edge < t1 {
                    cuts.push(edge);
                }
            }
        }
        cuts.push(t1);
        cuts.sort_by(f64::total_cmp);
        let inside =
            |a: f64, b: f64| windows.iter().any(|win| 0.5 * (a + b) >= win.start_s && 0.5 * (a + b) < win.end_s);
        let busy_time: f64 = cuts.windows(2).filter(|c| inside(c[0], c[1])).map(|c| c[1] - c[0]).sum();
        if cuts.len() == 2 || busy_time <= 0.0 || busy_time >= t1 - t0 {
            segments.push((t0, t1, energy / (t1 - t0)));
            continue;
        }
        let idle_w = if t1 <= busy.end_s { p0 } else { p2 };
        let busy_w = (energy - idle_w * (t1 - t0 - busy_time)) / busy_time;
        for c in cuts.windows(2) {
            segments.push((c[0], c[1], if inside(c[0], c[1]) { busy_w } else { idle_w }));
        }
    }
    Ok((
        CounterCalibration {
            period_s: fit.period_s,
            phase_s: fit.phase_s.rem_euclid(fit.period_s),
            residual_rms_s: fit.residual_rms_s,
            delay_s,
            delay_rise_s,
            delay_fall_s,
        },
        [p0, p1, p2],
        StepTruth::Profile(segments),
    ))
}

/// Fits every source in a step-response trace.
pub fn fit_calibration(trace: &Trace, facts: &DeviceFacts) -> Result<Calibration> {
    let windows = busy_intervals(trace)?;
    let busy = step_window(&windows)?;
    let mut counter = None;
    let mut levels: Option<[f64; 3]> = None;
    let mut truth = StepTruth::Levels(busy);
    let counter_readings = trace.series(&Channel::CounterMj);
    if !counter_readings.is_empty() {
        let (c, l, profile) = fit_counter(counter_readings, &windows)?;
        counter = Some(c);
        levels = Some(l);
        truth = profile;
    }
    // Readings still under the warm-up's influence are left out: the counter's profile
    // smears the warm-up's short launches over its 100 ms ticks, and three levels cannot
    // describe them at all. What follows the warm-up by over 1.2 s (or half the lead-in)
    // sees only idle, then the step.
    let fit_from = match trace.metadata("warmup_end_s").and_then(|v| v.parse::<f64>().ok()) {
        Some(warmup_end) => warmup_end + (0.5 * (busy.start_s - warmup_end)).max(1.2).min(busy.start_s - warmup_end),
        None => busy.start_s - 2.0,
    };
    // Three levels describe the step alone (not the pulses, nor a K20's active idle
    // stepping down 3.5 s after it); the counter's profile describes everything recorded.
    let fit_until = match truth {
        StepTruth::Profile(_) => f64::INFINITY,
        StepTruth::Levels(_) => busy.end_s + 3.0,
    };
    let mut sources = BTreeMap::new();
    // The board's power sources. A rail keeps its default model: the step is an FMA loop,
    // which hardly moves a memory rail, and what it moves is no step a model describes (on
    // H100s the memory rail dipped 2 W for 0.3 s, rose 5 W over 1.4 s, and bumped 2 W up
    // at the end before falling: fits gave 1.9-2 s boxcars 0.19-0.2 s late, which turned
    // saxpy windows' rail energies negative).
    for kind in SourceKind::boards().filter(|k| k.quantity() == Quantity::Power) {
        let readings = trace.series(&Channel::Source(kind));
        if readings.is_empty() {
            continue;
        }
        let fitted = fit_power_source(kind, readings, &busy, &truth, fit_from, fit_until)?;
        sources.insert(kind, fitted);
    }
    if counter.is_none() && sources.is_empty() {
        return Err(Error::new(ErrorKind::Analysis, "the trace has no power or energy readings to calibrate"));
    }
    // Levels: from the counter when there is one, else from the best-fitting power source.
    let [idle_before_w, busy_w, idle_after_w] = match levels {
        Some(l) => l,
        None => {
            let (kind, _) = sources
                .iter()
                .filter(|(k, _)| k.measures_board())
                .min_by(|a, b| a.1.rms_residual_w.total_cmp(&b.1.rms_residual_w))
                .ok_or_else(|| {
                    Error::new(ErrorKind::Analysis, "the trace has no board power or energy readings to calibrate")
                })?;
            let clean = clean_polled(trace.series(&Channel::Source(*kind)));
            let (model, delay) = (sources[kind].model, sources[kind].delay_s);
            let candidate = match model {
                SensorModel::FirstOrder { tau_s } => Candidate::FirstOrder(tau_s),
                SensorModel::Boxcar { width_s } => Candidate::Boxcar(width_s),
                SensorModel::Gated { gate_s, .. } => Candidate::Boxcar(gate_s),
                _ => Candidate::Identity,
            };
            let readings: Vec<(f64, f64)> = clean
                .iter()
                .filter(|r| r.time_s >= fit_from && r.time_s < fit_until)
                .map(|r| (r.time_s, r.value * 1e-3))
                .collect();
            fit_levels(&readings, &busy, &candidate, delay)
                .map(|(l, _)| [l[0], l[1], l[2]])
                .ok_or_else(|| Error::new(ErrorKind::Analysis, "could not estimate the step's power levels"))?
        }
    };
    Ok(Calibration {
        schema: CALIBRATION_SCHEMA.into(),
        device_name: facts.name.clone(),
        uuid: facts.uuid.clone(),
        driver: facts.driver_version.clone(),
        simulated: facts.simulated,
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        idle_before_w,
        idle_after_w,
        busy_w,
        busy_s: busy.duration_s(),
        counter,
        sources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_boxcar_from_noise_free_readings() {
        let busy = Window { index: 0, start_s: 2.0, end_s: 5.0 };
        // Updates every 100 ms (at 0.03 + k/10 s) of a 0.7 s boxcar delayed 10 ms, polled every 5 ms.
        let m = Candidate::Boxcar(0.7);
        let value_at_update = |t: f64| {
            100.0 * (1.0 - step_response(&m, 2.0, t, 0.01))
                + 250.0 * (step_response(&m, 2.0, t, 0.01) - step_response(&m, 5.0, t, 0.01))
                + 110.0 * step_response(&m, 5.0, t, 0.01)
        };
        let readings: Vec<Reading> = (0..1800)
            .map(|i| {
                let t = f64::from(i) * 0.005 + 0.001;
                let update = ((t - 0.03) / 0.1).floor() * 0.1 + 0.03;
                Reading { time_s: t, value: value_at_update(update) * 1000.0 }
            })
            .collect();
        let fit =
            fit_power_source(SourceKind::AverageField, &readings, &busy, &StepTruth::Levels(busy), 0.0, 9.0).unwrap();
        match fit.model {
            SensorModel::Boxcar { width_s } => assert!((width_s - 0.7).abs() < 0.01, "{fit:?}"),
            other => panic!("fitted {other:?}"),
        }
        // Each update is stamped midway between the polls around it (here 1.5 ms early).
        assert!((fit.delay_s - 0.0085).abs() < 0.002, "{fit:?}");
    }
}
