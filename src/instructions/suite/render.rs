//! The instruction table as markdown, and its JSON written and read back.

use super::*;

pub(super) fn fmt_ci(e: &Estimate, scale: f64, digits: usize) -> String {
    format!("{:.d$} [{:.d$}, {:.d$}]", e.mean * scale, e.ci_low * scale, e.ci_high * scale, d = digits)
}

/// An energy with its interval. One whose whole interval lies below zero is impossible (a
/// drift the interval leaves out) and is said so; one whose interval holds zero is given as
/// the bound it is (`at most …`); neither is printed as negative joules.
pub(super) fn energy_ci(e: &Estimate, scale: f64, digits: usize) -> String {
    if e.ci_high < 0.0 {
        "impossible: below zero (drift between kernel and baseline)".to_string()
    } else if e.ci_low <= 0.0 {
        format!("at most {:.d$} (unresolved)", e.ci_high * scale, d = digits)
    } else {
        fmt_ci(e, scale, digits)
    }
}

fn est_or_dash(e: Option<&Estimate>, scale: f64, digits: usize) -> String {
    e.map(|e| energy_ci(e, scale, digits)).unwrap_or_else(|| "-".into())
}

/// The table as markdown.
pub fn render_markdown(table: &InstructionTable) -> String {
    let mut md = String::new();
    let gpu = table
        .device
        .as_ref()
        .map(|d| format!("{} {} (driver {})", d.name, d.uuid, d.driver_version.as_deref().unwrap_or("unknown")))
        .unwrap_or_default();
    let ks = table.k_values.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    md.push_str(&format!(
        "# Energy per instruction{}\n\n{}, {} threads per launch, K = {} chain steps per loop iteration; {}.\n\n",
        if table.simulated { " (SIMULATED)" } else { "" },
        if gpu.is_empty() { "GPU unknown".to_string() } else { gpu },
        table.threads_mode,
        ks,
        table.timestamp
    ));
    md.push_str(
        "**Slope**: energy per thread and loop iteration fitted against the instructions per iteration over the chain lengths K \
(least squares; 95 % interval from the residuals and the points' own intervals, in quadrature), so whatever the loop costs once per iteration, \
and however it overlaps the chain, drops out; a chain with a helper statement has the helper's own slope (its kernels alone) taken out. \
**Dynamic** leaves out active-idle power: it is the figure to compare across boards. **Net at K** is the difference of Arafa's Eq. 1, \
`(E_K / L_K - E_base / L_base) / (threads x K x ops)` against the loop alone (or the helpers alone), taken in total energy: it keeps the active-idle power over \
the time the instructions add. Arafa et al. state that their difference eliminates the steady-state power, and their Table I magnitudes (at most 5 nJ) \
are far below one thread's static power times its time, so their figures sit beside our *dynamic* column, not the net one. Net is kept as a cross-check; \
`net/slope` is its difference from the slope. Per warp-instruction: 32 thread-instructions, or the launch's threads when fewer (one thread: per warp is per thread). \
**Grid time** is the GPU time one instruction adds to a loop iteration of the whole grid (slope; with the helper where the chain has one: times do not subtract \
when two pipes overlap); **bound** is the least the SM's issue and pipe rates allow for the SASS that ran (read back from the cubin the driver's JIT produced), \
per step as measured (helper included), at the highest SM clock of the windows; a row faster than its bound is withheld; no bound where the step branches or calls \
a subroutine (which instructions run then depends on the data). \
Toggles: mean bits that change in each measured instruction's result (the data's switching activity).\n",
    );
    md.push_str(crate::common::ACCURACY_NOTE);
    let levels: Vec<String> = {
        let mut l: Vec<String> = table.rows.iter().map(|r| r.level.clone()).collect();
        l.dedup();
        l
    };
    for level in &levels {
        md.push_str(&format!("\n## JIT {level}\n"));
        for category in Category::ALL {
            let rows: Vec<&InstructionRow> =
                table.rows.iter().filter(|r| &r.level == level && r.category == category).collect();
            if rows.is_empty() {
                continue;
            }
            md.push_str(&format!("\n### {}\n\n", category.label()));
            md.push_str("| instruction | slope / thread-instr, pJ | dynamic / thread-instr, pJ | dynamic / warp-instr, nJ | r² | net at K, pJ | net/slope | grid time / instr, ns | bound, ns | toggles | launch at K: time, total, dynamic, power |\n");
            md.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
            for r in rows {
                let l = &r.launch;
                let bound = r
                    .bound
                    .as_ref()
                    .map(|b| format!("{:.2} ({})", b.bound_s * 1e9, b.binding))
                    .unwrap_or_else(|| "-".into());
                let dynamic = if l.dynamic_j.ci_low <= 0.0 {
                    format!("at most {:.1} mJ", l.dynamic_j.ci_high.max(0.0) * 1e3)
                } else {
                    format!("{:.1} mJ", l.dynamic_j.mean * 1e3)
                };
                let launch = format!(
                    "K={}: {:.2} ms, {:.1} mJ, {dynamic}, {:.0} W",
                    r.net_k,
                    l.time_s.mean * 1e3,
                    l.energy_j.mean * 1e3,
                    l.power_w.mean
                );
                if let Some(why) = &r.withheld {
                    md.push_str(&format!(
                        "| {} | withheld: {why} | | | | | | | {bound} | {:.1} | {launch} |\n",
                        r.label, l.facts.toggles_per_instruction
                    ));
                    continue;
                }
                let s = r.slope.as_ref();
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |\n",
                    r.label,
                    est_or_dash(s.map(|s| &s.thread_j), 1e12, 3),
                    est_or_dash(
                        s.map(|s| &s.dynamic_thread_j).or(r.net.as_ref().map(|n| &n.dynamic_thread_j)),
                        1e12,
                        3
                    ),
                    est_or_dash(s.map(|s| &s.dynamic_warp_j).or(r.net.as_ref().map(|n| &n.dynamic_warp_j)), 1e9, 4),
                    s.map(|s| format!("{:.4}", s.r2)).unwrap_or_else(|| "-".into()),
                    est_or_dash(r.net.as_ref().map(|n| &n.thread_j), 1e12, 3),
                    r.net_over_slope.map(|x| format!("{:+.1} %", x * 100.0)).unwrap_or_else(|| "-".into()),
                    s.map(|s| {
                        format!(
                            "{:.2}{}",
                            s.time_per_instruction_s.mean * 1e9,
                            if s.time_includes_helper { " (with helper)" } else { "" }
                        )
                    })
                    .or(r.net.as_ref().map(|n| format!("{:.2} (net)", n.time_per_instruction_s * 1e9)))
                    .unwrap_or_else(|| "-".into()),
                    bound,
                    l.facts.toggles_per_instruction,
                    launch,
                ));
            }
        }
        md.push_str("\n### Checks\n\n| check | holds | figures |\n|---|---|---|\n");
        for c in table.checks.iter().filter(|c| &c.level == level) {
            let holds = match c.holds {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "not measured",
            };
            md.push_str(&format!("| {} | {} | {} |\n", c.name, holds, c.detail));
        }
        let code: Vec<&InstructionRow> = table.rows.iter().filter(|r| &r.level == level).collect();
        let read = code.iter().filter(|r| r.launch.facts.machine_code.loop_was_read()).count();
        let source =
            code.iter().map(|r| r.launch.facts.machine_code.source.as_str()).find(|s| !s.is_empty()).unwrap_or("none");
        md.push_str(&format!(
            "\nMachine code: {read} of {} launches had their loop's SASS read from the cubin the module ran ({source}).\n",
            code.len()
        ));
    }
    if table.threads_mode == "one" {
        md.push_str(&render_table_i(table));
    }
    if !table.missing.is_empty() {
        md.push_str(&format!(
            "\n{} planned kernels were not measured in this run (filtered out or failed; listed in the JSON's `missing`).\n",
            table.missing.len()
        ));
    }
    md
}

