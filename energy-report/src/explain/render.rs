//! An explanation rendered: as markdown (one term a row, or a bracket a row for a model
//! fitted in both data regimes) and as an SVG bar chart.

use super::{EnergyModel, ExplainedTerm, Explanation, OperandBracket};
use energy_results::escape::{markdown_code_span, markdown_text, xml};
use energy_units::format_si;

/// The markdown line of `e`'s clock note, empty when it has none.
fn clock_markdown(e: &Explanation) -> String {
    let clock = e.clock_note.as_ref().map(|n| format!("\nClock: {}.\n", markdown_text(n))).unwrap_or_default();
    let counting = e.counting_note.as_ref().map(|n| format!("\nCounting: {}.\n", markdown_text(n))).unwrap_or_default();
    clock + &counting
}

/// The predicted-dynamic row's label suffix: said when the power limit bounded it.
fn bounded_label(e: &Explanation) -> &'static str {
    if e.is_bounded() {
        " (bounded by the power limit)"
    } else {
        ""
    }
}

/// The markdown line of `e`'s power bound: when it applied, or when `model` states a
/// tolerance but the result records no power limit; empty otherwise.
fn power_markdown(e: &Explanation, model: &EnergyModel) -> String {
    match &e.power_bound {
        Some(b) if b.applied => format!("\nPower limit: {}.\n", markdown_text(&b.line(e.predicted_dynamic_j))),
        Some(_) => String::new(),
        None if model.power_limit_tolerance.is_some() => "\nPower limit: the result records none (measured before \
            the harness recorded the board's limit): the prediction is not bounded by it.\n"
            .to_string(),
        None => String::new(),
    }
}

/// The markdown lines naming the unpriced work of `e`, empty when there is none.
fn unpriced_markdown(e: &Explanation) -> String {
    e.unpriced
        .iter()
        .map(|u| {
            format!(
                "\nWork the model has no term for: **{}**, {:.4e} per launch ({}): its energy is in the measured \
                 dynamic energy but in no term of the prediction.\n",
                markdown_text(&u.name),
                u.count_per_launch,
                u.metrics.iter().map(|m| markdown_code_span(m)).collect::<Vec<_>>().join(" + ")
            )
        })
        .collect()
}

/// A term's units per launch as printed: a time term in seconds (SI prefix), a count
/// rounded to a whole number when large, with three significant digits when small.
fn units_text(t: &ExplainedTerm) -> String {
    if t.kind == "time" {
        format_si(t.units, "s", 4)
    } else if t.units == 0.0 || t.units.abs() >= 100.0 {
        format!("{:.0}", t.units)
    } else {
        format!("{:.3}", t.units)
    }
}

/// The start of an explanation in markdown, both renderings: the title, the warning when
/// there is one, then the kernel and the model, up to the model's source (no full stop).
fn markdown_heading(e: &Explanation, model: &EnergyModel) -> String {
    let warning = e.warning.as_ref().map(|w| format!("**{}**\n\n", markdown_text(w))).unwrap_or_default();
    format!(
        "# Where {} spends its energy\n\n{warning}{} ({}); kernel {}, {} profiled launch(es); model of the {} fitted on {} at \
         {:.0} MHz ({})",
        markdown_code_span(&e.id),
        markdown_text(&e.gpu),
        markdown_text(&e.uuid),
        markdown_code_span(&e.kernel),
        e.launches,
        markdown_text(&model.gpu),
        markdown_text(&model.fitted_on.join(", ")),
        model.sm_clock_mhz,
        markdown_text(&model.source)
    )
}

