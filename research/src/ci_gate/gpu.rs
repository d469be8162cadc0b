//! The gate study on a GPU (`gpu-gates.md`): every gate's raw runs read from the call
//! archives under `raw/`, judged again by today's rule and, pair by pair, by each
//! benchmark's own spread and by the moderated variance.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use energy_harness::Result;
use energy_results::ab::{
    paired_change, paired_changes, paired_changes_weighted, period_fit, AbReport, AbSequence, PairFigures,
    PairedChange, RunFigures, Settling, POOLED_PRIOR_DF,
};
use energy_results::detect::Verdict;

use super::CI_GATE_DIR;
use kernel_energy::generated::Page;

mod paired_runs;
mod temperature;
mod windows_replay;

/// The files of a gzipped tar archive (regular files only), by path.
pub fn read_tgz(path: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let file = std::fs::File::open(path).map_err(|e| energy_harness::Error::io(path, "open the archive", e))?;
    read_tgz_from(file, &path.display().to_string())
}

/// [`read_tgz`] of an archive read from `reader`, named `name` in errors.
fn read_tgz_from(reader: impl std::io::Read, name: &str) -> Result<BTreeMap<String, Vec<u8>>> {
    use std::io::Read as _;
    let bad = |why: String| energy_harness::Error::new(energy_harness::ErrorKind::Format, format!("{name}: {why}"));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(reader).read_to_end(&mut bytes).map_err(|e| bad(format!("not gzip ({e})")))?;
    let mut files = BTreeMap::new();
    let mut at = 0;
    while at + 512 <= bytes.len() {
        let header = &bytes[at..at + 512];
        if header.iter().all(|b| *b == 0) {
            break;
        }
        let field = |from: usize, len: usize| {
            let raw = &header[from..from + len];
            String::from_utf8_lossy(&raw[..raw.iter().position(|b| *b == 0).unwrap_or(len)]).trim().to_string()
        };
        let size = usize::from_str_radix(&field(124, 12), 8).map_err(|_| bad(format!("a bad size at byte {at}")))?;
        let name = match field(345, 155) {
            prefix if !prefix.is_empty() => format!("{prefix}/{}", field(0, 100)),
            _ => field(0, 100),
        };
        let body = at + 512;
        if body + size > bytes.len() {
            return Err(bad(format!("`{name}` runs past the end")));
        }
        if matches!(header[156], b'0' | 0) {
            files.insert(name.trim_start_matches("./").to_string(), bytes[body..body + size].to_vec());
        }
        at = body + size.div_ceil(512) * 512;
    }
    Ok(files)
}

/// One gate of the GPU study: what it was and what it found.
struct StudyGate {
    call: usize,
    name: String,
    /// `aa`, `p1` or `p2`.
    kind: String,
    windows: String,
    exit: i32,
    seconds: f64,
    report: Option<AbReport>,
    failure: Option<String>,
    /// Each run's benchmarks' wall times, s, by run number, from the gate's bench logs
    /// (`study/gates/NAME.logs.tgz`, from call 4 on); empty without them.
    bench_walls: BTreeMap<usize, BTreeMap<String, f64>>,
    /// Each run's benchmarks' energies per launch, window by window, J, by run number, from
    /// the result files in the gate's logs (from call 13 on); empty without them.
    run_windows: paired_runs::WindowsByRun,
    /// Each run's benchmarks' busy spans, s, by run number, from the same result files.
    run_spans: paired_runs::SpansByRun,
}

/// The first call whose harness ran guards around the windows (6fb7dd68): its gates' window
/// settings are labelled `… + guards`, apart from the same settings without them.
const GUARDS_FROM_CALL: usize = 7;

/// The first call whose gates left settled benchmarks out of later pairs (the harness and
/// cargo-energy of 892b9d94): its window settings are labelled `… + guards + settling`.
const SETTLING_FROM_CALL: usize = 11;

/// The first call whose bench binaries ran as runs of a paired sequence (the harness and
/// cargo-energy of c171c536: no criterion replay, one counter interval of idle after each
/// stretch, the gate's default 6 windows instead of 8): labelled `… + paired runs`.
const PAIRED_RUNS_FROM_CALL: usize = 13;

/// The first call whose harness ended the warm-up with the guard (the harness and
/// cargo-energy of 51775baf: the warm-up's batches spend what the guard before window 0
/// leaves, no doubled batch past the warm-up, the windows sized by the guard's pace; the
/// gate's default 4 windows instead of 6): labelled `… + lean warm-up`.
const LEAN_WARMUP_FROM_CALL: usize = 16;

/// The first call with the lean warm-up at the gate's default of 6 windows again (the
/// harness of 51775baf, cargo-energy of c2f9dcb3: today's defaults): labelled
/// `… + lean warm-up + 6 windows`.
const LEAN_WARMUP_6_WINDOWS_FROM_CALL: usize = 19;

/// The first call whose gate settled a benchmark on a clear verdict too (cargo-energy and
/// harness of 84b312fe: a regression, or its change's 95 % upper bound below the threshold;
/// the paired run's idle tail waiting for an update made after the stretch): labelled
/// `… + 6 windows + clear verdicts`.
const CLEAR_VERDICTS_FROM_CALL: usize = 22;

/// The first call whose runs after the first pair were lean (cargo-energy and harness of
/// 3d8604c5: no idle tail, one counter interval of lead-in, the idle carried): labelled
/// `… + clear verdicts + lean runs`.
const LEAN_RUNS_FROM_CALL: usize = 25;

/// The first call whose paired runs recorded no rail beside the board's source (the harness
/// and cargo-energy of 020f508f: no memory rail, whose 1 s boxcar a paired run's idle cannot
/// invert; the gate reads totals only): labelled `… + lean runs + no rails`.
const NO_RAILS_FROM_CALL: usize = 26;

/// The first call whose gate shrank each benchmark's period effect by the spread of all of
/// theirs (cargo-energy of a9737bb3, `energy_results::ab::shrunk_period_fit`; the builds of
/// calls 26-28) and ran up to six pairs (`--max-pairs 6`, the default since): labelled
/// `… + no rails + shrunk period + 6 pairs`.
const SHRUNK_PERIOD_FROM_CALL: usize = 29;

/// The first call whose paired runs' guard after the windows ran to the counter's tick after
/// them (the harness and cargo-energy of ccbba878: in slices, until the counter's curve as the
/// analysis places it reaches past the last window; the lean tail waits on the same curve):
/// labelled `… + shrunk period + 6 pairs + guard to the tick`.
const GUARD_TO_TICK_FROM_CALL: usize = 33;

/// What each call's harness and gate added to the label of its window setting, from that
/// call on; a later call's label holds every earlier part ([`setting_label`]).
const LABEL_PARTS: [(usize, &str); 10] = [
    (GUARDS_FROM_CALL, " + guards"),
    (SETTLING_FROM_CALL, " + settling"),
    (PAIRED_RUNS_FROM_CALL, " + paired runs"),
    (LEAN_WARMUP_FROM_CALL, " + lean warm-up"),
    (LEAN_WARMUP_6_WINDOWS_FROM_CALL, " + 6 windows"),
    (CLEAR_VERDICTS_FROM_CALL, " + clear verdicts"),
    (LEAN_RUNS_FROM_CALL, " + lean runs"),
    (NO_RAILS_FROM_CALL, " + no rails"),
    (SHRUNK_PERIOD_FROM_CALL, " + shrunk period + 6 pairs"),
    (GUARD_TO_TICK_FROM_CALL, " + guard to the tick"),
];

/// The label of a gate's window setting (`gate`, `4`, `default`, …) in call `call`.
fn setting_label(windows: &str, call: usize) -> String {
    LABEL_PARTS.iter().filter(|(from, _)| call >= *from).fold(windows.to_string(), |label, (_, part)| label + part)
}

/// The window settings in the page's order: each benchmark's precision (`default`), a
/// count given, the gate's default (`gate`), from call 7 the same with guards, and from
/// call 11 the gate's default with settled benchmarks left out.
const SETTINGS: [&str; 16] = [
    "default",
    "3",
    "4",
    "gate",
    "4 + guards",
    "gate + guards",
    "gate + guards + settling",
    "gate + guards + settling + paired runs",
    "gate + guards + settling + paired runs + lean warm-up",
    "gate + guards + settling + paired runs + lean warm-up + 6 windows",
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts",
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs",
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails",
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails + shrunk period + 6 pairs",
    "4 + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails + shrunk period + 6 pairs",
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails + shrunk period + 6 pairs + guard to the tick",
];

/// The gate's defaults at today's window count, 6, the whole warm-up before the guard
/// (calls 13-15). Today the guard ends the warm-up ([`LEAN_WARMUP_4_WINDOWS`]).
const DEFAULTS_6_WINDOWS: &str = "gate + guards + settling + paired runs";

