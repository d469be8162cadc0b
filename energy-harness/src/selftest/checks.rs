//! The selftest's checks, as pure functions of measured windows: linearity in launch count
//! (with residuals against the counter's tick phase), linearity in duty, and agreement
//! between independent sources. Each returns its figures and whether its pass rule holds.

use serde::{Deserialize, Serialize};

use crate::engine::stats::linear_fit;
use crate::sensors::SourceKind;

/// Largest difference between the launch-count slope and the harness's dynamic energy
/// per launch that passes, percent.
pub const SLOPE_TOLERANCE_PCT: f64 = 2.0;
/// Largest residual of the duty line, percent of the window's energy, that passes (or
/// [`DUTY_NOISE_MULTIPLE`] times the source's window-to-window scatter, if larger: a bend
/// smaller than that cannot be told from noise).
pub const DUTY_RESIDUAL_TOLERANCE_PCT: f64 = 1.0;
/// See [`DUTY_RESIDUAL_TOLERANCE_PCT`].
pub const DUTY_NOISE_MULTIPLE: f64 = 3.0;
/// Largest difference between the duty slope (busy − idle power) and the harness's
/// dynamic power that passes, percent, for periods of at least [`DUTY_SLOPE_MIN_PERIOD_S`].
pub const DUTY_SLOPE_TOLERANCE_PCT: f64 = 5.0;
/// A square wave whose period lies between these multiples of a source's update period
/// aliases with its updates: a window edge inside it is placed only to a fraction of an
/// update's worth of the power swing (the counter: up to ±5 % of a 1 s window, SD ~2 %,
/// for a 50 ms wave on an H100 and an H200). Such periods report the source's error,
/// unjudged; a wave of four updates or more per period is judged (a 500 ms wave against
/// a 100 ms tick, whose measured period may read a hair above 100 ms).
pub const ALIASED_PERIODS: (f64, f64) = (0.1, 4.0);
/// Shorter duty periods report their slope without judging it: the GPU's own power ramps
/// at each burst (clocks, voltage) make the busy part of a short cycle draw less than a
/// steady kernel, which is physics, not the sensor.
pub const DUTY_SLOPE_MIN_PERIOD_S: f64 = 0.1;
/// Largest median difference from the other sources that counts as agreement, percent.
pub const AGREEMENT_TOLERANCE_PCT: f64 = 2.0;
/// Phase bins of the residual check.
pub const PHASE_BINS: usize = 4;
/// A phase bin's mean residual is a pattern when it exceeds this many standard errors...
pub const PHASE_SIGMAS: f64 = 4.0;
/// ...and this share of the dynamic energy of the median window (or 2 mJ, two counter
/// steps, whichever is larger).
pub const PHASE_FLOOR_SHARE: f64 = 0.005;

/// One window of the launch-count check as a source measured it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountWindow {
    /// Launches in the window.
    pub launches: u64,
    /// Dynamic energy the source gives the window, J.
    pub dynamic_j: f64,
    /// Where the window started in the counter's tick period, 0..1 (`None` without a tick grid).
    pub phase: Option<f64>,
}

/// The mean residual of the windows that started in one part of the tick period.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseBin {
    /// Start of the bin, fraction of the tick period.
    pub from: f64,
    /// End of the bin.
    pub to: f64,
    /// Windows in it.
    pub windows: usize,
    /// Mean residual from the line, less the mean residual of all the windows judged, J.
    pub mean_residual_j: f64,
    /// Its standard error from the scatter within the bins, J.
    pub std_error_j: f64,
}

/// Energy against launch count: `E(N) = E₀ + e·N`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Linearity {
    /// Slope: dynamic energy per launch, J.
    pub slope_j: f64,
    /// Half-width of its 95 % interval, J.
    pub slope_half_width_j: f64,
    /// Intercept: dynamic energy of an empty window, J.
    pub intercept_j: f64,
    /// Coefficient of determination.
    pub r_squared: f64,
    /// RMS residual of a window, J: the source's window-to-window scatter.
    pub rms_residual_j: f64,
    /// Slope against the harness's dynamic energy per launch, percent.
    pub vs_harness_pct: f64,
    /// Residuals by start phase (empty without a tick grid).
    pub phase_bins: Vec<PhaseBin>,
    /// Whether some phase bin's residual is a pattern (an edge bias).
    pub phase_pattern: bool,
    /// Windows fitted.
    pub windows: usize,
    /// Whether the slope is within [`SLOPE_TOLERANCE_PCT`] and no phase pattern shows.
    pub pass: bool,
}

