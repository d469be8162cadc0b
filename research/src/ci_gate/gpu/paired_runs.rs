//! What paired runs cost and how their noise falls with windows: each run's wall time by
//! the benchmarks it measured, and every pair's difference computed again from the first
//! `k` windows of each run (a run of fewer windows is a prefix of the same run: the guard
//! after the last window keeps the edge it ends on steady).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use energy_harness::Result;
use energy_results::ab::Side;
use energy_results::stats::{linear_fit, LinearFit};

use super::{run_number, StudyGate};

/// Each run's energies per launch, window by window, J ([`RunWindows`]), by run number.
pub(super) type WindowsByRun = BTreeMap<usize, RunWindows>;

/// Each run's benchmarks' busy spans, (first window's start, last window's end) on the run's
/// recording clock, s, sorted, by run number.
pub(super) type SpansByRun = BTreeMap<usize, Vec<(f64, f64)>>;

/// [`WindowsByRun`] and [`SpansByRun`] from a gate's logs (`run-NN-SIDE/energy/new/*.json`, the
/// result files; `run.json` skipped), each file parsed once.
pub(super) fn run_results(logs: &BTreeMap<String, Vec<u8>>) -> Result<(WindowsByRun, SpansByRun)> {
    let (mut windows_by_run, mut spans_by_run) = (WindowsByRun::new(), SpansByRun::new());
    for (path, bytes) in logs {
        let Some(run) = run_number(path) else { continue };
        if !path.contains("/energy/new/") || !path.ends_with(".json") || path.ends_with("/run.json") {
            continue;
        }
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            energy_harness::Error::new(energy_harness::ErrorKind::Format, format!("{path}: not a result file ({e})"))
        })?;
        let Some(id) = value["id"].as_str() else { continue };
        let windows = value["windows"].as_array().map(Vec::as_slice).unwrap_or_default();
        let per_launch: Vec<f64> = windows
            .iter()
            .filter_map(|w| Some(w["energy_j"].as_f64()? / w["launches"].as_f64().filter(|n| *n > 0.0)?))
            .collect();
        windows_by_run.entry(run).or_default().insert(id.to_string(), per_launch);
        if let (Some(start), Some(end)) =
            (windows.first().and_then(|w| w["start_s"].as_f64()), windows.last().and_then(|w| w["end_s"].as_f64()))
        {
            spans_by_run.entry(run).or_default().push((start, end));
        }
    }
    for spans in spans_by_run.values_mut() {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok((windows_by_run, spans_by_run))
}

/// The time between consecutive benchmarks of the lean runs (runs after the first pair) of
/// the gates of each setting in `labels`: from one benchmark's last window to the next one's
/// first (the guard after, the analysis and its files, the next benchmark's setup, its
/// warm-up and the guard before), mean and median.
pub(super) fn lean_gap_line(t: &mut String, gates: &[StudyGate], labels: &[&str]) {
    let mut cells = Vec::new();
    for label in labels {
        let chosen = with_windows(gates, label);
        let mut gaps: Vec<f64> = chosen
            .iter()
            .flat_map(|g| g.run_spans.iter().filter(|(run, _)| **run > 2).map(|(_, spans)| spans))
            .flat_map(|spans| spans.windows(2).map(|p| p[1].0 - p[0].1))
            .filter(|gap| gap.is_finite() && *gap >= 0.0)
            .collect();
        if gaps.is_empty() {
            continue;
        }
        gaps.sort_by(f64::total_cmp);
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        cells.push(format!(
            "calls {} (`… {}`) {mean:.3} s on average, median {:.3} s ({} gaps)",
            calls_of(&chosen),
            label.rsplit(" + ").next().unwrap_or(label),
            gaps[gaps.len() / 2],
            gaps.len()
        ));
    }
    if !cells.is_empty() {
        let _ = writeln!(
            t,
            "**Between benchmarks of a lean run (from one benchmark's last window to the next one's first: the guard \
             after, the analysis and its files, the next benchmark's setup, warm-up and guard before): {}.**\n",
            cells.join("; ")
        );
    }
}

/// Each run of `gates` as (the benchmarks it measured, its wall time as `cargo energy` timed
/// it, s).
fn run_points(gates: &[&StudyGate]) -> Vec<(f64, f64)> {
    gates
        .iter()
        .filter_map(|g| g.report.as_ref())
        .flat_map(|r| r.runs.iter().map(|run| (run.benchmarks.len() as f64, run.wall_s)))
        .collect()
}

/// The least squares of runs' wall times on their benchmarks ([`run_points`]): `intercept` a
/// run, `slope` a benchmark, s; `None` under three runs.
fn cost_fit(points: &[(f64, f64)]) -> Option<LinearFit> {
    linear_fit(points).filter(|_| points.len() >= 3)
}

/// [`cost_fit`] of the runs of `gates`.
pub(super) fn run_cost(gates: &[&StudyGate]) -> Option<LinearFit> {
    cost_fit(&run_points(gates))
}

