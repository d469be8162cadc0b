//! What the independent references share (`library_reference`, `graph_reference`): their
//! command-line values, and NVML's energy counter read by a thread of their own, every
//! millisecond, kept where it changed (its ticks). Nothing of the harness's measurement.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nvml_wrapper::Device;

/// The value after `name` on the command line.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// A counter tick: (seconds since the start, cumulative energy in J).
pub type Tick = (f64, f64);

/// The first and last of `ticks` (each time the counter changed) within `[from, to]`, and
/// how many lie there.
pub fn ticks_between(ticks: &[Tick], from: f64, to: f64) -> Option<(Tick, Tick, usize)> {
    let inside: Vec<&Tick> = ticks.iter().filter(|t| t.0 >= from && t.0 <= to).collect();
    match (inside.first(), inside.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => Some((**a, **b, inside.len())),
        _ => None,
    }
}

/// How many calls had completed at `t`, interpolated linearly between `marks` (each a
/// time and the calls completed by then, at least two, sorted by time).
pub fn calls_at(marks: &[(f64, u64)], t: f64) -> f64 {
    let i = marks.partition_point(|c| c.0 <= t).clamp(1, marks.len() - 1);
    let (a, b) = (marks[i - 1], marks[i]);
    a.1 as f64 + (b.1 - a.1) as f64 * ((t - a.0) / (b.0 - a.0)).clamp(0.0, 1.0)
}

/// The active idle over `[from, to]`, W: the counter's power between its first and last
/// tick there.
pub fn idle_power_w(ticks: &[Tick], from: f64, to: f64) -> Result<f64, String> {
    let (x, y, _) = ticks_between(ticks, from, to).ok_or("too few counter ticks in an idle second")?;
    Ok((y.1 - x.1) / (y.0 - x.0))
}

/// Reads `device`'s energy counter every millisecond until `stop` is set, keeping each
/// change as a tick timed from `t0`.
pub fn sample_counter(device: &Device<'_>, stop: &AtomicBool, t0: Instant) -> Vec<Tick> {
    let mut ticks: Vec<Tick> = Vec::new();
    let mut last = None;
    while !stop.load(Ordering::Relaxed) {
        if let Ok(mj) = device.total_energy_consumption() {
            if last != Some(mj) {
                ticks.push((t0.elapsed().as_secs_f64(), mj as f64 * 1e-3));
                last = Some(mj);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    ticks
}

/// Half a second of warm-up: `call` repeated, `calls_per_sync` of them between each `sync`.
/// Returns the time per call, s (what sizes the measured batches).
pub fn warm_up(
    calls_per_sync: u64,
    mut call: impl FnMut() -> Result<(), String>,
    mut sync: impl FnMut() -> Result<(), String>,
) -> Result<f64, String> {
    let warm = Instant::now();
    let mut warm_calls = 0u64;
    while warm.elapsed() < std::time::Duration::from_millis(500) {
        for _ in 0..calls_per_sync {
            call()?;
        }
        sync()?;
        warm_calls += calls_per_sync;
    }
    Ok(warm.elapsed().as_secs_f64() / warm_calls as f64)
}
