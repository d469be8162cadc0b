//! The summary printed after criterion's lines for one benchmark: its figures with their
//! intervals, per unit of work and net, how it was measured, the files written, every
//! warning.

use super::escape::visible;
use super::{ResultFile, WrittenFiles};
use crate::engine::stats::Estimate;
use energy_units::format_si;

fn interval(e: &Estimate, unit: &str) -> String {
    if e.n < 2 {
        return format!("{} (one window: no interval)", format_si(e.mean, unit, 4));
    }
    format!(
        "{} [{} … {}] (95 % CI), CV {:.2} %",
        format_si(e.mean, unit, 4),
        format_si(e.ci_low, unit, 4),
        format_si(e.ci_high, unit, 4),
        e.cv() * 100.0
    )
}

/// A count with an SI prefix: 35433480192 → "35.43 G".
fn count(value: f64) -> String {
    match energy_units::si_scale_large(value) {
        (_, "") => format!("{value}"),
        (factor, prefix) => format!("{:.4} {prefix}", value / factor),
    }
}

/// The summary printed after criterion's lines for one benchmark. On the simulated GPU
/// its first line says that every figure of the block is simulated. Every line goes
/// through [`visible`]: no control character reaches the terminal.
pub fn render_summary(r: &ResultFile, files: Option<&WrittenFiles>) -> String {
    let mut lines: Vec<String> = Vec::new();
    lines.push(format!(
        "{} on {}{}",
        r.id,
        r.device.name,
        if r.device.simulated { "  [simulated]: every figure of this block is simulated, none measured" } else { "" }
    ));
    let launched = match r.graph_launches {
        Some(n) => format!("; launched as a CUDA graph of {n}, replayed back to back, figures per launch"),
        None => String::new(),
    };
    lines.push(format!("  time per launch     {} ({}{launched})", interval(&r.time_s, "s"), r.time_basis.describe()));
    lines.push(format!("  energy per launch   {}", interval(&r.energy_j, "J")));
    lines.push(format!("  dynamic per launch  {}", interval(&r.dynamic_j, "J")));
    if let Some(t) = &r.thermal {
        lines.push(format!(
            "  at {:.0} °C            {} (windows at {:.1} °C; dP/dT {:.3} ± {:.3} W/°C: cargo energy calibrate --thermal)",
            t.reference_c,
            interval(&t.energy_j, "J"),
            t.mean_temperature_c,
            t.watts_per_c,
            t.std_error_w_per_c
        ));
        if let Some(note) = crate::engine::thermal::extrapolation_note(t) {
            lines.push(format!("                      note: {note}"));
        }
    }
    // Each rail's own energy per launch over the same windows, beside the board's.
    for rail in &r.rails {
        let dynamic = rail.dynamic_j.map(|d| format!("; dynamic {}", format_si(d.mean, "J", 4))).unwrap_or_default();
        let idle = rail.idle_w.map(|w| format!("; active idle {}", format_si(w, "W", 4))).unwrap_or_default();
        lines.push(format!(
            "  {:<19} {}{dynamic}{idle}",
            format!("{} rail", rail.source),
            interval(&rail.energy_j, "J")
        ));
        lines.push(format!(
            "                      per launch, beside the board's figures, not subtracted; {}, sensor model {}{}",
            rail.source.nvml_call(),
            rail.sensor_model,
            if rail.source.trusted() { "" } else { " (not trusted)" }
        ));
    }
    lines.push(format!(
        "  average power       {} in the windows; active idle {}",
        format_si(r.power_w.mean, "W", 4),
        format_si(r.idle_w, "W", 4)
    ));
    for unit in [&r.per_op, &r.per_byte].into_iter().flatten() {
        lines.push(format!(
            "  energy per {:<9} {} (dynamic {}; {} {}s per launch)",
            unit.unit,
            format_si(unit.energy_j.mean, "J", 4),
            format_si(unit.dynamic_j.mean, "J", 4),
            count(unit.units_per_launch),
            unit.unit
        ));
    }
    if let Some(net) = &r.net {
        lines.push(format!(
            "  net per {:<11} {} against {} (Arafa: (E_with − E_without) / ops)",
            if net.ops_per_launch == 1.0 { "launch" } else { "op" },
            interval(&net.energy_j, "J"),
            net.baseline_id
        ));
    }
    lines.push(format!(
        "  measured by         {} ({}), sensor model {} ({}); {} windows × {} launches, {:.1} ticks per window",
        r.source,
        r.source.nvml_call(),
        r.sensor_model,
        r.model_origin,
        r.windows.len(),
        r.launches_per_window,
        r.ticks_per_window
    ));
    if let Some(check) = &r.cross_check {
        lines.push(format!(
            "  cross-check         {} gives {} ({:+.2} %)",
            check.source,
            format_si(check.energy_j.mean, "J", 4),
            check.difference_pct
        ));
    }
    if let Some(d) = &r.drift {
        let temperature = match (d.temperature_first_c, d.temperature_last_c) {
            (Some(a), Some(b)) => format!("; {a} → {b} °C"),
            _ => String::new(),
        };
        let clock = match (d.sm_clock_min_mhz, d.sm_clock_max_mhz) {
            (Some(a), Some(b)) if a == b => format!("; SM {a} MHz"),
            (Some(a), Some(b)) => format!("; SM {a}–{b} MHz"),
            _ => String::new(),
        };
        lines.push(format!(
            "  drift               {:+.2} % ± {:.2} % first to last window{temperature}{clock}",
            d.energy_change_pct, d.energy_change_half_width_pct
        ));
    }
    // A window count given leaves the precision unused: not said as asked.
    let asked = r
        .options
        .filter(|o| !o.fixed_windows)
        .map(|o| format!("; ±{:.2} % asked", o.precision * 100.0))
        .unwrap_or_default();
    let stop = r.stop.as_deref().map(|s| format!(", {s}")).unwrap_or_default();
    lines.push(format!("  wall time           {:.1} s{stop}{asked}", r.wall_time_s));
    if let Some(f) = files {
        lines.push(format!(
            "  files               {}, {}, {}",
            f.result.display(),
            f.trace.display(),
            f.plot.display()
        ));
    }
    for w in &r.warnings {
        lines.push(format!("  warning: {w}"));
    }
    let mut out = String::new();
    for line in lines {
        // Ids, device names and warnings come from the bench and from files: a control
        // character among them is shown, never sent to the terminal.
        out.push_str(&visible(&line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_large_prefixes() {
        assert_eq!(count(35_433_480_192.0), "35.4335 G");
        assert_eq!(count(12.0), "12");
    }
}
