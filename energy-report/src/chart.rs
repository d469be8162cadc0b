//! A point chart over numbered positions, in plain SVG: each series its points (each with an
//! optional 95 % interval and an optional regression mark), joined within the series and
//! never across series; a legend. What `cargo energy history` draws per benchmark (x = run)
//! and what the HTML report overlays per benchmark (x = window). Every text goes through
//! [`energy_results::escape::xml`]; a point that is not a finite number is left out, so no
//! coordinate is ever `NaN` or `inf`.

use std::fmt::Write as _;

use energy_results::axis::ticks;
use energy_results::escape::xml as escape;

const WIDTH: f64 = 960.0;
/// The plot's own height (between the title and the x labels).
const PLOT_HEIGHT: f64 = 248.0;
const LEFT: f64 = 76.0;
const RIGHT: f64 = 250.0;
const TOP: f64 = 34.0;
/// Below the plot at least: the x labels' first line and the axis title.
const BOTTOM: f64 = 78.0;

/// The room below the plot for x labels `labels`, rotated by 35°, and the axis title under
/// them: a long label (a date and a commit) must not run into the title.
fn bottom_for(labels: &[String]) -> f64 {
    // About 6.2 px per character at 11 px sans-serif; sin 35° ≈ 0.574.
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    BOTTOM.max(14.0 + longest * 6.2 * 0.574 + 22.0).ceil()
}

/// The colours of successive series.
pub const PALETTE: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf"];
/// The colour of a regression mark.
pub const REGRESSION_COLOR: &str = "#d62728";

/// One point: its position, its value and interval (in the chart's unit), a mark.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartPoint {
    /// Position on the x axis (an index into [`Chart::x_labels`]).
    pub x: usize,
    /// The value.
    pub y: f64,
    /// The 95 % interval, when drawn.
    pub interval: Option<(f64, f64)>,
    /// Marked as a regression (a red ring).
    pub regression: bool,
    /// The tooltip (`<title>`).
    pub tip: String,
}

/// One series: drawn in one colour, its points joined in x order.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSeries {
    /// The legend's text.
    pub label: String,
    /// The colour (`#rrggbb`).
    pub color: &'static str,
    /// Its points.
    pub points: Vec<ChartPoint>,
}

/// A chart: title, axes and series.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The title.
    pub title: String,
    /// The x axis's title.
    pub x_title: String,
    /// The y axis's title (with its unit).
    pub y_title: String,
    /// The label of each x position.
    pub x_labels: Vec<String>,
    /// The series.
    pub series: Vec<ChartSeries>,
}

