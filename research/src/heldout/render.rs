//! The held-out test as markdown: the table and the summary of an analysis
//! ([`render_markdown`]), a board's report ([`render_board`]), and two runs of the suite on
//! one board compared ([`render_repeat`]).

use std::path::Path;

use energy_harness::units::format_si;
use energy_harness::Result;
use energy_report::ResultSet;

use super::analysis::{Analysis, MeanError};
use super::board::BoardReport;
use super::case::unmeasured;

/// A signed error as the table prints it.
fn pct(v: f64) -> String {
    format!("{v:+.1} %")
}

/// A mean error as the summary prints it.
fn mean_text(m: Option<MeanError>) -> String {
    m.map_or("–".into(), |m| {
        format!(
            "{:.1} % (95 % bootstrap interval {:.1}–{:.1} %, {} kernels)",
            m.mean_pct, m.ci_pct.0, m.ci_pct.1, m.kernels
        )
    })
}

/// The analysis as markdown: one row per benchmark (third-party first, then the
/// project-written), then the mean errors and the bracket's coverage.
pub fn render_markdown(a: &Analysis) -> String {
    let mut out = String::from(
        "| benchmark | written by | data | measured | predicted | bracket [constant, switching] | error | error on total | time × power | instructions | in bracket | activity | SM clock, MHz | work without a term |\n\
         |---|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|---|---|\n",
    );
    let ordered = a.rows.iter().filter(|r| r.case.third_party).chain(a.rows.iter().filter(|r| !r.case.third_party));
    for r in ordered {
        let c = &r.case;
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.benchmark,
            if c.third_party { "third party" } else { "this project" },
            c.regime,
            format_si(c.measured_j, "J", 4),
            format_si(c.predicted_j, "J", 4),
            if c.bounded == Some(true) { " ‡" } else { "" },
            c.bracket_j.map_or("–".into(), |(lo, hi)| format!(
                "{} – {}",
                format_si(lo, "J", 3),
                format_si(hi, "J", 3)
            )),
            pct(r.error_pct),
            pct(r.total_error_pct),
            pct(r.time_power_error_pct),
            r.instruction_error_pct.map_or("–".into(), pct),
            r.in_bracket.map_or("–", |b| if b { "yes" } else { "no" }),
            r.activity.map_or("–".into(), |x| format!("{x:.2}")),
            match c.sm_clock_mhz {
                Some((low, high)) if low == high => format!("{low}"),
                Some((low, high)) => format!("{low}–{high}"),
                None => "–".into(),
            },
            if c.unpriced.is_empty() { "–".to_string() } else { c.unpriced.join(", ") },
        ));
    }
    // The power limit's bound (protocol v3): which predictions it lowered, and which results
    // it could not bound (no limit recorded) while others were.
    let names = |pick: fn(Option<bool>) -> bool| -> Vec<String> {
        a.rows.iter().filter(|r| pick(r.case.bounded)).map(|r| format!("`{}`", r.case.benchmark)).collect()
    };
    let bounded = names(|b| b == Some(true));
    if !bounded.is_empty() {
        out.push_str(&format!(
            "\n‡ Bounded by the board's power limit (the terms priced more than the board draws at its limit, above \
             active idle, over the measured time; the prediction is that bound): {}.\n",
            bounded.join(", ")
        ));
    }
    let unbounded = names(|b| b.is_none());
    if unbounded.len() < a.rows.len() && !unbounded.is_empty() {
        out.push_str(&format!(
            "\nNot bounded by the power limit (the result records none): {}.\n",
            unbounded.join(", ")
        ));
    }
    // The bracket rule compares the measured mean; say where its interval reaches inside.
    let near: Vec<String> = a
        .rows
        .iter()
        .filter(|r| r.in_bracket == Some(false))
        .filter_map(|r| {
            let (lo, hi) = r.case.bracket_j?;
            let (m_lo, m_hi) = r.case.measured_ci_j;
            (m_lo <= hi && m_hi >= lo).then(|| {
                format!(
                    "`{}` (measured {} [{} … {}], bracket {} – {})",
                    r.case.benchmark,
                    format_si(r.case.measured_j, "J", 4),
                    format_si(m_lo, "J", 4),
                    format_si(m_hi, "J", 4),
                    format_si(lo, "J", 4),
                    format_si(hi, "J", 4)
                )
            })
        })
        .collect();
    if !near.is_empty() {
        out.push_str(&format!(
            "\nOutside the bracket by their mean, but with a 95 % interval that reaches into it: {}.\n",
            near.join("; ")
        ));
    }
    out.push_str(&format!(
        "\nMean absolute error on dynamic energy, third-party kernels on their own data (the goal's test):\n\n\
         - the model: {}\n- time × mean training power: {}\n- instruction count: {}\n\n\
         The model over both regimes (third party): {}. On total energy (the static part measured), own data: {}. \
         Inside the bracket: {} of {} third-party measurements.\n\n\
         Project-written held-out kernels (not counted toward the goal), own data: {}; inside the bracket: {} of {}.\n",
        mean_text(a.model),
        mean_text(a.time_power),
        mean_text(a.instruction),
        mean_text(a.model_all_regimes),
        mean_text(a.model_total),
        a.in_bracket.0,
        a.in_bracket.1,
        mean_text(a.model_project),
        a.in_bracket_project.0,
        a.in_bracket_project.1,
    ));
    if let Some(w) = &a.without_bound {
        out.push_str(&format!(
            "\nWithout the power limit's bound (the terms' sums, as protocol v2 predicted), third-party kernels on their \
             own data: {}; inside the unbounded bracket: {} of {} third-party measurements. The bound lowered {} of \
             those predictions; over the others, which the terms alone price: {}.\n",
            mean_text(w.model),
            w.in_bracket.0,
            w.in_bracket.1,
            w.bounded_kernels,
            mean_text(w.model_unbounded_kernels),
        ));
    }
    out
}

