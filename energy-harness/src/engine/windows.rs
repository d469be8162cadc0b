//! Window energies from an energy curve: window-synchronized, baseline-subtracted.
//!
//! Between two curve points (two counter ticks, say) the energy is known exactly but not
//! where in the interval it was spent. An interval entirely inside a window belongs to
//! it. An interval across a window edge is split with the known levels: the idle part
//! (the time outside every window, at the active-idle power measured just before or
//! after the window) is taken out, and the rest goes to the window, or, when one
//! interval holds edges of two windows 60 ms apart, to each in proportion to its busy
//! power (measured from its own interior intervals) times its time in the interval.
//! Nothing is read off one value at an edge, and nothing is smeared across it.
//!
//! Active idle is the mean power of the intervals outside every window within
//! `lookback_s` before the window (or the busy stretch of back-to-back windows it belongs
//! to) and after it; dynamic energy is the window's energy
//! minus that idle power times the window's length (Delestrac's static/dynamic split).

use super::curve::EnergyCurve;
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{is_auxiliary_window, Window};

/// Windows closer than this are one busy stretch (back to back), s: they share the idle
/// measured around the stretch.
pub const BACK_TO_BACK_GAP_S: f64 = 0.02;

/// Settings of the split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitOptions {
    /// How far before a window's start and after its end idle power is looked for, s.
    pub lookback_s: f64,
    /// The active idle measured earlier on the same device, W: the idle level where the
    /// trace holds no idle interval at all (a lean run of a paired sequence,
    /// the analysis's `CarriedIdle`). `None`: such a trace's idle is 0 W.
    pub carried_idle_w: Option<f64>,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions { lookback_s: 1.0, carried_idle_w: None }
    }
}

pub use energy_results::measured::WindowEnergy;

struct Interval {
    t0: f64,
    t1: f64,
    energy: f64,
}

impl Interval {
    fn power(&self) -> f64 {
        self.energy / (self.t1 - self.t0)
    }
}

fn overlap(a0: f64, a1: f64, b0: f64, b1: f64) -> f64 {
    (a1.min(b1) - a0.max(b0)).max(0.0)
}

