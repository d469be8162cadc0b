//! The table of a run that [`super::markdown`] and [`super::html`] write: one row per
//! benchmark (time, energy, dynamic energy, power, energy per unit, net energy, change
//! against the baseline, warnings), a title and the notes under it. Each cell is written
//! for its format: [`Cells`] writes code and emphasis and escapes the text it did not
//! write itself.

use super::super::compare::{Change, Comparison, ResultSet};
use super::super::natural::sort_natural;
use super::{interval_pct, shown_dir};
use energy_results::detect::Verdict;
use energy_results::escape::{html, markdown_cell_code, markdown_code_span};
use energy_results::ResultFile;
use energy_units::format_si;

/// How a table's cells are written: each writes code and emphasis its own way and escapes
/// the text it did not write itself ([`energy_results::escape`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Cells {
    /// GitHub-flavoured markdown.
    Markdown,
    /// HTML.
    Html,
}

impl Cells {
    /// An id (or other name from a file) as code in a cell.
    fn code(self, text: &str) -> String {
        match self {
            Cells::Markdown => markdown_cell_code(text),
            Cells::Html => format!("<code>{}</code>", html(text)),
        }
    }

    /// A name from a file or the command line as code in a note.
    fn code_span(self, text: &str) -> String {
        match self {
            Cells::Markdown => markdown_code_span(text),
            Cells::Html => format!("<code>{}</code>", html(text)),
        }
    }

    /// Text this module wrote (figures, verdicts), emphasized.
    fn strong(self, text: &str) -> String {
        match self {
            Cells::Markdown => format!("**{text}**"),
            Cells::Html => format!("<strong>{text}</strong>"),
        }
    }
}

/// The column heads, in order.
pub const HEADER: [&str; 9] = [
    "benchmark",
    "time/launch",
    "energy/launch (95 % CI)",
    "dynamic",
    "power",
    "energy/unit",
    "net vs baseline kernel (95 % CI)",
    "change vs baseline [95 % CI]",
    "warnings",
];

/// A run's table, its cells written for one format.
pub struct Table<'a> {
    /// The run reported.
    pub current: &'a ResultSet,
    /// Whether its figures are simulated.
    pub simulated: bool,
    /// One row per benchmark, [`HEADER`]'s columns, in natural order of the ids
    /// ([`super::super::natural::natural_cmp`]).
    pub rows: Vec<Vec<String>>,
    /// Each row's benchmark id and its verdict against the baseline (when compared), in
    /// the order of `rows`.
    pub row_ids: Vec<(String, Option<Verdict>)>,
    /// The notes under the table (the baseline and the rule, benchmarks of the baseline only).
    pub notes: Vec<String>,
    /// Which of [`HEADER`]'s columns are shown: the benchmark's always, every other one where
    /// some row has a figure (a column of "—" on every row says nothing).
    pub shown: [bool; HEADER.len()],
    /// The line above the table: how many benchmarks, the verdicts against the baseline with
    /// the benchmarks that regressed, and the warnings by benchmark and kind.
    pub summary: String,
    /// The comparison with the baseline, when there is one.
    pub comparison: Option<&'a Comparison>,
}

