//! The report as a standalone HTML page: the table (regressions in red, improvements in
//! green), its notes, each benchmark's SVG power plot from the run directory and, against
//! a baseline, the overlay of both runs' window energies ([`super::overlay`]).

use std::fmt::Write as _;

use super::super::compare::ResultSet;
use super::overlay::overlay;
use super::partial::partial_line;
use super::shown_dir;
use super::table::{Cells, Table};
use super::{Report, ReportFormat};
use crate::chart::{si_unit, PALETTE, REGRESSION_COLOR};
use crate::overview::{render_overview, Overview, OverviewRow, Reference};
use energy_results::axis::axis_label;
use energy_results::detect::Verdict;
use energy_results::escape::html as escape;
use energy_results::file_stem;
use energy_results::Result;
use energy_units::format_si;

/// The standalone HTML page (`--format html`).
pub struct Html;

impl ReportFormat for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    /// Each run's page, one after the other; the line of each partial run after the first
    /// page's `<body>`, before every table; a paragraph per directory that measured nothing
    /// at the end.
    fn render(&self, report: &Report<'_>) -> Result<String> {
        let partial: String = report
            .partial
            .iter()
            .map(|p| format!("<p class=\"partial\" style=\"background:#fdd;color:#900;padding:4px 8px\"><strong>PARTIAL RUN:</strong> {}</p>\n", escape(&partial_line(p))))
            .collect();
        let several = report.runs.len() > 1;
        let mut out = String::new();
        for (i, run) in report.runs.iter().enumerate() {
            let table = Table::new(Cells::Html, run.current, run.baseline_set(), run.comparison());
            out.push_str(&html(&table, run.current, run.baseline_set(), if i == 0 { &partial } else { "" }));
            if several {
                out.push('\n');
            }
        }
        for (_, line) in &report.measured_nothing {
            let _ = writeln!(out, "<p>{}</p>", escape(line));
        }
        Ok(out)
    }
}

/// The colour of a verdict's dot in the change chart.
fn verdict_color(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => REGRESSION_COLOR,
        Verdict::Inconclusive => "#e69500",
        Verdict::Improvement => PALETTE[2],
        Verdict::WithinThreshold | Verdict::NotSignificant => PALETTE[0],
    }
}

/// The overview charts of a run, in the table's order: the energy per launch of each
/// benchmark with its interval, and against a baseline each change with the threshold.
fn overview_charts(table: &Table<'_>, current: &ResultSet) -> String {
    let measured: Vec<&energy_results::ResultFile> =
        table.row_ids.iter().filter_map(|(id, _)| current.results.get(id)).collect();
    if measured.is_empty() {
        return String::new();
    }
    let energy = Overview {
        title: format!("Energy per launch, 95 % interval ({} benchmarks)", measured.len()),
        x_title: "energy per launch".into(),
        rows: measured
            .iter()
            .map(|r| OverviewRow {
                label: r.id.clone(),
                value: r.energy_j.mean,
                interval: Some((r.energy_j.ci_low, r.energy_j.ci_high)),
                color: PALETTE[0],
                tip: format!("{}: {}", r.id, format_si(r.energy_j.mean, "J", 4)),
            })
            .collect(),
        references: vec![],
        tick_label: {
            let (factor, unit) = si_unit(measured.iter().map(|r| r.energy_j.ci_high), "J");
            Box::new(move |v| if v == 0.0 { "0".into() } else { format!("{} {unit}", axis_label(v / factor, 0)) })
        },
        log_allowed: true,
    };
    let mut out = render_overview(&energy);
    let changes: Vec<_> = table.row_ids.iter().filter_map(|(id, _)| table.comparison_change(id)).collect();
    if let (Some(comparison), false) = (table.comparison, changes.is_empty()) {
        let threshold = comparison.threshold_pct;
        let chart = Overview {
            title: format!(
                "Change of the energy per launch against the baseline, 95 % interval ({} benchmarks)",
                changes.len()
            ),
            x_title: "change, %".into(),
            rows: changes
                .iter()
                .map(|c| OverviewRow {
                    label: c.id.clone(),
                    value: c.change_pct,
                    interval: Some((c.change_low_pct, c.change_high_pct)),
                    color: verdict_color(c.verdict),
                    tip: format!(
                        "{}: {:+.2} % [{:+.2}, {:+.2}]",
                        c.id, c.change_pct, c.change_low_pct, c.change_high_pct
                    ),
                })
                .collect(),
            // A reference that is not a finite number is not drawn (`render_overview`).
            references: vec![
                Reference { at: 0.0, label: "0".into(), color: "#333333" },
                Reference { at: threshold, label: format!("threshold {threshold:+.1} %"), color: REGRESSION_COLOR },
            ],
            tick_label: Box::new(|v| if v == 0.0 { "0".into() } else { format!("{} %", axis_label(v, 0)) }),
            log_allowed: false,
        };
        out.push_str(&render_overview(&chart));
    }
    out
}

/// The class of a row: `regression` (red), `inconclusive` (amber: a rise the unknown drift
/// between runs could explain), `improvement` (green), or none.
fn row_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(Verdict::Regression) => " class=\"regression\"",
        Some(Verdict::Inconclusive) => " class=\"inconclusive\"",
        Some(Verdict::Improvement) => " class=\"improvement\"",
        _ => "",
    }
}

/// The page of `table`, with the plots of `current`'s benchmarks (in the table's order)
/// and, when `baseline` is given, each compared benchmark's overlay; `after_body` (HTML)
/// opens the body, above the title.
pub fn html(table: &Table<'_>, current: &ResultSet, baseline: Option<&ResultSet>, after_body: &str) -> String {
    let t = table.title(escape);
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}}td:first-child{{text-align:left}}tr.regression td{{background:#fdd;color:#900}}tr.inconclusive td{{background:#ffe9c4;color:#7a4a00}}tr.improvement td{{background:#dfd;color:#060}}p.summary{{font-size:1.1em}}</style></head><body>{after_body}<h2>{t}</h2>\n<p class=\"summary\">{}</p>\n",
        table.summary
    );
    out.push_str(&overview_charts(table, current));
    out.push_str(&crate::sweep::sweeps_html(current, baseline));
    out.push_str("<table><tr>");
    for h in table.header() {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for (row, (_, verdict)) in table.rows.iter().zip(&table.row_ids) {
        let _ = write!(out, "<tr{}>", row_class(*verdict));
        for cell in table.cells(row) {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    for note in &table.notes {
        let _ = writeln!(out, "<p>{note}</p>");
    }
    for (id, _) in &table.row_ids {
        let Some(r) = current.results.get(id) else { continue };
        let _ = writeln!(out, "<h3>{}</h3>", escape(&r.id));
        if let Some(svg) = baseline
            .and_then(|b| b.results.get(id))
            .and_then(|base| overlay(base, r, &baseline.unwrap_or(current).run_name(), &current.run_name()))
        {
            out.push_str(&svg);
        }
        let file = format!("{}.svg", file_stem(&r.id));
        match std::fs::read_to_string(current.dir.join(&file)) {
            Ok(svg) => out.push_str(&svg),
            Err(_) => {
                let shown = shown_dir(&current.dir.join(&file));
                let _ = writeln!(out, "<p>(no plot: {} is missing)</p>", escape(&shown));
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}
