//! A parameterized benchmark's sweep (`#[energy_bench(args = [...])]`): each argument its
//! own benchmark, and across them the argument with the least energy per call, the one with
//! the least time, and whether they differ beyond the intervals.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::stats::Estimate;
use energy_units::format_si;

/// Where a benchmark stands in a sweep: the sweep's name (the benchmark's, without the
/// argument), the parameter's name (the launch function's, e.g. `block`) and the argument
/// as its id shows it (`256`). Written into the result file (`sweep`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SweepPoint {
    /// The sweep: the benchmark's name without the argument.
    pub sweep: String,
    /// The parameter's name (the launch function's last parameter).
    pub param: String,
    /// The argument, as `Display` writes it (the id is `sweep/arg`).
    pub arg: String,
}

/// One argument's figures: energy and time per call, with their 95 % intervals.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// The argument.
    pub arg: String,
    /// Energy per call, J.
    pub energy_j: Estimate,
    /// Dynamic energy per call (above active idle), J.
    pub dynamic_j: Estimate,
    /// Time per call, s.
    pub time_s: Estimate,
}

impl SweepRow {
    /// Energy-delay product per launch, J·s (the means' product).
    pub fn energy_delay_js(&self) -> f64 {
        self.energy_j.mean * self.time_s.mean
    }
}

/// A relative change `b / a − 1` with its 95 % interval (first order: the two relative
/// half-widths combined in quadrature), in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RelativeChange {
    /// The change, %.
    pub pct: f64,
    /// Lower end of its interval, %.
    pub low_pct: f64,
    /// Upper end of its interval, %.
    pub high_pct: f64,
}

impl RelativeChange {
    /// `b` relative to `a`: `b / a − 1`.
    pub fn of(b: &Estimate, a: &Estimate) -> RelativeChange {
        let ratio = b.mean / a.mean;
        let half = (b.relative_half_width().powi(2) + a.relative_half_width().powi(2)).sqrt() * ratio;
        RelativeChange {
            pct: (ratio - 1.0) * 100.0,
            low_pct: (ratio - half - 1.0) * 100.0,
            high_pct: (ratio + half - 1.0) * 100.0,
        }
    }

    /// Whether the interval leaves out zero (a change beyond the intervals).
    pub fn beyond_intervals(&self) -> bool {
        self.low_pct > 0.0 || self.high_pct < 0.0
    }
}

/// What a sweep says: the argument with the least energy per call and the one with the
/// least time, and the least-energy one's energy and time against the fastest's.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepVerdict {
    /// Index of the argument with the least energy per call.
    pub least_energy: usize,
    /// Index of the argument with the least time per call.
    pub least_time: usize,
    /// The least-energy argument's energy per call against the fastest's (negative: less).
    pub energy_vs_fastest: RelativeChange,
    /// The least-energy argument's time per call against the fastest's (positive: slower).
    pub time_vs_fastest: RelativeChange,
    /// The runner-up in energy (the second least) against the least: whether the least
    /// energy is told apart from the next (`None` with one argument).
    pub runner_up: Option<(usize, RelativeChange)>,
}

/// The verdict of a sweep's rows; `None` without rows or with a figure that is not a finite
/// positive number.
pub fn sweep_verdict(rows: &[SweepRow]) -> Option<SweepVerdict> {
    let usable = |e: &Estimate| e.mean.is_finite() && e.mean > 0.0;
    if rows.is_empty() || rows.iter().any(|r| !usable(&r.energy_j) || !usable(&r.time_s)) {
        return None;
    }
    let least =
        |of: fn(&SweepRow) -> f64| (0..rows.len()).min_by(|&a, &b| of(&rows[a]).total_cmp(&of(&rows[b]))).unwrap_or(0);
    let least_energy = least(|r| r.energy_j.mean);
    let least_time = least(|r| r.time_s.mean);
    let runner_up = (0..rows.len())
        .filter(|&i| i != least_energy)
        .min_by(|&a, &b| rows[a].energy_j.mean.total_cmp(&rows[b].energy_j.mean))
        .map(|i| (i, RelativeChange::of(&rows[i].energy_j, &rows[least_energy].energy_j)));
    Some(SweepVerdict {
        least_energy,
        least_time,
        energy_vs_fastest: RelativeChange::of(&rows[least_energy].energy_j, &rows[least_time].energy_j),
        time_vs_fastest: RelativeChange::of(&rows[least_energy].time_s, &rows[least_time].time_s),
        runner_up,
    })
}

/// `x.x % [lo, hi]` of a change's size (its sign said in words by the caller).
fn size(c: &RelativeChange) -> String {
    let (low, high) = if c.pct < 0.0 { (-c.high_pct, -c.low_pct) } else { (c.low_pct, c.high_pct) };
    format!("{:.1} % [{low:.1}, {high:.1}]", c.pct.abs())
}

