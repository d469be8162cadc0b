//! The physical checks of an analysis: every figure of a window possible (finite, not
//! negative, under the GPU's power ceiling, not far below its idle) and no step of the
//! clock inside a window; what fails them is refused, never reported.

use crate::engine::windows::WindowEnergy;
use crate::sensors::SourceKind;
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{is_auxiliary_window, Reading, Window};
use energy_units::format_si;

/// How far above its power limit a window's mean power may read before it is rejected:
/// boards exceed the limit briefly, never by 2× over a 100 ms tick.
pub const POWER_CEILING_FACTOR: f64 = 2.0;

pub use energy_results::result::GENERIC_POWER_CEILING_W;

/// How far below the active idle around it a window's mean power may read before it is
/// refused, as a fraction of that idle (beyond the idle's own shift across the window and
/// the energy its edges were given): a busy board does not draw a quarter less than idle.
/// On the 6,809 windows of the committed H100 and H200 traces, every source, the lowest
/// reads 5.6 % *above* its idle.
pub const IDLE_NOISE_FRACTION: f64 = 0.25;

/// Energy a window may lack below its idle floor whatever its length, J: the counter's
/// 1 mJ resolution at each end.
pub const ENERGY_RESOLUTION_J: f64 = 2e-3;

/// A gap between two readings inside a window longer than this many times the median
/// gap (and than [`MIN_TIME_STEP_S`]) is a step of the clock (or a stalled recording),
/// not a sensor's rhythm: the window's length and energy are unknown. The committed H100
/// traces' longest gap inside a window is 8.5 times their median.
pub const TIME_STEP_FACTOR: f64 = 100.0;

/// The shortest gap between readings inside a window that is taken for a time step, s.
pub const MIN_TIME_STEP_S: f64 = 1.0;

/// Checks that every figure of an analysis is physically possible before anything
/// reports it: every figure finite; the window longer than nothing; total energy, idle
/// (the mean subtracted and the levels before and after) and busy power non-negative;
/// idle, busy and mean power under the ceiling; and the window's energy not below
/// [`IDLE_NOISE_FRACTION`] under the lowest idle around it more than its edges and
/// [`ENERGY_RESOLUTION_J`] allow (a dynamic energy of −435 kJ is a clock step or a wrong
/// sensor model, not a measurement). The error names the window and the figure.
pub fn check_physical(windows: &[WindowEnergy], ceiling_w: f64, source: SourceKind) -> Result<()> {
    // Auxiliary stretches (a warm-up; windows too short for a slow source) are analyzed
    // so that their busy time is not taken for idle, but never reported: not judged.
    for w in windows.iter().filter(|w| !is_auxiliary_window(w.index)) {
        if let Some(problem) = window_problem(w, ceiling_w) {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "window {} ({}): {problem}; the {source} readings are corrupt or were reset, or the sensor model \
                     does not fit them, so nothing is reported",
                    w.index,
                    span(w.start_s, w.end_s)
                ),
            ));
        }
    }
    Ok(())
}