/// The guard ending the warm-up, at 4 windows (calls 16-18): a same-board replay of calls
/// 13-15 then found 4 windows losing power, and the default went back to 6 windows.
const LEAN_WARMUP_4_WINDOWS: &str = "gate + guards + settling + paired runs + lean warm-up";

/// The guard ending the warm-up at 6 windows, a benchmark settled only once precise enough
/// (calls 19-21): the runs today's rule was first replayed on.
const SETTLED_ON_PRECISION: &str = "gate + guards + settling + paired runs + lean warm-up + 6 windows";

/// A benchmark settled on a clear verdict too, every run with an idle tail (calls 22-24).
const CLEAR_VERDICTS: &str = "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts";

/// The runs after the first pair lean, the paired runs still recording rails (call 25).
const LEAN_RUNS_WITH_RAILS: &str =
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs";

/// As today, but at most four pairs and each benchmark's period effect fitted in full (calls
/// 26-28): the runs whose noise lean runs were judged by.
const NO_RAILS: &str =
    "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails";

/// As today, but a fixed guard of one counter period after the windows (calls 29-32).
const SHRUNK_PERIOD: &str = "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails + shrunk period + 6 pairs";

/// [`SHRUNK_PERIOD`] at 4 windows (call 32, interleaved with 6-window gates on one board).
const SHRUNK_PERIOD_4_WINDOWS: &str = "4 + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails + shrunk period + 6 pairs";

/// Today's defaults: the guard ending the warm-up, 6 windows, a benchmark settled on a clear
/// verdict too, the runs after the first pair lean, no rails in paired runs, the period effect
/// shrunk, up to six pairs, the guard after the windows run to the counter's tick after them
/// (calls 33 on).
const TODAY_DEFAULTS: &str = "gate + guards + settling + paired runs + lean warm-up + 6 windows + clear verdicts + lean runs + no rails + shrunk period + 6 pairs + guard to the tick";

/// The gate's defaults before its runs were paired runs (calls 11-12: 8 windows).
const DEFAULTS_BEFORE_PAIRED_RUNS: &str = "gate + guards + settling";

/// The gate's defaults before settled benchmarks were left out (calls 7-10).
const DEFAULTS_BEFORE_SETTLING: &str = "gate + guards";

fn kind_label(kind: &str) -> &'static str {
    match kind {
        "aa" => "A/A (unchanged)",
        "p1" => "+1 % (101 calls)",
        "p2" => "+2 % (102 calls)",
        _ => "?",
    }
}

/// Every gate of the study's archives under `raw` (`call1.tgz`, …), and each call's row of
/// the page's table of calls (its start, and its GPU as nvidia-smi read it before the call:
/// clocks read, never set); each archive read once.
fn study_gates(raw: &Path) -> Result<(Vec<StudyGate>, Vec<String>)> {
    let mut gates = Vec::new();
    let mut calls = Vec::new();
    for call in 1.. {
        let path = raw.join(format!("call{call}.tgz"));
        if !path.exists() {
            break;
        }
        let files = read_tgz(&path)?;
        let text = |name: &str| files.get(name).map(|b| String::from_utf8_lossy(b).into_owned());
        let trimmed = |name: &str| text(name).map(|t| t.trim().to_string()).unwrap_or_default();
        let gpu = trimmed("study/gpu-before.csv").lines().nth(1).unwrap_or("").to_string();
        calls.push(format!("| {call} | {} | `{gpu}` |", trimmed("study/started.txt")));
        for line in text("study/index.txt").unwrap_or_default().lines() {
            // "gate-01-aa-wdefault exit 0 102 s", or the workflow's gate.
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(name) = words.first().filter(|n| n.starts_with("gate-")) {
                let parts: Vec<&str> = name.splitn(4, '-').collect();
                let report = text(&format!("study/gates/{name}.ab.json")).map(|t| AbReport::parse(&t)).transpose()?;
                let failure = text(&format!("study/gates/{name}.err")).and_then(|e| {
                    e.lines().find(|l| l.trim_start().starts_with("error:")).map(|l| l.trim().to_string())
                });
                let logs = match files.get(&format!("study/gates/{name}.logs.tgz")) {
                    Some(bytes) => read_tgz_from(bytes.as_slice(), name)?,
                    None => BTreeMap::new(),
                };
                let bench_walls = run_bench_walls(&logs);
                let (run_windows, run_spans) = paired_runs::run_results(&logs)?;
                gates.push(StudyGate {
                    call,
                    bench_walls,
                    run_windows,
                    run_spans,
                    name: name.to_string(),
                    kind: parts[2].to_string(),
                    windows: setting_label(parts[3].trim_start_matches('w'), call),
                    exit: words.get(2).and_then(|c| c.parse().ok()).unwrap_or(-1),
                    seconds: words.get(3).and_then(|s| s.parse().ok()).unwrap_or(f64::NAN),
                    report,
                    failure,
                });
            } else if line.starts_with("workflow gate job exit") {
                let report = text("study/workflow-ab.json").map(|t| AbReport::parse(&t)).transpose()?;
                gates.push(StudyGate {
                    call,
                    bench_walls: BTreeMap::new(),
                    run_windows: BTreeMap::new(),
                    run_spans: BTreeMap::new(),
                    name: "workflow".into(),
                    kind: "p2".into(),
                    windows: "default".into(),
                    exit: words.get(4).and_then(|c| c.parse().ok()).unwrap_or(-1),
                    seconds: report.as_ref().map_or(f64::NAN, |r| r.wall_s),
                    report,
                    failure: None,
                });
            }
        }
    }
    Ok((gates, calls))
}

/// The run number of a path in a gate's logs (`run-NN-SIDE/…`).
fn run_number(path: &str) -> Option<usize> {
    path.strip_prefix("run-").and_then(|r| r.get(..2)).and_then(|n| n.parse().ok())
}

/// Each run's benchmarks' wall times from a gate's bench logs (`run-NN-SIDE/bench.log`:
/// `ID: measuring on GPU … , 1.8 s`), by run number.
fn run_bench_walls(logs: &BTreeMap<String, Vec<u8>>) -> BTreeMap<usize, BTreeMap<String, f64>> {
    let mut out: BTreeMap<usize, BTreeMap<String, f64>> = BTreeMap::new();
    for (path, bytes) in logs {
        let Some(run) = run_number(path) else { continue };
        for line in String::from_utf8_lossy(bytes).lines() {
            let Some((id, rest)) = line.split_once(": measuring on ") else { continue };
            if let Some(seconds) =
                rest.rsplit(", ").next().and_then(|s| s.strip_suffix(" s")).and_then(|s| s.parse().ok())
            {
                out.entry(run).or_default().insert(id.to_string(), seconds);
            }
        }
    }
    out
}

/// A gate replayed ([`replay_settling`]): its final changes, the benchmark-runs it measured,
/// and its estimated GPU time, s (`None` without bench logs).
type Replayed = (Vec<PairedChange>, usize, Option<f64>);

/// A gate replayed from its raw runs as `cargo energy gate` runs today: after each pair from
/// `--min-pairs` on, a benchmark whose verdict is clear settles (`energy_results::ab::settles`),
/// and later runs leave it out (its figures in them are dropped); the sequence stops when none is left
/// or at the pairs the gate ran. Returns the final changes, the benchmark-runs measured and
/// the GPU time estimated from the runs' logs: each run's wall time less the benchmarks it
/// left out (their logged wall times), or `None` without logs.
fn replay_settling(gate: &StudyGate) -> Result<Option<Replayed>> {
    let Some(report) = &gate.report else { return Ok(None) };
    let mut sequence = AbSequence::new(report.removed.clone());
    let (mut bench_runs, mut wall, mut timed) = (0, 0.0, true);
    for (index, run) in report.runs.iter().enumerate() {
        let kept = still_running(&sequence, run);
        bench_runs += kept.benchmarks.len();
        match gate.bench_walls.get(&run.run) {
            Some(walls) => {
                let left_out: f64 =
                    walls.iter().filter(|(id, _)| !kept.benchmarks.contains_key(*id)).map(|(_, s)| s).sum();
                wall += run.wall_s - left_out;
            }
            None => timed = false,
        }
        if add_and_settle(&mut sequence, kept, index, report)? {
            break;
        }
    }
    Ok(Some((sequence.changes(report.threshold_pct)?, bench_runs, timed.then_some(wall))))
}

/// `run` with only the benchmarks `sequence` still runs (all of them before its first pair).
fn still_running(sequence: &AbSequence, run: &RunFigures) -> RunFigures {
    let running: Vec<String> =
        if sequence.common.is_empty() { run.benchmarks.keys().cloned().collect() } else { sequence.running() };
    let mut kept = run.clone();
    kept.benchmarks.retain(|id, _| running.contains(id));
    kept
}

