//! The selftest report as text for people.

use std::fmt::Write;

use super::SelftestReport;
use energy_units::format_si;

/// The report as a few lines of text: the device, the harness's figure, one block per
/// source with its checks and verdict, and the summary.
pub fn render(r: &SelftestReport) -> String {
    let mut s = String::new();
    let simulated = if r.device.simulated { " [simulated]" } else { "" };
    let mhz = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
    let _ = writeln!(
        s,
        "selftest on {} ({}){simulated}, driver {}; SM clock {} -> {} MHz, {} -> {} °C (clocks read, not set); {:.1} s",
        r.device.name,
        r.device.uuid,
        r.device.driver.as_deref().unwrap_or("?"),
        mhz(r.sm_clock_mhz.0),
        mhz(r.sm_clock_mhz.1),
        mhz(r.temperature_c.0),
        mhz(r.temperature_c.1),
        r.wall_time_s
    );
    let h = &r.harness;
    let _ = writeln!(
        s,
        "test kernel: {} per launch; harness ({}): {} per launch, {} above idle (±{:.2} %), {:.1} W above {:.1} W idle",
        format_si(h.launch_s, "s", 4),
        h.source,
        format_si(h.energy_j, "J", 4),
        format_si(h.dynamic_j, "J", 4),
        h.dynamic_half_width * 100.0,
        h.dynamic_w,
        h.idle_w
    );
    for v in &r.sources {
        let model = v.model.map_or("-".to_string(), |m| m.to_string());
        let _ = writeln!(s, "\n{} ({model}): {}", v.source, if v.trust { "TRUST" } else { "DO NOT TRUST" });
        if let Some(l) = &v.linearity {
            let phase = if l.phase_bins.is_empty() {
                String::new()
            } else {
                let bins: Vec<String> = l.phase_bins.iter().map(|b| format_si(b.mean_residual_j, "J", 2)).collect();
                format!(
                    "; residual by start phase (quarters of a tick) {}{}",
                    bins.join(" "),
                    if l.phase_pattern { " PATTERN" } else { "" }
                )
            };
            let _ = writeln!(
                s,
                "  launch count: {} per launch ± {} ({:+.2} % vs harness), {} windows, window scatter {} RMS, intercept {}{phase}",
                format_si(l.slope_j, "J", 4),
                format_si(l.slope_half_width_j, "J", 2),
                l.vs_harness_pct,
                l.windows,
                format_si(l.rms_residual_j, "J", 2),
                format_si(l.intercept_j, "J", 2)
            );
        }
        for d in &v.duty {
            let judged = if d.aliased {
                " (not judged: the period aliases with the updates)"
            } else if d.slope_judged {
                ""
            } else {
                " (slope not judged: power ramps)"
            };
            let shared = if d.max_residual_pct > d.tolerance_pct && d.shared_with_others {
                " (the other sources see the same bend: the GPU's power)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "  duty, {:>3.0} ms period: busy − idle {:.1} W ({:+.1} % vs harness{judged}), idle {:.1} W, residual ≤ {:.2} % (allowed {:.2} %){shared}",
                d.period_s * 1e3,
                d.slope_w,
                d.vs_harness_pct,
                d.intercept_w,
                d.max_residual_pct,
                d.tolerance_pct
            );
        }
        if let Some(a) = &v.agreement {
            let pairs: Vec<String> = a.pairs.iter().map(|p| format!("{} {:+.2} %", p.other, p.median_pct)).collect();
            if !pairs.is_empty() {
                let _ = writeln!(s, "  against the others (median over long windows): {}", pairs.join(", "));
            }
        }
        for reason in &v.reasons {
            let _ = writeln!(s, "  ! {reason}");
        }
    }
    let _ = writeln!(s, "\n{}", r.summary);
    s
}