/// The one-line verdict: "block 256 is fastest; block 128 costs 7.9 % [6.8, 9.0] less
/// energy, 3.1 % slower", or that the two do not differ beyond their intervals.
pub fn verdict_line(param: &str, rows: &[SweepRow], v: &SweepVerdict) -> String {
    let (e, t) = (&rows[v.least_energy].arg, &rows[v.least_time].arg);
    if v.least_energy == v.least_time {
        let next = match &v.runner_up {
            Some((i, c)) if c.beyond_intervals() => {
                format!("; the next, {param} {}, costs {} more energy", rows[*i].arg, size(c))
            }
            Some((i, c)) => {
                format!("; {param} {} costs {} more energy, not beyond the intervals", rows[*i].arg, size(c))
            }
            None => String::new(),
        };
        return format!("{param} {t} is the fastest and costs the least energy{next}");
    }
    let (energy, time) = (&v.energy_vs_fastest, &v.time_vs_fastest);
    let slower = if time.pct >= 0.0 { "slower" } else { "faster" };
    if energy.beyond_intervals() && energy.pct < 0.0 {
        format!(
            "{param} {t} is fastest; {param} {e} costs {} less energy, {:.1} % {slower}",
            size(energy),
            time.pct.abs()
        )
    } else {
        format!(
            "{param} {t} is fastest; {param} {e} has the least energy per launch, but not beyond the intervals ({} less): \
             the fastest costs as little, within the measurement",
            size(energy)
        )
    }
}

/// The cells of a sweep's table, one row per argument: the argument; energy, dynamic energy
/// and time per launch, each `28.60 mJ ±0.29 %` (the 95 % interval's half-width); the
/// energy-delay product; the mark (`least energy`, `least time`, both, or empty). Then the
/// verdict line, or why there is none. The text table and the report's markdown table are
/// both drawn from these.
pub fn sweep_cells(param: &str, rows: &[SweepRow]) -> (Vec<[String; 6]>, String) {
    let verdict = sweep_verdict(rows);
    // The half-width relative to the mean, or in the figure's unit where the mean is zero
    // (a dynamic energy of 0 J has no relative interval: never "±inf %").
    let pm = |e: &Estimate, unit: &str| {
        let relative = e.relative_half_width() * 100.0;
        if relative.is_finite() {
            format!("{} ±{relative:.2} %", format_si(e.mean, unit, 4))
        } else {
            let half = 0.5 * (e.ci_high - e.ci_low);
            format!("{} ±{}", format_si(e.mean, unit, 4), format_si(half, unit, 3))
        }
    };
    let cells = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mark = match &verdict {
                Some(v) if v.least_energy == i && v.least_time == i => "least energy, least time",
                Some(v) if v.least_energy == i => "least energy",
                Some(v) if v.least_time == i => "least time",
                _ => "",
            };
            [
                r.arg.clone(),
                pm(&r.energy_j, "J"),
                pm(&r.dynamic_j, "J"),
                pm(&r.time_s, "s"),
                format_si(r.energy_delay_js(), "J·s", 3),
                mark.to_string(),
            ]
        })
        .collect();
    let line = match &verdict {
        Some(v) => format!("verdict: {}", verdict_line(param, rows, v)),
        None => "verdict: none (a figure is not a finite positive number)".to_string(),
    };
    (cells, line)
}

/// The sweep as a text table ([`sweep_cells`]: argument, energy, dynamic energy and time per
/// launch with their intervals, energy-delay product), the least energy and time marked, and
/// the verdict.
pub fn render_sweep(sweep: &str, param: &str, rows: &[SweepRow], simulated: bool) -> String {
    let mut out = format!(
        "{sweep} over {param} ({} arguments{}):\n",
        rows.len(),
        if simulated { ", simulated: every figure is the sim(…) model's, none measured" } else { "" }
    );
    let (cells, verdict) = sweep_cells(param, rows);
    let width = rows.iter().map(|r| r.arg.chars().count()).max().unwrap_or(0).max(param.chars().count());
    let _ = writeln!(
        out,
        "  {param:<width$}  {:>28}  {:>28}  {:>28}  {:>12}",
        "energy per launch (95 % CI)", "dynamic per launch", "time per launch (95 % CI)", "energy×time"
    );
    for [arg, energy, dynamic, time, energy_delay, mark] in &cells {
        let mark = if mark.is_empty() { String::new() } else { format!("  ← {mark}") };
        let _ = writeln!(out, "  {arg:<width$}  {energy:>28}  {dynamic:>28}  {time:>28}  {energy_delay:>12}{mark}");
    }
    let _ = writeln!(out, "  {verdict}");
    out
}

#[cfg(test)]
mod tests;