/// Adds run `index` (from 0) of a replayed gate to `sequence` and, after each whole pair from
/// the gate's `--min-pairs` on (two at least), settles the benchmarks whose detectable change
/// reached its target or whose verdict is clear, as `cargo energy gate` does. Returns whether
/// none is left to run.
fn add_and_settle(sequence: &mut AbSequence, run: RunFigures, index: usize, report: &AbReport) -> Result<bool> {
    sequence.add(run)?;
    let pairs = sequence.pairs();
    if index % 2 == 1 && pairs >= 2 && pairs >= report.min_pairs {
        let changes = sequence.changes(report.threshold_pct)?;
        let rule = Settling::Verdict { target_pct: report.target_pct, threshold_pct: report.threshold_pct };
        sequence.settle(&changes, rule);
        return Ok(sequence.running().is_empty());
    }
    Ok(false)
}

/// The gate's defaults replayed with settled benchmarks left out ([`replay_settling`]),
/// beside the gates as they ran.
fn settling_table(t: &mut String, gates: &[StudyGate]) -> Result<()> {
    let _ = writeln!(
        t,
        "\nSettled benchmarks left out (`cargo energy gate` since 2026-12-02): every gate of the defaults with \
         guards replayed from its raw runs as the gate runs today. After each pair from the second on, a benchmark \
         whose verdict is clear settles (its detectable change at most the target, twice the threshold; a \
         regression; or its change's 95 % upper bound below the threshold) and keeps the verdict of that pair, and \
         later runs leave it out (its \
         figures in them are dropped); the rest run on, up to the pairs the gate ran. The GPU time is estimated from \
         each run's wall time less the benchmarks it leaves out (their wall times in the run's bench log).\n"
    );
    let _ = writeln!(
        t,
        "| condition | benchmark-gates (N) | regressions as run | regressions, settled left out | benchmark-runs as run | left out | GPU time per 10 benchmarks as run | estimated, settled left out |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|---|");
    for kind in ["aa", "p1", "p2"] {
        let chosen: Vec<&StudyGate> = gates
            .iter()
            .filter(|g| g.kind == kind && g.windows == DEFAULTS_BEFORE_SETTLING && g.report.is_some())
            .collect();
        if chosen.is_empty() {
            continue;
        }
        let (mut n, mut before, mut after, mut runs_before, mut runs_after) = (0, 0, 0, 0, 0);
        let (mut wall_before, mut wall_after, mut all_timed) = (0.0, 0.0, true);
        for g in &chosen {
            let report = g.report.as_ref().expect("chosen with a report");
            let Some((changes, bench_runs, wall)) = replay_settling(g)? else { continue };
            n += changes.len();
            before += report.regressions().len();
            after += regressions(&changes);
            runs_before += report.runs.iter().map(|r| r.benchmarks.len()).sum::<usize>();
            runs_after += bench_runs;
            wall_before += report.wall_s;
            match wall {
                Some(w) => wall_after += w,
                None => all_timed = false,
            }
        }
        let per_ten = |wall: f64| 10.0 * wall / n.max(1) as f64;
        let _ = writeln!(
            t,
            "| {} | {n} | {before} of {n} | {after} of {n} | {runs_before} | {} | {:.0} s | {} |",
            kind_label(kind),
            runs_before - runs_after,
            per_ten(wall_before),
            if all_timed { format!("{:.0} s", per_ten(wall_after)) } else { "— (no logs)".into() }
        );
    }
    Ok(())
}

/// The benchmark's kind from its name: `compute_…`, `memory_…`, `library_…`.
fn bench_kind(id: &str) -> &str {
    id.split('_').next().unwrap_or("")
}

