//! The sweep plots of the memory table (SVG).

use super::*;

/// The thread sweep as an SVG plot: energy per sector (log) against threads per block (log 2),
/// total (solid) and dynamic (dashed) energy per level, 95 % intervals as bars.
pub fn render_thread_svg(t: &MemoryTable) -> String {
    let mut series = Vec::new();
    for (level, color) in [(Level::L1, "#1f77b4"), (Level::L2, "#d62728")] {
        let fits: Vec<&ConfigFit> = t.thread_sweep.iter().filter(|f| f.config.level == level).collect();
        series.push(sweep_series(
            format!("{level} total"),
            color,
            false,
            &fits,
            |f| f64::from(f.config.threads),
            |f| f.energy,
        ));
        series.push(sweep_series(
            format!("{level} dynamic"),
            color,
            true,
            &fits,
            |f| f64::from(f.config.threads),
            |f| f.dynamic,
        ));
    }
    let title = format!(
        "{}Energy per 32-byte sector against threads per block, {} ({} blocks)",
        if t.simulated { "SIMULATED: " } else { "" },
        t.device.name,
        t.thread_sweep.first().map(|f| f.layout.blocks).unwrap_or(0)
    );
    render_sweep_svg(&title, "threads per block", &series)
}

/// The block sweep (L2 LOADs at 1024 threads per block) as an SVG plot, total and dynamic
/// energy per sector against the blocks of the grid.
pub fn render_block_svg(t: &MemoryTable) -> String {
    let fits: Vec<&ConfigFit> = t.block_sweep.iter().collect();
    let blocks = |f: &ConfigFit| f64::from(f.layout.blocks);
    let series = vec![
        sweep_series("L2 total".into(), "#d62728", false, &fits, blocks, |f| f.energy),
        sweep_series("L2 dynamic".into(), "#d62728", true, &fits, blocks, |f| f.dynamic),
    ];
    let title = format!(
        "{}Energy per 32-byte sector against blocks, L2 loads, 1024 threads per block, {}",
        if t.simulated { "SIMULATED: " } else { "" },
        t.device.name
    );
    render_sweep_svg(&title, "blocks in the grid", &series)
}

/// One line of a sweep plot: label, colour, dashed, points (x, pJ, interval low, high).
struct SweepLine {
    label: String,
    color: &'static str,
    dashed: bool,
    points: Vec<(f64, f64, f64, f64)>,
}

fn sweep_series(
    label: String,
    color: &'static str,
    dashed: bool,
    fits: &[&ConfigFit],
    x: impl Fn(&ConfigFit) -> f64,
    of: impl Fn(&ConfigFit) -> Option<LineFit>,
) -> SweepLine {
    let mut points: Vec<(f64, f64, f64, f64)> = fits
        .iter()
        .filter_map(|f| {
            let e = of(f)?;
            Some((x(f), e.slope * 1e12, e.slope_ci.0 * 1e12, e.slope_ci.1 * 1e12))
        })
        .filter(|p| p.1 > 0.0 && p.0 > 0.0)
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    SweepLine { label, color, dashed, points }
}

/// A log-log plot of the lines, with each point's 95 % interval.
fn render_sweep_svg(title: &str, x_label: &str, series: &[SweepLine]) -> String {
    let (w, h, left, right, top, bottom) = (780.0, 420.0, 70.0, 190.0, 40.0, 50.0);
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    let all: Vec<f64> =
        series.iter().flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2.max(p.1 / 10.0), p.3])).collect();
    let lo = all.iter().cloned().fold(f64::INFINITY, f64::min).max(1e-3);
    let hi = all.iter().cloned().fold(0.0, f64::max).max(lo * 10.0);
    let (ylo, yhi) = (lo.log10().floor(), hi.log10().ceil());
    let xmin = xs.iter().cloned().fold(f64::INFINITY, f64::min).max(1.0);
    let xmax = xs.iter().cloned().fold(0.0, f64::max).max(xmin * 2.0);
    let (xlo, xhi) = (xmin.log2().floor(), xmax.log2().ceil());
    let x = |v: f64| left + ((v.log2() - xlo) / (xhi - xlo)) * (w - left - right);
    let y = |pj: f64| top + (1.0 - (pj.max(10f64.powf(ylo)).log10() - ylo) / (yhi - ylo)) * (h - top - bottom);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"20\" font-size=\"14\">{title}</text>\n"
    );
    let mut e = xlo;
    while e <= xhi + 1e-9 {
        let v = 2f64.powf(e);
        let xv = x(v);
        s.push_str(&format!(
            "<line x1=\"{xv:.1}\" y1=\"{top}\" x2=\"{xv:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{xv:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v}</text>\n",
            h - bottom,
            h - bottom + 16.0
        ));
        e += 1.0;
    }
    let mut d = ylo;
    while d <= yhi + 1e-9 {
        let yv = y(10f64.powf(d));
        s.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{yv:.1}\" x2=\"{:.1}\" y2=\"{yv:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            w - right,
            left - 6.0,
            yv + 4.0,
            10f64.powf(d)
        ));
        d += 1.0;
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{x_label}</text>\n<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">pJ per sector</text>\n",
        (left + w - right) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    ));
    for (i, line) in series.iter().enumerate() {
        let color = line.color;
        let dash = if line.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        if !line.points.is_empty() {
            let path: Vec<String> = line.points.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1))).collect();
            s.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>\n",
                path.join(" ")
            ));
            for p in &line.points {
                s.push_str(&format!(
                    "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{color}\"/><circle cx=\"{0:.1}\" cy=\"{3:.1}\" r=\"3\" fill=\"{color}\"/>\n",
                    x(p.0),
                    y(p.2.max(lo)),
                    y(p.3),
                    y(p.1)
                ));
            }
        }
        let ly = top + 20.0 + 20.0 * i as f64;
        s.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\">{}{}</text>\n",
            w - right + 15.0,
            w - right + 45.0,
            w - right + 52.0,
            ly + 4.0,
            line.label,
            if line.points.is_empty() { " (not measured)" } else { "" }
        ));
    }
    s.push_str("</svg>\n");
    s
}
