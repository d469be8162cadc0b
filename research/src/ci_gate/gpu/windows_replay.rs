//! The gates of one setting replayed from their runs' own windows with each run keeping
//! fewer of them, or later ones: the same boards and runs, so a comparison of window counts
//! (and of a longer warm-up, windows that start later) that no board difference confounds.

use std::fmt::Write as _;

use energy_harness::Result;
use energy_results::ab::{AbSequence, WithinRun};
use energy_results::stats::{Estimate, LinearFit};

use super::paired_runs::{calls_of, most_windows, run_cost, with_windows};
use super::{add_and_settle, kind_label, regressions, still_running, StudyGate};

/// Seconds one window of the study's benchmarks lasts (a counter period, about).
const WINDOW_S: f64 = 0.1;

/// One gate replayed: its benchmark-gates' verdicts, the benchmark-runs it measured, the
/// benchmarks cut short (the gate as run had left them out of runs the replay still needs:
/// judged on the pairs they had), the pairs of its last run, and the runs it ran (with the
/// benchmark-runs, what its GPU time is estimated from).
struct Replayed {
    regressions: usize,
    benchmarks: usize,
    bench_runs: usize,
    cut_short: usize,
    pairs: usize,
    runs: usize,
}

/// `gate` replayed as the gate runs today (settled benchmarks left out after each pair from
/// the second), each run's figure of a benchmark the mean of its windows `from..to` (and its
/// interval from them), stopped after `max_pairs` pairs at most; `None` without the result files.
fn replay(gate: &StudyGate, (from, to): (usize, usize), max_pairs: usize) -> Result<Option<Replayed>> {
    let Some(report) = &gate.report else { return Ok(None) };
    let mut sequence = AbSequence::new(report.removed.clone());
    let (mut bench_runs, mut cut_short, mut runs) = (0, 0, 0);
    for (index, run) in report.runs.iter().enumerate() {
        let Some(windows) = gate.run_windows.get(&run.run) else { return Ok(None) };
        if !sequence.common.is_empty() {
            let pairs = sequence.pairs();
            for id in sequence.running() {
                if !run.benchmarks.contains_key(&id) {
                    sequence.settled.insert(id, pairs);
                    cut_short += 1;
                }
            }
            if sequence.running().is_empty() {
                break;
            }
        }
        let mut kept = still_running(&sequence, run);
        for (id, figure) in kept.benchmarks.iter_mut() {
            let Some(e) = windows.get(id).and_then(|w| w.get(from..to)).and_then(Estimate::from_values) else {
                return Ok(None);
            };
            figure.energy_j = e.mean;
            figure.within_run = Some(WithinRun { ci_low_j: e.ci_low, ci_high_j: e.ci_high, windows: e.n });
        }
        bench_runs += kept.benchmarks.len();
        runs += 1;
        if add_and_settle(&mut sequence, kept, index, report)? || (index % 2 == 1 && sequence.pairs() >= max_pairs) {
            break;
        }
    }
    let changes = sequence.changes(report.threshold_pct)?;
    Ok(Some(Replayed {
        regressions: regressions(&changes),
        benchmarks: changes.len(),
        bench_runs,
        cut_short,
        pairs: sequence.pairs(),
        runs,
    }))
}

/// One row of the replay: a part of the windows and a condition.
pub(super) struct ReplayRow {
    /// The windows kept, `from..to` counted from 0.
    pub part: (usize, usize),
    /// The condition (`aa`, `p2`, `p1`).
    pub kind: &'static str,
    /// Benchmark-gates judged, and those judged a regression.
    pub benchmarks: usize,
    pub regressions: usize,
    /// The pairs of each gate's last run, sorted.
    pub pairs: Vec<usize>,
    pub bench_runs: usize,
    pub cut_short: usize,
    /// Estimated GPU time per 10 benchmarks at the setting's own run cost, and at the other
    /// setting's when one was given, s.
    pub per_ten_s: f64,
    pub per_ten_other_s: Option<f64>,
}

/// What [`replay_rows`] replays: the setting's gates, their windows a run, their run cost;
/// and the other setting's cost with its windows a run.
pub(super) struct Replay {
    pub calls: String,
    pub most: usize,
    pub fit: LinearFit,
    pub other: Option<(LinearFit, usize)>,
    pub rows: Vec<ReplayRow>,
}

/// The gates of setting `label` replayed with each run keeping the windows of each part in
/// `parts` (`from..to`, counted from 0): false alarms, power, pairs and the estimated GPU
/// time. A run's cost is the setting's least-squares fit (fixed and per benchmark), less a
/// window's time for each window after `to` it no longer runs; at `other_cost`'s fit (that
/// setting's runs) too, a window's time more or less for each window more or fewer than it ran.
/// Each gate stops after `max_pairs` pairs at most (`usize::MAX`: where it stopped as run).
/// `None` without result files or a cost.
pub(super) fn replay_rows(
    gates: &[StudyGate],
    label: &str,
    parts: &[(usize, usize)],
    other_cost: Option<&str>,
    max_pairs: usize,
) -> Result<Option<Replay>> {
    let other = other_cost.and_then(|label| {
        let gates = with_windows(gates, label);
        Some((run_cost(&gates)?, most_windows(&gates)?))
    });
    replay_chosen(with_windows(gates, label), parts, other, max_pairs)
}

