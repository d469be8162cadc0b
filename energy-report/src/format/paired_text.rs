//! What `cargo energy ab` prints: the progress line of each pair, and the report as text or
//! markdown (one line per benchmark with its change, interval, verdict and detectable
//! change, then every pair's figures and temperatures).

use std::fmt::Write as _;

use super::compare_text::verdict_label;
use energy_results::ab::{AbReport, PairFigures, PairedChange};
use energy_results::detect::Verdict;
use energy_results::escape::{markdown_cell_code, visible};
use energy_units::format_si;

/// "NVIDIA H100 (GPU-…)", with "SIMULATED" said when it is.
fn device_line(report: &AbReport) -> String {
    let d = &report.device;
    if d.simulated {
        format!("the simulated {} ({}): SIMULATED figures, no GPU was measured", visible(&d.name), visible(&d.uuid))
    } else {
        format!("{} ({})", visible(&d.name), visible(&d.uuid))
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn temperature(t: Option<f64>) -> String {
    t.map_or("—".into(), |t| format!("{t:.1} °C"))
}

/// The line printed on stderr after pair `pair` of at most `max_pairs`, for one
/// benchmark's change so far (`None` before two pairs: no spread yet):
/// "pair 4/12 (BA): `k`: A 31.02 mJ, B 31.35 mJ, +1.06 %; detectable 0.80 %".
pub fn progress_line(
    pair: usize,
    max_pairs: usize,
    id: &str,
    last: &PairFigures,
    change: Option<&PairedChange>,
    simulated: bool,
) -> String {
    let detectable = match change {
        Some(c) if c.detectability.detectable_change_pct.is_finite() => {
            format!("{:+.2} % so far; detectable {:.2} %", c.change_pct, c.detectability.detectable_change_pct)
        }
        _ => "detectable: needs 2 pairs".to_string(),
    };
    format!(
        "pair {pair}/{max_pairs} ({}{}): `{}`: A {}, B {}, {:+.2} %, {}; {detectable}",
        last.order,
        if simulated { ", simulated" } else { "" },
        visible(id),
        format_si(last.baseline_j, "J", 4),
        format_si(last.candidate_j, "J", 4),
        100.0 * ((last.difference_pct / 100.0).exp() - 1.0),
        temperature(last.temperature_c())
    )
}

/// The windows each run measured a benchmark over, from the runs' figures: ", 6 windows per
/// benchmark and run" (or a range where benchmarks differ); empty in reports without them.
fn windows_phrase(report: &AbReport) -> String {
    let counts: Vec<usize> = report
        .runs
        .iter()
        .flat_map(|r| r.benchmarks.values().filter_map(|b| b.within_run.map(|w| w.windows)))
        .collect();
    match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!(", {lo} windows per benchmark and run"),
        (Some(lo), Some(hi)) => format!(", {lo}-{hi} windows per benchmark and run"),
        _ => String::new(),
    }
}

/// The report as text for the terminal.
pub fn ab_text(report: &AbReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "energy per launch, candidate (B) against baseline (A), {} ABBA pairs{} on {}",
        report.pairs,
        windows_phrase(report),
        device_line(report)
    );
    let _ = writeln!(out, "  A: {}\n  B: {}", visible(&report.baseline), visible(&report.candidate));
    let _ = writeln!(
        out,
        "regression: a rise above {:.2} % whose one-sided lower bound (1 % false alarms; Student t on the degrees of freedom each benchmark's line gives) lies above zero",
        report.threshold_pct
    );
    for c in &report.changes {
        let _ = writeln!(
            out,
            "  {:<40} {} → {}  {:+.2} % [{:+.2}, {:+.2}] (95 %)  {}",
            visible(&c.id),
            format_si(mean(c.pairs.iter().map(|p| p.baseline_j)), "J", 4),
            format_si(mean(c.pairs.iter().map(|p| p.candidate_j)), "J", 4),
            c.change_pct,
            c.change_low_pct,
            c.change_high_pct,
            verdict_label(c.verdict)
        );
        let settled =
            report.settled_because.get(&c.id).map_or(String::new(), |why| format!(" (settled: {})", why.describe()));
        let _ = writeln!(
            out,
            "      {} pairs{settled}, {:.0} degrees of freedom; {}",
            c.pairs.len(),
            c.detectability.degrees_of_freedom,
            c.detectability.describe()
        );
        if let Some(note) = &c.threshold_note {
            let _ = writeln!(out, "      note: {note}");
        }
        for p in &c.pairs {
            let _ = writeln!(
                out,
                "      pair {:>2} {}  A {}  B {}  {:+.2} %  {}",
                p.pair,
                p.order,
                format_si(p.baseline_j, "J", 5),
                format_si(p.candidate_j, "J", 5),
                100.0 * ((p.difference_pct / 100.0).exp() - 1.0),
                temperature(p.temperature_c())
            );
        }
    }
    for id in &report.added {
        let _ = writeln!(out, "  {:<40} only in the candidate", visible(id));
    }
    for id in &report.removed {
        let _ = writeln!(out, "  {:<40} removed on purpose (--removed): only in the baseline", visible(id));
    }
    let _ = writeln!(out, "stopped: {}", visible(&report.stop));
    let _ = writeln!(out, "wall time {:.0} s ({} runs)", report.wall_s, report.runs.len());
    let regressions = report.changes.iter().filter(|c| c.verdict == Verdict::Regression).count();
    let _ = writeln!(
        out,
        "{regressions} regression(s) in {} benchmark(s){}",
        report.changes.len(),
        if report.device.simulated { " (simulated)" } else { "" }
    );
    out
}

/// The report as markdown (a pull-request comment).
pub fn ab_markdown(report: &AbReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Paired runs: {} ABBA pairs{} on {}\n",
        report.pairs,
        windows_phrase(report),
        device_line(report)
    );
    let _ = writeln!(out, "| benchmark | A | B | change (95 % CI) | detectable | pairs | verdict |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for c in &report.changes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:+.2} % [{:+.2}, {:+.2}] | {:.2} % | {} | {} |",
            markdown_cell_code(&c.id),
            format_si(mean(c.pairs.iter().map(|p| p.baseline_j)), "J", 4),
            format_si(mean(c.pairs.iter().map(|p| p.candidate_j)), "J", 4),
            c.change_pct,
            c.change_low_pct,
            c.change_high_pct,
            c.detectability.detectable_change_pct,
            c.pairs.len(),
            verdict_label(c.verdict)
        );
    }
    let _ = writeln!(
        out,
        "\nRegression: a rise above {:.2} % whose one-sided lower bound (1 % false alarms) lies above zero; \
         detectable: the smallest rise caught 95 % of the time with the spread of these pairs. Stopped: {}. \
         Wall time {:.0} s.",
        report.threshold_pct,
        visible(&report.stop),
        report.wall_s
    );
    out
}
