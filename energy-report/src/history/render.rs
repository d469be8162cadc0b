//! What `cargo energy history` writes: an SVG per benchmark (x = run, labelled by short
//! commit; y = energy per launch with its 95 % interval, in a unit chosen per benchmark;
//! regressions ringed in red; one series per GPU), an `index.html` embedding them, and the
//! text table printed on standard output.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{BenchHistory, History, HistoryPoint};
use crate::chart::{energy_unit, render_chart, Chart, ChartPoint, ChartSeries, PALETTE};
use crate::format::compare_text::verdict_label;
use crate::format::shown_dir;
use energy_results::escape::{html, visible};
use energy_results::file_stem;
use energy_results::write_atomically;
use energy_results::Result;
use energy_units::format_si;

use energy_results::result::short_uuid;

/// ` (simulated)` when the history's figures are.
fn simulated_note(history: &History) -> &'static str {
    if history.simulated {
        " (simulated)"
    } else {
        ""
    }
}

/// The tooltip of a point: run, commit, host, figure, temperatures and change.
fn tip(history: &History, bench: &BenchHistory, p: &HistoryPoint, unit: &str, factor: f64) -> String {
    let run = &history.runs[p.run];
    let mut text = format!(
        "{} {}: {:.4} {unit} [{:.4}, {:.4}]",
        bench.id,
        run.label,
        p.energy_j.mean / factor,
        p.energy_j.ci_low / factor,
        p.energy_j.ci_high / factor
    );
    if let Some(prov) = &run.provenance {
        if let Some(branch) = &prov.branch {
            let _ = write!(text, ", branch {branch}");
        }
        if let Some(host) = &prov.host {
            let _ = write!(text, ", host {host}");
        }
    }
    if let Some(t) = p.temperature_c {
        let _ = write!(text, ", {}-{} °C", t.min_c, t.max_c);
    }
    if let Some(c) = &p.change {
        let _ = write!(text, ", {:+.2} % {}", c.change_pct, verdict_label(c.verdict));
    }
    text
}

/// A run's label on the x axis: its date (the run's start, else its commit's, UTC) and
/// its short commit (or folder name).
fn run_label(run: &super::HistoryRun) -> String {
    // The run's own start: two runs of one commit (a repeat) are told apart; the commit's
    // time when the start cannot be read.
    let started = humantime::parse_rfc3339_weak(&run.started)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64());
    let date = started
        .or_else(|| run.order_time())
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map(|t| humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(t)))
        .map(|t| t.to_string()[5..16].replace('T', " "));
    match date {
        Some(d) => format!("{d} {}", run.label),
        None => run.label.clone(),
    }
}

/// The chart of one benchmark, as SVG.
pub fn bench_chart(history: &History, bench: &BenchHistory) -> String {
    let all = bench.series.iter().flat_map(|s| s.points.iter());
    let (factor, unit) = energy_unit(all.map(|p| p.energy_j.mean));
    // The x axis holds the runs that measured this benchmark, not every run of the set: a
    // benchmark added late starts at the left, and runs of other benchmarks leave no gaps.
    let mut slots: Vec<usize> = bench.series.iter().flat_map(|s| s.points.iter().map(|p| p.run)).collect();
    slots.sort_unstable();
    slots.dedup();
    let slot = |run: usize| slots.binary_search(&run).unwrap_or(0);
    let series = bench
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| ChartSeries {
            label: format!("{} {}", s.gpu_name, short_uuid(&s.uuid)),
            color: PALETTE[i % PALETTE.len()],
            points: s
                .points
                .iter()
                .map(|p| ChartPoint {
                    x: slot(p.run),
                    y: p.energy_j.mean / factor,
                    interval: Some((p.energy_j.ci_low / factor, p.energy_j.ci_high / factor)),
                    regression: p.is_regression(),
                    tip: tip(history, bench, p, &unit, factor),
                })
                .collect(),
        })
        .collect();
    render_chart(&Chart {
        // An id from the simulated GPU already says so; never twice.
        title: format!(
            "{}{}: energy per launch by run (raw, not temperature-normalized)",
            bench.id,
            if bench.id.contains("(simulated)") { "" } else { simulated_note(history) }
        ),
        x_title: "run that measured it: date and commit (* = uncommitted changes), oldest first".into(),
        y_title: format!("energy per launch ({unit}), 95 % interval"),
        x_labels: slots.iter().map(|&i| run_label(&history.runs[i])).collect(),
        series,
    })
}

