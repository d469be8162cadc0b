//! The sweeps of a run (`#[energy_bench(args = [...])]`): the results that carry a
//! [`SweepPoint`] grouped by sweep, their table and verdict (the harness's, as the bench
//! printed them), an SVG of energy and time per call against the argument, and, across two
//! runs, whether the optimum moved.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::chart::{energy_unit, render_chart, si_unit, Chart, ChartPoint, ChartSeries, PALETTE};
use super::compare::ResultSet;
use super::natural::natural_cmp;
use energy_results::escape::{html, html_lines, markdown_text, xml as escape};
use energy_results::Estimate;
use energy_results::{render_sweep, sweep_cells, sweep_verdict, verdict_line, SweepRow, SweepVerdict};

/// One sweep of a run: its name, the parameter, one row per argument in natural order of the
/// arguments (`64` < `128`), and whether its figures are simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The sweep: the benchmark's name without the argument.
    pub name: String,
    /// The parameter's name.
    pub param: String,
    /// One row per argument.
    pub rows: Vec<SweepRow>,
    /// Whether any of its results is simulated.
    pub simulated: bool,
}

impl Sweep {
    /// The sweep's verdict (least energy, least time, their difference with intervals).
    pub fn verdict(&self) -> Option<SweepVerdict> {
        sweep_verdict(&self.rows)
    }

    /// The table and verdict, as the bench printed them.
    pub fn text(&self) -> String {
        render_sweep(&self.name, &self.param, &self.rows, self.simulated)
    }
}

/// The sweeps of `set`, in natural order of their names; a benchmark without a sweep point
/// is in none. A sweep whose points share the name but not the parameter is split by it.
pub fn sweeps(set: &ResultSet) -> Vec<Sweep> {
    let mut by_name: BTreeMap<(String, String), Sweep> = BTreeMap::new();
    for r in set.results.values() {
        let Some(p) = &r.sweep else { continue };
        let sweep = by_name.entry((p.sweep.clone(), p.param.clone())).or_insert_with(|| Sweep {
            name: p.sweep.clone(),
            param: p.param.clone(),
            rows: Vec::new(),
            simulated: false,
        });
        sweep.simulated |= r.device.simulated;
        sweep.rows.push(SweepRow {
            arg: p.arg.clone(),
            energy_j: r.energy_j,
            dynamic_j: r.dynamic_j,
            time_s: r.time_s,
        });
    }
    let mut out: Vec<Sweep> = by_name.into_values().collect();
    for s in &mut out {
        s.rows.sort_by(|a, b| natural_cmp(&a.arg, &b.arg));
    }
    out.sort_by(|a, b| natural_cmp(&a.name, &b.name).then_with(|| a.param.cmp(&b.param)));
    out
}

/// Energy per call and time per call against the argument, each with its 95 % interval, one
/// chart above the other in one SVG; the least-energy and least-time arguments named in the
/// titles.
pub fn sweep_svg(sweep: &Sweep) -> String {
    let verdict = sweep.verdict();
    let labels: Vec<String> = sweep.rows.iter().map(|r| r.arg.clone()).collect();
    let least = |pick: fn(&SweepVerdict) -> usize| {
        verdict.as_ref().map_or_else(String::new, |v| format!("; least at {} {}", sweep.param, labels[pick(v)]))
    };
    let simulated = if sweep.simulated { " (simulated)" } else { "" };
    let (scale, unit) = energy_unit(sweep.rows.iter().map(|r| r.energy_j.mean));
    let energy = chart(
        format!("{}: energy per launch against {}{simulated}{}", sweep.name, sweep.param, least(|v| v.least_energy)),
        format!("energy per launch ({unit}), 95 % interval"),
        &sweep.param,
        &labels,
        sweep.rows.iter().map(|r| &r.energy_j).collect(),
        scale,
        PALETTE[0],
    );
    let (t_scale, t_unit) = si_unit(sweep.rows.iter().map(|r| r.time_s.mean), "s");
    let time = chart(
        format!("{}: time per launch against {}{simulated}{}", sweep.name, sweep.param, least(|v| v.least_time)),
        format!("time per launch ({t_unit}), 95 % interval"),
        &sweep.param,
        &labels,
        sweep.rows.iter().map(|r| &r.time_s).collect(),
        t_scale,
        PALETTE[1],
    );
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"720\" viewBox=\"0 0 960 720\">\n<title>{}</title>\n<g>{energy}</g>\n<g transform=\"translate(0 360)\">{time}</g>\n</svg>\n",
        escape(&format!("{} over {}", sweep.name, sweep.param))
    )
}