/// Fits the launch-count windows of one source and judges them against the harness's
/// dynamic energy per launch. `None` with fewer than three windows or one launch count.
///
/// An isolated window's error is about the same in joules whatever its length (on an
/// H100 and an H200: 0.4-1 J RMS, the idle level around it and the GPU's ramp at its
/// start), so the line is fitted by ordinary least squares in joules; the intercept takes
/// the ramp (−0.3 to −0.8 J measured). The phase check looks at the shorter half of the
/// windows, where an edge bias is largest against the window's energy.
pub fn linearity(windows: &[CountWindow], harness_dynamic_j: f64) -> Option<Linearity> {
    if windows.len() < 3 || windows.iter().any(|w| w.launches == 0 || !w.dynamic_j.is_finite()) {
        return None;
    }
    let points: Vec<(f64, f64)> = windows.iter().map(|w| (w.launches as f64, w.dynamic_j)).collect();
    let fit = linear_fit(&points)?;
    let t = crate::engine::stats::student_t_975(points.len().saturating_sub(2));
    let vs_harness_pct = (fit.slope / harness_dynamic_j - 1.0) * 100.0;
    let residuals: Vec<f64> = points.iter().map(|(x, y)| y - fit.intercept - fit.slope * x).collect();
    let rms_residual_j =
        (residuals.iter().map(|r| r * r).sum::<f64>() / (residuals.len().saturating_sub(2).max(1)) as f64).sqrt();
    let mut counts: Vec<u64> = windows.iter().map(|w| w.launches).collect();
    counts.sort_unstable();
    let median = counts[(counts.len() - 1) / 2];
    let short: Vec<(CountWindow, f64)> =
        windows.iter().zip(&residuals).filter(|(w, _)| w.launches <= median).map(|(w, r)| (*w, *r)).collect();
    let floor_j = (PHASE_FLOOR_SHARE * fit.slope.abs() * median as f64).max(0.002);
    let phase_bins = phase_bins(&short);
    let phase_pattern = phase_bins.iter().any(|b| {
        b.windows >= 2 && b.mean_residual_j.abs() > PHASE_SIGMAS * b.std_error_j && b.mean_residual_j.abs() > floor_j
    });
    Some(Linearity {
        slope_j: fit.slope,
        slope_half_width_j: t * fit.slope_std_err,
        intercept_j: fit.intercept,
        r_squared: fit.r_squared,
        rms_residual_j,
        vs_harness_pct,
        pass: vs_harness_pct.abs() <= SLOPE_TOLERANCE_PCT && !phase_pattern,
        phase_bins,
        phase_pattern,
        windows: points.len(),
    })
}

/// Residuals binned by start phase; a bin's standard error uses the scatter pooled
/// within all bins (a handful of windows per bin).
fn phase_bins(windows: &[(CountWindow, f64)]) -> Vec<PhaseBin> {
    if windows.len() < 2 || windows.iter().any(|(w, _)| w.phase.is_none()) {
        return Vec::new();
    }
    let bin_of = |p: f64| ((p * PHASE_BINS as f64) as usize).min(PHASE_BINS - 1);
    let mut members: Vec<Vec<f64>> = vec![Vec::new(); PHASE_BINS];
    for (w, r) in windows {
        members[bin_of(w.phase.unwrap_or(0.0))].push(*r);
    }
    let mean_all = windows.iter().map(|(_, r)| r).sum::<f64>() / windows.len() as f64;
    let means: Vec<f64> =
        members.iter().map(|m| if m.is_empty() { 0.0 } else { m.iter().sum::<f64>() / m.len() as f64 }).collect();
    // The scatter within the bins (a pattern between them does not inflate it).
    let occupied = members.iter().filter(|m| !m.is_empty()).count();
    let within: f64 =
        members.iter().zip(&means).map(|(m, mean)| m.iter().map(|r| (r - mean).powi(2)).sum::<f64>()).sum();
    let dof = windows.len().saturating_sub(occupied).max(1) as f64;
    let sd = (within / dof).sqrt();
    members
        .iter()
        .zip(&means)
        .enumerate()
        .map(|(b, (m, mean))| PhaseBin {
            from: b as f64 / PHASE_BINS as f64,
            to: (b + 1) as f64 / PHASE_BINS as f64,
            windows: m.len(),
            mean_residual_j: if m.is_empty() { 0.0 } else { mean - mean_all },
            std_error_j: if m.is_empty() { f64::INFINITY } else { sd / (m.len() as f64).sqrt() },
        })
        .collect()
}