impl<'a> Table<'a> {
    /// The table of `current`, against `baseline` as `comparison` compared them.
    pub fn new(
        cells: Cells,
        current: &'a ResultSet,
        baseline: Option<&ResultSet>,
        comparison: Option<&'a Comparison>,
    ) -> Table<'a> {
        let change_of = |id: &str| change_in(comparison, id);
        let first = current.results.values().next().expect("a result set is never empty");
        let mut rows = Vec::new();
        let mut row_ids = Vec::new();
        let mut results: Vec<&ResultFile> = current.results.values().collect();
        sort_natural(&mut results, |r| r.id.as_str());
        for r in results {
            row_ids.push((r.id.clone(), change_of(&r.id).map(|c| c.verdict)));
            rows.push(vec![
                cells.code(&r.id),
                format_si(r.time_s.mean, "s", 4),
                format!("{} {}", format_si(r.energy_j.mean, "J", 4), interval_pct(&r.energy_j)),
                format_si(r.dynamic_j.mean, "J", 4),
                format_si(r.power_w.mean, "W", 4),
                per_unit(r),
                net_per_op(r, cells),
                change_of(&r.id).map_or_else(
                    || if baseline.is_some() { "new".into() } else { "—".into() },
                    |c| change_text(c, cells),
                ),
                warning_names(r),
            ]);
        }
        // Benchmarks not run here (gpu_only, raw cudarc or library work without a GPU): a
        // row each, with why, never left out.
        let mut not_run: Vec<(&String, &String)> = current.not_run.iter().collect();
        sort_natural(&mut not_run, |(id, _)| id.as_str());
        for (id, reason) in not_run {
            let measured_in_baseline = baseline.is_some_and(|b| b.results.contains_key(id));
            row_ids.push((id.clone(), None));
            let mut row = vec![cells.code(id), format!("not run: {}", escape_text(cells, reason))];
            row.extend(std::iter::repeat_n("—".to_string(), HEADER.len() - 4));
            row.push(if measured_in_baseline {
                cells.strong("not run here; measured in the baseline")
            } else {
                "—".into()
            });
            row.push("—".into());
            rows.push(row);
        }
        let mut notes = Vec::new();
        if let (Some(b), Some(c)) = (baseline, comparison) {
            notes.push(format!(
                "Baseline {}; a regression is a rise above {:.1} %, significant one-sided at 1 % false alarms; each change states the smallest change it could detect (95 % power).",
                cells.code_span(&shown_dir(&b.dir)),
                c.threshold_pct
            ));
            let mut removed: Vec<&String> = c.removed.iter().collect();
            sort_natural(&mut removed, |id| id.as_str());
            for id in removed.into_iter().filter(|id| !current.not_run.contains_key(*id)) {
                notes.push(format!("{} is in the baseline only.", cells.code_span(id)));
            }
        }
        let mut shown = [true; HEADER.len()];
        for (column, show) in shown.iter_mut().enumerate().skip(1) {
            *show = rows.iter().any(|row| row.get(column).is_some_and(|cell| cell != "—"));
        }
        let mut summary = summary_line(cells, current, comparison);
        if let Some(missing) = missing_note(cells, current) {
            summary.push(' ');
            summary.push_str(&missing);
        }
        Table { current, simulated: first.device.simulated, rows, row_ids, notes, shown, summary, comparison }
    }

    /// The change of benchmark `id` against the baseline, when compared.
    pub fn comparison_change(&self, id: &str) -> Option<&'a Change> {
        change_in(self.comparison, id)
    }

    /// The shown column heads ([`Table::shown`]).
    pub fn header(&self) -> Vec<&'static str> {
        HEADER.iter().zip(self.shown).filter(|(_, show)| *show).map(|(h, _)| *h).collect()
    }

    /// A row's shown cells ([`Table::shown`]).
    pub fn cells<'r>(&self, row: &'r [String]) -> Vec<&'r str> {
        row.iter().zip(self.shown).filter(|(_, show)| *show).map(|(c, _)| c.as_str()).collect()
    }

    /// The title, its device name, driver and directory (from files and the command line,
    /// the directory never absolute: [`shown_dir`]) escaped by `text`.
    pub fn title(&self, text: fn(&str) -> String) -> String {
        let first = self.current.results.values().next().expect("a result set is never empty");
        let driver = first.device.driver.as_deref().unwrap_or("?");
        if self.simulated {
            // The simulated device's name and driver both say so already ("… (simulated)",
            // "simulated (h100 preset)"): said once, in the tag.
            let name = first.device.name.trim_end_matches(" (simulated)");
            let preset = driver.trim_start_matches("simulated").trim().trim_start_matches('(').trim_end_matches(')');
            return format!(
                "Energy report [SIMULATED]: {} {}{}, {}",
                text(name),
                text(&first.device.short_uuid()),
                if preset.is_empty() { String::new() } else { format!(", {}", text(preset)) },
                text(&shown_dir(&self.current.dir))
            );
        }
        format!(
            "Energy report: {} {}, driver {}, {}",
            text(&first.device.name),
            text(&first.device.short_uuid()),
            text(driver),
            text(&shown_dir(&self.current.dir))
        )
    }
}