/// `2026-12-01-ci-gate/gpu-gates.md`: the study's gates on a GPU, from the archives under
/// `raw/` (each gate's `ab.json`: every run's raw figures, the changes computed again).
pub fn gpu_gates_page(results: &Path) -> Result<Page> {
    let dir = results.join(CI_GATE_DIR);
    let (gates, calls) = study_gates(&dir.join("raw"))?;
    let mut t = String::new();
    let _ = writeln!(t, "# The CI gate on a GPU: false alarms, power and cost (issue 58)\n");
    let _ = writeln!(
        t,
        "Generated by `energy_suites::ci_gate::gpu_gates_page` from `raw/call1.tgz` … (`cargo run -p energy-suites \
         --example republish`). Measured, each figure on the board's own sensor (its gain error is systematic and \
         cancels in a ratio of two builds on it). Every verdict is computed again from the gates' raw runs by \
         today's code.\n"
    );
    let _ = writeln!(t, "| call | started | GPU before the call (nvidia-smi; clocks read, never set) |");
    let _ = writeln!(t, "|---|---|---|");
    for line in &calls {
        let _ = writeln!(t, "{line}");
    }
    let _ = writeln!(
        t,
        "\nThe crate: `gate-study/` (nine benchmarks, three kinds: compute-bound FMA loops, memory-bound saxpy, cuBLAS \
         GEMMs), each launch making `CALLS` calls. Built by `run_workflow.py build` (the README's workflow, its build \
         job: `raw/workflow-build.log`) from a repository whose `main` has 100 calls and whose pull request has 102; \
         the A/A (main against itself) and +1 % (101 calls) builds by `cargo energy gate --base origin/main \
         --build-only` in the same clone: with the harness of a1921b2 for calls 1-3, of 9f7962b for calls 4-6, of \
         6fb7dd68 for calls 7-9 (guards: one counter period of the kernel's own launches before the first window and \
         after the last, never measured; settings `… + guards`). Calls 1-5: every gate `cargo energy gate --prebuilt DIR --min-pairs 3 --max-pairs 3 --threshold 1` (`study.sh`), \
         windows per benchmark and run `default` (as the benchmark's precision needs, 10 at least) or `--windows 3`, \
         `4`. Call 6: the gate's defaults as a user gets them (`windows` `gate`: 8 windows, at least 2 pairs, pairs \
         until every detectable change is at most twice the threshold), bounded by `--max-pairs 4`; calls 7 and 9 the \
         same with guards, call 8 with guards at `--windows 4`. Calls 11 and 12 the defaults again, with the harness \
         and cargo-energy of 892b9d94, which leave a settled benchmark out of later pairs (settings `… + settling`: \
         after each pair from the second, a benchmark whose detectable change reached the target is judged on the \
         pairs it ran and the next runs measure the others only), the builds again from the same clone. Calls 13-15 \
         (2026-12-02, the harness and cargo-energy of c171c536, settings `… + paired runs`): each run a run of a paired \
         sequence (criterion handed nothing, one counter interval of idle after each stretch) at the gate's new \
         default of 6 windows; calls 13-14 settled benchmarks on a moderated variance weighing the others as 4 \
         degrees of freedom, call 15 as 2 (today's rule, by which every verdict here is computed again). Calls 16-18 \
         (2026-12-02, the harness and cargo-energy of 51775baf, settings `… + lean warm-up`): the guard before window 0 \
         is the warm-up's last part (the warm-up's batches spend what it leaves, at least 25 ms, and stop at its end; \
         the guard's pace sizes the windows) at the gate's new default of 4 windows; the builds made again from the \
         same clone. Calls 19-21 (2026-12-02, the same builds, cargo-energy of c2f9dcb3, settings `… + lean warm-up \
         + 6 windows`): 6 windows, a benchmark settling only once its detectable change reached the \
         target. Calls 22-24 (2026-12-02, builds and cargo-energy of 84b312fe, settings `… + clear verdicts`): a \
         benchmark settles on a clear verdict too, every run with an idle tail. Call 25 (builds and cargo-energy of \
         3d8604c5, `… + lean runs`): the runs after the first pair lean (no idle tail, the idle carried). Calls 26-28 \
         (2026-12-02, the builds made again by `run_workflow.py build` and the same clone's `--build-only` with the \
         harness and cargo-energy of 020f508f, `… + no rails`): as call 25, paired runs recording no rail. Calls 29-31 \
         (2026-12-02, calls 26-28's builds, cargo-energy of a9737bb3, `… + shrunk period + 6 pairs`): each \
         benchmark's period effect shrunk by the spread of all of theirs, at most six pairs (`study.sh` with \
         `MAX_PAIRS=6`, the gate's default since). Every gate \
         is judged by today's rule: a settled benchmark keeps the verdict of the pair it settled \
         after; the replays settle a benchmark on a clear verdict too (a regression, or its change's 95 % upper \
         bound below the threshold: `energy_results::ab::settles`). Executables \
         stripped for transport. The workflow's own gate (`raw/workflow-gate.log`, the gate job's steps as a runner \
         runs them) is listed apart: its stop rule was the workflow's then (3 to 12 pairs, `--max-minutes 5`).\n"
    );
    // Calls 13-15's runs replayed at fewer windows and at the lean warm-up's run cost: the
    // evidence for the window count. Today's defaults' runs replayed by today's rule.
    let same_runs = windows_replay::replay_rows(
        &gates,
        DEFAULTS_6_WINDOWS,
        &[(0, 6), (0, 5), (0, 4), (1, 5), (0, 3)],
        Some(LEAN_WARMUP_4_WINDOWS),
        usize::MAX,
    )?;
    let precision_runs =
        windows_replay::replay_rows(&gates, SETTLED_ON_PRECISION, &[(0, 6), (0, 5), (0, 4)], None, usize::MAX)?;
    let today_runs = windows_replay::replay_rows(&gates, CLEAR_VERDICTS, &[(0, 6), (0, 5), (0, 4)], None, usize::MAX)?;
    summary_lines(&mut t, &gates, precision_runs.as_ref())?;
    let _ = writeln!(
        t,
        "| condition | windows | gates | benchmark-gates (N) | regressions | change: mean (sd) | detectable: median [max] | GPU time per gate | per 10 benchmarks |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|---|---|");
    for windows in SETTINGS {
        for kind in ["aa", "p1", "p2"] {
            let chosen: Vec<&StudyGate> = gates
                .iter()
                .filter(|g| g.kind == kind && g.windows == windows && g.name != "workflow" && g.report.is_some())
                .collect();
            if chosen.is_empty() {
                continue;
            }
            let changes: Vec<&PairedChange> =
                chosen.iter().flat_map(|g| g.report.as_ref().map(|r| r.changes.iter()).into_iter().flatten()).collect();
            let n = changes.len();
            let regressions = changes.iter().filter(|c| c.verdict == Verdict::Regression).count();
            let mean = changes.iter().map(|c| c.change_pct).sum::<f64>() / n as f64;
            let sd = (changes.iter().map(|c| (c.change_pct - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt();
            let mut detectable: Vec<f64> = changes.iter().map(|c| c.detectability.detectable_change_pct).collect();
            detectable.sort_by(f64::total_cmp);
            let wall: Vec<f64> = chosen.iter().filter_map(|g| g.report.as_ref().map(|r| r.wall_s)).collect();
            let per_gate = wall.iter().sum::<f64>() / wall.len() as f64;
            let per_bench = per_gate / (n as f64 / chosen.len() as f64);
            let _ = writeln!(
                t,
                "| {} | {} | {} | {n} | {regressions} of {n} | {mean:+.2} % ({sd:.2} %) | {:.2} % [{:.2} %] | {per_gate:.0} s | {:.0} s |",
                kind_label(kind),
                windows,
                chosen.len(),
                detectable[n / 2],
                detectable[n - 1],
                10.0 * per_bench
            );
        }
    }
    by_pairs_table(&mut t, &gates)?;
    settling_table(&mut t, &gates)?;
    prior_weight_table(&mut t, &gates)?;
    looks_table(&mut t, &gates)?;
    noise_table(&mut t, &gates);
    temperature::temperature_table(&mut t, &gates);
    paired_runs::run_cost_table(
        &mut t,
        &gates,
        &[
            DEFAULTS_BEFORE_PAIRED_RUNS,
            DEFAULTS_6_WINDOWS,
            LEAN_WARMUP_4_WINDOWS,
            SETTLED_ON_PRECISION,
            CLEAR_VERDICTS,
            LEAN_RUNS_WITH_RAILS,
            NO_RAILS,
            SHRUNK_PERIOD,
            SHRUNK_PERIOD_4_WINDOWS,
            TODAY_DEFAULTS,
        ],
    );
    paired_runs::window_prefix_table(&mut t, &gates, DEFAULTS_6_WINDOWS);
    paired_runs::window_prefix_table(&mut t, &gates, LEAN_WARMUP_4_WINDOWS);
    paired_runs::window_place_table(&mut t, &gates, &[DEFAULTS_6_WINDOWS, LEAN_WARMUP_4_WINDOWS]);
    if let Some(replay) = &same_runs {
        windows_replay::windows_replay_table(&mut t, DEFAULTS_6_WINDOWS, Some(LEAN_WARMUP_4_WINDOWS), replay);
    }
    if let Some(replay) =
        windows_replay::replay_rows(&gates, LEAN_WARMUP_4_WINDOWS, &[(0, 4), (0, 3), (1, 4)], None, usize::MAX)?
    {
        windows_replay::windows_replay_table(&mut t, LEAN_WARMUP_4_WINDOWS, None, &replay);
    }
    if let Some(replay) = &precision_runs {
        windows_replay::windows_replay_table(&mut t, SETTLED_ON_PRECISION, None, replay);
    }
    if let Some(replay) = &today_runs {
        windows_replay::windows_replay_table(&mut t, CLEAR_VERDICTS, None, replay);
    }
    if let Some(replay) =
        windows_replay::replay_rows(&gates, SHRUNK_PERIOD, &[(0, 6), (0, 5), (0, 4), (0, 3)], None, usize::MAX)?
    {
        windows_replay::windows_replay_table(&mut t, SHRUNK_PERIOD, None, &replay);
    }
    noise_by_benchmark(&mut t, &gates);
    period_table(&mut t, &gates);
    let _ = writeln!(t, "\nBy kind of benchmark (windows as found, all gates above):\n");
    let _ = writeln!(t, "| condition | compute-bound | memory-bound | library call |");
    let _ = writeln!(t, "|---|---|---|---|");
    for kind in ["aa", "p1", "p2"] {
        let mut cells = Vec::new();
        for bench in ["compute", "memory", "library"] {
            let changes: Vec<&PairedChange> = gates
                .iter()
                .filter(|g| g.kind == kind && g.name != "workflow")
                .filter_map(|g| g.report.as_ref())
                .flat_map(|r| r.changes.iter())
                .filter(|c| bench_kind(&c.id) == bench)
                .collect();
            let hit = changes.iter().filter(|c| c.verdict == Verdict::Regression).count();
            let mean = changes.iter().map(|c| c.change_pct).sum::<f64>() / changes.len().max(1) as f64;
            cells.push(format!("{hit} of {} regressions, mean {mean:+.2} %", changes.len()));
        }
        let _ = writeln!(t, "| {} | {} |", kind_label(kind), cells.join(" | "));
    }
    // The workflow's gate ran pairs until every benchmark's detectable change was at most
    // 1 %: judged again after each of its pairs, how many it would have caught then.
    if let Some(report) = gates.iter().find(|g| g.name == "workflow").and_then(|g| g.report.as_ref()) {
        let _ = writeln!(
            t,
            "\nThe workflow's gate (+2 %, default windows) judged again after each of its pairs (from its runs' raw \
             figures; pairs cost {:.0} s each on average):\n",
            report.wall_s / report.pairs.max(1) as f64
        );
        let _ = writeln!(
            t,
            "| pairs | caught (of {n}), own spread | caught, moderated | detectable (moderated): median [max] |",
            n = report.changes.len()
        );
        let _ = writeln!(t, "|---|---|---|---|");
        for k in 2..=report.pairs {
            let own = judged_after(report, k, Rule::OwnSpread)?;
            let moderated = judged_after(report, k, Rule::Moderated)?;
            let mut detectable: Vec<f64> = moderated.iter().map(|c| c.detectability.detectable_change_pct).collect();
            detectable.sort_by(f64::total_cmp);
            let _ = writeln!(
                t,
                "| {k} | {} | {} | {:.2} % [{:.2} %] |",
                regressions(&own),
                regressions(&moderated),
                detectable[detectable.len() / 2],
                detectable[detectable.len() - 1]
            );
        }
    }
    let _ = writeln!(t, "\nEvery gate:\n");
    let _ = writeln!(t, "| call | gate | condition | windows | exit | pairs | regressions | wall | stopped |");
    let _ = writeln!(t, "|---|---|---|---|---|---|---|---|---|");
    for g in &gates {
        let (pairs, regressions, stop) = match &g.report {
            Some(r) => {
                (r.pairs.to_string(), format!("{} of {}", r.regressions().len(), r.changes.len()), r.stop.clone())
            }
            None => ("—".into(), "—".into(), g.failure.clone().unwrap_or_else(|| "no report".into())),
        };
        let _ = writeln!(
            t,
            "| {} | `{}` | {} | {} | {} | {pairs} | {regressions} | {:.0} s | {} |",
            g.call,
            g.name,
            kind_label(&g.kind),
            g.windows,
            g.exit,
            g.seconds,
            stop.replace('|', "\\|")
        );
    }
    Ok(Page { path: PathBuf::from(CI_GATE_DIR).join("gpu-gates.md"), text: t })
}

/// How a benchmark's noise is estimated when a gate is judged again.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Its own pairs' spread alone (`paired_change`: with the period effect fitted from three pairs on).
    OwnSpread,
    /// The moderated variance `cargo energy gate` judges by ([`paired_changes`]).
    Moderated,
}

/// Each benchmark's first `pairs` pairs of a gate (fewer where it settled sooner).
fn first_pairs(report: &AbReport, pairs: usize) -> BTreeMap<String, Vec<PairFigures>> {
    report.changes.iter().map(|c| (c.id.clone(), c.pairs.iter().take(pairs).cloned().collect())).collect()
}

/// A gate judged again after its first `pairs` pairs, by `rule`.
fn judged_after(report: &AbReport, pairs: usize, rule: Rule) -> Result<Vec<PairedChange>> {
    let by_id = first_pairs(report, pairs);
    match rule {
        Rule::Moderated => paired_changes(by_id, report.threshold_pct),
        Rule::OwnSpread => by_id.into_iter().map(|(id, p)| paired_change(&id, p, report.threshold_pct)).collect(),
    }
}

/// Every gate judged again after each of its pairs from the second (today's moderated
/// variance; a benchmark that settled sooner on the pairs it ran): the regressions at each
/// look, and the benchmark-gates called a regression at any look. A gate that settles a
/// benchmark on a clear verdict ([`energy_results::ab::settles`]) ends it at the first look
/// that calls it a regression, so on unchanged code "at any look" bounds its false alarms.
fn looks_table(t: &mut String, gates: &[StudyGate]) -> Result<()> {
    let last_call = gates.iter().map(|g| g.call).max().unwrap_or(0);
    let _ = writeln!(
        t,
        "\nRegressions at each look: every gate of calls 1-{last_call} judged again after each of its pairs from the \
         second (today's moderated variance; a benchmark settled sooner judged on the pairs it ran), and the \
         benchmark-gates called a regression at one look or more. On unchanged code the last column bounds the \
         false alarms of a gate that ends a benchmark at the first look calling it a regression.\n"
    );
    let most = gates
        .iter()
        .filter(|g| g.name != "workflow")
        .filter_map(|g| g.report.as_ref())
        .map(|r| r.pairs)
        .max()
        .unwrap_or(4)
        .max(4);
    let later: String = (3..=most).map(|k| format!(" after {k} |")).collect();
    let _ = writeln!(t, "| condition | after 2 pairs |{later} at any look |");
    let _ = writeln!(t, "|---|---|{}---|", "---|".repeat(most - 2));
    for kind in ["aa", "p2", "p1"] {
        let chosen: Vec<&AbReport> = gates
            .iter()
            .filter(|g| g.kind == kind && g.name != "workflow")
            .filter_map(|g| g.report.as_ref())
            .filter(|r| r.pairs >= 2)
            .collect();
        let mut cells = Vec::new();
        let mut any: BTreeMap<(usize, String), bool> = BTreeMap::new();
        for look in 2..=most {
            let (mut hit, mut n) = (0, 0);
            for (i, r) in chosen.iter().enumerate() {
                if r.pairs < look {
                    continue;
                }
                for c in judged_after(r, look, Rule::Moderated)? {
                    n += 1;
                    let regression = c.verdict == Verdict::Regression;
                    hit += usize::from(regression);
                    *any.entry((i, c.id.clone())).or_default() |= regression;
                }
            }
            cells.push(format!("{hit} of {n}"));
        }
        let any_hit = any.values().filter(|v| **v).count();
        let _ = writeln!(t, "| {} | {} | {any_hit} of {} |", kind_label(kind), cells.join(" | "), any.len());
    }
    Ok(())
}

/// The weights the page compares the moderated variance at: the others as 4 degrees of
/// freedom (the rule until 2026-12-02) and today's.
const PRIOR_WEIGHTS: [f64; 2] = [4.0, POOLED_PRIOR_DF];

/// The moderated variance by the others' weight, every gate judged again after its first two
/// pairs: false alarms and significant changes either way on unchanged code, +2 % caught.
fn prior_weight_table(t: &mut String, gates: &[StudyGate]) -> Result<()> {
    let reports: Vec<(&StudyGate, &AbReport)> = gates
        .iter()
        .filter(|g| g.name != "workflow")
        .filter_map(|g| g.report.as_ref().map(|r| (g, r)))
        .filter(|(_, r)| r.pairs >= 2)
        .collect();
    let boards: std::collections::BTreeSet<&str> =
        reports.iter().flat_map(|(_, r)| r.runs.iter().map(|run| run.device.uuid.as_str())).collect();
    let mut calls: Vec<usize> = reports.iter().map(|(g, _)| g.call).collect();
    calls.dedup();
    let _ = writeln!(
        t,
        "The others' weight in the moderated variance, every gate of calls {}-{} ({} boards) judged again after its \
         first two pairs (today's weight: {}):\n",
        calls.first().copied().unwrap_or(0),
        calls.last().copied().unwrap_or(0),
        boards.len(),
        POOLED_PRIOR_DF
    );
    let _ = writeln!(
        t,
        "| weight (degrees of freedom) | A/A: regressions | A/A: significant either way | +2 %: caught | +1 %: caught |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|");
    for weight in PRIOR_WEIGHTS {
        let mut cells = Vec::new();
        for (kind, either_way) in [("aa", false), ("aa", true), ("p2", false), ("p1", false)] {
            let (mut hit, mut n) = (0, 0);
            for (_, r) in reports.iter().filter(|(g, _)| g.kind == kind) {
                let judged = paired_changes_weighted(first_pairs(r, 2), r.threshold_pct, weight)?;
                n += judged.len();
                hit += judged
                    .iter()
                    .filter(|c| {
                        if either_way {
                            c.verdict != Verdict::NotSignificant
                        } else {
                            c.verdict == Verdict::Regression
                        }
                    })
                    .count();
            }
            cells.push(format!("{hit} of {n}"));
        }
        let _ = writeln!(t, "| {weight} | {} |", cells.join(" | "));
    }
    let _ = writeln!(t);
    Ok(())
}

fn regressions(changes: &[PairedChange]) -> usize {
    changes.iter().filter(|c| c.verdict == Verdict::Regression).count()
}

/// The table of false alarms and power by pairs run: every study gate of one window
/// setting judged after 2, 3, … pairs by both rules, and what that many pairs cost.
fn by_pairs_table(t: &mut String, gates: &[StudyGate]) -> Result<()> {
    let _ = writeln!(
        t,
        "\nBy pairs run: every gate judged again after its first k pairs (from its runs' raw figures), by each \
         benchmark's own spread and by the moderated variance `cargo energy gate` judges by today \
         (`energy_results::ab::paired_changes`); both fit a period effect out of the spread from three pairs on \
         (the first run of a pair reading more than the second: one degree of freedom, so a benchmark's own spread \
         has 1 at three pairs; before 2026-12-01's third session the own spread alone, on 2, was the rule). The \
         GPU time is the first 2k runs' wall time, per 10 benchmarks.\n"
    );
    let _ = writeln!(
        t,
        "| windows | condition | pairs | benchmark-gates (N) | regressions, own spread | regressions, moderated | GPU time per 10 benchmarks |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|");
    let mut windows: Vec<&str> = gates.iter().map(|g| g.windows.as_str()).collect();
    windows.sort_unstable();
    windows.dedup();
    for w in windows {
        for kind in ["aa", "p1", "p2"] {
            let chosen: Vec<&AbReport> = gates
                .iter()
                .filter(|g| g.kind == kind && g.windows == w && g.name != "workflow")
                .filter_map(|g| g.report.as_ref())
                .collect();
            let Some(most) = chosen.iter().map(|r| r.pairs).min() else { continue };
            for k in 2..=most {
                let (mut n, mut own, mut moderated, mut wall, mut benches) = (0, 0, 0, 0.0, 0);
                for r in &chosen {
                    let o = judged_after(r, k, Rule::OwnSpread)?;
                    n += o.len();
                    own += regressions(&o);
                    moderated += regressions(&judged_after(r, k, Rule::Moderated)?);
                    wall += r.runs.iter().take(2 * k).map(|run| run.wall_s).sum::<f64>();
                    benches += r.changes.len();
                }
                let _ = writeln!(
                    t,
                    "| {w} | {} | {k} | {n} | {own} of {n} | {moderated} of {n} | {:.0} s |",
                    kind_label(kind),
                    10.0 * wall / benches as f64
                );
            }
        }
    }
    Ok(())
}

/// The study's gates of the window settings `labels` that left a report (the workflow's own
/// gate aside), each with its report, in the gates' order.
fn reports_of<'a>(gates: &'a [StudyGate], labels: &[&str]) -> Vec<(&'a StudyGate, &'a AbReport)> {
    gates
        .iter()
        .filter(|g| labels.contains(&g.windows.as_str()) && g.name != "workflow")
        .filter_map(|g| g.report.as_ref().map(|r| (g, r)))
        .collect()
}

/// The calls `gates` ran in, in order, each once (`19, 20, 21`).
fn calls_of<'a>(gates: impl IntoIterator<Item = &'a StudyGate>) -> String {
    let mut calls: Vec<String> = gates.into_iter().map(|g| g.call.to_string()).collect();
    calls.dedup();
    calls.join(", ")
}