/// One window of the duty check as a source measured it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DutyWindow {
    /// Busy/idle period, s.
    pub period_s: f64,
    /// Busy share of the window (GPU time / window length), 0..1.
    pub duty: f64,
    /// Window length, s.
    pub length_s: f64,
    /// Energy the source gives the window, J.
    pub energy_j: f64,
    /// The median energy the other sources that agree with the rest give the same
    /// window, J (`None` without such sources).
    pub others_j: Option<f64>,
}

/// Mean power against duty at one period: `P = P_idle + duty · (P_busy − P_idle)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DutyLine {
    /// The period, s.
    pub period_s: f64,
    /// Slope: busy − idle power, W.
    pub slope_w: f64,
    /// Intercept: idle power between the bursts, W.
    pub intercept_w: f64,
    /// Largest residual, percent of the window's mean power.
    pub max_residual_pct: f64,
    /// The residual allowed at that window, percent ([`DUTY_RESIDUAL_TOLERANCE_PCT`], or
    /// the source's scatter × [`DUTY_NOISE_MULTIPLE`]).
    pub tolerance_pct: f64,
    /// Slope against the harness's dynamic power, percent.
    pub vs_harness_pct: f64,
    /// Whether the slope is judged at this period (see [`DUTY_SLOPE_MIN_PERIOD_S`]).
    pub slope_judged: bool,
    /// Whether the period aliases with the source's updates ([`ALIASED_PERIODS`]): the
    /// line is then reported as the source's resolution, not judged.
    pub aliased: bool,
    /// Windows fitted.
    pub windows: usize,
    /// Whether the other sources see the same bend: this source's window energies stay
    /// within [`DUTY_RESIDUAL_TOLERANCE_PCT`] of theirs (after their mean offset), so a
    /// bend is the GPU's power, not this sensor.
    pub shared_with_others: bool,
    /// Whether the line holds, or bends only as the others see it too (and, where
    /// judged, the slope).
    pub pass: bool,
}