/// The kinds of a result's warnings, each once, in the order they came; "—" for none.
fn warning_names(r: &ResultFile) -> String {
    let mut names: Vec<&str> = Vec::new();
    for w in &r.warnings {
        if !names.contains(&w.kind.label()) {
            names.push(w.kind.label());
        }
    }
    if names.is_empty() {
        "—".into()
    } else {
        names.join(", ")
    }
}

/// The change of benchmark `id` in `comparison`, when compared.
fn change_in<'c>(comparison: Option<&'c Comparison>, id: &str) -> Option<&'c Change> {
    comparison.and_then(|c| c.changes.iter().find(|x| x.id == id))
}

/// Up to `most` of `items`, joined by `separator`, and how many more.
fn some(items: Vec<String>, most: usize, separator: &str) -> String {
    let more = items.len().saturating_sub(most);
    let mut shown: Vec<String> = items.into_iter().take(most).collect();
    if more > 0 {
        shown.push(format!("{more} more"));
    }
    shown.join(separator)
}

/// Up to `most` ids as code, and how many more.
fn some_ids<'i>(cells: Cells, ids: impl Iterator<Item = &'i str>, most: usize) -> String {
    some(ids.map(|id| cells.code_span(id)).collect(), most, ", ")
}

/// The traces and plots the run lists but its directory lacks (a CI artifact downloaded
/// without them): the figures stand, the plots cannot be shown; `None` when none is missing.
fn missing_note(cells: Cells, current: &ResultSet) -> Option<String> {
    let manifest = energy_results::RunManifest::read_manifest(&current.dir).ok()?;
    let missing = manifest.missing_attachments(&current.dir);
    if missing.is_empty() {
        return None;
    }
    let plots = missing.iter().filter(|f| f.ends_with(".svg")).count();
    Some(format!(
        "{} file{} the run lists {} missing ({} plot{}, {} trace{}: {}): the table stands on the result files; \
         those plots are not shown.",
        missing.len(),
        if missing.len() == 1 { "" } else { "s" },
        if missing.len() == 1 { "is" } else { "are" },
        plots,
        if plots == 1 { "" } else { "s" },
        missing.len() - plots,
        if missing.len() - plots == 1 { "" } else { "s" },
        some_ids(cells, missing.iter().map(String::as_str), 3)
    ))
}