/// The chart as an SVG document.
pub fn render_chart(chart: &Chart) -> String {
    let finite = |p: &&ChartPoint| {
        p.y.is_finite() && p.x < chart.x_labels.len() && p.interval.is_none_or(|(l, h)| l.is_finite() && h.is_finite())
    };
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in chart.series.iter().flat_map(|s| s.points.iter()).filter(finite) {
        let (l, h) = p.interval.unwrap_or((p.y, p.y));
        lo = lo.min(l.min(p.y));
        hi = hi.max(h.max(p.y));
    }
    let bottom = bottom_for(&chart.x_labels);
    let height = TOP + PLOT_HEIGHT + bottom;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="{LEFT}" y="20" font-size="13">{}</text>"#, escape(&chart.title));
    if !(lo.is_finite() && hi.is_finite() && (hi - lo).is_finite()) {
        let _ = writeln!(svg, r#"<text x="{LEFT}" y="{}">no points to plot</text></svg>"#, height / 2.0);
        return svg;
    }
    // Padded by a tenth of the span (or of the value, for one flat value).
    let pad = if hi > lo { (hi - lo) * 0.1 } else { hi.abs().max(1e-300) * 0.05 };
    let (y0, y1) = (lo - pad, hi + pad);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = PLOT_HEIGHT;
    let n = chart.x_labels.len().max(1);
    let x = |i: usize| LEFT + (i as f64 + 0.5) / n as f64 * plot_w;
    let y = |v: f64| TOP + plot_h - ((v.clamp(y0, y1) - y0) / (y1 - y0)) * plot_h;
    for (tick, label) in ticks(y0, y1, 5.0) {
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
            LEFT + plot_w,
            y(tick),
            y(tick),
            LEFT - 6.0,
            y(tick) + 4.0,
        );
    }
    // At most ~24 x labels: every k-th beyond that.
    let every = chart.x_labels.len().div_ceil(24).max(1);
    for (i, text) in chart.x_labels.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let (lx, ly) = (x(i), TOP + plot_h + 14.0);
        let _ = writeln!(
            svg,
            r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-35 {lx:.1} {ly:.1})">{}</text>"#,
            escape(text)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        height - 6.0,
        escape(&chart.x_title),
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(&chart.y_title)
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333333"/>"##
    );
    for s in &chart.series {
        let mut points: Vec<&ChartPoint> = s.points.iter().filter(finite).collect();
        points.sort_by_key(|p| p.x);
        if points.len() > 1 {
            let d: Vec<String> = points
                .iter()
                .enumerate()
                .map(|(i, p)| format!("{}{:.1},{:.1}", if i == 0 { "M" } else { "L" }, x(p.x), y(p.y)))
                .collect();
            let _ = writeln!(
                svg,
                r#"<path class="series-line" d="{}" fill="none" stroke="{}" stroke-width="1.3"/>"#,
                d.join(" "),
                s.color
            );
        }
        for p in points {
            if let Some((l, h)) = p.interval {
                let _ = writeln!(
                    svg,
                    r#"<line class="interval" x1="{0:.1}" x2="{0:.1}" y1="{1:.1}" y2="{2:.1}" stroke="{3}" stroke-width="1.5"/>"#,
                    x(p.x),
                    y(l),
                    y(h),
                    s.color
                );
            }
            let _ = writeln!(
                svg,
                r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{}</title></circle>"#,
                x(p.x),
                y(p.y),
                s.color,
                escape(&p.tip)
            );
            if p.regression {
                let _ = writeln!(
                    svg,
                    r#"<circle class="regression" cx="{:.1}" cy="{:.1}" r="8" fill="none" stroke="{REGRESSION_COLOR}" stroke-width="2"/>"#,
                    x(p.x),
                    y(p.y)
                );
            }
        }
    }
    let lx = LEFT + plot_w + 12.0;
    let mut ly = TOP + 8.0;
    for s in &chart.series {
        let _ = writeln!(
            svg,
            r#"<circle cx="{:.1}" cy="{ly:.1}" r="4" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 6.0,
            s.color,
            lx + 16.0,
            ly + 4.0,
            escape(&s.label)
        );
        ly += 16.0;
    }
    if chart.series.iter().any(|s| s.points.iter().any(|p| p.regression)) {
        let _ = writeln!(
            svg,
            r#"<circle cx="{:.1}" cy="{ly:.1}" r="6" fill="none" stroke="{REGRESSION_COLOR}" stroke-width="2"/><text x="{:.1}" y="{:.1}">regression</text>"#,
            lx + 6.0,
            lx + 16.0,
            ly + 4.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The SI prefix for a benchmark's energies (`mJ`, `µJ`, …), chosen from the largest: the
/// factor to divide by and the unit's text.
pub fn energy_unit(values: impl Iterator<Item = f64>) -> (f64, String) {
    si_unit(values, "J")
}

/// The SI prefix for values of about `values` in the unit `unit` (`s`), chosen from the
/// largest finite magnitude: the factor to divide by and the unit's text (`µs`).
pub fn si_unit(values: impl Iterator<Item = f64>, unit: &str) -> (f64, String) {
    let largest = values.filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
    let (factor, prefix) = energy_units::si_scale(largest);
    (factor, format!("{prefix}{unit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: usize, y: f64) -> ChartPoint {
        ChartPoint { x, y, interval: Some((y * 0.99, y * 1.01)), regression: false, tip: format!("<{x}>") }
    }

    #[test]
    fn points_intervals_marks_and_text_are_drawn_and_escaped() {
        let mut bad = point(2, f64::NAN);
        bad.regression = true;
        let mut up = point(1, 1.2);
        up.regression = true;
        let chart = Chart {
            title: "a<b> & \"c\"".into(),
            x_title: "run".into(),
            y_title: "mJ".into(),
            x_labels: vec!["r0".into(), "r1".into(), "r&2".into()],
            series: vec![
                ChartSeries { label: "GPU <1>".into(), color: PALETTE[0], points: vec![point(0, 1.0), up, bad] },
                ChartSeries { label: "GPU 2".into(), color: PALETTE[1], points: vec![point(7, 1.0), point(2, 1.1)] },
            ],
        };
        let svg = render_chart(&chart);
        assert_eq!(svg.matches("class=\"point\"").count(), 3, "{svg}");
        assert_eq!(svg.matches("class=\"interval\"").count(), 3, "{svg}");
        assert_eq!(svg.matches("class=\"regression\"").count(), 1, "{svg}");
        assert_eq!(
            svg.matches("class=\"series-line\"").count(),
            1,
            "one series of two points; the lone point is not joined"
        );
        assert!(
            svg.contains("a&lt;b&gt; &amp; &quot;c&quot;") && svg.contains("GPU &lt;1&gt;") && svg.contains("r&amp;2")
        );
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    /// The y of the first `<text …>` whose content is `content`.
    fn text_y(svg: &str, content: &str) -> f64 {
        let at = svg.find(&format!(">{content}</text>")).unwrap_or_else(|| panic!("no text {content}: {svg}"));
        let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
        let y = tag.split(" y=\"").nth(1).unwrap().split('"').next().unwrap();
        y.parse().unwrap()
    }

    #[test]
    fn long_x_labels_stay_clear_of_the_axis_title() {
        for label in ["r1", "11-26 10:32 06ea5df4*", "2026-11-26 10:32 06ea5df4* on a board with a long name"] {
            let chart = Chart {
                title: "t".into(),
                x_title: "run".into(),
                y_title: "mJ".into(),
                x_labels: vec![label.into()],
                series: vec![ChartSeries { label: "GPU".into(), color: PALETTE[0], points: vec![point(0, 1.0)] }],
            };
            let svg = render_chart(&chart);
            // A label drawn rotated by 35° reaches down by its length times sin 35°, at about
            // 6.2 px a character (11 px sans-serif); the title's top is about 11 px above its y.
            let label_bottom = text_y(&svg, label) + label.len() as f64 * 6.2 * 0.574;
            assert!(text_y(&svg, "run") - 11.0 > label_bottom, "{label}: the axis title overlaps it: {svg}");
        }
    }

    #[test]
    fn an_empty_chart_says_so() {
        let chart = Chart {
            title: "t".into(),
            x_title: String::new(),
            y_title: String::new(),
            x_labels: vec![],
            series: vec![],
        };
        assert!(render_chart(&chart).contains("no points to plot"));
        assert_eq!(energy_unit([0.0123, 0.002].into_iter()), (1e-3, "mJ".to_string()));
        assert_eq!(energy_unit([4.5e-5].into_iter()), (1e-6, "µJ".to_string()));
    }
}