/// Splits the curve's energy over the windows.
///
/// Errors when windows overlap, or a window is not covered by the curve (the trace
/// must reach before its start and past its end).
pub fn window_energies(curve: &EnergyCurve, windows: &[Window], options: SplitOptions) -> Result<Vec<WindowEnergy>> {
    let mut windows = windows.to_vec();
    windows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    for pair in windows.windows(2) {
        if pair[1].start_s < pair[0].end_s {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!("windows {} and {} overlap", pair[0].index, pair[1].index),
            ));
        }
    }
    let Some((lo, hi)) = curve.span_s() else {
        return Err(Error::new(ErrorKind::Analysis, "no readings to integrate"));
    };
    // An auxiliary stretch (a warm-up, a guard) may reach past the readings: a lean paired
    // run's recording ends at the counter's update after the last window, inside the guard
    // after it. No interval lies beyond the readings, so clipping it to them changes no share
    // of any interval; its own energy is never reported.
    for w in windows.iter_mut().filter(|w| is_auxiliary_window(w.index)) {
        w.start_s = w.start_s.max(lo);
        w.end_s = w.end_s.min(hi).max(w.start_s);
    }
    windows.retain(|w| !is_auxiliary_window(w.index) || w.end_s > w.start_s);
    for w in &windows {
        if w.start_s < lo || w.end_s > hi {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "window {} ({:.3}-{:.3} s) is not covered by the readings ({lo:.3}-{hi:.3} s): record longer before and after it",
                    w.index, w.start_s, w.end_s
                ),
            ));
        }
    }
    for w in &windows {
        if let Some(&(g0, g1)) = curve.gaps().iter().find(|&&(g0, g1)| overlap(g0, g1, w.start_s, w.end_s) > 0.0) {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "window {} ({:.3}-{:.3} s) overlaps a reset of the energy counter ({g0:.3}-{g1:.3} s): its energy is unknown; measure it again",
                    w.index, w.start_s, w.end_s
                ),
            ));
        }
    }
    let in_gap = |t0: f64, t1: f64| curve.gaps().iter().any(|&(g0, g1)| t0 >= g0 && t1 <= g1);
    let intervals: Vec<Interval> = curve
        .points()
        .windows(2)
        .filter(|p| p[1].0 > p[0].0 && !in_gap(p[0].0, p[1].0))
        .map(|p| Interval { t0: p[0].0, t1: p[1].0, energy: p[1].1 - p[0].1 })
        .collect();
    // Windows are sorted and do not overlap (so their ends are sorted too), and the curve's
    // intervals are sorted: every lookup below is a binary search, every sum a difference of
    // prefix sums, so the split is linear in windows and intervals (16,000 windows of a long
    // trace, docs/RELIABILITY.md).
    let overlapping = |t0: f64, t1: f64| {
        let first = windows.partition_point(|w| w.end_s <= t0);
        let last = windows.partition_point(|w| w.start_s < t1);
        first..last.max(first)
    };
    let in_any_window = |iv: &Interval| {
        overlapping(iv.t0, iv.t1).any(|i| overlap(iv.t0, iv.t1, windows[i].start_s, windows[i].end_s) > 0.0)
    };
    let idle: Vec<&Interval> = intervals.iter().filter(|iv| !in_any_window(iv)).collect();
    let prefix = |list: &[&Interval]| -> (Vec<f64>, Vec<f64>) {
        let mut e = vec![0.0; list.len() + 1];
        let mut t = vec![0.0; list.len() + 1];
        for (k, iv) in list.iter().enumerate() {
            e[k + 1] = e[k] + iv.energy;
            t[k + 1] = t[k] + (iv.t1 - iv.t0);
        }
        (e, t)
    };
    let (idle_e, idle_t) = prefix(&idle);
    // Mean power of the idle intervals wholly within [from, to].
    let idle_mean = |from: f64, to: f64| -> Option<f64> {
        let lo = idle.partition_point(|iv| iv.t0 < from);
        let hi = idle.partition_point(|iv| iv.t1 <= to).max(lo);
        let t = idle_t[hi] - idle_t[lo];
        (t > 0.0).then(|| (idle_e[hi] - idle_e[lo]) / t)
    };
    let lookback = options.lookback_s;
    // Windows back to back (less than BACK_TO_BACK_GAP_S apart) form one busy stretch:
    // each of them takes the idle measured before the stretch and after it.
    let mut stretch = vec![(0.0, 0.0); windows.len()];
    let mut first = 0;
    for i in 0..=windows.len() {
        let ends = i == windows.len() || (i > 0 && windows[i].start_s - windows[i - 1].end_s >= BACK_TO_BACK_GAP_S);
        if i > 0 && ends {
            for s in &mut stretch[first..i] {
                *s = (windows[first].start_s, windows[i - 1].end_s);
            }
            first = i;
        }
    }
    let idle_levels: Vec<(Option<f64>, Option<f64>)> = stretch
        .iter()
        .map(|&(start, end)| {
            let before = idle_mean(start - lookback, start).or_else(|| idle_mean(start - 3.0 * lookback, start));
            let after = idle_mean(end, end + lookback).or_else(|| idle_mean(end, end + 3.0 * lookback));
            (before, after)
        })
        .collect();
    let global_idle = idle_mean(f64::NEG_INFINITY, f64::INFINITY).or(options.carried_idle_w);
    let all: Vec<&Interval> = intervals.iter().collect();
    let (all_e, all_t) = prefix(&all);
    let busy: Vec<Option<f64>> = windows
        .iter()
        .map(|w| {
            let lo = intervals.partition_point(|iv| iv.t0 < w.start_s);
            let hi = intervals.partition_point(|iv| iv.t1 <= w.end_s).max(lo);
            let t = all_t[hi] - all_t[lo];
            (t > 0.0).then(|| (all_e[hi] - all_e[lo]) / t)
        })
        .collect();
    let mut energy = vec![0.0; windows.len()];
    let mut edge = vec![0.0; windows.len()];
    for iv in &intervals {
        let shares: Vec<(usize, f64)> = overlapping(iv.t0, iv.t1)
            .map(|i| (i, overlap(iv.t0, iv.t1, windows[i].start_s, windows[i].end_s)))
            .filter(|(_, o)| *o > 0.0)
            .collect();
        if shares.is_empty() {
            continue;
        }
        let dt = iv.t1 - iv.t0;
        let inside: f64 = shares.iter().map(|s| s.1).sum();
        let idle_time = (dt - inside).max(0.0);
        if shares.len() == 1 && idle_time <= 0.0 {
            energy[shares[0].0] += iv.energy;
            continue;
        }
        // Idle levels that apply to this interval: before a window it contains the start
        // of, after a window it contains the end of.
        let mut levels = Vec::new();
        for &(i, _) in &shares {
            let w = &windows[i];
            if iv.t0 < w.start_s {
                levels.extend(idle_levels[i].0.or(idle_levels[i].1));
            }
            if iv.t1 > w.end_s {
                levels.extend(idle_levels[i].1.or(idle_levels[i].0));
            }
        }
        let idle_w = if levels.is_empty() {
            global_idle.unwrap_or_else(|| iv.power())
        } else {
            levels.iter().sum::<f64>() / levels.len() as f64
        };
        let excess = iv.energy - idle_w * idle_time;
        let known: Vec<f64> = shares.iter().filter_map(|&(i, _)| busy[i]).collect();
        let fallback = if known.is_empty() { 1.0 } else { known.iter().sum::<f64>() / known.len() as f64 };
        let weights: Vec<f64> = shares.iter().map(|&(i, o)| busy[i].unwrap_or(fallback).abs().max(1e-9) * o).collect();
        let total_weight: f64 = weights.iter().sum();
        for (&(i, _), weight) in shares.iter().zip(&weights) {
            let share = excess * weight / total_weight;
            energy[i] += share;
            edge[i] += share;
        }
    }
    Ok(windows
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let (before, after) = idle_levels[i];
            let idle_w = match (before, after) {
                (Some(b), Some(a)) => 0.5 * (a + b),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => global_idle.unwrap_or(0.0),
            };
            let points = curve.points();
            let points_inside =
                points.partition_point(|p| p.0 < w.end_s).saturating_sub(points.partition_point(|p| p.0 <= w.start_s));
            WindowEnergy {
                index: w.index,
                start_s: w.start_s,
                end_s: w.end_s,
                energy_j: energy[i],
                dynamic_j: energy[i] - idle_w * w.duration_s(),
                idle_before_w: before,
                idle_after_w: after,
                idle_w,
                busy_w: busy[i],
                points_inside,
                edge_energy_j: edge[i],
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter-like curve of a step signal: idle 100 W, busy 300 W in [a, b], ticks every 0.1 s.
    fn stepped(windows: &[(f64, f64)], until: f64) -> EnergyCurve {
        let power = |t: f64| {
            if windows.iter().any(|&(a, b)| t >= a && t < b) {
                300.0
            } else {
                100.0
            }
        };
        let dt = 1e-4;
        let mut points = Vec::new();
        let mut e = 0.0;
        let mut t = 0.0;
        let mut next_tick = 0.037;
        while t < until {
            if t >= next_tick {
                points.push((next_tick, e));
                next_tick += 0.1;
            }
            e += power(t + 0.5 * dt) * dt;
            t += dt;
        }
        EnergyCurve::from_points(points)
    }

    fn window(index: u32, start_s: f64, end_s: f64) -> Window {
        Window { index, start_s, end_s }
    }

    #[test]
    fn a_window_between_ticks_is_split_with_idle_power() {
        let curve = stepped(&[(1.013, 1.322)], 3.0);
        let w = window_energies(&curve, &[window(0, 1.013, 1.322)], SplitOptions::default()).unwrap();
        assert!((w[0].energy_j - 300.0 * 0.309).abs() < 0.05, "{:?}", w[0]);
        assert!((w[0].dynamic_j - 200.0 * 0.309).abs() < 0.05);
        assert!((w[0].idle_before_w.unwrap() - 100.0).abs() < 0.05, "{:?}", w[0]);
        assert_eq!(w[0].points_inside, 3);
    }

    #[test]
    fn two_windows_in_one_tick_interval_share_it_by_busy_power() {
        let spans = [(1.0, 1.5), (1.56, 2.06)];
        let curve = stepped(&spans, 3.5);
        let ws = [window(0, 1.0, 1.5), window(1, 1.56, 2.06)];
        let w = window_energies(&curve, &ws, SplitOptions::default()).unwrap();
        for e in &w {
            assert!((e.energy_j - 150.0).abs() / 150.0 < 0.002, "{e:?}");
        }
    }

    #[test]
    fn back_to_back_windows_share_the_idle_around_their_stretch() {
        // One busy stretch 1.0-3.0 s cut into ten windows of 0.2 s, edges at any tick phase.
        let curve = stepped(&[(1.0, 3.0)], 4.5);
        let ws: Vec<Window> = (0..10).map(|i| window(i, 1.0 + 0.2 * f64::from(i), 1.2 + 0.2 * f64::from(i))).collect();
        let w = window_energies(&curve, &ws, SplitOptions::default()).unwrap();
        for e in &w {
            assert!((e.energy_j - 60.0).abs() / 60.0 < 0.002, "{e:?}");
            assert!((e.idle_w - 100.0).abs() < 0.05, "{e:?}");
            assert!((e.dynamic_j - 40.0).abs() / 40.0 < 0.005, "{e:?}");
        }
    }

    #[test]
    fn uncovered_and_overlapping_windows_are_errors() {
        let curve = stepped(&[], 1.0);
        let err = window_energies(&curve, &[window(0, 0.5, 2.0)], SplitOptions::default()).unwrap_err();
        assert!(err.message().contains("record longer"), "{err}");
        let err =
            window_energies(&curve, &[window(0, 0.2, 0.5), window(1, 0.4, 0.6)], SplitOptions::default()).unwrap_err();
        assert!(err.message().contains("overlap"), "{err}");
    }

    #[test]
    fn a_guard_past_the_readings_is_clipped_and_the_idle_may_be_carried() {
        use energy_results::trace::{GUARD_AFTER_WINDOW, GUARD_BEFORE_WINDOW};
        // A lean paired run: guard, windows 1.0-1.6 s, a guard to 1.7 s, the readings ending
        // at the tick after the last window (1.637 s), no idle after; none before either.
        let curve = stepped(&[(0.9, 1.7)], 1.65);
        let curve = EnergyCurve::from_points(curve.points().iter().copied().filter(|p| p.0 > 0.9).collect());
        let ws: Vec<Window> = [window(GUARD_BEFORE_WINDOW, 0.9, 1.0), window(GUARD_AFTER_WINDOW, 1.6, 1.7)]
            .into_iter()
            .chain((0..6).map(|i| window(i, f64::from(10 + i) / 10.0, f64::from(11 + i) / 10.0)))
            .collect();
        let carried = SplitOptions { carried_idle_w: Some(97.0), ..SplitOptions::default() };
        let w = window_energies(&curve, &ws, carried).unwrap();
        let measured: Vec<&WindowEnergy> = w.iter().filter(|e| !is_auxiliary_window(e.index)).collect();
        assert_eq!(measured.len(), 6);
        for e in measured {
            assert!((e.energy_j - 30.0).abs() / 30.0 < 0.002, "{e:?}");
            assert_eq!((e.idle_before_w, e.idle_after_w, e.idle_w), (None, None, 97.0), "{e:?}");
        }
        // A measured window past the readings is still refused.
        let err = window_energies(&curve, &[window(0, 1.5, 1.69)], SplitOptions::default()).unwrap_err();
        assert!(err.message().contains("record longer"), "{err}");
    }
}
