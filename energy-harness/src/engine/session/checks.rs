//! The checks a finished measurement passes before its figures are believed: windows that
//! agree on their time (host-clock windows of library work), and work that ended with the
//! windows (nothing left running into the idle tail).

use crate::engine::result::Measurement;
use crate::sensors::SourceKind;
use crate::workload::TimeBasis;
use energy_results::error::{Error, ErrorKind, Result};

/// A window whose time lies beyond this factor of the mean window's (either
/// way) did not hold its own work (host-clock windows only).
pub const WINDOW_AGREEMENT_FACTOR: f64 = 2.0;

/// More than this share of the windows beyond [`WINDOW_AGREEMENT_FACTOR`] (and at least two)
/// refuses the measurement: one late window is a host hiccup, many are a queue.
pub const WINDOW_DISAGREEMENT_SHARE: f64 = 0.1;

/// Refuses library work (host-clock windows) whose windows disagree on the time of the same
/// number of calls: the windows' wait did not end their work. A library that keeps a queue
/// of its own on the host (burn's fusion, a command encoder not yet submitted) hands CUDA
/// nothing until it flushes, so a context-wide synchronize (`any_stream`) returns at once in
/// most windows and one window in many pays for the work of all the others: each window's
/// figure is wrong and their spread is no measure of anything. Measured: burn 0.21's matmul
/// with `any_stream` on an H100 gave windows of 2 calls from near nothing to many times the
/// call's time (CV 340 %); with `wait = B::sync`, CV 2-5 %.
pub fn check_windows_agree(id: &str, window_times_s: &[f64], basis: TimeBasis) -> Result<()> {
    if basis != TimeBasis::HostClock || window_times_s.len() < 3 {
        return Ok(());
    }
    // The mean, not the median: when most windows are empty (the queue flushed in a few),
    // the median is their nothing while the mean is still the work's share of a window.
    let mean = window_times_s.iter().sum::<f64>() / window_times_s.len() as f64;
    if mean.is_nan() || mean <= 0.0 {
        return Ok(());
    }
    let outside = window_times_s
        .iter()
        .filter(|&&t| t < mean / WINDOW_AGREEMENT_FACTOR || t > mean * WINDOW_AGREEMENT_FACTOR)
        .count();
    if outside < 2 || (outside as f64) <= WINDOW_DISAGREEMENT_SHARE * window_times_s.len() as f64 {
        return Ok(());
    }
    let shortest = window_times_s.iter().copied().fold(f64::INFINITY, f64::min);
    let longest = window_times_s.iter().copied().fold(0.0, f64::max);
    Err(Error::new(
        ErrorKind::UnawaitedWork,
        format!(
            "{id}: {outside} of {} windows took less than half or more than twice the mean window's {} for the same \
             calls (from {} to {}): the windows' wait does not end the work of their calls, so each window's energy \
             belongs partly to other windows and no figure is made. A library with a queue of its own (burn's fusion, \
             cubecl, wgpu) submits work when it flushes, not when it is called, and a context-wide synchronize \
             (`any_stream`) does not flush it: declare the library's own wait, `wait = your_sync_fn` (burn's \
             `B::sync(&device)`, cubecl's `block_on(client.sync())`, wgpu's `device.poll`); see the book's chapter \"candle, burn, cubecl, wgpu\"",
            window_times_s.len(),
            energy_units::format_si(mean, "s", 3),
            energy_units::format_si(shortest, "s", 3),
            energy_units::format_si(longest, "s", 3),
        ),
    ))
}

/// Above this share of the windows' power above idle, the power after the last window is
/// work that outlived it, not idle: over 1,374 real H100 and H200 measurements of this
/// project (research/results, 2026-11-22 to 2026-11-26) the idle after the last window stood
/// at most 0.21 of the way from the idle before it to the windows' power.
pub const TAIL_WORK_SHARE: f64 = 0.5;

/// Below this the rise of the idle after the last window is not judged, W (real runs rose
/// by up to 31 W after 700 W stretches, at 0.05 of the way).
pub const TAIL_WORK_MIN_W: f64 = 10.0;

/// Refuses a measurement on the energy counter whose GPU kept working after its last
/// window: the idle measured after it stands more than [`TAIL_WORK_SHARE`] of the way from the idle before the
/// windows to their power (and [`TAIL_WORK_MIN_W`] above it). That is work nothing waited
/// for (a library's queue outside CUDA, another CUDA context), whose energy the windows
/// did not get and whose power was taken for idle.
pub fn check_work_ended(measurement: &Measurement) -> Result<()> {
    // Judged where it was calibrated: on the energy counter, whose idle after the windows is
    // read from its own ticks (a lagging or averaging sensor's is an inversion).
    if measurement.source != SourceKind::Counter {
        return Ok(());
    }
    let Some(last) = measurement.windows.iter().max_by(|a, b| a.energy.end_s.total_cmp(&b.energy.end_s)) else {
        return Ok(());
    };
    let (Some(before), Some(after)) = (last.energy.idle_before_w, last.energy.idle_after_w) else {
        return Ok(());
    };
    let busy = measurement.power_w.mean;
    let rise = after - before;
    let span = busy - before;
    if span.is_nan() || span <= 0.0 || rise < TAIL_WORK_MIN_W || rise < TAIL_WORK_SHARE * span {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::UnawaitedWork,
        format!(
            "{}: the GPU kept drawing {after:.1} W after the last window ({before:.1} W before the first, {busy:.1} W \
             in the windows): work outlived the windows that launched it, so their energy and the idle level would \
             both be wrong, and no figure is made. The launches' work was not waited for: launch on the stream the \
             harness hands in, or declare how to wait for it (`wait = your_sync_fn` for a library with a queue of \
             its own or outside CUDA, such as wgpu's `device.poll`, burn's `B::sync`; `any_stream` for CUDA work on \
             any stream); see the book's chapter \"candle, burn, cubecl, wgpu\". If another program used the GPU meanwhile, measure again",
            measurement.id
        ),
    ))
}
