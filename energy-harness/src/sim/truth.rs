//! The simulated GPU's ground truth: board power as a piecewise-linear function of time.
//!
//! Idle power, kernels (duration, power, optional linear ramp from the level before
//! them), and an active-idle tail after each kernel (held, then stepped down to idle,
//! as Burtscher et al. saw on the K20). Kernels are appended in stream order; the
//! exact energy over any interval is available to tests.

/// A simulated kernel: what the GPU draws while it runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimKernel {
    /// Duration in seconds.
    pub duration_s: f64,
    /// Board power while it runs, W.
    pub power_w: f64,
    /// Seconds to ramp linearly from the level before it to `power_w` (0 = a step).
    pub ramp_s: f64,
}

impl SimKernel {
    /// A kernel that steps straight to `power_w`.
    pub fn new(duration_s: f64, power_w: f64) -> Self {
        SimKernel { duration_s, power_w, ramp_s: 0.0 }
    }
}

/// Active-idle power after a kernel: `level_w` for `hold_s`, then `steps` equal steps
/// down to idle, one every `step_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveIdleTail {
    /// Level right after a kernel, W.
    pub level_w: f64,
    /// How long the level is held, s.
    pub hold_s: f64,
    /// Time between steps down, s.
    pub step_s: f64,
    /// Number of steps from `level_w` to idle (the last one lands on idle).
    pub steps: u32,
}

/// The truth of one rail of the board (its memory, say): its own idle level, and a share of
/// the board's power above the board's idle. The rail's power is
/// `idle_w + share · (P_board − board idle)` at every instant, through kernels, ramps and the
/// active-idle tail alike, so its exact energy over any interval is known too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RailTruth {
    /// The rail's idle power, W.
    pub idle_w: f64,
    /// The share of the board's power above idle that the rail draws (0 to 1).
    pub share: f64,
}

impl RailTruth {
    /// The rail's power when the board draws `board_w` and idles at `board_idle_w`.
    pub fn power_w(&self, board_w: f64, board_idle_w: f64) -> f64 {
        self.idle_w + self.share * (board_w - board_idle_w)
    }

    /// The rail's own timeline, idle: kernels reach it through [`RailTruth::kernel`].
    pub fn timeline(&self, board_idle_w: f64, board_tail: Option<ActiveIdleTail>) -> PowerTimeline {
        let tail = board_tail.map(|t| ActiveIdleTail { level_w: self.power_w(t.level_w, board_idle_w), ..t });
        PowerTimeline::new(self.idle_w, tail)
    }

    /// What the rail draws while `kernel` runs on the board.
    pub fn kernel(&self, kernel: SimKernel, board_idle_w: f64) -> SimKernel {
        SimKernel { power_w: self.power_w(kernel.power_w, board_idle_w), ..kernel }
    }
}

/// A linear piece of the truth: power goes from `p0_w` at `t0_s` to `p1_w` at `t1_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Start time, s.
    pub t0_s: f64,
    /// End time, s.
    pub t1_s: f64,
    /// Power at the start, W.
    pub p0_w: f64,
    /// Power at the end, W.
    pub p1_w: f64,
}

/// Ground-truth power over time.
#[derive(Clone, Debug)]
pub struct PowerTimeline {
    idle_w: f64,
    tail: Option<ActiveIdleTail>,
    /// Breakpoints (time, power), linear in between; two points at one time form a step.
    points: Vec<(f64, f64)>,
    /// Energy (J) from `points[0]` to each point.
    cumulative_j: Vec<f64>,
    /// End of the last kernel; the tail follows it.
    busy_until_s: Option<f64>,
    kernels: usize,
}

impl PowerTimeline {
    /// An idle GPU.
    pub fn new(idle_w: f64, tail: Option<ActiveIdleTail>) -> Self {
        PowerTimeline { idle_w, tail, points: Vec::new(), cumulative_j: Vec::new(), busy_until_s: None, kernels: 0 }
    }

    /// Idle power, W.
    pub fn idle_w(&self) -> f64 {
        self.idle_w
    }