/// Least squares of each run's wall time on the benchmarks it measured, over the gates of
/// each window setting in `labels`: the run's fixed cost and each benchmark's.
pub(super) fn run_cost_table(t: &mut String, gates: &[StudyGate], labels: &[&str]) {
    let _ = writeln!(
        t,
        "What a run of a gate costs (every run of the settings' gates: its wall time as `cargo energy` timed the \
         executable, fitted by least squares as a fixed cost per run and a cost per benchmark it measured; settled \
         benchmarks make runs of fewer):\n"
    );
    let _ = writeln!(t, "| setting | runs | benchmarks per run | fixed cost per run | per benchmark |");
    let _ = writeln!(t, "|---|---|---|---|---|");
    for label in labels {
        let chosen: Vec<&StudyGate> = gates.iter().filter(|g| g.windows == *label).collect();
        let points = run_points(&chosen);
        let (min, max) = points.iter().fold((f64::INFINITY, 0.0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
        match cost_fit(&points) {
            Some(fit) => {
                let _ = writeln!(
                    t,
                    "| {label} | {} | {min:.0}-{max:.0} | {:.2} s | {:.2} s |",
                    points.len(),
                    fit.intercept,
                    fit.slope
                );
            }
            None => {
                let mean = |f: fn(&(f64, f64)) -> f64| points.iter().map(f).sum::<f64>() / points.len() as f64;
                let _ = writeln!(
                    t,
                    "| {label} | {} | {min:.0}-{max:.0} | — | {:.2} s (all runs alike) |",
                    points.len(),
                    mean(|p| p.1) / mean(|p| p.0)
                );
            }
        }
    }
    let _ = writeln!(t);
}

/// The windows of a run the tables by place keep: the fewest the study's runs measured since
/// paired runs (4, calls 16-18).
const KEPT: usize = 4;

/// The gates of setting `label` that brought their result files back.
pub(super) fn with_windows<'a>(gates: &'a [StudyGate], label: &str) -> Vec<&'a StudyGate> {
    gates.iter().filter(|g| g.windows == label && !g.run_windows.is_empty() && g.report.is_some()).collect()
}

/// The most windows a run of `gates` has.
pub(super) fn most_windows(gates: &[&StudyGate]) -> Option<usize> {
    gates.iter().flat_map(|g| g.run_windows.values().flat_map(|b| b.values().map(Vec::len))).max()
}

/// The calls of `gates`, in order, once each.
pub(super) fn calls_of(gates: &[&StudyGate]) -> String {
    let mut c: Vec<String> = gates.iter().map(|g| g.call.to_string()).collect();
    c.dedup();
    c.join(", ")
}

/// One run's energies per launch, window by window, by benchmark id.
type RunWindows = BTreeMap<String, Vec<f64>>;

/// Each pair of each gate's runs as (side A's windows, side B's windows) by benchmark.
fn pairs_of(gate: &StudyGate) -> Vec<(&RunWindows, &RunWindows)> {
    let Some(report) = &gate.report else { return Vec::new() };
    let side_of: BTreeMap<usize, Side> = report.runs.iter().map(|r| (r.run, r.side)).collect();
    (1..)
        .step_by(2)
        .take_while(|n| side_of.contains_key(&(n + 1)))
        .filter_map(|first| {
            let (x, y) = (gate.run_windows.get(&first)?, gate.run_windows.get(&(first + 1))?);
            Some(if side_of[&first] == Side::A { (x, y) } else { (y, x) })
        })
        .collect()
}

/// The spread of a pair's difference, %, when each run keeps the windows `part` picks of its
/// own (`None`: too few), pooled within gates per benchmark and part: (benchmark, part index)
/// → (sum of squares about each gate's mean, degrees of freedom).
fn pooled_spread(gates: &[&StudyGate], parts: &[(usize, usize)]) -> BTreeMap<(String, usize), (f64, f64)> {
    let mut pooled: BTreeMap<(String, usize), (f64, f64)> = BTreeMap::new();
    for gate in gates {
        let mut by: BTreeMap<(String, usize), Vec<f64>> = BTreeMap::new();
        for (a, b) in pairs_of(gate) {
            for (id, wa) in a {
                let Some(wb) = b.get(id) else { continue };
                for (i, &(from, to)) in parts.iter().enumerate() {
                    if to > wa.len().min(wb.len()) {
                        continue;
                    }
                    let mean = |w: &[f64]| w[from..to].iter().sum::<f64>() / (to - from) as f64;
                    let d = 100.0 * (mean(wb) / mean(wa)).ln();
                    if d.is_finite() {
                        by.entry((id.clone(), i)).or_default().push(d);
                    }
                }
            }
        }
        for (key, d) in by.into_iter().filter(|(_, d)| d.len() >= 2) {
            let m = d.iter().sum::<f64>() / d.len() as f64;
            let entry = pooled.entry(key).or_default();
            entry.0 += d.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            entry.1 += (d.len() - 1) as f64;
        }
    }
    pooled
}