/// One summary line of the gates of window setting `label` (`heading` with `{calls}`
/// replaced by their calls): regressions by condition, as today's rule judges them, gates
/// that stopped with an error, and the GPU time per 10 benchmarks by the pairs they ran.
fn defaults_line(t: &mut String, gates: &[StudyGate], label: &str, heading: &str) {
    let chosen: Vec<&StudyGate> = gates.iter().filter(|g| g.windows == label).collect();
    let reports: Vec<&AbReport> = chosen.iter().filter_map(|g| g.report.as_ref()).collect();
    if reports.is_empty() {
        return;
    }
    let count = |kind: &str| -> (usize, usize) {
        chosen
            .iter()
            .filter(|g| g.kind == kind)
            .filter_map(|g| g.report.as_ref())
            .fold((0, 0), |(hit, n), r| (hit + r.regressions().len(), n + r.changes.len()))
    };
    let per_ten = |r: &&AbReport| 10.0 * r.wall_s / r.changes.len() as f64;
    let mean = reports.iter().map(per_ten).sum::<f64>() / reports.len() as f64;
    let at = |pairs: usize| -> String {
        let v: Vec<f64> = reports.iter().filter(|r| r.pairs == pairs).map(per_ten).collect();
        if v.is_empty() {
            "—".into()
        } else {
            format!("{:.0} s in {} of {} gates", v.iter().sum::<f64>() / v.len() as f64, v.len(), reports.len())
        }
    };
    let ((aa, aa_n), (p1, p1_n), (p2, p2_n)) = (count("aa"), count("p1"), count("p2"));
    let failed = chosen.len() - reports.len();
    let failed =
        if failed > 0 { format!("; {failed} gate(s) stopped with an error (listed below)") } else { String::new() };
    let most = reports.iter().map(|r| r.pairs).max().unwrap_or(4).max(4);
    let stops: Vec<String> = (2..=most).map(|k| format!("after {k}: {}", at(k))).collect();
    let _ = writeln!(
        t,
        "**{}: A/A {aa} of {aa_n} regressions, +2 % {p2} of {p2_n} caught, +1 % {p1} of {p1_n}; GPU time per 10 \
         benchmarks {mean:.0} s on average (stopped {}){failed}.**\n",
        heading.replace("{calls}", &calls_of(chosen.iter().copied())),
        stops.join("; ")
    );
}