/// The page embedding every benchmark's chart (`charts`: id and SVG, in order), with the
/// runs listed under them.
pub fn index_html(history: &History, charts: &[(String, String)]) -> String {
    let title = format!("Energy history{}", simulated_note(history));
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}</style></head><body><h2>{title}</h2>\n<p>Energy per launch with its 95 % interval, run after run; a red ring marks a regression from the previous run on the same GPU (a rise above {:.1} %, significant one-sided at 1 % false alarms: the rule of <code>cargo energy compare</code>). Each GPU is its own series.</p>\n",
        history.threshold_pct
    );
    for (id, svg) in charts {
        let _ = writeln!(out, "<h3>{}</h3>", html(id));
        out.push_str(svg);
    }
    out.push_str("<h3>Runs</h3>\n<table><tr><th>run</th><th>directory</th><th>commit</th><th>branch</th><th>host</th><th>started</th></tr>\n");
    for run in &history.runs {
        let p = run.provenance.clone().unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&run.label),
            html(&shown_dir(&run.dir)),
            html(p.commit.as_deref().unwrap_or("—")),
            html(p.branch.as_deref().unwrap_or("—")),
            html(p.host.as_deref().unwrap_or("—")),
            html(&run.started)
        );
    }
    out.push_str("</table>\n</body></html>\n");
    out
}

/// The text table: per benchmark, one line per run and GPU with the energy per launch,
/// its interval, the change from the previous run on that GPU and its verdict.
pub fn text_table(history: &History) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "energy per launch by run{}, oldest first ({} runs; regression: a rise above {:.1} %, significant one-sided at 1 % false alarms)",
        simulated_note(history),
        history.runs.len(),
        history.threshold_pct
    );
    for bench in &history.benchmarks {
        let _ = writeln!(out, "{}", visible(&bench.id));
        for s in &bench.series {
            let _ = writeln!(out, "  on {} ({})", visible(&s.gpu_name), visible(&s.uuid));
            for p in &s.points {
                let run = &history.runs[p.run];
                let change = p.change.as_ref().map_or_else(
                    || "first".to_string(),
                    |c| {
                        format!(
                            "{:+.2} % [{:+.2}, {:+.2}]  {}",
                            c.change_pct,
                            c.change_low_pct,
                            c.change_high_pct,
                            verdict_label(c.verdict)
                        )
                    },
                );
                let _ = writeln!(
                    out,
                    "    {:<10} {:>12} ±{:.2} %  {change}",
                    visible(&run.label),
                    format_si(p.energy_j.mean, "J", 4),
                    p.energy_j.relative_half_width() * 100.0
                );
            }
        }
    }
    let regressions: usize =
        history.benchmarks.iter().flat_map(|b| &b.series).flat_map(|s| &s.points).filter(|p| p.is_regression()).count();
    let _ = writeln!(out, "{regressions} regression(s) from one run to the next");
    out
}

/// Writes one SVG per benchmark (`<stem>.svg`) and `index.html` into `out_dir`, each
/// atomically; returns the paths written, the page last.
pub fn write_history(history: &History, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut charts = Vec::new();
    for bench in &history.benchmarks {
        let svg = bench_chart(history, bench);
        let path = out_dir.join(format!("{}.svg", file_stem(&bench.id)));
        write_atomically(&path, svg.as_bytes())?;
        written.push(path);
        charts.push((bench.id.clone(), svg));
    }
    let index = out_dir.join("index.html");
    write_atomically(&index, index_html(history, &charts).as_bytes())?;
    written.push(index);
    Ok(written)
}