/// The explanation as markdown. Ids, names and notes from the result, the model and the
/// ncu export are escaped ([`energy_results::escape`]).
pub fn render_markdown(e: &Explanation, model: &EnergyModel) -> String {
    if let Some(b) = &e.bracket {
        return render_bracket_markdown(e, b, model);
    }
    let mut s = format!(
        "{}.\n\n**Measured {} dynamic per launch; predicted {} (one data regime: no bracket).** Largest \
         terms: {}.\n\n## Detail\n\n| term | kind | units per launch | predicted, µJ | share of measured total |\n\
         |---|---|---|---|---|\n",
        markdown_heading(e, model),
        joules_ci(e.measured_dynamic_j.0, (e.measured_dynamic_j.1, e.measured_dynamic_j.2)),
        format_si(e.prediction_j(), "J", 4),
        largest_terms(e)
    );
    let share = |j: f64| format!("{:.1} %", j / e.measured_total_j * 100.0);
    for t in &e.terms {
        let ci = t.ci_j.map(|(lo, hi)| format!(" [{:.1}, {:.1}]", lo * 1e6, hi * 1e6)).unwrap_or_default();
        s.push_str(&format!(
            "| {} | {} | {} | {:.1}{ci} | {} |\n",
            markdown_text(&t.name),
            markdown_text(&t.kind),
            units_text(t),
            t.j * 1e6,
            share(t.j)
        ));
    }
    if e.is_bounded() {
        s.push_str(&format!(
            "| sum of the terms | | | {:.1} | {} |\n",
            e.predicted_dynamic_j * 1e6,
            share(e.predicted_dynamic_j)
        ));
    }
    s.push_str(&format!(
        "| **predicted dynamic**{} | | | {:.1}{} | {} |\n| measured dynamic [95 % CI] | | | {:.1} [{:.1}, {:.1}] | {} |\n\
         | unexplained (measured − {}) | | | {:.1} | {} |\n| static (active idle over the launch) | | | {:.1} | {} |\n\
         | **measured total** | | | {:.1} | 100 % |\n",
        bounded_label(e),
        e.prediction_j() * 1e6,
        e.prediction_ci_j().map(|(lo, hi)| format!(" [{:.1}, {:.1}]", lo * 1e6, hi * 1e6)).unwrap_or_default(),
        share(e.prediction_j()),
        e.measured_dynamic_j.0 * 1e6,
        e.measured_dynamic_j.1 * 1e6,
        e.measured_dynamic_j.2 * 1e6,
        share(e.measured_dynamic_j.0),
        if bounded_label(e).is_empty() { "predicted dynamic" } else { "sum of the terms" },
        e.unexplained_j * 1e6,
        share(e.unexplained_j),
        e.static_j * 1e6,
        share(e.static_j),
        e.measured_total_j * 1e6
    ));
    s.push_str(&clock_markdown(e));
    s.push_str(&power_markdown(e, model));
    s.push_str(&unpriced_markdown(e));
    for note in &model.notes {
        s.push_str(&format!("\nNote: {}\n", markdown_text(note)));
    }
    s
}

/// The explanation of a model fitted in both data regimes as markdown: each term and the
/// total as a bracket [constant data, switching data], then the operand activity (or where
/// outside the bracket the kernel lies).
fn render_bracket_markdown(e: &Explanation, b: &OperandBracket, model: &EnergyModel) -> String {
    let uj = |j: f64, ci: Option<(f64, f64)>| {
        format!(
            "{:.1}{}",
            j * 1e6,
            ci.map(|(lo, hi)| format!(" [{:.1}, {:.1}]", lo * 1e6, hi * 1e6)).unwrap_or_default()
        )
    };
    // What a user needs first: the bracket and where the measurement sits in it, the largest
    // terms; the table and the notes below are the detail.
    let mut s = format!(
        "{}.\n\n**Measured {} dynamic per launch; the model brackets it from {} (constant data: operands that \
         never switch) to {} (switching data: random operands){}.** Largest terms (switching data): {}.\n\n\
         ## Detail\n\n| term | kind | units per launch | constant data, µJ | switching data, µJ \
         | share of measured total (switching) |\n|---|---|---|---|---|---|\n",
        markdown_heading(e, model),
        joules_ci(e.measured_dynamic_j.0, (e.measured_dynamic_j.1, e.measured_dynamic_j.2)),
        joules_ci(b.constant_j, b.constant_ci_j),
        joules_ci(b.switching_j, b.switching_ci_j),
        if e.warning.is_some() { String::new() } else { format!(": {}", markdown_text(&b.line)) },
        largest_terms(e)
    );
    let share = |j: f64| format!("{:.1} %", j / e.measured_total_j * 100.0);
    for t in &e.terms {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            markdown_text(&t.name),
            markdown_text(&t.kind),
            units_text(t),
            uj(t.constant_j.unwrap_or(t.j), t.constant_ci_j),
            uj(t.j, t.ci_j),
            share(t.j)
        ));
    }
    // Where the power limit bounded the prediction, the terms' own sums come first.
    if e.is_bounded() {
        let constant: f64 = e.terms.iter().map(|t| t.constant_j.unwrap_or(t.j)).sum();
        s.push_str(&format!(
            "| sum of the terms | | | {:.1} | {:.1} | {} |\n",
            constant * 1e6,
            e.predicted_dynamic_j * 1e6,
            share(e.predicted_dynamic_j)
        ));
    }
    s.push_str(&format!(
        "| **predicted dynamic**{} | | | {} | {} | {} |\n| measured dynamic [95 % CI] | | | | {:.1} [{:.1}, {:.1}] | {} |\n\
         | unexplained (measured − switching-data prediction) | | | | {:.1} | {} |\n\
         | static (active idle over the launch) | | | | {:.1} | {} |\n| **measured total** | | | | {:.1} | 100 % |\n{}",
        bounded_label(e),
        uj(b.constant_j, Some(b.constant_ci_j)),
        uj(b.switching_j, Some(b.switching_ci_j)),
        share(b.switching_j),
        e.measured_dynamic_j.0 * 1e6,
        e.measured_dynamic_j.1 * 1e6,
        e.measured_dynamic_j.2 * 1e6,
        share(e.measured_dynamic_j.0),
        (e.measured_dynamic_j.0 - b.switching_j) * 1e6,
        share(e.measured_dynamic_j.0 - b.switching_j),
        e.static_j * 1e6,
        share(e.static_j),
        e.measured_total_j * 1e6,
        // The line stands in the lead (outside the bracket, as the page's opening warning).
        String::new()
    ));
    s.push_str(&clock_markdown(e));
    s.push_str(&power_markdown(e, model));
    s.push_str(&unpriced_markdown(e));
    for name in &b.constant_above_switching {
        s.push_str(&format!(
            "\nTerm `{}`: its constant-data cost exceeds its switching-data cost beyond both intervals (kept as fitted: \
             the two fits disagree on it; its training kernels deserve a look).\n",
            markdown_text(name)
        ));
    }
    for note in &model.notes {
        s.push_str(&format!("\nNote: {}\n", markdown_text(note)));
    }
    s
}