/// One line per period, in mean power so windows of slightly different length compare;
/// `update_s` is the source's update period and `scatter_j` its window-to-window scatter
/// (the launch-count fit's RMS residual), when known.
pub fn duty_lines(
    windows: &[DutyWindow],
    harness_dynamic_w: f64,
    update_s: Option<f64>,
    scatter_j: Option<f64>,
) -> Vec<DutyLine> {
    let mut periods: Vec<f64> = windows.iter().map(|w| w.period_s).collect();
    periods.sort_by(f64::total_cmp);
    periods.dedup();
    periods
        .into_iter()
        .filter_map(|period_s| {
            let points: Vec<(f64, f64)> = windows
                .iter()
                .filter(|w| w.period_s == period_s && w.length_s > 0.0)
                .map(|w| (w.duty, w.energy_j / w.length_s))
                .collect();
            if points.len() < 3 {
                return None;
            }
            let fit = linear_fit(&points)?;
            let mine: Vec<&DutyWindow> =
                windows.iter().filter(|w| w.period_s == period_s && w.length_s > 0.0).collect();
            let ratios: Vec<f64> = mine.iter().filter_map(|w| w.others_j.map(|o| w.energy_j / o)).collect();
            let shared_with_others = ratios.len() == mine.len() && !ratios.is_empty() && {
                let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
                ratios.iter().all(|r| ((r / mean) - 1.0).abs() * 100.0 <= DUTY_RESIDUAL_TOLERANCE_PCT)
            };
            // (residual %, allowed %) per window; the worst is the one most over its allowance.
            let judged_points: Vec<(f64, f64)> = mine
                .iter()
                .map(|w| {
                    let y = w.energy_j / w.length_s;
                    let residual = ((y - fit.intercept - fit.slope * w.duty) / y).abs() * 100.0;
                    let noise = scatter_j.map_or(0.0, |s| DUTY_NOISE_MULTIPLE * s / w.energy_j * 100.0);
                    (residual, DUTY_RESIDUAL_TOLERANCE_PCT.max(noise))
                })
                .collect();
            let (max_residual_pct, tolerance_pct) =
                judged_points.iter().copied().fold((0.0, DUTY_RESIDUAL_TOLERANCE_PCT), |worst, p| {
                    if p.0 - p.1 > worst.0 - worst.1 {
                        p
                    } else {
                        worst
                    }
                });
            let vs_harness_pct = (fit.slope / harness_dynamic_w - 1.0) * 100.0;
            let aliased =
                update_s.is_some_and(|u| period_s > ALIASED_PERIODS.0 * u && period_s < ALIASED_PERIODS.1 * u);
            let slope_judged = period_s >= DUTY_SLOPE_MIN_PERIOD_S && !aliased;
            let pass = aliased
                || (max_residual_pct <= tolerance_pct || shared_with_others)
                    && (!slope_judged || vs_harness_pct.abs() <= DUTY_SLOPE_TOLERANCE_PCT);
            Some(DutyLine {
                period_s,
                slope_w: fit.slope,
                intercept_w: fit.intercept,
                max_residual_pct,
                tolerance_pct,
                vs_harness_pct,
                slope_judged,
                aliased,
                windows: points.len(),
                shared_with_others,
                pass,
            })
        })
        .collect()
}

/// How one source's window energies compare with another's on the same windows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairDifference {
    /// The other source.
    pub other: SourceKind,
    /// Median of (this − other) / other over the windows, percent.
    pub median_pct: f64,
    /// Smallest and largest difference, percent.
    pub range_pct: (f64, f64),
    /// Windows compared.
    pub windows: usize,
}

/// One source against the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Against each other source.
    pub pairs: Vec<PairDifference>,
    /// Others it agrees with (median within [`AGREEMENT_TOLERANCE_PCT`]).
    pub agrees_with: usize,
    /// Whether it agrees with at least half of the others (with the only other, when one).
    pub pass: bool,
}

