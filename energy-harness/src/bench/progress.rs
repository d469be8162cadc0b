//! `cargo bench`'s place in a long run: before each benchmark of a bench target, on a
//! terminal, which one of how many it is and the time the rest will take at the pace so far
//! (`[4/9, about 12 s left]`). Nothing in CI (`CI` set), when stderr is not a terminal, with
//! `--test` or a single benchmark: logs stay as they were.

use std::io::IsTerminal as _;
use std::time::Instant;

/// The progress of the benchmarks of one bench target run in turn.
pub(super) struct Progress {
    total: usize,
    done: usize,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// For `total` benchmarks; shown on a terminal outside CI when more than one runs and
    /// they run (not `--test`, not `--list`: `quiet`).
    pub(super) fn new(total: usize, quiet: bool) -> Self {
        let shown = total > 1 && !quiet && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        Progress { total, done: 0, started: Instant::now(), shown }
    }

    /// Says which benchmark starts now (when shown), and counts it.
    pub(super) fn next(&mut self) {
        if self.shown {
            eprintln!("{}", progress_line(self.done, self.total, self.started.elapsed().as_secs_f64()));
        }
        self.done += 1;
    }
}

/// The line before benchmark `done + 1` of `total`, `elapsed_s` after the first began: the
/// time left is the mean time of those done times those left (none said before the first
/// is done).
pub(super) fn progress_line(done: usize, total: usize, elapsed_s: f64) -> String {
    let left = total.saturating_sub(done);
    if done == 0 || !(elapsed_s.is_finite() && elapsed_s >= 0.0) {
        return format!("[{}/{total}]", done + 1);
    }
    let left_s = elapsed_s / done as f64 * left as f64;
    format!("[{}/{total}, about {} left]", done + 1, duration_text(left_s))
}

/// A duration as people read it: seconds under two minutes, then minutes, then hours.
fn duration_text(s: f64) -> String {
    if s < 120.0 {
        format!("{:.0} s", s.max(1.0))
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_and_estimates_at_the_pace_so_far() {
        assert_eq!(progress_line(0, 9, 0.0), "[1/9]");
        // Three done in 6 s: 2 s each, six left.
        assert_eq!(progress_line(3, 9, 6.0), "[4/9, about 12 s left]");
        assert_eq!(progress_line(10, 100, 600.0), "[11/100, about 90 min left]");
        assert_eq!(progress_line(1, 400, 50.0), "[2/400, about 5.5 h left]");
        assert_eq!(progress_line(8, 9, 0.2), "[9/9, about 1 s left]");
        assert_eq!(progress_line(2, 3, f64::NAN), "[3/3]");
    }

    #[test]
    fn nothing_is_shown_for_one_benchmark_or_a_test_run() {
        assert!(!Progress::new(1, false).shown);
        assert!(!Progress::new(9, true).shown);
    }
}