/// What is impossible about one window's figures, if anything (see [`check_physical`]).
fn window_problem(w: &WindowEnergy, ceiling_w: f64) -> Option<String> {
    let duration = w.duration_s();
    let power = w.energy_j / duration;
    let idle_levels = [Some(w.idle_w), w.idle_before_w, w.idle_after_w];
    let figures =
        [Some(w.start_s), Some(w.end_s), Some(w.energy_j), Some(w.dynamic_j), Some(w.edge_energy_j), w.busy_w];
    if !figures.iter().chain(&idle_levels).flatten().all(|v| v.is_finite()) {
        return Some(format!(
            "a figure is not a finite number (energy {:.4e} J, dynamic {:.4e} J, idle {:.4e} W, busy {} W)",
            w.energy_j,
            w.dynamic_j,
            w.idle_w,
            w.busy_w.map_or("-".into(), |b| format!("{b:.4e}"))
        ));
    }
    if duration.is_nan() || duration <= 0.0 || !duration.is_finite() {
        return Some(format!("it has no length ({duration} s)"));
    }
    if w.energy_j < 0.0 {
        return Some(format!("its total energy is negative ({:.4e} J)", w.energy_j));
    }
    for (level, what) in [(Some(w.idle_w), "around"), (w.idle_before_w, "before"), (w.idle_after_w, "after")] {
        match level {
            Some(idle) if idle < 0.0 => {
                return Some(format!(
                    "the active idle {what} it is negative ({}): no board draws less than nothing",
                    quantity(idle, "W")
                ))
            }
            Some(idle) if idle > ceiling_w => {
                return Some(format!(
                    "the active idle {what} it, {}, is above the {ceiling_w:.0} W any reading of this GPU can mean",
                    quantity(idle, "W")
                ))
            }
            _ => {}
        }
    }
    if let Some(busy) = w.busy_w {
        if busy < 0.0 {
            return Some(format!(
                "the power inside it is negative ({}): the sensor model over-corrects",
                quantity(busy, "W")
            ));
        }
        if busy > ceiling_w {
            return Some(format!(
                "the power inside it, {}, is above the {ceiling_w:.0} W any reading of this GPU can mean",
                quantity(busy, "W")
            ));
        }
    }
    if power > ceiling_w {
        return Some(format!(
            "its mean power, {power:.4e} W, is above the {ceiling_w:.0} W any reading of this GPU can mean"
        ));
    }
    let lowest_idle = idle_levels.iter().flatten().fold(f64::INFINITY, |m, v| m.min(*v));
    let floor_j = (1.0 - IDLE_NOISE_FRACTION) * lowest_idle * duration - w.edge_energy_j.abs() - ENERGY_RESOLUTION_J;
    if w.energy_j < floor_j {
        return Some(format!(
            "its mean power, {} over {}, is {:.0} % below the {} of active idle around it (dynamic energy {}): a busy \
             board draws at least its idle, give or take {:.0} %",
            quantity(power, "W"),
            quantity(duration, "s"),
            (1.0 - power / lowest_idle) * 100.0,
            quantity(lowest_idle, "W"),
            quantity(w.dynamic_j, "J"),
            IDLE_NOISE_FRACTION * 100.0
        ));
    }
    None
}

/// A figure as a message prints it: `28.20 W`, or `9.0000e15 W` past 10⁷ (no prefix
/// goes that far).
fn quantity(v: f64, unit: &str) -> String {
    if v.abs() < 1e7 {
        format_si(v, unit, 4)
    } else {
        format!("{v:.4e} {unit}")
    }
}

/// A time as a message prints it: `3.000 s`, or `1.0000e15 s` past 10⁷ s (a corrupt time
/// is not 300 digits).
fn seconds(t: f64) -> String {
    if t.abs() < 1e7 {
        format!("{t:.3} s")
    } else {
        format!("{t:.4e} s")
    }
}

/// A window's span as a message prints it: `2.000-4.000 s`.
fn span(start: f64, end: f64) -> String {
    if start.abs().max(end.abs()) < 1e7 {
        format!("{start:.3}-{end:.3} s")
    } else {
        format!("{} to {}", seconds(start), seconds(end))
    }
}