/// [`Table::summary`]: counts, verdicts and warnings in one line.
fn summary_line(cells: Cells, current: &ResultSet, comparison: Option<&Comparison>) -> String {
    let measured = current.results.len();
    let mut parts = vec![format!(
        "{measured} benchmark{} measured{}",
        if measured == 1 { "" } else { "s" },
        if current.not_run.is_empty() { String::new() } else { format!(", {} not run", current.not_run.len()) }
    )];
    if let Some(c) = comparison {
        let ids = |v: Verdict| {
            let mut ids: Vec<&str> = c.changes.iter().filter(|x| x.verdict == v).map(|x| x.id.as_str()).collect();
            sort_natural(&mut ids, |id| id);
            ids
        };
        let (regressions, inconclusive) = (ids(Verdict::Regression), ids(Verdict::Inconclusive));
        let (improvements, within, unchanged) =
            (ids(Verdict::Improvement), ids(Verdict::WithinThreshold), ids(Verdict::NotSignificant));
        let mut verdicts = vec![if regressions.is_empty() {
            "no regression".to_string()
        } else {
            cells.strong(&format!(
                "{} regression{} ({})",
                regressions.len(),
                if regressions.len() == 1 { "" } else { "s" },
                some_ids(cells, regressions.iter().copied(), 5)
            ))
        }];
        if !inconclusive.is_empty() {
            verdicts.push(cells.strong(&format!(
                "{} inconclusive ({})",
                inconclusive.len(),
                some_ids(cells, inconclusive.iter().copied(), 5)
            )));
        }
        for (n, what) in [
            (improvements.len(), "improved"),
            (within.len(), "rose within the threshold"),
            (unchanged.len(), "without a significant change"),
            (c.added.len(), "new"),
            (c.removed.len(), "in the baseline only"),
        ] {
            if n > 0 {
                verdicts.push(format!("{n} {what}"));
            }
        }
        parts.push(format!("against the baseline: {}", verdicts.join(", ")));
    }
    let mut warned: Vec<&ResultFile> = current.results.values().filter(|r| !r.warnings.is_empty()).collect();
    sort_natural(&mut warned, |r| r.id.as_str());
    parts.push(if warned.is_empty() {
        "no warnings".to_string()
    } else {
        let named: Vec<String> =
            warned.iter().map(|r| format!("{} ({})", cells.code_span(&r.id), warning_names(r))).collect();
        format!("warnings on {} of {measured}: {}", warned.len(), some(named, 5, "; "))
    });
    format!("{}.", parts.join("; "))
}

/// Text from a file (a not-run reason) in a cell: escaped for the format.
fn escape_text(cells: Cells, text: &str) -> String {
    match cells {
        Cells::Markdown => energy_results::escape::markdown_text(text),
        Cells::Html => html(text),
    }
}

fn per_unit(r: &ResultFile) -> String {
    match (&r.per_op, &r.per_byte) {
        (Some(op), _) => format!("{}/op", format_si(op.energy_j.mean, "J", 4)),
        (None, Some(b)) => format!("{}/B", format_si(b.energy_j.mean, "J", 4)),
        (None, None) => "—".into(),
    }
}

/// Net energy per op against the baseline kernel (Arafa: `(E_with − E_without) / ops`).
fn net_per_op(r: &ResultFile, cells: Cells) -> String {
    match &r.net {
        Some(net) => format!(
            "{}/{} {} vs {}",
            format_si(net.energy_j.mean, "J", 4),
            if net.ops_per_launch == 1.0 { "launch" } else { "op" },
            interval_pct(&net.energy_j),
            cells.code(&net.baseline_id)
        ),
        None => "—".into(),
    }
}

fn verdict_text(v: Verdict, cells: Cells) -> String {
    match v {
        Verdict::Regression => cells.strong("regression"),
        Verdict::Improvement => "improvement".into(),
        Verdict::WithinThreshold => "rise within threshold".into(),
        Verdict::NotSignificant => "no significant change".into(),
        Verdict::Inconclusive => cells.strong("inconclusive (drift unknown)"),
    }
}

fn change_text(c: &Change, cells: Cells) -> String {
    let warmth = match (c.temperature_note.as_ref(), c.temperature_c) {
        (Some(_), (Some(b), Some(t))) => format!(" (ran {:+.0} °C from the baseline)", t - b),
        _ => String::new(),
    };
    let at = if c.normalized {
        format!(
            ", change of the energy at 50 °C ({} → {}; the energy column is raw)",
            format_si(c.baseline_j.mean, "J", 4),
            format_si(c.candidate_j.mean, "J", 4)
        )
    } else {
        String::new()
    };
    let detectable = if c.detectability.detectable_change_pct.is_finite() {
        format!("{:.2} %", c.detectability.detectable_change_pct)
    } else {
        "unbounded".to_string()
    };
    format!(
        "{:+.2} % [{:+.2}, {:+.2}] {}{warmth}{at}; detectable {detectable}",
        c.change_pct,
        c.change_low_pct,
        c.change_high_pct,
        verdict_text(c.verdict, cells)
    )
}