/// What lean runs save, measured on the gates with lean runs (today's defaults and call 25's,
/// which still recorded rails): their runs of every
/// benchmark with an idle tail (the first pair) against their lean runs of every benchmark
/// (later pairs), per benchmark-run; and that saving applied to the runs after the first pair
/// of the gates of [`CLEAR_VERDICTS`] (every run with a tail): an estimate, not a measurement.
fn lean_runs_line(t: &mut String, gates: &[StudyGate]) {
    let today: Vec<&AbReport> =
        reports_of(gates, &[LEAN_RUNS_WITH_RAILS, NO_RAILS]).into_iter().map(|(_, r)| r).collect();
    let before = reports_of(gates, &[CLEAR_VERDICTS]);
    let Some(all) = today.iter().map(|r| r.changes.len()).max() else { return };
    let walls = |lean: bool| -> Vec<f64> {
        today
            .iter()
            .flat_map(|r| r.runs.iter())
            .filter(|run| run.benchmarks.len() == all && (run.run > 2) == lean)
            .map(|run| run.wall_s)
            .collect()
    };
    let (tail, lean) = (walls(false), walls(true));
    if tail.is_empty() || lean.is_empty() || before.is_empty() {
        return;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let saving_s = (mean(&tail) - mean(&lean)) / all as f64;
    let per_ten = |r: &AbReport| {
        let later: usize = r.runs.iter().filter(|run| run.run > 2).map(|run| run.benchmarks.len()).sum();
        10.0 * (r.wall_s - saving_s * later as f64) / r.changes.len() as f64
    };
    let by_kind: Vec<String> = ["aa", "p2", "p1"]
        .iter()
        .filter_map(|kind| {
            let v: Vec<f64> = before.iter().filter(|(g, _)| g.kind == *kind).map(|(_, r)| per_ten(r)).collect();
            (!v.is_empty()).then(|| format!("{} {:.0} s", kind_label(kind), mean(&v)))
        })
        .collect();
    let _ = writeln!(
        t,
        "**Lean runs, measured (today's defaults): a run of all {all} benchmarks took {:.1} s with idle tails ({} runs \
         of the first pair) and {:.1} s lean ({} later runs), {:.2} s less a benchmark-run. Applied to the runs after \
         the first pair of calls {}'s gates (an estimate, not a measurement): GPU time per 10 benchmarks {:.0} s on \
         average ({}).**\n",
        mean(&tail),
        tail.len(),
        mean(&lean),
        lean.len(),
        saving_s,
        calls_of(before.iter().map(|(g, _)| *g)),
        mean(&before.iter().map(|(_, r)| per_ten(r)).collect::<Vec<_>>()),
        by_kind.join("; ")
    );
}

/// The spread of a pair's difference by its place in the gate, over the gates of the settings
/// `labels`: each benchmark's differences about their mean (scaled by `n / (n − 1)`), rms over
/// benchmarks and gates, for the first pair and for the later ones; and how many differences
/// each rests on. `None` without a benchmark of two pairs or more.
fn first_and_later_pair_sd(gates: &[StudyGate], labels: &[&str]) -> Option<((f64, usize), (f64, usize))> {
    let (mut first, mut later) = ((0.0, 0usize), (0.0, 0usize));
    for change in reports_of(gates, labels).into_iter().flat_map(|(_, r)| r.changes.iter()) {
        let n = change.pairs.len();
        if n < 2 {
            continue;
        }
        let mean = change.pairs.iter().map(|p| p.difference_pct).sum::<f64>() / n as f64;
        for p in &change.pairs {
            let squared = (p.difference_pct - mean).powi(2) * n as f64 / (n as f64 - 1.0);
            let place = if p.pair == 1 { &mut first } else { &mut later };
            place.0 += squared;
            place.1 += 1;
        }
    }
    let rms = |(sum, count): (f64, usize)| ((sum / count as f64).sqrt(), count);
    (first.1 > 0 && later.1 > 0).then(|| (rms(first), rms(later)))
}

/// Whether lean runs add noise: the pair spread of the first pair (runs with idle tails) and
/// of the later ones (lean), in the gates with lean runs, beside the same split in the gates
/// whose every run had a tail (a board's own difference between a gate's first and later
/// pairs).
fn lean_noise_line(t: &mut String, gates: &[StudyGate]) {
    let (Some(lean), Some(tails)) = (
        first_and_later_pair_sd(gates, &[LEAN_RUNS_WITH_RAILS, NO_RAILS]),
        first_and_later_pair_sd(gates, &[CLEAR_VERDICTS]),
    ) else {
        return;
    };
    let calls = |labels: &[&str]| calls_of(reports_of(gates, labels).into_iter().map(|(g, _)| g));
    let _ = writeln!(
        t,
        "**Noise of lean runs: a pair's difference about its benchmark's mean in the gates with lean runs (calls {}) \
         spread {:.2} % in the first pair (idle tails; {} differences) and {:.2} % in the later pairs (lean; {}); in \
         the gates with a tail in every run (calls {}) {:.2} % ({}) and {:.2} % ({}).**\n",
        calls(&[LEAN_RUNS_WITH_RAILS, NO_RAILS]),
        lean.0 .0,
        lean.0 .1,
        lean.1 .0,
        lean.1 .1,
        calls(&[CLEAR_VERDICTS]),
        tails.0 .0,
        tails.0 .1,
        tails.1 .0,
        tails.1 .1,
    );
}

/// The caps on pairs [`pair_cap_table`] replays (the cap the settings ran with,
/// [`STUDY_MAX_PAIRS`], last).
const PAIR_CAPS: [usize; 4] = [3, 4, 5, STUDY_MAX_PAIRS];

/// The cap on pairs calls 29-34 ran with (`study.sh` with `MAX_PAIRS=6`: the gate's default).
const STUDY_MAX_PAIRS: usize = 6;

/// The time a gate may take per 10 benchmarks (issue 58's goal), s.
const GOAL_PER_TEN_S: f64 = 60.0;

/// The share of +2 % changes a gate must catch (issue 58's goal).
const GOAL_CAUGHT_AT_2_PCT: f64 = 0.95;

/// One cap on pairs replayed on one board ([`pair_cap_table`]).
struct CapOutcome {
    cap: usize,
    /// GPU time per 10 benchmarks, s.
    per_ten_s: f64,
    /// The +2 % changes caught, of how many; `None` without +2 % gates.
    caught: Option<(usize, usize)>,
}

/// The gates of six pairs at most (calls 29-32 with the fixed guard after, from call 33
/// today's), board by board, replayed from their own runs stopping after 3, 4, 5 and 6 pairs
/// at most: what each cap on pairs buys and costs on each board; then, for each board, the
/// cap a time of [`GOAL_PER_TEN_S`] per 10 benchmarks allows and what it catches.
fn pair_cap_table(t: &mut String, gates: &[StudyGate]) -> Result<()> {
    // Board by board (the GPU's UUID), each setting apart: a board's gates share its noise.
    // Groups in the order of their first call.
    let mut groups: Vec<(String, Vec<&StudyGate>)> = Vec::new();
    for label in [SHRUNK_PERIOD, TODAY_DEFAULTS] {
        let first = groups.len();
        for gate in paired_runs::with_windows(gates, label) {
            let Some(report) = &gate.report else { continue };
            let board: String = report.device.uuid.chars().take(12).collect();
            match groups[first..].iter_mut().find(|(b, _)| *b == board) {
                Some((_, chosen)) => chosen.push(gate),
                None => groups.push((board, vec![gate])),
            }
        }
    }
    // Each board's replays, one per cap.
    let mut boards: Vec<(&str, Vec<(usize, windows_replay::Replay)>)> = Vec::new();
    for (board, chosen) in &groups {
        let mut replays = Vec::new();
        for cap in PAIR_CAPS {
            if let Some(r) = windows_replay::replay_chosen(chosen.clone(), &[(0, 6)], None, cap)? {
                replays.push((cap, r));
            }
        }
        if !replays.is_empty() {
            boards.push((board, replays));
        }
    }
    if boards.is_empty() {
        return Ok(());
    }
    let costs: Vec<String> = boards
        .iter()
        .flat_map(|(board, replays)| {
            replays.iter().filter(|(cap, _)| *cap == STUDY_MAX_PAIRS).map(move |(_, r)| (board, r))
        })
        .map(|(board, r)| {
            format!("calls {} ({board}…): {:.2} s a run and {:.2} s a benchmark", r.calls, r.fit.intercept, r.fit.slope)
        })
        .collect();
    let _ = writeln!(
        t,
        "**Pairs bought with time, board by board: the gates of six pairs at most (calls 29-32 with the fixed guard \
         after, from call 33 today's defaults) replayed from their own runs as the gate runs today, each gate \
         stopping after its k-th pair at most (GPU time from each board's least-squares run cost; the rows at \
         {STUDY_MAX_PAIRS} are the gates as run, judged by today's rule). Run cost, {}.**\n",
        costs.join("; ")
    );
    let _ = writeln!(
        t,
        "| calls | board | pairs at most | A/A (unchanged): regressions | +2 % (102 calls): caught | +1 % (101 calls): caught | GPU time per 10 benchmarks |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|");
    let count = |r: &windows_replay::Replay, kind: &str| {
        r.rows.iter().find(|row| row.kind == kind).map(|row| (row.regressions, row.benchmarks))
    };
    let cell = |c: Option<(usize, usize)>| c.map_or("—".to_string(), |(k, n)| format!("{k} of {n}"));
    let mut verdicts = Vec::new();
    let mut priced_out = Vec::new();
    for (board, replays) in &boards {
        // Each cap's row: the cap, the GPU time per 10 benchmarks, and the +2 % changes caught.
        let mut capped: Vec<CapOutcome> = Vec::new();
        for (cap, r) in replays {
            let refs: Vec<&windows_replay::ReplayRow> = r.rows.iter().collect();
            let (_, time) = replay_totals(&refs);
            let caught = count(r, "p2");
            let _ = writeln!(
                t,
                "| {} | {board}… | {cap} | {} | {} | {} | {time:.0} s |",
                r.calls,
                cell(count(r, "aa")),
                cell(caught),
                cell(count(r, "p1")),
            );
            capped.push(CapOutcome { cap: *cap, per_ten_s: time, caught });
        }
        let calls = &replays[0].1.calls;
        let tried = capped.iter().any(|c| c.caught.is_some_and(|(_, n)| n > 0));
        let within_time =
            capped.iter().rfind(|c| c.per_ten_s <= GOAL_PER_TEN_S).map(|c| (c.cap, c.per_ten_s, c.caught));
        let powerful = capped
            .iter()
            .find(|c| c.caught.is_some_and(|(k, n)| n > 0 && k as f64 >= GOAL_CAUGHT_AT_2_PCT * n as f64))
            .map(|c| (c.cap, c.per_ten_s));
        let time_part = match within_time {
            Some((cap, time, caught)) if tried => {
                format!("within {GOAL_PER_TEN_S:.0} s per 10 benchmarks at {cap} pairs at most ({time:.0} s), +2 % caught {}", cell(caught))
            }
            Some((cap, time, _)) => {
                format!("within {GOAL_PER_TEN_S:.0} s per 10 benchmarks at {cap} pairs at most ({time:.0} s)")
            }
            None => format!("over {GOAL_PER_TEN_S:.0} s per 10 benchmarks at every cap"),
        };
        let power_part = match powerful {
            _ if !tried => "no +2 % gates".to_string(),
            Some((cap, time)) => format!(
                "+2 % caught {:.0} % of the time or more from {cap} pairs at most ({time:.0} s)",
                100.0 * GOAL_CAUGHT_AT_2_PCT
            ),
            None => format!("+2 % caught less than {:.0} % of the time at every cap", 100.0 * GOAL_CAUGHT_AT_2_PCT),
        };
        if tried && powerful.is_none_or(|(_, time)| time > GOAL_PER_TEN_S) {
            priced_out.push(calls.clone());
        }
        verdicts.push(format!("calls {calls}: {time_part}; {power_part}"));
    }
    let both = if priced_out.is_empty() {
        "every board meets both at some cap".to_string()
    } else {
        format!(
            "no cap meets both on calls {} (the pairs a +2 % change needs there cost more than the goal's time)",
            priced_out.join(" and ")
        )
    };
    let _ = writeln!(t, "\nBoth goals at once: {}; {both}.\n", verdicts.join("; "));
    Ok(())
}

/// Each condition's regressions and GPU time in `rows` (A/A, +2 %, +1 %), and the GPU time per
/// 10 benchmarks over all of them.
fn replay_totals(rows: &[&windows_replay::ReplayRow]) -> (String, f64) {
    let n: usize = rows.iter().map(|r| r.benchmarks).sum();
    let time: f64 = rows.iter().map(|r| r.per_ten_s * r.benchmarks as f64).sum();
    let text: Vec<String> = ["aa", "p2", "p1"]
        .iter()
        .filter_map(|kind| rows.iter().find(|r| r.kind == *kind))
        .map(|r| format!("{} {} of {}, {:.0} s", kind_label(r.kind), r.regressions, r.benchmarks, r.per_ten_s))
        .collect();
    (text.join("; "), time / n.max(1) as f64)
}

/// Today's rule replayed on the runs settled on precision only (calls 19-21): a benchmark settles on a clear
/// verdict too ([`energy_results::ab::settles`]), where the gates as run settled it only
/// once its detectable change reached the target; the GPU time at those runs' own cost.
fn clear_verdict_line(t: &mut String, replay: &windows_replay::Replay) {
    let rows: Vec<&windows_replay::ReplayRow> = replay.rows.iter().filter(|r| r.part == (0, replay.most)).collect();
    let cut: usize = rows.iter().map(|r| r.cut_short).sum();
    let (text, time) = replay_totals(&rows);
    let _ = writeln!(
        t,
        "**Today's rule replayed on the runs settled on precision only (calls {}'s gates replayed from their runs, a \
         benchmark settling on a clear verdict too: a regression, or its change's 95 % upper bound below the \
         threshold; GPU time from the runs' least-squares cost): {}; GPU time per 10 benchmarks {:.0} s on average; {cut} benchmark-gate(s) cut short.**\n",
        replay.calls,
        text,
        time
    );
}

/// The page's two summary lines, quoted by the GUIDE (a test holds them to the page): the
/// gate's defaults as they ran, and the two rules at three pairs over every gate that ran
/// three or more.
fn summary_lines(t: &mut String, gates: &[StudyGate], precision_runs: Option<&windows_replay::Replay>) -> Result<()> {
    defaults_line(
        t,
        gates,
        TODAY_DEFAULTS,
        "Today's defaults as they ran (calls {calls}: 6 windows, the guard ending the warm-up, paired runs, a benchmark settled on a clear verdict or once its detectable change reached the target, the runs after the first pair lean: no idle tail; no rails read in paired runs; each benchmark's period effect shrunk by the spread of all of theirs; at most six pairs; the guard after the windows run to the counter's tick after them)",
    );
    pair_cap_table(t, gates)?;
    defaults_line(
        t,
        gates,
        SHRUNK_PERIOD,
        "A fixed guard of one counter period after the windows, as they ran (calls {calls}: as today but the fixed guard)",
    );
    paired_runs::lean_gap_line(t, gates, &[SHRUNK_PERIOD, TODAY_DEFAULTS]);
    defaults_line(
        t,
        gates,
        SHRUNK_PERIOD_4_WINDOWS,
        "The same at 4 windows, as they ran (calls {calls}, its gates interleaved with the 6-window ones of that call on one board)",
    );
    defaults_line(
        t,
        gates,
        NO_RAILS,
        "Four pairs at most, settled by a period effect fitted in full, as they ran (calls {calls}; their verdicts judged again by today's rule)",
    );
    defaults_line(
        t,
        gates,
        LEAN_RUNS_WITH_RAILS,
        "Lean runs, the paired runs still recording rails, as they ran (calls {calls}: as today but rails read)",
    );
    defaults_line(
        t,
        gates,
        CLEAR_VERDICTS,
        "Clear verdicts, every run with an idle tail, as they ran (calls {calls}: as today but no lean runs)",
    );
    lean_runs_line(t, gates);
    lean_noise_line(t, gates);
    defaults_line(
        t,
        gates,
        SETTLED_ON_PRECISION,
        "Settled on precision only, as they ran (calls {calls}: as today but a benchmark settled only once its detectable change reached the target)",
    );
    if let Some(replay) = precision_runs {
        clear_verdict_line(t, replay);
    }
    defaults_line(
        t,
        gates,
        DEFAULTS_6_WINDOWS,
        "The gate's defaults at their 6 windows as they ran (calls {calls}: paired runs, settled benchmarks left out, the guard after the whole warm-up)",
    );
    defaults_line(
        t,
        gates,
        LEAN_WARMUP_4_WINDOWS,
        "The lean warm-up at 4 windows (calls {calls}: the guard ending the warm-up; then the default went back to 6 windows)",
    );
    defaults_line(
        t,
        gates,
        DEFAULTS_BEFORE_PAIRED_RUNS,
        "Before paired runs (calls {calls}: 8 windows, criterion handed the windows, two idle intervals)",
    );
    let mut cells = Vec::new();
    for kind in ["aa", "p2", "p1"] {
        let (mut own, mut moderated, mut n) = (0, 0, 0);
        for r in gates.iter().filter(|g| g.kind == kind && g.name != "workflow").filter_map(|g| g.report.as_ref()) {
            // Three pairs of every benchmark: not a gate that left settled benchmarks out.
            if r.pairs < 3 || !r.settled.is_empty() {
                continue;
            }
            let o = judged_after(r, 3, Rule::OwnSpread)?;
            n += o.len();
            own += regressions(&o);
            moderated += regressions(&judged_after(r, 3, Rule::Moderated)?);
        }
        cells.push(format!(
            "{}: {moderated} of {n} moderated, {own} of {n} on each benchmark's own spread",
            kind_label(kind)
        ));
    }
    let last_call = gates.iter().map(|g| g.call).max().unwrap_or(0);
    let _ = writeln!(
        t,
        "**At three pairs, every gate of calls 1-{last_call} that ran every benchmark three pairs or more (all \
         windows): {}.**\n",
        cells.join("; ")
    );
    Ok(())
}

/// Each benchmark's noise by window setting: the spread of its pair differences (pooled over
/// the gates of that setting), beside what its runs' own intervals predict for it
/// (`√2 ·` the within-run standard error, from the 95 % interval on its windows' degrees of
/// freedom). Where the pairs spread more than the runs predict, the runs differ from each
/// other by more than their windows do: no window count removes that, only pairs.
fn noise_by_benchmark(t: &mut String, gates: &[StudyGate]) {
    let settings: Vec<&str> = SETTINGS
        .into_iter()
        .filter(|w| *w != "default" && gates.iter().any(|g| g.windows == *w && g.report.is_some()))
        .collect();
    let _ = writeln!(
        t,
        "\nEach benchmark's noise by setting: the spread of its pair differences (pooled over the gates of the \
         setting), and in brackets what its runs' own intervals predict for it (√2 × the within-run standard \
         error). A spread well above the prediction is a difference between runs (processes) that no window count \
         removes.\n"
    );
    let _ = writeln!(t, "| benchmark | {} |", settings.join(" | "));
    let _ = writeln!(t, "|---|{}", "---|".repeat(settings.len()));
    let mut ids: Vec<&str> =
        gates.iter().filter_map(|g| g.report.as_ref()).flat_map(|r| r.changes.iter().map(|c| c.id.as_str())).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let mut cells = Vec::new();
        for w in &settings {
            let (mut squares, mut df, mut predicted, mut runs) = (0.0, 0.0, 0.0, 0usize);
            for (_, r) in reports_of(gates, &[*w]) {
                if let Some((s, d)) =
                    r.changes.iter().find(|c| c.id == id).map(squares_about_mean).filter(|(_, d)| *d > 0.0)
                {
                    squares += s;
                    df += d;
                }
                for run in &r.runs {
                    if let Some(se) = run.benchmarks.get(id).and_then(|b| b.within_run_se_pct()) {
                        predicted += 2.0 * se * se;
                        runs += 1;
                    }
                }
            }
            cells.push(if df == 0.0 {
                "—".to_string()
            } else {
                format!("{:.2} % ({:.2} %)", (squares / df).sqrt(), (predicted / runs.max(1) as f64).sqrt())
            });
        }
        let _ = writeln!(t, "| `{id}` | {} |", cells.join(" | "));
    }
}

