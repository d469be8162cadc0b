//! The overview charts at the top of a report, in plain SVG: one row per benchmark, its
//! figure as a dot and its 95 % interval as a bar (a forest plot), so that a page of many
//! benchmarks is read at a glance: the energy per launch of each (on a logarithmic axis when
//! the figures span more than a decade), and, against a baseline, each change with the
//! threshold drawn. Every text goes through [`energy_results::escape::xml`]; a row whose
//! figure is not a finite number (or not positive on a logarithmic axis) is listed without a
//! dot, so no coordinate is ever `NaN` or `inf`.

use std::fmt::Write as _;

use energy_results::axis::ticks;
use energy_results::escape::xml as escape;

const WIDTH: f64 = 960.0;
const LABEL_W: f64 = 330.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 44.0;
/// A row's height: 20 px, 14 px past 24 rows (a page of 72 benchmarks stays readable).
fn row_h(rows: usize) -> f64 {
    if rows > 24 {
        14.0
    } else {
        20.0
    }
}
/// Longest label drawn, characters (the full id is the row's tooltip).
const LABEL_CHARS: usize = 48;

/// One row: a benchmark's figure.
#[derive(Clone, Debug, PartialEq)]
pub struct OverviewRow {
    /// The benchmark's id.
    pub label: String,
    /// The figure, in the chart's unit.
    pub value: f64,
    /// Its 95 % interval.
    pub interval: Option<(f64, f64)>,
    /// The dot's colour (`#rrggbb`).
    pub color: &'static str,
    /// The tooltip (`<title>`): the figure as the table shows it.
    pub tip: String,
}

/// A vertical line across the rows: a reference (0 %, the threshold).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Where, in the chart's unit.
    pub at: f64,
    /// Its text, drawn at the top.
    pub label: String,
    /// Its colour.
    pub color: &'static str,
}

/// An overview chart.
pub struct Overview {
    /// The title.
    pub title: String,
    /// The x axis's title (with its unit).
    pub x_title: String,
    /// One row per benchmark, drawn top to bottom.
    pub rows: Vec<OverviewRow>,
    /// Reference lines.
    pub references: Vec<Reference>,
    /// A tick's label from its value (in the chart's unit).
    pub tick_label: Box<dyn Fn(f64) -> String>,
    /// Whether a logarithmic axis may be used (positive figures spanning more than a decade).
    pub log_allowed: bool,
}

/// The x axis: linear or logarithmic over `[lo, hi]`.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn position(&self, v: f64) -> Option<f64> {
        let (v, lo, hi) = if self.log {
            if v <= 0.0 {
                return None;
            }
            (v.log10(), self.lo.log10(), self.hi.log10())
        } else {
            (v, self.lo, self.hi)
        };
        let plot_w = WIDTH - LABEL_W - RIGHT;
        v.is_finite().then(|| LABEL_W + ((v - lo) / (hi - lo)).clamp(0.0, 1.0) * plot_w)
    }

    /// Its ticks: 1, 2 and 5 times each power of ten inside on a logarithmic axis (the
    /// powers alone past four decades), round steps on a linear one.
    fn ticks(&self) -> Vec<f64> {
        if !self.log {
            return ticks(self.lo, self.hi, 5.0).into_iter().map(|(t, _)| t).collect();
        }
        let (first, last) = (self.lo.log10().floor() as i32, self.hi.log10().ceil() as i32);
        let steps: &[f64] = if last - first > 4 { &[1.0] } else { &[1.0, 2.0, 5.0] };
        (first..=last)
            .flat_map(|e| steps.iter().map(move |s| s * 10f64.powi(e)))
            .filter(|t| *t >= self.lo * (1.0 - 1e-9) && *t <= self.hi * (1.0 + 1e-9))
            .collect()
    }
}

/// The axis for `chart`: over every finite figure, interval and reference, padded; log when
/// allowed and the positive figures span more than a decade.
fn axis(chart: &Overview) -> Option<Axis> {
    let mut values: Vec<f64> = Vec::new();
    for r in &chart.rows {
        values.push(r.value);
        if let Some((l, h)) = r.interval {
            values.extend([l, h]);
        }
    }
    values.extend(chart.references.iter().map(|r| r.at));
    values.retain(|v| v.is_finite());
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    if chart.log_allowed && lo > 0.0 && hi / lo > 10.0 {
        return Some(Axis { lo: lo / 1.3, hi: hi * 1.3, log: true });
    }
    let pad = if hi > lo { (hi - lo) * 0.08 } else { hi.abs().max(1e-300) * 0.05 };
    let (lo, hi) = (lo - pad, hi + pad);
    // A chart of positive figures starts at zero where that costs less than half its width.
    let lo = if lo > 0.0 && lo < hi - lo { 0.0 } else { lo };
    (hi - lo).is_finite().then_some(Axis { lo, hi, log: false })
}