/// A board's held-out test as markdown: what it rests on, the table, the missing
/// benchmarks, the acceptance rule's verdict.
pub fn render_board(r: &BoardReport) -> String {
    let mut s = format!(
        "# Held-out test: {} ({})\n\nProtocol {} (frozen before these measurements); the model fitted on this board's \
         training run in both data regimes, at {:.0} MHz. Baselines: time × {:.1} W (the training kernels' mean \
         dynamic power); {}.\n\n",
        r.gpu,
        r.uuid,
        r.protocol_hash,
        r.model_sm_clock_mhz,
        r.baselines.mean_power_w,
        r.baselines
            .j_per_instruction
            .map_or("no instruction-count baseline".to_string(), |c| format!("{:.2} nJ per warp-instruction", c * 1e9)),
    );
    s.push_str(&render_markdown(&r.analysis));
    if !r.left_out.is_empty() {
        s.push_str(&format!("\nLeft out of the fit by rule: {}.\n", r.left_out.join("; ")));
    }
    if !r.spanning_zero.is_empty() {
        let terms: Vec<String> = r.spanning_zero.iter().map(|(name, regime)| format!("{name} ({regime})")).collect();
        s.push_str(&format!(
            "\nTerms whose 95 % interval spans zero or that the fit held at zero (kept in the model, as the protocol's \
             rules say): {}.\n",
            terms.join(", ")
        ));
    }
    if !r.missing.is_empty() {
        s.push_str("\nNot tested (the protocol counts them as missing):\n\n");
        for (name, why) in &r.missing {
            s.push_str(&format!("- `{name}`: {why}\n"));
        }
    }
    s.push_str(&if r.shortfalls.is_empty() {
        "\nThe protocol's acceptance rule: met on this board.\n".to_string()
    } else {
        format!("\nThe protocol's acceptance rule: not met on this board: {}.\n", r.shortfalls.join("; "))
    });
    if let Some(seen) = &r.seen {
        s.push_str(
            "\n## Held-out kernels of the earlier protocol (seen before this one: not counted)\n\nTheir results shaped \
             this protocol's terms, so they test nothing; predicted by this board's model all the same.\n\n",
        );
        s.push_str(&render_markdown(&seen.analysis));
        if !seen.missing.is_empty() {
            s.push_str("\nNot tested:\n\n");
            for (name, why) in &seen.missing {
                s.push_str(&format!("- `{name}`: {why}\n"));
            }
        }
    }
    s
}

/// The held-out benchmarks measured twice on one board (two runs of the held-out suite): each
/// one's dynamic energy per launch in both, and their difference, as markdown; the
/// benchmarks of `first` in name order, those missing from `second` said so, and those whose
/// windows were shorter than a sensor tick ([`unmeasured`]) not compared.
pub fn render_repeat(first: &Path, second: &Path) -> Result<String> {
    let read = |dir: &Path| ResultSet::read_run(dir).map(|s| s.results);
    let (a, b) = (read(first)?, read(second)?);
    let mut out = String::from(
        "| benchmark | dynamic, first run | dynamic, second run | difference | first run's 95 % interval |\n|---|---:|---:|---:|---:|\n",
    );
    let mut differences = Vec::new();
    for (id, ra) in &a {
        let name = id.split('/').next().unwrap_or(id);
        let Some(rb) = b.get(id) else {
            out.push_str(&format!("| `{name}` | {} | not measured | – | – |\n", format_si(ra.dynamic_j.mean, "J", 4)));
            continue;
        };
        if unmeasured(ra).or_else(|| unmeasured(rb)).is_some() {
            out.push_str(&format!(
                "| `{name}` | {} | {} | not compared: windows shorter than one sensor tick | – |\n",
                format_si(ra.dynamic_j.mean, "J", 4),
                format_si(rb.dynamic_j.mean, "J", 4)
            ));
            continue;
        }
        let d = (rb.dynamic_j.mean / ra.dynamic_j.mean - 1.0) * 100.0;
        let half = (ra.dynamic_j.ci_high - ra.dynamic_j.ci_low) / 2.0 / ra.dynamic_j.mean * 100.0;
        differences.push(d);
        out.push_str(&format!(
            "| `{name}` | {} | {} | {d:+.2} % | ±{half:.2} % |\n",
            format_si(ra.dynamic_j.mean, "J", 4),
            format_si(rb.dynamic_j.mean, "J", 4)
        ));
    }
    let higher = differences.iter().filter(|d| **d > 0.0).count();
    let mut magnitudes: Vec<f64> = differences.iter().map(|d| d.abs()).collect();
    magnitudes.sort_by(f64::total_cmp);
    if let (Some(median), Some(largest)) = (magnitudes.get(magnitudes.len() / 2), magnitudes.last()) {
        out.push_str(&format!(
            "\n{} benchmarks compared: median absolute difference {median:.2} %, largest {largest:.2} %; the second \
             run higher for {higher} of them.\n",
            magnitudes.len()
        ));
    }
    Ok(out)
}