    /// When the last scheduled kernel ends (None before any).
    pub fn busy_until_s(&self) -> Option<f64> {
        self.busy_until_s
    }

    /// Time of the first breakpoint: the GPU is idle before it (None while idle throughout).
    pub fn start_s(&self) -> Option<f64> {
        self.points.first().map(|p| p.0)
    }

    /// Number of kernels scheduled.
    pub fn kernel_count(&self) -> usize {
        self.kernels
    }

    /// Power of the baseline (idle or tail) at `t`, given the last kernel ended at `end_s`.
    fn tail_level(&self, end_s: f64, t: f64) -> f64 {
        let Some(tail) = self.tail else {
            return self.idle_w;
        };
        let since = t - end_s;
        if since < tail.hold_s {
            return tail.level_w;
        }
        if tail.steps == 0 || tail.step_s <= 0.0 {
            return self.idle_w;
        }
        let k = ((since - tail.hold_s) / tail.step_s).floor() as u64 + 1;
        if k >= u64::from(tail.steps) {
            self.idle_w
        } else {
            tail.level_w - (tail.level_w - self.idle_w) * k as f64 / f64::from(tail.steps)
        }
    }

    /// Times after `end_s` at which the tail changes level, in order.
    fn tail_boundaries(&self, end_s: f64) -> Vec<f64> {
        match self.tail {
            None => Vec::new(),
            Some(tail) => {
                let mut b = vec![end_s + tail.hold_s];
                if tail.step_s > 0.0 {
                    for j in 1..tail.steps {
                        b.push(end_s + tail.hold_s + f64::from(j) * tail.step_s);
                    }
                }
                b
            }
        }
    }

    fn push_point(&mut self, t: f64, p: f64) {
        let cum = match (self.points.last(), self.cumulative_j.last()) {
            (Some(&(t_last, p_last)), Some(&c)) => c + (t - t_last) * 0.5 * (p_last + p),
            _ => 0.0,
        };
        self.points.push((t, p));
        self.cumulative_j.push(cum);
    }

    /// Schedules a kernel at `start_s` (or when the previous one ends, if later: one stream).
    /// Returns the (start, end) it got.
    pub fn schedule(&mut self, start_s: f64, kernel: SimKernel) -> (f64, f64) {
        let duration = if kernel.duration_s.is_finite() { kernel.duration_s.max(0.0) } else { 0.0 };
        let start = match self.busy_until_s {
            Some(e) => start_s.max(e),
            None => start_s,
        };
        let end = start + duration;
        self.kernels += 1;
        // Back-to-back launches of one steady kernel extend a single plateau.
        if let (Some(e), Some(&(t_last, p_last))) = (self.busy_until_s, self.points.last()) {
            if start == e && t_last == e && kernel.ramp_s == 0.0 && p_last == kernel.power_w {
                self.points.pop();
                self.cumulative_j.pop();
                self.push_point(end, kernel.power_w);
                self.busy_until_s = Some(end);
                return (start, end);
            }
        }
        // Materialize the baseline (idle, or the previous kernel's tail) up to `start`.
        let level_before = match self.busy_until_s {
            None => {
                self.push_point(start, self.idle_w);
                self.idle_w
            }
            Some(e) => {
                let mut level = self.tail_level(e, e);
                self.push_point(e, level);
                for b in self.tail_boundaries(e) {
                    if b >= start {
                        break;
                    }
                    self.push_point(b, level);
                    level = self.tail_level(e, b);
                    self.push_point(b, level);
                }
                if start > e {
                    self.push_point(start, level);
                }
                level
            }
        };
        if kernel.ramp_s > 0.0 && duration > 0.0 {
            let ramp_end = kernel.ramp_s.min(duration);
            let p_ramp_end = level_before + (kernel.power_w - level_before) * ramp_end / kernel.ramp_s;
            self.push_point(start + ramp_end, p_ramp_end);
            self.push_point(end, if ramp_end < duration { kernel.power_w } else { p_ramp_end });
        } else {
            self.push_point(start, kernel.power_w);
            self.push_point(end, kernel.power_w);
        }
        self.busy_until_s = Some(end);
        (start, end)
    }