/// The squared deviations of a benchmark's pair differences about their mean, and their
/// degrees of freedom (`n − 1`): its plain spread, before any period effect is fitted.
fn squares_about_mean(c: &PairedChange) -> (f64, f64) {
    let n = c.pairs.len() as f64;
    let mean = c.pairs.iter().map(|p| p.difference_pct).sum::<f64>() / n;
    (c.pairs.iter().map(|p| (p.difference_pct - mean).powi(2)).sum(), n - 1.0)
}

/// The period effect by call: the variance of one pair's difference about its mean (on
/// `n − 1`), pooled over every benchmark of the call's gates of three pairs or more that ran
/// both orders, beside its variance once the period effect is fitted out (`dᵢ = c + sᵢ·δ`,
/// on `n − 2`), and the fitted effect itself (how much more the first run of a pair reads).
fn period_table(t: &mut String, gates: &[StudyGate]) {
    let _ = writeln!(
        t,
        "\nThe period effect by call (every benchmark of every gate of three pairs or more): the variance of a \
         pair's difference about the benchmark's mean, and about the fit with a period effect (the first run of a \
         pair reading more than the second, whichever side), pooled; and the effect itself, the first run's excess \
         over the second.\n"
    );
    let _ = writeln!(
        t,
        "| call | benchmark-gates | variance, plain | variance, period fitted | period effect: mean (sd) |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|");
    let mut calls: Vec<usize> = gates.iter().map(|g| g.call).collect();
    calls.dedup();
    for call in calls {
        let (mut plain, mut plain_df, mut fitted, mut fitted_df) = (0.0, 0.0, 0.0, 0.0);
        let mut effects = Vec::new();
        for r in gates.iter().filter(|g| g.call == call).filter_map(|g| g.report.as_ref()) {
            for c in &r.changes {
                // Fitted from three pairs on, once both orders ran: the gate's own rule.
                let fit = period_fit(&c.pairs);
                let Some(period) = fit.period else { continue };
                let (squares, df) = squares_about_mean(c);
                plain += squares;
                plain_df += df;
                fitted += fit.variance * fit.df;
                fitted_df += fit.df;
                effects.push(period);
            }
        }
        if effects.is_empty() {
            continue;
        }
        let m = effects.iter().sum::<f64>() / effects.len() as f64;
        let sd = (effects.iter().map(|e| (e - m).powi(2)).sum::<f64>() / (effects.len() as f64 - 1.0).max(1.0)).sqrt();
        let _ = writeln!(
            t,
            "| {call} | {} | {:.3} %² | {:.3} %² | {m:+.2} % ({sd:.2} %) |",
            effects.len(),
            plain / plain_df,
            fitted / fitted_df
        );
    }
}

