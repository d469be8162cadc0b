//! The page of issue 48's GPU runs (`research/results/2026-11-29-parameterized/`): a reduction
//! written outside the repository, swept over block sizes at two problem sizes, each sweep point
//! against the same configuration written as a plain benchmark, and (call 2) the twenty
//! benchmarks in one process against each in a process of its own (issue 46).
//!
//! Raw data: `call1/run` (the first call's run: the sweeps and the block-256 twins),
//! `call2/one` (the second call's run of all twenty in one process), `call2/each/*` (each in a
//! process of its own; result files without their traces), `call2/processes.csv` (each
//! process's start and end) and `call2/gpus-*.csv` (nvidia-smi before and after);
//! `call3/one`, `call3/heldout`, `call3/validation` and `call3/processes.csv` (the same after
//! windows were rounded up to at least one tick, with the reference check).

use std::fmt::Write as _;
use std::path::Path;

use energy_harness::units::format_si;
use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_report::{sort_natural, sweep_svg, sweeps, sweeps_markdown, ResultSet};
use energy_results::trace::format::read_trace;
use energy_results::trace::is_auxiliary_window;
use energy_results::trace::WindowEdge;

use kernel_energy::generated::Page;

/// The folder under `research/results/`.
pub const PARAMETERIZED_DIR: &str = "2026-11-29-parameterized";

/// The plain twin's id of a sweep point of this folder's crate (`reduce_n24` at block 256:
/// `reduce_n24_b256_plain/energy`).
fn twin_id(sweep: &str, arg: &str) -> String {
    format!("{sweep}_b{arg}_plain/energy")
}

/// Each estimate's mean inside the other's 95 % interval (either way).
fn within(a: &ResultFile, b: &ResultFile) -> bool {
    let (ea, eb) = (&a.energy_j, &b.energy_j);
    (ea.ci_low..=ea.ci_high).contains(&eb.mean) || (eb.ci_low..=eb.ci_high).contains(&ea.mean)
}

fn millijoules(r: &ResultFile) -> String {
    format!("{:.4} mJ ± {:.2} %", r.energy_j.mean * 1e3, r.energy_j.relative_half_width() * 100.0)
}

fn difference_pct(a: &ResultFile, b: &ResultFile) -> f64 {
    (a.energy_j.mean / b.energy_j.mean - 1.0) * 100.0
}

/// The GPU and the first measurement's time of a run, as a heading states them.
fn board_line(set: &ResultSet) -> Result<String> {
    let first = set.results.values().min_by(|a, b| a.timestamp.cmp(&b.timestamp));
    let Some(r) = first else {
        return Err(Error::new(ErrorKind::Format, format!("{}: the run holds no result", set.dir.display())));
    };
    let limit =
        r.device.power_limit_w.map_or_else(|| "power limit not recorded".into(), |w| format!("power limit {w} W"));
    Ok(format!(
        "{} ({}), driver {}, {limit}; first measurement {}",
        r.device.name,
        r.device.uuid,
        r.device.driver.as_deref().unwrap_or("not recorded"),
        r.timestamp
    ))
}