/// `84.91 mJ [84.01 mJ, 85.82 mJ]`.
fn joules_ci(j: f64, (lo, hi): (f64, f64)) -> String {
    format!("{} [{}, {}]", format_si(j, "J", 4), format_si(lo, "J", 4), format_si(hi, "J", 4))
}

/// The three largest terms with their share of the switching-data prediction
/// (`DRAM reads 61 %, kernel time 22 %, FP32 FMA 9 %`).
fn largest_terms(e: &Explanation) -> String {
    let mut terms: Vec<&ExplainedTerm> = e.terms.iter().filter(|t| t.j > 0.0).collect();
    terms.sort_by(|a, b| b.j.total_cmp(&a.j));
    let sum: f64 = terms.iter().map(|t| t.j).sum();
    if terms.is_empty() || sum <= 0.0 {
        return "none priced above zero".into();
    }
    terms
        .iter()
        .take(3)
        .map(|t| format!("{} {:.0} %", markdown_text(&t.name), t.j / sum * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The explanation as a horizontal bar chart (SVG): each term, the static part and the
/// unexplained rest, against the measured total. The id and the class names are escaped
/// ([`energy_results::escape::xml`]): a well-formed document whatever they hold.
pub fn render_svg(e: &Explanation) -> String {
    let mut bars: Vec<(String, f64, &str)> = e
        .terms
        .iter()
        .filter(|t| t.j > 0.0)
        .map(|t| {
            let color = match t.kind.as_str() {
                "compute" => "#1f77b4",
                "data movement" => "#ff7f0e",
                _ => "#2ca02c",
            };
            (xml(&t.name), t.j, color)
        })
        .collect();
    bars.push(("static".into(), e.static_j, "#7f7f7f"));
    bars.push(("unexplained".into(), e.unexplained_j, "#d62728"));
    let (w, row, left) = (760.0, 26.0, 190.0);
    let h = 60.0 + row * bars.len() as f64;
    let max = bars.iter().map(|b| b.1.abs()).fold(e.measured_total_j, f64::max).max(f64::MIN_POSITIVE);
    let x = |j: f64| left + (j / max) * (w - left - 120.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\">{}: energy per launch by term, µJ (measured total {:.1} µJ)</text>\n",
        xml(&e.id),
        e.measured_total_j * 1e6
    );
    for (i, (name, j, color)) in bars.iter().enumerate() {
        let y = 40.0 + row * i as f64;
        let (x0, x1) = if *j >= 0.0 { (x(0.0), x(*j)) } else { (x(*j).max(left - 60.0), x(0.0)) };
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.1}</text>\n",
            left - 8.0,
            y + row * 0.6,
            xml(name),
            (x1 - x0).max(0.5),
            row * 0.7,
            x1.max(x0) + 6.0,
            y + row * 0.6,
            j * 1e6
        ));
    }
    s.push_str("</svg>\n");
    s
}