/// One chart of `values` (one per argument), in the unit whose factor is `factor` (the value
/// divided by it: `28.6` for 28.6 mJ with `mJ`'s 1e-3).
fn chart(
    title: String,
    y_title: String,
    param: &str,
    labels: &[String],
    values: Vec<&Estimate>,
    factor: f64,
    color: &'static str,
) -> String {
    let points = values
        .iter()
        .enumerate()
        .map(|(x, e)| {
            let (y, low, high) = (e.mean / factor, e.ci_low / factor, e.ci_high / factor);
            ChartPoint {
                x,
                y,
                interval: Some((low, high)),
                regression: false,
                tip: format!("{param} {}: {y:.4} [{low:.4}, {high:.4}]", labels[x]),
            }
        })
        .collect();
    render_chart(&Chart {
        title,
        x_title: param.to_string(),
        y_title,
        x_labels: labels.to_vec(),
        series: vec![ChartSeries { label: param.to_string(), color, points }],
    })
}

/// Where two runs' sweeps disagree on the optimum: one line per sweep in both runs whose
/// least-energy or least-time argument moved, with each run's verdict.
pub fn optimum_moves(
    baseline: &ResultSet,
    candidate: &ResultSet,
    baseline_name: &str,
    candidate_name: &str,
) -> Vec<String> {
    let before = sweeps(baseline);
    let mut lines = Vec::new();
    for now in sweeps(candidate) {
        let Some(then) = before.iter().find(|s| s.name == now.name && s.param == now.param) else { continue };
        let (Some(v_then), Some(v_now)) = (then.verdict(), now.verdict()) else { continue };
        let arg = |s: &Sweep, i: usize| s.rows[i].arg.clone();
        let mut moved = Vec::new();
        if arg(then, v_then.least_energy) != arg(&now, v_now.least_energy) {
            moved.push(format!(
                "least energy moved from {p} {} ({baseline_name}) to {p} {} ({candidate_name})",
                arg(then, v_then.least_energy),
                arg(&now, v_now.least_energy),
                p = now.param
            ));
        }
        if arg(then, v_then.least_time) != arg(&now, v_now.least_time) {
            moved.push(format!(
                "least time moved from {p} {} ({baseline_name}) to {p} {} ({candidate_name})",
                arg(then, v_then.least_time),
                arg(&now, v_now.least_time),
                p = now.param
            ));
        }
        if !moved.is_empty() {
            let apart = match &v_now.runner_up {
                Some((_, c)) if c.beyond_intervals() => "beyond the intervals",
                Some(_) => "not beyond the intervals",
                None => "alone",
            };
            lines.push(format!(
                "sweep {}: {} (in {candidate_name}, the least energy is told apart from the next {apart}: {})",
                now.name,
                moved.join("; "),
                verdict_line(&now.param, &now.rows, &v_now)
            ));
        }
    }
    lines
}

/// The sweeps of `current` for a markdown report: each one's table, verdict and, against
/// `baseline`, whether its optimum moved. Empty without sweeps.
pub fn sweeps_markdown(current: &ResultSet, baseline: Option<&ResultSet>) -> String {
    let mut out = String::new();
    for s in sweeps(current) {
        let simulated = if s.simulated { " (simulated: every figure is the sim(…) model's)" } else { "" };
        let _ = write!(
            out,
            "\n#### Sweep {} over {}{simulated}\n\n| {} | energy per launch (95 % CI) | dynamic per launch | time per launch (95 % CI) | energy×time | |\n|---|---|---|---|---|---|\n",
            markdown_text(&s.name),
            markdown_text(&s.param),
            markdown_text(&s.param)
        );
        let (cells, verdict) = sweep_cells(&s.param, &s.rows);
        for row in &cells {
            let row: Vec<String> = row.iter().map(|c| markdown_text(c)).collect();
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        let _ = write!(out, "\n{}\n", markdown_text(&verdict));
    }
    for line in baseline.map(|b| optimum_moves(b, current, &b.run_name(), &current.run_name())).unwrap_or_default() {
        let _ = write!(out, "\n**{}**\n", markdown_text(&line));
    }
    out
}

/// The sweeps of `current` for the HTML page: each one's table and verdict, its SVG, and
/// against `baseline` whether its optimum moved. Empty without sweeps.
pub fn sweeps_html(current: &ResultSet, baseline: Option<&ResultSet>) -> String {
    let mut out = String::new();
    for line in baseline.map(|b| optimum_moves(b, current, &b.run_name(), &current.run_name())).unwrap_or_default() {
        let _ = writeln!(out, "<p><strong>{}</strong></p>", html(&line));
    }
    for s in sweeps(current) {
        let _ = writeln!(
            out,
            "<h3>Sweep {} over {}</h3>\n<pre>{}</pre>",
            html(&s.name),
            html(&s.param),
            html_lines(&s.text())
        );
        out.push_str(&sweep_svg(&s));
    }
    out
}

#[cfg(test)]
mod tests;