/// Each sweep point of `set` against its plain twin in `set`: the table and its count.
fn twins_section(out: &mut String, set: &ResultSet) {
    let _ = writeln!(
        out,
        "| configuration | sweep point | plain twin | difference | within 1 % | each within the other's interval |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let (mut pairs, mut under_1pct, mut inside) = (0, 0, 0);
    for s in sweeps(set) {
        for row in &s.rows {
            let point_id = format!("{}/{}/energy", s.name, row.arg);
            let (Some(point), Some(twin)) = (set.results.get(&point_id), set.results.get(&twin_id(&s.name, &row.arg)))
            else {
                continue;
            };
            let d = difference_pct(point, twin);
            pairs += 1;
            under_1pct += usize::from(d.abs() <= 1.0);
            inside += usize::from(within(point, twin));
            let _ = writeln!(
                out,
                "| `{}` {} {} | {} | {} | {d:+.2} % | {} | {} |",
                s.name,
                s.param,
                row.arg,
                millijoules(point),
                millijoules(twin),
                if d.abs() <= 1.0 { "yes" } else { "**no**" },
                if within(point, twin) { "yes" } else { "**no**" },
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{under_1pct} of {pairs} sweep points within 1 % of their plain twin; {inside} of {pairs} within each \
         other's interval (energy per launch; intervals: the windows' spread alone, 95 %).\n"
    );
}

/// One process of a call, a row of its `processes.csv` (`mode,filter,start_s,end_s,exit`).
struct Process {
    /// What it ran (`one-process`, `one-per-process`, `validation`, …).
    mode: String,
    /// The criterion filter it ran with (empty for none).
    filter: String,
    /// Its wall time, s.
    seconds: f64,
    /// Its exit code.
    exit: i32,
}

/// Each process's wall time and exit code from `processes.csv`.
fn processes(path: &Path) -> Result<Vec<Process>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read {}: {e}", path.display())))?;
    let bad = |line: &str| {
        Error::new(ErrorKind::Format, format!("{}: not `mode,filter,start_s,end_s,exit`: {line}", path.display()))
    };
    let mut rows = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let [mode, filter, start, end, exit] = f[..] else { return Err(bad(line)) };
        let (Ok(start), Ok(end), Ok(exit)) = (start.parse::<f64>(), end.parse::<f64>(), exit.parse::<i32>()) else {
            return Err(bad(line));
        };
        rows.push(Process { mode: mode.to_string(), filter: filter.to_string(), seconds: end - start, exit });
    }
    Ok(rows)
}

/// Where one benchmark's time went in a process of several, from its trace's marks: the
/// auxiliary window (from the end of the idle the one before handed over: that one's files,
/// this one's setup and its warm-up), the measured windows, and the idle tail after them.
fn phases(trace_path: &Path) -> Result<[f64; 3]> {
    let trace = read_trace(trace_path)?;
    let marks = trace.marks();
    let times = |edge: WindowEdge, auxiliary: bool| {
        marks.iter().filter(move |m| m.edge == edge && is_auxiliary_window(m.index) == auxiliary).map(|m| m.time_s)
    };
    let warm_up = times(WindowEdge::Start, true).reduce(f64::min);
    let first_window = times(WindowEdge::Start, false).reduce(f64::min);
    let last_window = times(WindowEdge::End, false).reduce(f64::max);
    let end = trace.channels().flat_map(|c| trace.series(c).iter().map(|r| r.time_s)).reduce(f64::max);
    match (warm_up, first_window, last_window, end) {
        (Some(aux), Some(start), Some(stop), Some(end)) => Ok([start - aux, stop - start, end - stop]),
        _ => Err(Error::new(ErrorKind::Format, format!("{}: no warm-up and window marks", trace_path.display()))),
    }
}

/// The seconds of a call's processes of one mode (`one-process`, `one-per-process`).
fn seconds(rows: &[Process], mode: &str) -> Vec<f64> {
    rows.iter().filter(|r| r.mode == mode).map(|r| r.seconds).collect()
}

/// The processes of a call (`callN/processes.csv`), every one of which must have succeeded.
fn call_processes(dir: &Path, call: u32) -> Result<Vec<Process>> {
    let rows = processes(&dir.join(format!("call{call}/processes.csv")))?;
    let failed: Vec<String> =
        rows.iter().filter(|r| r.exit != 0).map(|r| format!("{} `{}` (exit {})", r.mode, r.filter, r.exit)).collect();
    if !failed.is_empty() {
        return Err(Error::new(
            ErrorKind::Format,
            format!("call {call}: processes that failed: {}", failed.join(", ")),
        ));
    }
    Ok(rows)
}

