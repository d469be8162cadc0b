//! An SVG plot of a measurement's trace: raw and corrected power, the kernel windows
//! and the active-idle level. Plain SVG, no dependencies.

use std::fmt::Write as _;

use super::escape::xml as escape;
use crate::engine::analyze::{analyze_windows, AnalysisOptions, ModelChoice};
use crate::engine::clean::{clean_buffered, clean_polled, sorted_finite};
use crate::engine::counter::counter_ticks;
use crate::engine::curve::power_profile;
use crate::sensors::{Delivery, SourceKind};
use energy_results::trace::{Channel, Trace, Window};

const WIDTH: f64 = 1040.0;
const HEIGHT: f64 = 380.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 270.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;

struct Series {
    label: String,
    color: &'static str,
    /// Points joined by straight lines (a step is two points at one time).
    points: Vec<(f64, f64)>,
}

/// Plots `trace` (its windows marked) with the primary source analyzed as `options` says.
/// `title` heads the plot; a simulated trace says so in it. Text is escaped with
/// [`super::escape::xml`]: any title gives a well-formed SVG document.
pub fn power_plot(trace: &Trace, options: &AnalysisOptions, title: &str) -> String {
    let windows = trace.windows().unwrap_or_default();
    let mut series = Vec::new();
    // The counter's power between ticks (what it really says, no correction needed).
    let ticks = counter_ticks(&sorted_finite(trace.series(&Channel::CounterMj)));
    if ticks.len() > 1 {
        let pts = ticks
            .windows(2)
            .flat_map(|w| {
                let p = (w[1].energy_mj - w[0].energy_mj) * 1e-3 / (w[1].time_s - w[0].time_s);
                [(w[0].time_s, p), (w[1].time_s, p)]
            })
            .collect();
        series.push(Series { label: "counter, per tick".into(), color: "#555555", points: pts });
    }
    // Each power source: raw readings and, when windows exist, the corrected power.
    for (kind, raw_color, corrected_color) in [
        (SourceKind::SampleBuffer, "#9ecae1", "#08519c"),
        (SourceKind::AverageField, "#fdae6b", "#d94801"),
        (SourceKind::PowerUsage, "#c7e9c0", "#238b45"),
    ] {
        let raw = trace.series(&Channel::Source(kind));
        if raw.is_empty() {
            continue;
        }
        if kind == SourceKind::PowerUsage && !trace.series(&Channel::AverageMw).is_empty() {
            continue; // the same sensor as field 185 on GPUs that have it
        }
        let buffered = kind.delivery() == Delivery::Buffered;
        let clean = if buffered { clean_buffered(raw) } else { clean_polled(raw) };
        series.push(Series {
            label: format!("{kind}, raw"),
            color: raw_color,
            points: clean.iter().map(|r| (r.time_s, r.value * 1e-3)).collect(),
        });
        if !windows.is_empty() {
            let opts = AnalysisOptions { source: Some(kind), model: ModelChoice::Auto, ..options.clone() };
            if let Ok(a) = analyze_windows(trace, &windows, &opts) {
                let half_span = if buffered { 2 } else { 1 };
                series.push(Series {
                    label: format!("{kind}, corrected ({})", a.sensor_model),
                    color: corrected_color,
                    points: power_profile(&a.curve, half_span).iter().map(|r| (r.time_s, r.value)).collect(),
                });
            }
        }
    }
    let idle_w =
        if windows.is_empty() { None } else { analyze_windows(trace, &windows, options).ok().map(|a| a.idle_w) };
    render(title, &series, &windows, idle_w)
}

