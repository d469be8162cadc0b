//! The instruction table as markdown, and its JSON written and read back.

use super::*;

pub(super) fn fmt_ci(e: &Estimate, scale: f64, digits: usize) -> String {
    format!("{:.d$} [{:.d$}, {:.d$}]", e.mean * scale, e.ci_low * scale, e.ci_high * scale, d = digits)
}

/// The table as markdown.
pub fn render_markdown(table: &InstructionTable) -> String {
    let mut md = String::new();
    let gpu = table
        .device
        .as_ref()
        .map(|d| format!("{} {} (driver {})", d.name, d.uuid, d.driver_version.as_deref().unwrap_or("unknown")))
        .unwrap_or_default();
    md.push_str(&format!(
        "# Energy per instruction{}\n\n{}, {} threads per launch, K = {} chain steps per loop iteration; {}.\n\n",
        if table.simulated { " (SIMULATED)" } else { "" },
        if gpu.is_empty() { "GPU unknown".to_string() } else { gpu },
        table.threads_mode,
        table.k,
        table.timestamp
    ));
    md.push_str(
        "Net energy per thread-instruction is Arafa's `(E_K / L_K - E_base / L_base) / (threads x K x ops)` with its 95 % interval; \
per warp-instruction is 32 times that; dynamic leaves out the active-idle power. `K vs 2K` is the net at 2K over the net at K, less 1. \
Grid time is the GPU time one instruction adds to a loop iteration of the whole grid (all threads execute it in that time). Launch: the K kernel's time, total and dynamic energy and power per launch. \
Toggles: mean bits that change in each measured instruction's result (the data's switching activity).\n",
    );
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
            md.push_str("| instruction | net / thread-instr, pJ | net / warp-instr, nJ | dynamic / thread-instr, pJ | K vs 2K | 2K-K marginal, pJ | grid time / instr, ns | launch: time, total, dynamic, power | toggles |\n");
            md.push_str("|---|---|---|---|---|---|---|---|---|\n");
            for r in rows {
                let l = &r.launch;
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} ms, {:.1} mJ, {:.1} mJ, {:.0} W | {:.1} |\n",
                    r.label,
                    fmt_ci(&r.net.thread_j, 1e12, 3),
                    fmt_ci(&r.net.warp_j, 1e9, 3),
                    fmt_ci(&r.net.dynamic_thread_j, 1e12, 3),
                    r.linearity.map(|x| format!("{:+.1} %", x * 100.0)).unwrap_or_else(|| "-".into()),
                    r.marginal.as_ref().map(|m| format!("{:.3}", m.thread_j.mean * 1e12)).unwrap_or_else(|| "-".into()),
                    r.net.time_per_instruction_s * 1e9,
                    l.time_s.mean * 1e3,
                    l.energy_j.mean * 1e3,
                    l.dynamic_j.mean * 1e3,
                    l.power_w.mean,
                    l.facts.toggles_per_instruction,
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
    }
    if !table.missing.is_empty() {
        md.push_str(&format!(
            "\n{} planned kernels were not measured in this run (filtered out or failed; listed in the JSON's `missing`).\n",
            table.missing.len()
        ));
    }
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
    read_tagged_json(path, "an instruction table", TABLE_FORMAT, |t: &InstructionTable| &t.format)
}