/// How long a process of several benchmarks (`set`, run in `seconds`) took per benchmark, and
/// where each benchmark's time went, from its trace's marks.
fn one_process_paragraph(out: &mut String, set: &ResultSet, seconds: f64) -> Result<()> {
    let n = set.results.len() as f64;
    let sessions: f64 = set.results.values().map(|r| r.wall_time_s).sum();
    let mut spent = [0.0; 3];
    for id in set.results.keys() {
        let p = phases(&set.dir.join(format!("{}.trace.csv", id.replace('/', "_"))))?;
        spent.iter_mut().zip(p).for_each(|(s, p)| *s += p / n);
    }
    let _ = writeln!(
        out,
        "All {} energy benchmarks in one process: **{seconds:.1} s, {:.2} s per benchmark** (sessions \
         {sessions:.1} s of it, {:.2} s each; the rest process start, library setup and files). Where a \
         benchmark's time went (means over the {}, from each trace's marks): {:.3} s between the idle the one \
         before handed over and the first window (that one's files, this one's setup: the crate allocates, \
         fills and uploads 64 or 256 MiB, and its warm-up), {:.3} s of windows, {:.3} s of idle after them \
         (until the counter's third update: the next one's lead-in).\n",
        set.results.len(),
        seconds / n,
        sessions / n,
        set.results.len(),
        spent[0],
        spent[1],
        spent[2]
    );
    Ok(())
}

