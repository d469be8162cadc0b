//! The one time base of a measurement.
//!
//! The sampler thread, the launching thread and (on the simulated GPU) the sensors all
//! read the same [`Clock`], so sensor readings and kernel window marks can be compared
//! directly (Arafa's synchronized monitoring). Times are `f64` seconds since the
//! clock's origin.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A monotonic time source shared by every thread of a measurement.
pub trait Clock: Send + Sync {
    /// Seconds since the clock's origin.
    fn now_s(&self) -> f64;

    /// Blocks (or, on a virtual clock, advances time) for `seconds`.
    fn sleep_s(&self, seconds: f64);

    /// Seconds between the Unix epoch and this clock's origin, for converting
    /// wall-clock timestamps (the NVML sample buffer's) onto this clock.
    fn unix_time_of_origin_s(&self) -> f64;

    /// Whether time only moves when someone sleeps on it (a [`VirtualClock`]): the
    /// sensors are then read after the kernels ran, not by a thread beside them.
    fn is_virtual(&self) -> bool {
        false
    }
}

/// A shared handle to a clock.
pub type SharedClock = Arc<dyn Clock>;

/// The host's monotonic clock (`Instant`), origin at construction.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    origin: Instant,
    unix_origin_s: f64,
}

impl MonotonicClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let origin = Instant::now();
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        MonotonicClock { origin, unix_origin_s: unix }
    }

    /// A shared handle, ready for the sampler and the sensors.
    pub fn shared() -> SharedClock {
        Arc::new(MonotonicClock::new())
    }

    /// Seconds from the origin to `instant` (negative before the origin).
    pub fn seconds_at(&self, instant: Instant) -> f64 {
        if instant >= self.origin {
            (instant - self.origin).as_secs_f64()
        } else {
            -(self.origin - instant).as_secs_f64()
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now_s(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    fn sleep_s(&self, seconds: f64) {
        if seconds > 0.0 && seconds.is_finite() {
            std::thread::sleep(Duration::from_secs_f64(seconds));
        }
    }

    fn unix_time_of_origin_s(&self) -> f64 {
        self.unix_origin_s
    }
}

/// A clock that only moves when someone sleeps on it: the simulated GPU uses it to
/// synthesize hours of sensor traces in milliseconds, deterministically.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now_bits: AtomicU64,
}

impl VirtualClock {
    /// A virtual clock at `start_s`.
    pub fn starting_at(start_s: f64) -> Self {
        VirtualClock { now_bits: AtomicU64::new(start_s.to_bits()) }
    }

    /// Moves the clock to `t_s` if that is later than now.
    pub fn advance_to(&self, t_s: f64) {
        let _ = self.now_bits.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
            (t_s > f64::from_bits(bits)).then_some(t_s.to_bits())
        });
    }
}

impl Clock for VirtualClock {
    fn now_s(&self) -> f64 {
        f64::from_bits(self.now_bits.load(Ordering::Acquire))
    }

    fn sleep_s(&self, seconds: f64) {
        if seconds > 0.0 && seconds.is_finite() {
            let _ = self.now_bits.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
                Some((f64::from_bits(bits) + seconds).to_bits())
            });
        }
    }

    fn unix_time_of_origin_s(&self) -> f64 {
        0.0
    }

    fn is_virtual(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_moves_only_forward() {
        let clock = VirtualClock::starting_at(1.0);
        clock.sleep_s(0.5);
        assert_eq!(clock.now_s(), 1.5);
        clock.advance_to(1.2);
        assert_eq!(clock.now_s(), 1.5);
        clock.advance_to(2.0);
        assert_eq!(clock.now_s(), 2.0);
        clock.sleep_s(-1.0);
        assert_eq!(clock.now_s(), 2.0);
    }

    #[test]
    fn monotonic_clock_is_monotonic() {
        let clock = MonotonicClock::new();
        let a = clock.now_s();
        clock.sleep_s(0.001);
        let b = clock.now_s();
        assert!(b >= a + 0.001);
        assert!(clock.unix_time_of_origin_s() > 1.6e9);
    }
}