/// The label of a row, cut to [`LABEL_CHARS`] characters (an ellipsis where cut).
fn short(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        return label.to_string();
    }
    let head: String = label.chars().take(LABEL_CHARS - 1).collect();
    format!("{head}…")
}

/// The chart as an SVG element.
pub fn render_overview(chart: &Overview) -> String {
    let row_h = row_h(chart.rows.len());
    let height = TOP + BOTTOM + row_h * chart.rows.len().max(1) as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg class="overview" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="8" y="20" font-size="13">{}</text>"#, escape(&chart.title));
    let Some(axis) = axis(chart) else {
        let _ = writeln!(svg, r#"<text x="{LABEL_W}" y="{}">no figures to plot</text></svg>"#, TOP + row_h);
        return svg;
    };
    let bottom = height - BOTTOM;
    for t in axis.ticks() {
        if let Some(x) = axis.position(t) {
            let _ = writeln!(
                svg,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom:.1}" stroke="#e6e6e6"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                bottom + 14.0,
                escape(&(chart.tick_label)(t))
            );
        }
    }
    for r in &chart.references {
        if let Some(x) = axis.position(r.at) {
            let _ = writeln!(
                svg,
                r#"<line class="reference" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom:.1}" stroke="{}" stroke-dasharray="4 3"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="{}">{}</text>"#,
                r.color,
                TOP - 4.0,
                r.color,
                escape(&r.label)
            );
        }
    }
    for (i, r) in chart.rows.iter().enumerate() {
        let y = TOP + row_h * (i as f64 + 0.5);
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end"><title>{}</title>{}</text>"#,
            LABEL_W - 8.0,
            y + 4.0,
            escape(&r.label),
            escape(&short(&r.label))
        );
        if let Some((l, h)) = r.interval {
            if let (Some(x0), Some(x1)) = (axis.position(l), axis.position(h)) {
                let _ = writeln!(
                    svg,
                    r#"<line class="interval" x1="{x0:.1}" x2="{x1:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{}" stroke-width="2.5" stroke-opacity="0.55"/>"#,
                    r.color
                );
            }
        }
        if let Some(x) = axis.position(r.value) {
            let _ = writeln!(
                svg,
                r#"<circle class="figure" cx="{x:.1}" cy="{y:.1}" r="4" fill="{}"><title>{}</title></circle>"#,
                r.color,
                escape(&r.tip)
            );
        }
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{LABEL_W}" x2="{:.1}" y1="{bottom:.1}" y2="{bottom:.1}" stroke="#333333"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
        WIDTH - RIGHT,
        LABEL_W + (WIDTH - LABEL_W - RIGHT) / 2.0,
        height - 6.0,
        escape(&format!("{}{}", chart.x_title, if axis.log { " (logarithmic)" } else { "" }))
    );
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, value: f64) -> OverviewRow {
        OverviewRow {
            label: label.into(),
            value,
            interval: Some((value * 0.99, value * 1.01)),
            color: "#1f77b4",
            tip: format!("{value}"),
        }
    }

    fn chart(rows: Vec<OverviewRow>, log_allowed: bool) -> Overview {
        Overview {
            title: "energy <per> launch".into(),
            x_title: "J".into(),
            rows,
            references: vec![],
            tick_label: Box::new(|v| format!("{v}")),
            log_allowed,
        }
    }

    #[test]
    fn rows_intervals_and_text_are_drawn_escaped_and_never_nan() {
        let svg = render_overview(&chart(vec![row("a<b>", 1.0), row("c", 2.0), row("nan", f64::NAN)], true));
        assert_eq!(svg.matches("class=\"figure\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"interval\"").count(), 2, "{svg}");
        assert!(svg.contains("a&lt;b&gt;") && svg.contains("energy &lt;per&gt; launch"), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert!(!svg.contains("logarithmic"), "a span under a decade is linear: {svg}");
    }

    #[test]
    fn a_span_over_a_decade_is_logarithmic_with_round_ticks() {
        let o = chart(vec![row("small", 2e-3), row("large", 20.0)], true);
        let svg = render_overview(&o);
        assert!(svg.contains("J (logarithmic)"), "{svg}");
        let a = axis(&o).unwrap();
        let t = a.ticks();
        // Four decades and more: the powers of ten alone.
        assert!(t.contains(&0.01) && t.contains(&10.0) && !t.contains(&0.02), "{t:?}");
        // Not allowed (a change in per cent): linear.
        assert!(!render_overview(&chart(vec![row("small", 2e-3), row("large", 20.0)], false)).contains("logarithmic"));
    }

    #[test]
    fn references_long_labels_and_empty_charts() {
        let mut o = chart(vec![row(&"x".repeat(80), -1.0), row("b", 3.0)], false);
        o.references.push(Reference { at: 0.0, label: "0 %".into(), color: "#333333" });
        let svg = render_overview(&o);
        assert!(svg.contains("class=\"reference\"") && svg.contains(&format!("{}…", "x".repeat(47))), "{svg}");
        assert!(render_overview(&chart(vec![], true)).contains("no figures to plot"));
    }
}