/// Call 2's twenty benchmarks in one process against each in a process of its own.
fn one_against_own_section(out: &mut String, dir: &Path, one: &ResultSet) -> Result<()> {
    let rows = call_processes(dir, 2)?;
    let own = seconds(&rows, "one-per-process");
    one_process_paragraph(out, one, seconds(&rows, "one-process").iter().sum())?;
    let _ = writeln!(
        out,
        "Each in a process of its own: {:.1} s ({:.2} s each).\n",
        own.iter().sum::<f64>(),
        own.iter().sum::<f64>() / own.len().max(1) as f64
    );
    let _ = writeln!(out, "| benchmark | windows (one process / own) | one process | own process | difference | each within the other's interval | session s (one / own) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let mut inside = 0;
    let mut ids: Vec<&String> = one.results.keys().collect();
    sort_natural(&mut ids, |id| id.as_str());
    for id in ids {
        let a = &one.results[id];
        let own_dir = dir.join("call2/each").join(id.replace('/', "_"));
        let b = ResultFile::read_json(&own_dir.join(format!("{}.json", id.replace('/', "_"))))?;
        inside += usize::from(within(a, &b));
        let _ = writeln!(
            out,
            "| `{id}` | {} / {} | {} | {} | {:+.2} % | {} | {:.2} / {:.2} |",
            a.windows.len(),
            b.windows.len(),
            millijoules(a),
            millijoules(&b),
            difference_pct(a, &b),
            if within(a, &b) { "yes" } else { "**no**" },
            a.wall_time_s,
            b.wall_time_s
        );
    }
    let _ = writeln!(out, "\n{inside} of {} within each other's interval.\n", one.results.len());
    Ok(())
}

/// Call 3: the windows of the five held-out calls that spanned less than one tick before
/// windows were rounded up, and docs/VALIDATION.md's reference check.
fn call3_checks(out: &mut String, dir: &Path) -> Result<()> {
    let held = ResultSet::read_run(&dir.join("call3/heldout"))?;
    let _ = writeln!(
        out,
        "### The five held-out calls whose windows spanned less than one tick on call 1's board\n\n\
         (Protocol v3's own runs are done; these show the windows now, not a protocol result.)\n\n\
         | benchmark | launches per window | window, ms | sensor ticks per window | windows |\n|---|---|---|---|---|"
    );
    for (id, r) in &held.results {
        let _ = writeln!(
            out,
            "| `{id}` | {} | {:.1} | {:.2} | {} |",
            r.launches_per_window,
            r.launches_per_window as f64 * r.time_s.mean * 1e3,
            r.ticks_per_window,
            r.windows.len()
        );
    }
    let path = dir.join("call3/validation/validation.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read {}: {e}", path.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(ErrorKind::Format, format!("{}: not JSON: {e}", path.display())))?;
    let bad = || Error::new(ErrorKind::Format, format!("{}: not a validation report", path.display()));
    let _ = writeln!(
        out,
        "\n### The reference check (docs/VALIDATION.md's, three repeats per size)\n\n\
         | launch | reference (steady power × event time) | this harness | bias | CV |\n|---|---|---|---|---|"
    );
    for size in v["sizes"].as_array().ok_or_else(bad)? {
        let harness = size["methods"].as_array().and_then(|m| m.first()).ok_or_else(bad)?;
        let (launch, reference) =
            (size["launch_s"].as_f64().ok_or_else(bad)?, size["reference_j"].as_f64().ok_or_else(bad)?);
        let (mean, bias, cv) = (
            harness["mean_j"].as_f64().ok_or_else(bad)?,
            harness["bias_pct"].as_f64().ok_or_else(bad)?,
            harness["cv_pct"].as_f64().ok_or_else(bad)?,
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {bias:+.2} % | {cv:.2} % |",
            format_si(launch, "s", 4),
            format_si(reference, "J", 5),
            format_si(mean, "J", 5)
        );
    }
    let _ = writeln!(
        out,
        "\nDoubling the work: ×{:.4}; a window right after another: ×{:.4} an isolated one.\n",
        v["doubling_ratio"].as_f64().ok_or_else(bad)?,
        v["back_to_back_ratio"].as_f64().ok_or_else(bad)?
    );
    Ok(())
}

/// The page and the sweeps' SVGs.
pub fn parameterized_pages(results: &Path) -> Result<Vec<Page>> {
    let dir = results.join(PARAMETERIZED_DIR);
    let call1 = ResultSet::read_run(&dir.join("call1/run"))?;
    let call2 = ResultSet::read_run(&dir.join("call2/one"))?;
    let call3 = ResultSet::read_run(&dir.join("call3/one"))?;
    let mut pages = Vec::new();
    let mut out = String::from(
        "# The outside reduction swept over block sizes on H200s (issue 48; issue 46's one process against one each)\n\n\
         Generated from the raw files beside it by `cargo run -p energy-suites --example republish` \
         (`research/src/parameterized.rs`); `tests/published_pages.rs` holds it against them. Measured, not \
         simulated. Intervals are 95 % and statistical only (the windows' spread): every figure rests on the \
         board's own power sensor, whose per-board gain error no interval includes, so the three calls' boards \
         are compared by their shapes, not their joules.\n",
    );
    for (n, set, baseline, what) in [
        (1, &call1, None, "the sweeps and the block-256 twins, in one process (`call1.sh`)"),
        (2, &call2, Some(&call1), "the sweeps and a twin for every point, in one process (`call2.sh`)"),
        (3, &call3, Some(&call2), "the same, windows rounded up to at least one tick (`call3.sh`)"),
    ] {
        let _ = writeln!(out, "\n## Call {n}: {}\n\n{what}.", board_line(set)?);
        out.push_str(&sweeps_markdown(set, baseline));
        for s in sweeps(set) {
            let file = format!("call{n}-{}.svg", s.name);
            let _ = writeln!(out, "\n![{} over {}, call {n}]({file})", s.name, s.param);
            pages.push(Page { path: format!("{PARAMETERIZED_DIR}/{file}").into(), text: sweep_svg(&s) });
        }
        let _ = writeln!(out, "\n### Each sweep point against the same configuration as a plain benchmark\n");
        twins_section(&mut out, set);
        match n {
            2 => {
                let _ = writeln!(out, "### One process against one process each (issue 46)\n");
                one_against_own_section(&mut out, &dir, set)?;
            }
            3 => {
                let _ = writeln!(out, "### One process (issue 46)\n");
                one_process_paragraph(&mut out, set, seconds(&call_processes(&dir, 3)?, "one-process").iter().sum())?;
                call3_checks(&mut out, &dir)?;
            }
            _ => {}
        }
    }
    pages.push(Page { path: format!("{PARAMETERIZED_DIR}/results.md").into(), text: out });
    Ok(pages)
}
