//! Cleaning raw readings before correction.
//!
//! Polled sensors return their last update until the next one: read faster than it
//! updates and most readings are stale repeats (the K20 gave ~38 identical readings at
//! 0.28 ms spacing per 15 ms update; the H100 fields, read every 5 ms, repeat for
//! 100 ms). Burtscher et al. drop consecutive identical readings closer than 4 ms; a
//! reading whose value changed marks an update that happened since the previous read,
//! so it is stamped midway between the two reads (the time it describes, within half
//! the read spacing). Sampling intervals vary by orders of magnitude, so nothing
//! downstream assumes they are equal.

use energy_results::trace::Reading;

/// Burtscher's rule: the minimum spacing for two identical consecutive readings to
/// count as two updates.
pub const BURTSCHER_STALE_GAP_S: f64 = 0.004;

/// Readings sorted by time, non-finite values dropped.
pub fn sorted_finite(readings: &[Reading]) -> Vec<Reading> {
    let mut out: Vec<Reading> =
        readings.iter().copied().filter(|r| r.time_s.is_finite() && r.value.is_finite()).collect();
    out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    out
}

/// The median time between value changes of polled readings (an estimate of the
/// sensor's update period), if the value changed at least twice.
pub fn median_change_interval_s(sorted: &[Reading]) -> Option<f64> {
    let changes: Vec<f64> =
        sorted.windows(2).filter(|w| w[1].value != w[0].value).map(|w| 0.5 * (w[0].time_s + w[1].time_s)).collect();
    let mut gaps: Vec<f64> = changes.windows(2).map(|w| w[1] - w[0]).filter(|g| *g > 0.0).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    Some(gaps[gaps.len() / 2])
}

/// Drops each reading identical to its predecessor when the two are closer than
/// `min_gap_s`, and stamps every kept reading after the first midway between it and the
/// read before it. Input must be sorted by time.
#[cfg(test)]
fn drop_stale_repeats(sorted: &[Reading], min_gap_s: f64) -> Vec<Reading> {
    kept_updates(sorted, min_gap_s).into_iter().map(|(r, _)| r).collect()
}

/// The readings [`drop_stale_repeats`] keeps, each with the uncertainty of its time
/// (half the gap to the read before it).
fn kept_updates(sorted: &[Reading], min_gap_s: f64) -> Vec<(Reading, f64)> {
    let mut out = Vec::with_capacity(sorted.len() / 4 + 1);
    for (i, r) in sorted.iter().enumerate() {
        if i == 0 {
            out.push((*r, 0.0));
            continue;
        }
        let prev = sorted[i - 1];
        let gap = r.time_s - prev.time_s;
        let stale = r.value == prev.value && gap < min_gap_s;
        if !stale {
            out.push((Reading { time_s: 0.5 * (prev.time_s + r.time_s), value: r.value }, 0.5 * gap));
        }
    }
    out
}

/// Cleans a polled power source: sorted, finite, stale repeats dropped with a gap of
/// `max(4 ms, half the update period seen in the data)`, so a sensor polled 20 times
/// per update (the H100 fields) keeps one reading per update. An update seen only after
/// a stalled read (the K20's driver stalls reach 130 ms) is dropped when its time is
/// uncertain by more than a quarter of the update period: the neighbouring updates
/// bound the energy better than a misplaced one.
pub fn clean_polled(readings: &[Reading]) -> Vec<Reading> {
    let sorted = sorted_finite(readings);
    let period = median_change_interval_s(&sorted);
    let gap = period.map_or(BURTSCHER_STALE_GAP_S, |p| (0.5 * p).max(BURTSCHER_STALE_GAP_S));
    let max_uncertainty = period.map_or(f64::INFINITY, |p| (0.25 * p).max(BURTSCHER_STALE_GAP_S));
    let kept = kept_updates(&sorted, gap);
    let last = kept.len().saturating_sub(1);
    kept.into_iter()
        .enumerate()
        .filter(|(i, (_, uncertainty))| *i == 0 || *i == last || *uncertainty <= max_uncertainty)
        .map(|(_, (r, _))| r)
        .collect()
}

/// Cleans buffered samples (each describes its own timestamp): sorted, finite, exact
/// duplicates (the same sample drained twice) dropped.
pub fn clean_buffered(readings: &[Reading]) -> Vec<Reading> {
    let mut sorted = sorted_finite(readings);
    sorted.dedup_by(|b, a| a.time_s == b.time_s);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(time_s: f64, value: f64) -> Reading {
        Reading { time_s, value }
    }

    #[test]
    fn k20_runs_collapse_to_one_reading_per_update() {
        // 36 reads 0.283 ms apart, a 4.7 ms read, then the next value.
        let mut raw = Vec::new();
        let mut t = 0.0;
        for update in 0..3 {
            for _ in 0..36 {
                raw.push(r(t, 100.0 + f64::from(update)));
                t += 0.000283;
            }
            t += 0.0047;
        }
        let clean = drop_stale_repeats(&raw, BURTSCHER_STALE_GAP_S);
        assert_eq!(clean.len(), 3);
        assert_eq!(clean[1].value, 101.0);
        // Stamped midway between the last read of the old value and the first of the new.
        let first_new = raw.iter().position(|x| x.value == 101.0).unwrap();
        assert!((clean[1].time_s - 0.5 * (raw[first_new - 1].time_s + raw[first_new].time_s)).abs() < 1e-12);
    }

    #[test]
    fn an_identical_value_after_a_long_gap_is_a_new_update() {
        let clean = drop_stale_repeats(&[r(0.0, 5.0), r(0.0003, 5.0), r(0.0053, 5.0)], BURTSCHER_STALE_GAP_S);
        assert_eq!(clean.len(), 2);
    }

    #[test]
    fn h100_fields_keep_one_reading_per_100ms_update() {
        let raw: Vec<Reading> = (0..400).map(|i| r(f64::from(i) * 0.005, f64::from(i / 20))).collect();
        let clean = clean_polled(&raw);
        assert_eq!(clean.len(), 20);
        assert!((median_change_interval_s(&raw).unwrap() - 0.1).abs() < 1e-9);
    }

    #[test]
    fn an_update_seen_after_a_stall_is_dropped() {
        // Updates every 15 ms read every 0.3 ms, then a 130 ms stall hides two updates.
        let mut raw = Vec::new();
        let mut t = 0.0;
        while t < 0.3 {
            raw.push(r(t, (t / 0.015).floor()));
            t += 0.0003;
        }
        t += 0.13;
        while t < 0.6 {
            raw.push(r(t, (t / 0.015).floor()));
            t += 0.0003;
        }
        let clean = clean_polled(&raw);
        let gaps: Vec<f64> = clean.windows(2).map(|w| w[1].time_s - w[0].time_s).collect();
        // The first update after the stall is gone; the one after it stays.
        assert!(clean.iter().all(|x| x.time_s < 0.3 || x.time_s > 0.43 + 0.0003), "{clean:?}");
        assert!(gaps.iter().filter(|g| **g > 0.1).count() == 1, "{gaps:?}");
    }

    #[test]
    fn buffered_duplicates_and_non_finite_values_go() {
        let clean = clean_buffered(&[r(0.02, 1.0), r(0.0, 1.0), r(0.02, 1.0), r(0.04, f64::NAN)]);
        assert_eq!(clean, vec![r(0.0, 1.0), r(0.02, 1.0)]);
    }
}