/// Refuses a window with a step of the clock inside it: a gap between consecutive
/// readings (`sorted` by time) that overlaps the window and is longer than
/// [`TIME_STEP_FACTOR`] times the median gap and than [`MIN_TIME_STEP_S`]. Linear: only
/// the few long gaps are looked up among the windows (binary search).
pub fn check_time_steps(sorted: &[Reading], windows: &[Window], source: SourceKind) -> Result<()> {
    let mut gaps: Vec<f64> = sorted.windows(2).map(|p| p[1].time_s - p[0].time_s).filter(|g| *g > 0.0).collect();
    if gaps.is_empty() {
        return Ok(());
    }
    let middle = gaps.len() / 2;
    let median = *gaps.select_nth_unstable_by(middle, f64::total_cmp).1;
    let threshold = (TIME_STEP_FACTOR * median).max(MIN_TIME_STEP_S);
    let mut measured: Vec<&Window> = windows.iter().filter(|w| !is_auxiliary_window(w.index)).collect();
    measured.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    // The latest end among the windows so far, for the overlap search.
    let mut reach = Vec::with_capacity(measured.len());
    let mut latest = f64::NEG_INFINITY;
    for w in &measured {
        latest = latest.max(w.end_s);
        reach.push(latest);
    }
    for pair in sorted.windows(2) {
        let (t0, t1) = (pair[0].time_s, pair[1].time_s);
        if t1 - t0 <= threshold {
            continue;
        }
        // Windows starting before t1 and ending after t0 overlap the gap.
        let before_end = measured.partition_point(|w| w.start_s < t1);
        let first = reach[..before_end].partition_point(|&r| r <= t0);
        if let Some(w) = measured[first..before_end].iter().find(|w| w.end_s > t0) {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "window {} ({}): the {source} readings jump by {} from {} to {} inside it, where they come every \
                     {}: the clock stepped (or the recording stalled), so the window's length and energy are \
                     unknown; record it again",
                    w.index,
                    span(w.start_s, w.end_s),
                    seconds(t1 - t0),
                    seconds(t0),
                    seconds(t1),
                    format_si(median, "s", 3)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use energy_results::trace::AUXILIARY_WINDOW;

    /// A 1 s window at 300 W over 120 W of idle, every figure possible.
    fn window() -> WindowEnergy {
        WindowEnergy {
            index: 0,
            start_s: 2.0,
            end_s: 3.0,
            energy_j: 300.0,
            dynamic_j: 180.0,
            idle_before_w: Some(120.0),
            idle_after_w: Some(120.0),
            idle_w: 120.0,
            busy_w: Some(300.0),
            points_inside: 10,
            edge_energy_j: 1.0,
        }
    }

    fn problem(edit: impl FnOnce(&mut WindowEnergy)) -> String {
        let mut w = window();
        edit(&mut w);
        window_problem(&w, GENERIC_POWER_CEILING_W).unwrap_or_default()
    }

    #[test]
    fn every_figure_of_a_window_is_checked() {
        assert_eq!(problem(|_| {}), "");
        assert!(problem(|w| w.idle_before_w = Some(-50.8)).contains("the active idle before it is negative (-50.80 W)"));
        assert!(problem(|w| w.idle_after_w = Some(9e15))
            .contains("the active idle after it, 9.0000e15 W, is above the 5000 W"));
        assert!(problem(|w| w.busy_w = Some(-3.0)).contains("the power inside it is negative (-3.000 W)"));
        assert!(problem(|w| w.busy_w = Some(f64::NAN)).contains("not a finite number"));
        assert!(problem(|w| w.edge_energy_j = f64::INFINITY).contains("not a finite number"));
        assert!(problem(|w| w.end_s = 2.0).contains("no length"));
        // A 1 h window of 43 J (a clock step): far below idle.
        let e = problem(|w| {
            w.end_s = 3602.0;
            w.energy_j = 43.0;
            w.dynamic_j = 43.0 - 120.0 * 3600.0;
        });
        assert!(e.contains("its mean power, 11.94 mW over 3.600 ks, is 100 % below the 120.0 W"), "{e}");
    }

    #[test]
    fn a_window_below_idle_within_noise_is_a_measurement() {
        // 20 % below idle (a kernel that idles the board, an idle level off): reported.
        assert_eq!(problem(|w| w.energy_j = 96.0), "");
        // 30 % below a steady idle: refused; with a 40 W idle shift, or 40 J from its
        // edges, within noise.
        assert!(problem(|w| w.energy_j = 84.0).contains("is 30 % below"));
        assert_eq!(
            problem(|w| {
                w.energy_j = 84.0;
                w.idle_before_w = Some(100.0)
            }),
            ""
        );
        assert_eq!(
            problem(|w| {
                w.energy_j = 84.0;
                w.edge_energy_j = -10.0
            }),
            ""
        );
    }

    fn readings(times: &[f64]) -> Vec<Reading> {
        times.iter().map(|&time_s| Reading { time_s, value: 1.0 }).collect()
    }

    #[test]
    fn a_clock_step_inside_a_window_is_refused_and_elsewhere_it_is_not() {
        let mut times: Vec<f64> = (0..300).map(|i| f64::from(i) * 0.01).collect();
        // Jitter of eight times the spacing is a sensor's rhythm, not a step.
        times.retain(|t| !(1.2..1.28).contains(t));
        times.extend((0..100).map(|i| 3603.0 + f64::from(i) * 0.01));
        let r = readings(&times);
        let w = |index: u32, start_s: f64, end_s: f64| Window { index, start_s, end_s };
        assert!(check_time_steps(&r, &[w(0, 1.0, 2.0), w(1, 3603.1, 3603.5)], SourceKind::Counter).is_ok());
        let e = check_time_steps(&r, &[w(0, 1.0, 2.0), w(1, 2.5, 3603.5)], SourceKind::Counter).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Analysis);
        assert!(
            e.message().starts_with(
                "window 1 (2.500-3603.500 s): the counter readings jump by 3600.010 s from 2.990 s to 3603.000 s \
                 inside it, where they come every 10.0 ms"
            ),
            "{e}"
        );
        // A window that only touches the step's end, or an auxiliary stretch across it: not judged here.
        assert!(check_time_steps(&r, &[w(0, 3603.0, 3603.5)], SourceKind::Counter).is_ok());
        assert!(check_time_steps(&r, &[w(AUXILIARY_WINDOW, 2.5, 3603.5)], SourceKind::Counter).is_ok());
    }
}