/// A table of [`pooled_spread`]: one row per benchmark, one column per part.
fn spread_rows(t: &mut String, pooled: &BTreeMap<(String, usize), (f64, f64)>, headers: &[String]) {
    let _ = writeln!(t, "| benchmark | {} |", headers.join(" | "));
    let _ = writeln!(t, "|---|{}", "---|".repeat(headers.len()));
    let mut ids: Vec<&String> = pooled.keys().map(|(id, _)| id).collect();
    ids.dedup();
    for id in ids {
        let cells: Vec<String> = (0..headers.len())
            .map(|i| match pooled.get(&(id.clone(), i)) {
                Some((ss, df)) if *df > 0.0 => format!("{:.2} % ({df:.0})", (ss / df).sqrt()),
                _ => "—".into(),
            })
            .collect();
        let _ = writeln!(t, "| `{id}` | {} |", cells.join(" | "));
    }
    let _ = writeln!(t);
}

/// The spread of one pair's difference by the windows each run keeps (its first `k`), and
/// by where four of them lie in the run (windows `a+1` to `a+4`: a later start stands for a
/// longer warm-up), pooled within gates over the gates of setting `label`, per benchmark.
pub(super) fn window_prefix_table(t: &mut String, gates: &[StudyGate], label: &str) {
    let chosen = with_windows(gates, label);
    let most = most_windows(&chosen).unwrap_or(0);
    if chosen.is_empty() || most < 2 {
        return;
    }
    let prefixes: Vec<(usize, usize)> = (2..=most).map(|k| (0, k)).collect();
    let _ = writeln!(
        t,
        "Noise by windows within paired runs (calls {}, `{label}`): the spread of a pair's difference when each run \
         keeps its first k windows, pooled within gates (sd, and the degrees of freedom). A spread that does not fall \
         with k is a difference between runs (processes) that no window count removes.\n",
        calls_of(&chosen)
    );
    let headers: Vec<String> = prefixes.iter().map(|(_, k)| format!("k = {k}")).collect();
    spread_rows(t, &pooled_spread(&chosen, &prefixes), &headers);
    if most <= KEPT {
        return;
    }
    let places: Vec<(usize, usize)> = (0..=most - KEPT).map(|a| (a, a + KEPT)).collect();
    let _ = writeln!(
        t,
        "The same runs keeping {KEPT} windows at each place in the run (windows a+1 to a+{KEPT}): windows that \
         start later in the busy stretch stand for a longer warm-up before them. A spread that does not fall as \
         they start later is not the warm-up's.\n"
    );
    let headers: Vec<String> = places.iter().map(|(a, b)| format!("windows {}-{b}", a + 1)).collect();
    spread_rows(t, &pooled_spread(&chosen, &places), &headers);
}

/// Each window's energy per launch against its run's mean over its first four windows, by
/// the window's place, averaged over every run of each setting in `labels`: how the energy
/// per launch moves across a busy stretch (the die warming), the same in both sides of a pair.
pub(super) fn window_place_table(t: &mut String, gates: &[StudyGate], labels: &[&str]) {
    let _ = writeln!(
        t,
        "Each window's energy per launch against its run's mean over its first {KEPT} windows, by the window's \
         place (mean over every run of the setting; both sides of a pair alike, so it cancels in a pair's \
         difference): how the energy per launch moves across a run's busy stretch.\n"
    );
    let headers: Vec<String> = (1..=KEPT).map(|w| format!("window {w}")).collect();
    let _ = writeln!(t, "| setting | benchmark | runs | {} |", headers.join(" | "));
    let _ = writeln!(t, "|---|---|---|{}", "---|".repeat(KEPT));
    for label in labels {
        let chosen = with_windows(gates, label);
        let mut by: BTreeMap<&str, (usize, [f64; KEPT])> = BTreeMap::new();
        for w in chosen.iter().flat_map(|g| g.run_windows.values()).flat_map(|b| b.iter()) {
            let (id, windows) = w;
            if windows.len() < KEPT {
                continue;
            }
            let mean = windows[..KEPT].iter().sum::<f64>() / KEPT as f64;
            if mean.is_nan() || mean <= 0.0 {
                continue;
            }
            let entry = by.entry(id.as_str()).or_insert((0, [0.0; KEPT]));
            entry.0 += 1;
            for (sum, e) in entry.1.iter_mut().zip(&windows[..KEPT]) {
                *sum += 100.0 * (e / mean - 1.0);
            }
        }
        for (id, (n, sums)) in by {
            let cells: Vec<String> = sums.iter().map(|s| format!("{:+.2} %", s / n as f64)).collect();
            let _ = writeln!(t, "| {label} | `{id}` | {n} | {} |", cells.join(" | "));
        }
    }
    let _ = writeln!(t);
}
