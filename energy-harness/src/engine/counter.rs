//! The energy counter: where its ticks are, and the energy between two instants.
//!
//! NVML's counter (`nvmlDeviceGetTotalEnergyConsumption`) holds the exact integral of
//! board power, but only advances at ticks (every 100 ms on the H100). Polling it
//! back to back locates each tick between the last read that still showed the old
//! value and the first read showing the new one.

use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::Reading;

/// One counter update: the cumulative energy and when it happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterTick {
    /// Estimated time of the update: midway between the bracketing reads, s.
    pub time_s: f64,
    /// Half the gap between the bracketing reads: the tick lies within ± this, s.
    pub uncertainty_s: f64,
    /// Cumulative energy from then on, mJ.
    pub energy_mj: f64,
}

/// Finds the ticks in counter readings sorted by time.
///
/// A decrease (a driver reset or wrap) starts a new run: no tick is placed across it.
pub fn counter_ticks(readings: &[Reading]) -> Vec<CounterTick> {
    let mut ticks = Vec::new();
    for pair in readings.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if after.value > before.value {
            ticks.push(CounterTick {
                time_s: 0.5 * (before.time_s + after.time_s),
                uncertainty_s: 0.5 * (after.time_s - before.time_s),
                energy_mj: after.value,
            });
        }
    }
    ticks
}

/// Cumulative energy at `t_s`, mJ, interpolated linearly between the ticks around it
/// (constant power between ticks). Errors when `t_s` is outside the ticks.
pub fn interpolated_energy_mj(ticks: &[CounterTick], t_s: f64) -> Result<f64> {
    let (Some(first), Some(last)) = (ticks.first(), ticks.last()) else {
        return Err(Error::new(ErrorKind::Analysis, "the counter never ticked: no energy can be read from it"));
    };
    if t_s < first.time_s || t_s > last.time_s {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!(
                "{t_s:.4} s is outside the counter ticks ({:.4}-{:.4} s): record longer before and after the window",
                first.time_s, last.time_s
            ),
        ));
    }
    let i = ticks.partition_point(|k| k.time_s <= t_s).clamp(1, ticks.len() - 1);
    let (a, b) = (ticks[i - 1], ticks[i]);
    if b.time_s == a.time_s {
        return Ok(b.energy_mj);
    }
    Ok(a.energy_mj + (b.energy_mj - a.energy_mj) * (t_s - a.time_s) / (b.time_s - a.time_s))
}

/// Counter energy between two instants, J, by linear interpolation between ticks.
pub fn interpolated_energy_j(ticks: &[CounterTick], start_s: f64, end_s: f64) -> Result<f64> {
    Ok((interpolated_energy_mj(ticks, end_s)? - interpolated_energy_mj(ticks, start_s)?) * 1e-3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(points: &[(f64, f64)]) -> Vec<Reading> {
        points.iter().map(|&(time_s, value)| Reading { time_s, value }).collect()
    }

    #[test]
    fn ticks_sit_between_bracketing_reads() {
        let r = reads(&[(0.0, 10.0), (0.002, 10.0), (0.004, 22.0), (0.006, 22.0), (0.104, 22.0), (0.106, 34.0)]);
        let ticks = counter_ticks(&r);
        assert_eq!(ticks.len(), 2);
        assert!((ticks[0].time_s - 0.003).abs() < 1e-12);
        assert!((ticks[0].uncertainty_s - 0.001).abs() < 1e-12);
        assert_eq!(ticks[1].energy_mj, 34.0);
    }

    #[test]
    fn a_reset_places_no_tick() {
        let ticks = counter_ticks(&reads(&[(0.0, 100.0), (0.1, 5.0), (0.2, 17.0)]));
        assert_eq!(ticks.len(), 1);
        assert_eq!(ticks[0].energy_mj, 17.0);
    }

    #[test]
    fn interpolates_between_ticks_and_refuses_outside() {
        let ticks = [
            CounterTick { time_s: 1.0, uncertainty_s: 0.0, energy_mj: 1000.0 },
            CounterTick { time_s: 1.1, uncertainty_s: 0.0, energy_mj: 1012.0 },
            CounterTick { time_s: 1.2, uncertainty_s: 0.0, energy_mj: 1039.0 },
        ];
        assert!((interpolated_energy_mj(&ticks, 1.05).unwrap() - 1006.0).abs() < 1e-9);
        assert!((interpolated_energy_j(&ticks, 1.05, 1.15).unwrap() - 0.0195).abs() < 1e-12);
        assert!(interpolated_energy_mj(&ticks, 0.9).unwrap_err().message().contains("outside the counter ticks"));
        assert!(interpolated_energy_mj(&[], 1.0).is_err());
    }
}