/// Compares every source with every other on the windows both measured (`energies`:
/// per source, window index → energy, J). A source passes when it agrees with at least
/// half of the others (one source off while the others agree fails alone); with one
/// other, the two either agree or both fail (which is wrong cannot be told).
pub fn agreement(energies: &[(SourceKind, Vec<(u32, f64)>)]) -> Vec<(SourceKind, Agreement)> {
    energies
        .iter()
        .map(|(kind, mine)| {
            let pairs: Vec<PairDifference> = energies
                .iter()
                .filter(|(other, _)| other != kind)
                .filter_map(|(other, theirs)| {
                    let mut diffs: Vec<f64> = mine
                        .iter()
                        .filter_map(|(i, e)| theirs.iter().find(|(j, _)| j == i).map(|(_, o)| (e - o) / o * 100.0))
                        .filter(|d| d.is_finite())
                        .collect();
                    if diffs.is_empty() {
                        return None;
                    }
                    diffs.sort_by(f64::total_cmp);
                    let median = if diffs.len() % 2 == 1 {
                        diffs[diffs.len() / 2]
                    } else {
                        (diffs[diffs.len() / 2 - 1] + diffs[diffs.len() / 2]) / 2.0
                    };
                    Some(PairDifference {
                        other: *other,
                        median_pct: median,
                        range_pct: (diffs[0], diffs[diffs.len() - 1]),
                        windows: diffs.len(),
                    })
                })
                .collect();
            let agrees_with = pairs.iter().filter(|p| p.median_pct.abs() <= AGREEMENT_TOLERANCE_PCT).count();
            let pass = pairs.is_empty() || (agrees_with >= 1 && 2 * agrees_with >= pairs.len());
            (*kind, Agreement { pairs, agrees_with, pass })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_windows(e0: f64, e: f64, bias: impl Fn(f64) -> f64) -> Vec<CountWindow> {
        let mut out = Vec::new();
        for (i, n) in [10u64, 100, 1000, 10_000].iter().cycle().take(40).enumerate() {
            let phase = (i as f64 * 0.37) % 1.0;
            let wiggle = 1e-4 * ((i * 7919) % 13) as f64;
            out.push(CountWindow {
                launches: *n,
                dynamic_j: e0 + e * *n as f64 + bias(phase) + wiggle,
                phase: Some(phase),
            });
        }
        out
    }

    #[test]
    fn a_straight_line_passes_and_a_wrong_slope_fails() {
        let windows = count_windows(0.01, 0.016, |_| 0.0);
        let l = linearity(&windows, 0.016).unwrap();
        assert!(l.pass && !l.phase_pattern, "{l:?}");
        assert!((l.slope_j / 0.016 - 1.0).abs() < 1e-3, "{l:?}");
        let l = linearity(&windows, 0.016 * 1.05).unwrap();
        assert!(!l.pass && (l.vs_harness_pct + 4.76).abs() < 0.1, "{l:?}");
    }

    #[test]
    fn an_edge_bias_that_depends_on_phase_is_a_pattern() {
        let windows = count_windows(0.01, 0.016, |phase| if phase < 0.25 { 0.5 } else { 0.0 });
        let l = linearity(&windows, 0.016).unwrap();
        assert!(l.phase_pattern && !l.pass, "{l:?}");
    }

    #[test]
    fn energy_linear_in_duty_passes_and_a_bent_line_fails() {
        let mut windows = Vec::new();
        for period_s in [0.005, 0.05, 0.5] {
            for duty in [0.1, 0.5, 0.9] {
                windows.push(DutyWindow {
                    period_s,
                    duty,
                    length_s: 1.0,
                    energy_j: 120.0 + duty * 150.0,
                    others_j: None,
                });
            }
        }
        let lines = duty_lines(&windows, 150.0, None, None);
        assert_eq!(lines.len(), 3);
        // A source updating every 100 ms aliases with the 50 ms wave: reported, not judged.
        let aliased = duty_lines(&windows, 150.0, Some(0.1), None);
        assert_eq!(aliased.iter().map(|l| l.aliased).collect::<Vec<_>>(), vec![false, true, false]);
        assert!(lines.iter().all(|l| l.pass && l.vs_harness_pct.abs() < 1e-9), "{lines:?}");
        // A sensor that reads high power low (saturating) bends the line.
        for w in &mut windows {
            w.energy_j = (120.0 + w.duty * 150.0).min(220.0);
        }
        assert!(duty_lines(&windows, 150.0, None, None).iter().all(|l| !l.pass));
        // The same bend seen by the other sources is the GPU's power, not this sensor.
        for w in &mut windows {
            w.others_j = Some(w.energy_j * 1.004);
        }
        // (At the 500 ms period the slope is judged too, and the saturated one is off.)
        let lines = duty_lines(&windows, 150.0, None, None);
        assert!(lines.iter().all(|l| l.shared_with_others && l.pass != l.slope_judged), "{lines:?}");
        // A bend of its own, with others that stay straight, fails.
        for w in &mut windows {
            w.others_j = Some(120.0 + w.duty * 150.0);
        }
        assert!(duty_lines(&windows, 150.0, None, None).iter().all(|l| !l.pass && !l.shared_with_others));
    }

    #[test]
    fn the_source_that_disagrees_with_the_others_fails() {
        let windows = |gain: f64| (0..6).map(|i| (i, gain * (10.0 + i as f64))).collect::<Vec<_>>();
        let energies = vec![
            (SourceKind::Counter, windows(1.05)),
            (SourceKind::SampleBuffer, windows(1.0)),
            (SourceKind::AverageField, windows(1.003)),
        ];
        let result = agreement(&energies);
        let pass: Vec<(SourceKind, bool)> = result.iter().map(|(k, a)| (*k, a.pass)).collect();
        assert_eq!(
            pass,
            vec![(SourceKind::Counter, false), (SourceKind::SampleBuffer, true), (SourceKind::AverageField, true)]
        );
        let two = agreement(&energies[..2]);
        assert!(two.iter().all(|(_, a)| !a.pass), "two that disagree: neither can be trusted");
    }
}