/// A run's noise and cost by windows per benchmark: the spread of the pair differences (rms
/// over every benchmark of every gate with that setting), and a run's wall time per
/// benchmark.
fn noise_table(t: &mut String, gates: &[StudyGate]) {
    let _ = writeln!(
        t,
        "\nNoise and cost by windows per benchmark and run (every gate of that setting, every pair it ran; the \
         calls' boards as listed above): the spread of one pair's difference, rms over benchmarks and gates, and a \
         run's wall time per benchmark (busy windows of ~0.1 s each, plus the fixed cost of a benchmark and run).\n"
    );
    let _ = writeln!(t, "| windows | gates | pair difference sd (rms) | run wall time per benchmark |");
    let _ = writeln!(t, "|---|---|---|---|");
    for w in SETTINGS {
        let reports: Vec<&AbReport> = reports_of(gates, &[w]).into_iter().map(|(_, r)| r).collect();
        if reports.is_empty() {
            continue;
        }
        let mut variances = Vec::new();
        let mut per_bench = Vec::new();
        for r in &reports {
            for c in &r.changes {
                let (squares, df) = squares_about_mean(c);
                variances.push(squares / df);
            }
            per_bench.extend(r.runs.iter().map(|run| run.wall_s / run.benchmarks.len().max(1) as f64));
        }
        let rms = (variances.iter().sum::<f64>() / variances.len() as f64).sqrt();
        let wall = per_bench.iter().sum::<f64>() / per_bench.len() as f64;
        let _ = writeln!(t, "| {w} | {} | {rms:.2} % | {wall:.2} s |", reports.len());
    }
}