    /// True power at `t`, W (right-continuous at steps).
    pub fn power_at(&self, t: f64) -> f64 {
        let Some(&(t_first, _)) = self.points.first() else {
            return self.idle_w;
        };
        if t < t_first {
            return self.idle_w;
        }
        let &(t_last, _) = self.points.last().expect("non-empty");
        if t >= t_last {
            return match self.busy_until_s {
                Some(e) => self.tail_level(e, t),
                None => self.idle_w,
            };
        }
        let i = self.points.partition_point(|&(pt, _)| pt <= t) - 1;
        let (t0, p0) = self.points[i];
        let (t1, p1) = self.points[i + 1];
        p0 + (p1 - p0) * (t - t0) / (t1 - t0)
    }

    /// Energy from time 0 to `t` in J (negative for `t < 0`).
    pub fn energy_to(&self, t: f64) -> f64 {
        let Some(&(t_first, _)) = self.points.first() else {
            return self.idle_w * t;
        };
        let before_first = self.idle_w * t_first;
        if t < t_first {
            return self.idle_w * t;
        }
        let n = self.points.len();
        let (t_last, _) = self.points[n - 1];
        if t >= t_last {
            let tail_j: f64 =
                self.segments(t_last, t).iter().map(|s| (s.t1_s - s.t0_s) * 0.5 * (s.p0_w + s.p1_w)).sum();
            return before_first + self.cumulative_j[n - 1] + tail_j;
        }
        let i = self.points.partition_point(|&(pt, _)| pt <= t) - 1;
        let (t0, p0) = self.points[i];
        let p_t = self.power_at(t);
        before_first + self.cumulative_j[i] + (t - t0) * 0.5 * (p0 + p_t)
    }

    /// Exact energy between `a` and `b`, J.
    pub fn energy_j(&self, a: f64, b: f64) -> f64 {
        self.energy_to(b) - self.energy_to(a)
    }