fn render(title: &str, series: &[Series], windows: &[Window], idle_w: Option<f64>) -> String {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut t0, mut t1, mut p_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(t, p) in all {
        if t.is_finite() && p.is_finite() {
            t0 = t0.min(t);
            t1 = t1.max(t);
            p_max = p_max.max(p);
        }
    }
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="{LEFT}" y="20" font-size="13">{}</text>"#, escape(title));
    if t1.partial_cmp(&t0) != Some(std::cmp::Ordering::Greater) || p_max <= 0.0 {
        let _ = writeln!(svg, r#"<text x="{LEFT}" y="{}">no power readings to plot</text></svg>"#, HEIGHT / 2.0);
        return svg;
    }
    let p_top = nice_ceiling(p_max * 1.08);
    // Readings spread over more than an f64 holds (±1e308 s) or a power near f64::MAX
    // cannot be drawn: every coordinate must be a finite number.
    if !((t1 - t0).is_finite() && p_top.is_finite()) {
        let _ = writeln!(
            svg,
            r#"<text x="{LEFT}" y="{}">the readings span more time or power than can be plotted</text></svg>"#,
            HEIGHT / 2.0
        );
        return svg;
    }
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |t: f64| LEFT + (t.clamp(t0, t1) - t0) / (t1 - t0) * plot_w;
    let y = |p: f64| TOP + plot_h - (p.clamp(0.0, p_top) / p_top) * plot_h;
    // Windows are clipped to the plotted time; one with a time that is not a number is left out.
    for w in windows.iter().filter(|w| w.start_s.is_finite() && w.end_s.is_finite() && w.end_s > t0 && w.start_s < t1) {
        let _ = writeln!(
            svg,
            r##"<rect x="{:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="#fee391" fill-opacity="0.55"/>"##,
            x(w.start_s),
            (x(w.end_s) - x(w.start_s)).max(0.5)
        );
    }
    // Axes and grid.
    for i in 0..=5 {
        let p = p_top / 5.0 * f64::from(i);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            y(p),
            y(p),
            LEFT - 6.0,
            y(p) + 4.0,
            axis_label(p, 0)
        );
    }
    // Time ticks at round multiples of a round step (about six over the span), each label
    // the tick's own value.
    for (t, label) in ticks(t0, t1, 6.0) {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            x(t),
            TOP + plot_h + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">time (s)</text><text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle">power (W)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 8.0,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333333"/>"##
    );
    for s in series {
        if s.points.is_empty() {
            continue;
        }
        // A point that is not a finite number breaks the line there (it is not drawn).
        let mut d = String::new();
        let mut pen_down = false;
        for &(t, p) in &s.points {
            if !(t.is_finite() && p.is_finite()) {
                pen_down = false;
                continue;
            }
            let _ = write!(d, "{}{:.1},{:.1} ", if pen_down { "L" } else { "M" }, x(t), y(p));
            pen_down = true;
        }
        if d.is_empty() {
            continue;
        }
        let _ = writeln!(svg, r#"<path d="{}" fill="none" stroke="{}" stroke-width="1.3"/>"#, d.trim_end(), s.color);
    }
    let idle_w = idle_w.filter(|w| w.is_finite());
    if let Some(idle) = idle_w {
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#cb181d" stroke-dasharray="6 4"/>"##,
            LEFT + plot_w,
            y(idle),
            y(idle)
        );
    }
    // Legend.
    let lx = LEFT + plot_w + 12.0;
    let mut ly = TOP + 8.0;
    let mut legend = |color: &str, label: &str, dash: bool| {
        let _ = writeln!(
            svg,
            r#"<line x1="{lx:.1}" x2="{:.1}" y1="{ly:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"{}/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 18.0,
            if dash { r#" stroke-dasharray="6 4""# } else { "" },
            lx + 22.0,
            ly + 4.0,
            escape(label)
        );
        ly += 16.0;
    };
    for s in series {
        legend(s.color, &s.label, false);
    }
    if let Some(idle) = idle_w {
        legend("#cb181d", &format!("active idle {idle:.1} W"), true);
    }
    legend("#fee391", "kernel windows", false);
    svg.push_str("</svg>\n");
    svg
}

use energy_results::axis::{axis_label, nice_ceiling, ticks};

#[cfg(test)]
mod tests {
    use super::*;
    use energy_results::trace::{Channel, Reading, WindowEdge, WindowMark};

    #[test]
    fn plots_windows_idle_and_series() {
        let mut trace = Trace::new();
        for i in 0..300 {
            let t = f64::from(i) * 0.02;
            let p = if (2.0..4.0).contains(&t) { 270_000.0 } else { 120_000.0 };
            trace.push(Channel::SampleMw, Reading { time_s: t, value: p });
        }
        trace.push_mark(WindowMark { time_s: 2.0, index: 0, edge: WindowEdge::Start });
        trace.push_mark(WindowMark { time_s: 4.0, index: 0, edge: WindowEdge::End });
        // A step with no lag: analyzed as such.
        let options = AnalysisOptions {
            model: ModelChoice::Explicit(crate::sensors::SensorModel::Identity),
            ..AnalysisOptions::default()
        };
        let svg = power_plot(&trace, &options, "fma <sim>");
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("fma &lt;sim&gt;"));
        assert!(svg.contains("samples, corrected"));
        assert!(svg.contains("samples, raw"));
        assert!(svg.contains("active idle 12"), "the idle level (~120 W) is drawn");
        assert_eq!(svg.matches("fill=\"#fee391\" fill-opacity").count(), 1);
        // The time axis (0-5.98 s): ticks at round seconds, each label its tick's value.
        let labels: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<text") && l.contains("text-anchor=\"middle\">") && !l.contains("time (s)"))
            .filter_map(|l| l.split('>').nth(1)?.split('<').next())
            .collect();
        assert!(labels.contains(&"1") && labels.contains(&"5"), "{labels:?}");
        assert!(labels.iter().all(|l| l.parse::<f64>().is_ok_and(|t| t == t.round())), "{labels:?}");
    }

    #[test]
    fn titles_with_markup_quotes_and_control_characters_stay_text() {
        let svg = power_plot(&Trace::new(), &AnalysisOptions::default(), "a<b>&\"c'\u{1b}[2J\n</svg>");
        assert!(svg.contains(">a&lt;b&gt;&amp;&quot;c&#39;\\u{1b}[2J\\n&lt;/svg&gt;</text>"), "{svg}");
        assert!(!svg.chars().any(|c| c.is_control() && c != '\n'), "{svg:?}");
        assert_eq!(svg.matches("</svg>").count(), 1);
    }

    #[test]
    fn no_coordinate_is_ever_a_non_finite_number() {
        let numbers = |svg: &str| -> Vec<String> {
            svg.split('"').filter(|v| v.contains("inf") || v.contains("NaN")).map(str::to_string).collect()
        };
        let series = |points: Vec<(f64, f64)>| Series { label: "s".into(), color: "#000000", points };
        let window = |start_s: f64, end_s: f64| Window { index: 0, start_s, end_s };
        // Points that are not numbers, a window far past the readings, an infinite idle.
        let svg = render(
            "t",
            &[series(vec![(0.0, 100.0), (f64::NAN, 5.0), (1.0, f64::INFINITY), (2.0, 120.0), (3.0, 130.0)])],
            &[window(1.0, 1e300), window(f64::NEG_INFINITY, 0.5), window(1e-300, 2.0)],
            Some(f64::INFINITY),
        );
        assert!(numbers(&svg).is_empty(), "{:?}\n{svg}", numbers(&svg));
        // The line breaks at the bad points; the window with no start is left out, the others clipped.
        assert!(svg.contains("M64.0,") && svg.contains(" M"), "{svg}");
        assert_eq!(svg.matches("fill-opacity").count(), 2, "{svg}");
        assert!(!svg.contains("active idle"), "{svg}");
        // Readings from 0 to 1.5e308 s or f64::MAX: the axis is drawn, its labels finite and short.
        for end in [1.5e308, f64::MAX] {
            let svg = render("t", &[series(vec![(0.0, 100.0), (end, 120.0)])], &[window(1.0, 2.0)], None);
            assert!(numbers(&svg).is_empty() && !svg.contains(">inf<") && svg.contains("e308<"), "{svg}");
        }
        // Readings over ±1e308 s (a span past f64) or a power near f64::MAX.
        for points in [vec![(-1e308, 100.0), (1e308, 120.0)], vec![(0.0, 1e308), (1.0, 1.7e308)]] {
            let svg = render("t", &[series(points)], &[window(0.0, 1.0)], Some(120.0));
            assert!(numbers(&svg).is_empty() && svg.contains("than can be plotted"), "{svg}");
        }
    }

    #[test]
    fn an_empty_trace_still_renders() {
        let svg = power_plot(&Trace::new(), &AnalysisOptions::default(), "empty");
        assert!(svg.contains("no power readings"));
    }
}