/// The one-thread figures beside Arafa et al.'s Table I (TITAN V), in its units: nJ per
/// instruction, one thread being one warp-instruction. A figure is "resolved" when its 95 %
/// interval excludes zero and is narrower than the figure itself.
pub fn render_table_i(table: &InstructionTable) -> String {
    let mut md = String::from(
        "\n## Beside Arafa et al. (2020), Table I (TITAN V, one block of one thread)\n\n\
Ours: dynamic energy per warp-instruction (one thread: one thread-instruction), nJ, from the chain at K against its baseline, with its 95 % interval. \
Theirs: Volta, as printed (nJ; PAPI, MTSM), optimized (-O3) beside our O4 and non-optimized (-O0) beside our O0. Like for like: their Eq. 1 takes the kernel \
without the instructions away and, in their words, eliminates the steady-state power; one thread's static power times its time would be of the order of \
100 nJ per instruction against Table I's at most 5 nJ, so theirs are above the steady state, as our dynamic figures are. Clocks: the TITAN V at the \
1200 MHz the paper gives, never locked by them; ours at the SM clock read in the windows (the launch column). \
A figure of ours is *resolved* when its interval excludes zero and is narrower than the figure; an unresolved one bounds the \
energy only: it lies within the interval.\n\n\
| instruction | level | ours, nJ [95 %] | resolved | Table I row | Volta PAPI, nJ | Volta MTSM, nJ |\n|---|---|---|---|---|---|---|\n",
    );
    let figures: Vec<(&InstructionRow, crate::instructions::arafa::TableIRow, Estimate)> = table
        .rows
        .iter()
        .filter_map(|r| {
            let paper = crate::instructions::arafa::volta_row(&r.stem)?;
            Some((r, paper, r.net.as_ref()?.dynamic_warp_j))
        })
        .collect();
    // Energy above idle cannot be negative: a figure whose interval lies below zero shows
    // that the intervals leave out something (drift between the kernel and its baseline,
    // measured apart), and then none is taken as resolved.
    let below_zero = figures.iter().filter(|(_, _, e)| e.ci_high < 0.0).count();
    let (mut resolved, shown) = (0, figures.len());
    for (r, paper, e) in &figures {
        let ok = below_zero == 0 && e.ci_low > 0.0 && (e.ci_high - e.ci_low) < e.mean;
        let (papi, mtsm) = if r.level == "O0" { paper.non_optimized } else { paper.optimized };
        resolved += usize::from(ok);
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {papi} | {mtsm} |\n",
            r.label,
            r.level,
            energy_ci(e, 1e9, 2),
            if ok { "yes" } else { "no" },
            paper.label
        ));
    }
    if below_zero > 0 {
        md.push_str(&format!(
            "\n{below_zero} figures lie significantly below zero, which energy above idle cannot: the intervals understate \
the error (the kernel and its baseline are measured apart, and active idle drifts between them), so none is taken as resolved.\n"
        ));
    }
    let mut magnitudes: Vec<f64> = figures.iter().map(|(_, _, e)| e.mean.abs() * 1e9).collect();
    magnitudes.sort_by(f64::total_cmp);
    if let Some(median) = magnitudes.get(magnitudes.len() / 2) {
        let theirs: Vec<f64> = figures
            .iter()
            .flat_map(|(r, paper, _)| {
                let (papi, mtsm) = if r.level == "O0" { paper.non_optimized } else { paper.optimized };
                [papi, mtsm]
            })
            .collect();
        let lo = theirs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = theirs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        md.push_str(&format!(
            "\nMedian magnitude of our figures: {median:.2} nJ per warp-instruction (one thread), against Table I's {lo}–{hi} nJ \
for the same rows. A median inside their range does not make the figures resolved: the criterion above is the figure's own interval.\n"
        ));
    }
    md.push_str(&format!("\n{resolved} of {shown} figures resolved.\n"));
    md
}

/// Writes `instructions.json` and `instructions.md` under `dir` (`instructions-one-thread.*`
/// for the one-thread mode), each written whole or not at all.
pub fn write_table(table: &InstructionTable, dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let stem = if table.threads_mode == "one" { "instructions-one-thread" } else { "instructions" };
    let json = dir.join(format!("{stem}.json"));
    let md = dir.join(format!("{stem}.md"));
    write_json(&json, "the instruction table", table)?;
    write_atomically(&md, render_markdown(table).as_bytes())?;
    Ok((json, md))
}

/// Reads a table written by [`write_table`].
pub fn read_table(path: &Path) -> Result<InstructionTable> {
    read_tagged_json(path, "an instruction table", TABLE_SCHEMA, |t: &InstructionTable| &t.format)
}
