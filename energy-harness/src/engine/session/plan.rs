//! The plan of a measurement, made from the warm-up: launches per window, how many
//! windows, how much idle around the busy stretch.

use super::MAX_LAUNCHES_PER_WINDOW;
use crate::engine::options::{MeasureOptions, ResolvedOptions};
use crate::sensors::SensorModel;

/// The plan of a measurement, made from the warm-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Launches per window.
    pub launches_per_window: u64,
    /// Fewest windows.
    pub min_windows: usize,
    /// Most windows.
    pub max_windows: usize,
    /// Idle before the stretch and after it, s.
    pub idle_s: f64,
    /// GPU time per launch from the warm-up, s.
    pub launch_s: f64,
}

impl Plan {
    /// The window length, s.
    pub fn window_s(&self) -> f64 {
        self.launches_per_window as f64 * self.launch_s
    }

    /// The plan with its windows' launches rounded up to a whole number of `quantum` (a CUDA
    /// graph's replays: [`Workload::launch_quantum`](crate::workload::Workload::launch_quantum)).
    pub fn in_quanta_of(self, quantum: u64) -> Plan {
        Plan { launches_per_window: crate::workload::whole_quanta(self.launches_per_window, quantum), ..self }
    }
}

/// Idle needed before the stretch (and after it) for a source's model: two whole counter
/// ticks whatever the phase; a boxcar's width and more; three time constants of a lag.
pub fn idle_s(model: &SensorModel) -> f64 {
    match *model {
        SensorModel::Boxcar { width_s } => width_s + 0.5,
        SensorModel::FirstOrder { tau_s } => (3.0 * tau_s).max(0.3),
        _ => 0.3,
    }
}

/// The fewest launches of `launch_s` that fill `window_s` (at least one, at most
/// [`MAX_LAUNCHES_PER_WINDOW`]; a float error of a part in 10⁹ does not add a launch).
pub fn launches_filling(window_s: f64, launch_s: f64) -> u64 {
    ((window_s / launch_s) * (1.0 - 1e-9)).ceil().clamp(1.0, MAX_LAUNCHES_PER_WINDOW as f64) as u64
}

/// Plans windows for a kernel taking `launch_s` per launch: launches per window are the
/// fewest that fill the window length (at least one), so that no window is shorter than it
/// (a counter's window never spans less than one tick: nine launches of 10.3 ms would span
/// 0.93 of a 100 ms tick, their energy interpolated between updates); the window count lies
/// between the options' minimum and maximum, the maximum capped so the busy stretch stays within
/// [`MeasureOptions::MAX_BUSY_S`] (never under [`MeasureOptions::MIN_WINDOWS`]): a 1 s
/// kernel gets 4 windows of one launch, after its warm-up launch. A window count given
/// in the options is kept whatever it costs.
pub fn plan(options: &ResolvedOptions, launch_s: f64, model: &SensorModel) -> Plan {
    let launch_s = launch_s.max(1e-9);
    let window_s = options.window_s(model);
    let launches = launches_filling(window_s, launch_s);
    let (min_windows, max_windows) = if options.fixed_windows {
        (options.min_windows, options.max_windows)
    } else {
        // (A few percent of slack, so that four launches of "1 s" fit four seconds.)
        let fit = ((MeasureOptions::MAX_BUSY_S / (launches as f64 * launch_s) * 1.03).floor() as usize)
            .max(MeasureOptions::MIN_WINDOWS);
        let max = options.max_windows.min(fit);
        (options.min_windows.min(max), max)
    };
    Plan { launches_per_window: launches, min_windows, max_windows, idle_s: idle_s(model), launch_s }
}