    /// The linear pieces of the truth covering [a, b], in order.
    pub fn segments(&self, a: f64, b: f64) -> Vec<Segment> {
        let mut out = Vec::new();
        if b <= a {
            return out;
        }
        let mut push = |t0: f64, t1: f64, p0: f64, p1: f64| {
            if t1 > t0 {
                out.push(Segment { t0_s: t0, t1_s: t1, p0_w: p0, p1_w: p1 });
            }
        };
        let (t_first, t_last) = match (self.points.first(), self.points.last()) {
            (Some(f), Some(l)) => (f.0, l.0),
            _ => {
                push(a, b, self.idle_w, self.idle_w);
                return out;
            }
        };
        if a < t_first {
            push(a, b.min(t_first), self.idle_w, self.idle_w);
        }
        if b > t_first && a < t_last {
            let lo = a.max(t_first);
            let hi = b.min(t_last);
            let mut i = self.points.partition_point(|&(pt, _)| pt <= lo).saturating_sub(1);
            while i + 1 < self.points.len() && self.points[i].0 < hi {
                let (t0, p0) = self.points[i];
                let (t1, p1) = self.points[i + 1];
                if t1 > t0 {
                    let s0 = t0.max(lo);
                    let s1 = t1.min(hi);
                    let at = |t: f64| p0 + (p1 - p0) * (t - t0) / (t1 - t0);
                    push(s0, s1, at(s0), at(s1));
                }
                i += 1;
            }
        }
        if b > t_last {
            let lo = a.max(t_last);
            match self.busy_until_s {
                None => push(lo, b, self.idle_w, self.idle_w),
                Some(e) => {
                    let mut t = lo;
                    for boundary in self.tail_boundaries(e) {
                        if boundary <= t {
                            continue;
                        }
                        if boundary >= b {
                            break;
                        }
                        let level = self.tail_level(e, t);
                        push(t, boundary, level, level);
                        t = boundary;
                    }
                    let level = self.tail_level(e, t);
                    push(t, b, level, level);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn integrate_numerically(tl: &PowerTimeline, a: f64, b: f64) -> f64 {
        let n = 200_000;
        let dt = (b - a) / n as f64;
        (0..n).map(|i| tl.power_at(a + (i as f64 + 0.5) * dt) * dt).sum()
    }

    #[test]
    fn idle_only() {
        let tl = PowerTimeline::new(100.0, None);
        assert_eq!(tl.power_at(5.0), 100.0);
        assert_eq!(tl.energy_j(1.0, 3.0), 200.0);
    }

    #[test]
    fn kernels_tail_and_exact_energy() {
        let tail = ActiveIdleTail { level_w: 52.5, hold_s: 3.5, step_s: 1.0, steps: 3 };
        let mut tl = PowerTimeline::new(25.0, Some(tail));
        tl.schedule(1.0, SimKernel { duration_s: 2.0, power_w: 110.0, ramp_s: 0.5 });
        assert_eq!(tl.power_at(0.5), 25.0);
        assert!((tl.power_at(1.25) - (25.0 + 85.0 * 0.5)).abs() < 1e-9);
        assert_eq!(tl.power_at(2.0), 110.0);
        assert_eq!(tl.power_at(3.0), 52.5); // right after the kernel: active idle
        assert_eq!(tl.power_at(6.4), 52.5);
        assert!((tl.power_at(6.6) - (52.5 - 27.5 / 3.0)).abs() < 1e-9);
        assert!((tl.power_at(7.6) - (52.5 - 2.0 * 27.5 / 3.0)).abs() < 1e-9);
        assert_eq!(tl.power_at(8.6), 25.0);
        // Exact: idle 1 s, ramp 0.5 s (avg 67.5), plateau 1.5 s, tail 3.5 s + 1 s + 1 s, idle.
        let expected =
            25.0 + 0.5 * 67.5 + 1.5 * 110.0 + 3.5 * 52.5 + (52.5 - 27.5 / 3.0) + (52.5 - 55.0 / 3.0) + 1.5 * 25.0;
        assert!((tl.energy_j(0.0, 10.0) - expected).abs() < 1e-9, "{}", tl.energy_j(0.0, 10.0));
        assert!((tl.energy_j(0.3, 9.7) - integrate_numerically(&tl, 0.3, 9.7)).abs() < 1e-3);
        // A second kernel in the tail materializes the tail up to its start.
        tl.schedule(7.2, SimKernel::new(1.0, 100.0));
        assert!((tl.energy_j(0.0, 12.0) - integrate_numerically(&tl, 0.0, 12.0)).abs() < 2e-3);
        assert_eq!(tl.power_at(7.7), 100.0);
    }

    #[test]
    fn back_to_back_kernels_merge_into_one_plateau() {
        let mut tl = PowerTimeline::new(120.0, None);
        let mut t = 1.0;
        for _ in 0..10_000 {
            let (_, end) = tl.schedule(1.0, SimKernel::new(20e-6, 272.0));
            t = end;
        }
        assert!((t - 1.2).abs() < 1e-9);
        assert!(tl.points.len() <= 4, "{}", tl.points.len());
        assert!((tl.energy_j(1.0, 1.2) - 272.0 * 0.2).abs() < 1e-9);
        assert_eq!(tl.kernel_count(), 10_000);
    }

    #[test]
    fn segments_cover_the_interval_exactly() {
        let tail = ActiveIdleTail { level_w: 130.0, hold_s: 0.2, step_s: 0.1, steps: 2 };
        let mut tl = PowerTimeline::new(120.0, Some(tail));
        tl.schedule(0.5, SimKernel { duration_s: 0.3, power_w: 270.0, ramp_s: 0.05 });
        let segs = tl.segments(0.0, 2.0);
        assert_eq!(segs.first().unwrap().t0_s, 0.0);
        assert_eq!(segs.last().unwrap().t1_s, 2.0);
        for pair in segs.windows(2) {
            assert_eq!(pair[0].t1_s, pair[1].t0_s);
        }
        let from_segments: f64 = segs.iter().map(|s| (s.t1_s - s.t0_s) * 0.5 * (s.p0_w + s.p1_w)).sum();
        assert!((from_segments - tl.energy_j(0.0, 2.0)).abs() < 1e-9);
    }
}