/// [`replay_rows`] of the gates `chosen` (one setting's, or a part of them), at their own
/// run cost and at `other`'s (a setting's fit and its window count).
pub(super) fn replay_chosen(
    chosen: Vec<&StudyGate>,
    parts: &[(usize, usize)],
    other: Option<(LinearFit, usize)>,
    max_pairs: usize,
) -> Result<Option<Replay>> {
    let (Some(fit), Some(most)) = (run_cost(&chosen), most_windows(&chosen)) else { return Ok(None) };
    let mut rows = Vec::new();
    for &(from, to) in parts {
        let per_bench_s = fit.slope - WINDOW_S * most.saturating_sub(to) as f64;
        for kind in ["aa", "p2", "p1"] {
            let mut row = ReplayRow {
                part: (from, to),
                kind,
                benchmarks: 0,
                regressions: 0,
                pairs: Vec::new(),
                bench_runs: 0,
                cut_short: 0,
                per_ten_s: 0.0,
                per_ten_other_s: None,
            };
            let (mut wall, mut other_wall) = (0.0, 0.0);
            for gate in chosen.iter().filter(|g| g.kind == kind) {
                let Some(r) = replay(gate, (from, to), max_pairs)? else { continue };
                wall += fit.intercept * r.runs as f64 + per_bench_s * r.bench_runs as f64;
                if let Some((other_fit, windows)) = &other {
                    let per_bench_s = other_fit.slope + WINDOW_S * (to as f64 - *windows as f64);
                    other_wall += other_fit.intercept * r.runs as f64 + per_bench_s * r.bench_runs as f64;
                }
                row.benchmarks += r.benchmarks;
                row.regressions += r.regressions;
                row.bench_runs += r.bench_runs;
                row.cut_short += r.cut_short;
                row.pairs.push(r.pairs);
            }
            if row.pairs.is_empty() {
                continue;
            }
            row.pairs.sort_unstable();
            let per_ten = |wall: f64| 10.0 * wall / row.benchmarks.max(1) as f64;
            row.per_ten_s = per_ten(wall);
            row.per_ten_other_s = other.as_ref().map(|_| per_ten(other_wall));
            rows.push(row);
        }
    }
    Ok(Some(Replay { calls: calls_of(&chosen), most, fit, other, rows }))
}

/// [`replay_rows`] as a table, beside the gates as they ran (the first part, all windows).
pub(super) fn windows_replay_table(t: &mut String, label: &str, other_label: Option<&str>, replay: &Replay) {
    let Replay { calls, most, fit, other, rows } = replay;
    let _ = writeln!(
        t,
        "Window counts replayed on the same runs (calls {calls}, `{label}`, {most} windows a run): every gate \
         replayed as the gate runs today, each run's figure of a benchmark the mean of the windows named (windows \
         2-5: one window's time more before the four it keeps, as a longer warm-up would put them). A benchmark the \
         gate as run had already left out of a run the replay still needs is judged on the pairs it had (cut short). \
         GPU time estimated from the runs' least-squares cost ({:.2} s a run, {:.2} s a benchmark at {most} windows) \
         less {WINDOW_S} s a benchmark-run for each window after the last one kept.\n",
        fit.intercept, fit.slope
    );
    let other_header = match (other, other_label) {
        (Some((fit, windows)), Some(label)) => {
            let _ = writeln!(
                t,
                "The last column: the same replay at the run cost of `{label}` ({:.2} s a run, {:.2} s a benchmark at \
                 {windows} windows, {WINDOW_S} s a benchmark-run more or less for each window more or fewer), an \
                 estimate for that setting's runs keeping these windows.\n",
                fit.intercept, fit.slope
            );
            " | at its run cost"
        }
        _ => "",
    };
    let _ = writeln!(
        t,
        "| windows kept | condition | benchmark-gates (N) | regressions | pairs: median [max] | benchmark-runs | cut short | GPU time per 10 benchmarks{other_header} |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|---|{}", if other_header.is_empty() { "" } else { "---|" });
    for row in rows {
        let n = row.benchmarks;
        let other_cell = row.per_ten_other_s.map(|s| format!(" | {s:.0} s")).unwrap_or_default();
        let _ = writeln!(
            t,
            "| {}-{} | {} | {n} | {} of {n} | {} [{}] | {} | {} | {:.0} s{other_cell} |",
            row.part.0 + 1,
            row.part.1,
            kind_label(row.kind),
            row.regressions,
            row.pairs[row.pairs.len() / 2],
            row.pairs[row.pairs.len() - 1],
            row.bench_runs,
            row.cut_short,
            row.per_ten_s,
        );
    }
    let _ = writeln!(t);
}
