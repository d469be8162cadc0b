//! The verdict experiment of issue 32: an FMA loop with a work knob (0, +1, +2 % loop
//! iterations: `fma0`/`fma1`/`fma2`, FMA_ITERS 8192/8274/8356) measured on a GPU by
//! `exp.sh` (docs/results/2026-11-25-h100-verdicts/): one process per run, in blocks
//! A B B A A B B A of one level, each cycle's first block from a cooled board. From those
//! runs, with the harness's own code:
//! - **plain compare**: each A-first pair of a block (pairs 1 and 3) as two result sets,
//!   compared as `cargo energy compare` does, on the raw energy per launch;
//! - **temperature-normalized compare**: the same pairs with each result's energy at 50 °C
//!   (the board's dP/dT fitted on the calibration runs, role K: another kernel, the FMA
//!   loop without optimization);
//! - **paired runs**: each block's four pairs as `cargo energy ab` takes them (its
//!   statistics and stopping rule: at least 3 pairs, stop when the detectable change is at
//!   most 1 %; a block holds 4, so at most 4 here);
//! - **Zeus-style**: cool-down (20 s) before each run, one A and one B, compared plainly.
//!
//! Every comparison uses threshold [`THRESHOLD_PCT`]; a regression verdict at level 0 is a
//! false alarm, at +1 and +2 % a detection. A comparison is *cold* when its first run began
//! after [`COLD_IDLE_S`] or more of idle (a fixed cool-down, or the machine's start); the
//! die itself reads near idle within 2 s of a kernel's end, the board does not.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use energy_harness::unstable::engine::{fit_thermal, normalize, ThermalCalibration, ThermalPoint, THERMAL_SCHEMA};
use energy_harness::unstable::report::paired::{paired_change, AbReport, BenchFigure, PairFigures, RunFigures, Side};
use energy_harness::unstable::report::{compare, compare_with_baselines, ResultSet, Verdict};
use energy_harness::{Error, ErrorKind, Result, ResultFile};

/// The regression threshold of every comparison here, percent: the practical floor below
/// the +1 % the experiment asks to catch.
pub const THRESHOLD_PCT: f64 = 0.5;
/// The paired mode's detectable-change target, percent (`cargo energy ab --target`).
pub const PAIRED_TARGET_PCT: f64 = 1.0;
/// Idle before a comparison's first run that makes it a cold start, s.
pub const COLD_IDLE_S: f64 = 20.0;
/// Loop iterations of the three executables.
pub const ITERATIONS: [u32; 3] = [8192, 8274, 8356];

/// One process of the experiment (a line of runs.tsv) and its result.
#[derive(Clone, Debug)]
pub struct Run {
    /// The call it belongs to (b1c1, …).
    pub tag: String,
    /// Its number in the call.
    pub n: u32,
    /// Cycle (or `calib`, `coldhot`, `zN` for Zeus trials).
    pub cycle: String,
    /// Block within the call.
    pub block: String,
    /// Knob level: 0, 1 or 2 (% more iterations for B).
    pub level: usize,
    /// A (fma0), B (`fma<level>`), K (calibration kernel), V (cold→hot check, fma0).
    pub role: char,
    /// Pair within the block (1-4), 0 outside blocks.
    pub pair: u32,
    /// Whether its block started right after a cool-down (or `zeus` for Zeus trials).
    pub cold: String,
    /// Start and end, ns since the epoch.
    pub start_ns: u128,
    /// End, ns since the epoch.
    pub end_ns: u128,
    /// Its result, when the process succeeded.
    pub result: Option<ResultFile>,
    /// Idle since the previous process of its call ended, s (infinite for a call's first).
    pub idle_before_s: f64,
}

impl Run {
    /// Wall time of the process, s.
    pub fn wall_s(&self) -> f64 {
        (self.end_ns.saturating_sub(self.start_ns)) as f64 * 1e-9
    }
}

/// Reads one unpacked call directory (runs.tsv and res/NNNN.json).
pub fn read_call(dir: &Path) -> Result<Vec<Run>> {
    let tsv = dir.join("runs.tsv");
    let text = std::fs::read_to_string(&tsv).map_err(|e| Error::io(&tsv, "read the runs", e))?;
    let bad = |line: usize, what: &str| Error::new(ErrorKind::Format, format!("{}:{line}: {what}", tsv.display()));
    let mut runs: Vec<Run> = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 12 {
            return Err(bad(i + 1, "expected 12 tab-separated fields"));
        }
        let num = |k: usize| f[k].parse::<u128>().map_err(|_| bad(i + 1, &format!("field {} is not a number", k + 1)));
        let n = num(0)? as u32;
        let exit = f[11].parse::<i32>().map_err(|_| bad(i + 1, "bad exit status"))?;
        let path = dir.join("res").join(format!("{n:04}.json"));
        let result = if exit == 0 && path.exists() { Some(ResultFile::read_json(&path)?) } else { None };
        let start_ns = num(8)?;
        let idle_before_s = runs.last().map_or(f64::INFINITY, |p| start_ns.saturating_sub(p.end_ns) as f64 * 1e-9);
        runs.push(Run {
            idle_before_s,
            tag: f[1].to_string(),
            n,
            cycle: f[2].to_string(),
            block: f[3].to_string(),
            level: num(4)? as usize,
            role: f[5].chars().next().ok_or_else(|| bad(i + 1, "no role"))?,
            pair: num(6)? as u32,
            cold: f[7].to_string(),
            start_ns,
            end_ns: num(9)?,
            result,
        });
    }
    // The call's tag: its runs' (exp.sh writes it on every line), else the folder's name.
    let tag = runs
        .first()
        .map(|r| r.tag.clone())
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    runs.extend(read_ab_first_pairs(dir, &tag)?);
    Ok(runs)
}

/// A run kept from a `cargo energy ab` invocation, checked against the figure its report
/// holds for it (so a file from another run is refused).
fn read_ab_run(path: &Path, figures: &RunFigures) -> Result<ResultFile> {
    let result = ResultFile::read_json(path)?;
    let held = figures.benchmarks.get(&result.id).map(|f| f.energy_j);
    if held.is_none_or(|e| (e - result.energy_j.mean).abs() > 1e-9 * e.abs().max(1e-12)) {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{}: its energy is not the one its `ab` report holds for run {}", path.display(), figures.run),
        ));
    }
    Ok(result)
}

/// The first pair (A then B) of each cold `cargo energy ab` invocation of a call
/// (`ab/<n>-cold-level<L>.run1.json` and `.run2.json` beside its `.ab.json`, kept by
/// `exp.sh`'s `coldab` mode): two runs after a 20 s cool-down, compared plainly and
/// normalized like any other cold pair. Their wall times are the processes' as `ab`
/// recorded them; each pair is a block of its own (number 100000 + the invocation).
fn read_ab_first_pairs(dir: &Path, tag: &str) -> Result<Vec<Run>> {
    let ab = dir.join("ab");
    let mut runs = Vec::new();
    for first in ab_files(dir, ".run1.json") {
        let stem = first.file_name().map(|n| n.to_string_lossy().replace(".run1.json", "")).unwrap_or_default();
        let bad = |what: &str| Error::new(ErrorKind::Format, format!("{}: {what}", first.display()));
        let (invocation, level) = stem
            .split_once("-cold-level")
            .and_then(|(n, l)| Some((n.parse::<u32>().ok()?, l.parse::<usize>().ok()?)))
            .ok_or_else(|| bad("expected <n>-cold-level<L>.run1.json"))?;
        let second = ab.join(format!("{stem}.run2.json"));
        let report_path = ab.join(format!("{stem}.ab.json"));
        if !second.exists() || !report_path.exists() {
            return Err(bad("its .run2.json or .ab.json is missing"));
        }
        let report = read_ab_report(&report_path)?;
        let [r1, r2, ..] = report.runs.as_slice() else { return Err(bad("its report holds fewer than two runs")) };
        if r1.side != Side::A || r2.side != Side::B {
            return Err(bad("its report's first two runs are not A then B"));
        }
        let ns = |s: f64| (s * 1e9).round() as u128;
        for (k, (path, figures, role)) in [(&first, r1, 'A'), (&second, r2, 'B')].into_iter().enumerate() {
            runs.push(Run {
                tag: tag.to_string(),
                n: 100_000 + 2 * invocation + k as u32,
                cycle: format!("ab{invocation}"),
                block: (100_000 + invocation).to_string(),
                level: if role == 'A' { 0 } else { level },
                role,
                pair: 1,
                cold: "1".into(),
                start_ns: ns(figures.started_s),
                end_ns: ns(figures.started_s + figures.wall_s),
                // The cool-down before the invocation; B follows A at once.
                idle_before_s: if role == 'A' { COLD_IDLE_S } else { 0.0 },
                result: Some(read_ab_run(path, figures)?),
            });
        }
    }
    Ok(runs)
}

/// How a comparison was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Two runs, raw energy per launch.
    Plain,
    /// Two runs, energy at 50 °C.
    Normalized,
    /// Interleaved pairs (`cargo energy ab`).
    Paired,
    /// `cargo energy ab` itself, run on the GPU (its `ab.json`, read back).
    AbCommand,
    /// Every paired comparison: [`Mode::Paired`] and [`Mode::AbCommand`] together.
    PairedAll,
    /// Cool-down before each of two runs, raw.
    Zeus,
    /// Two runs apart: the baseline from a cold start, the candidate a block or two later
    /// on the warmed board (a saved baseline's situation), raw.
    PlainApart,
    /// The same pairs, energy at 50 °C.
    NormalizedApart,
    /// Against the three latest saved runs of the baseline code (earlier blocks' A runs),
    /// their spread the noise (`compare --baseline A --baseline B --baseline C`), raw.
    SavedRuns,
    /// The same, energy at 50 °C.
    SavedRunsNormalized,
}

impl Mode {
    /// As the table names it.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Plain => "plain compare",
            Mode::Normalized => "temperature-normalized compare",
            Mode::Paired => "paired runs: `ab`'s rule on each block's pairs (3-4)",
            Mode::Zeus => "Zeus-style (20 s cool-down before each run), plain",
            Mode::PlainApart => "plain compare, baseline cold, candidate 25-50 s later",
            Mode::NormalizedApart => "normalized compare, baseline cold, candidate 25-50 s later",
            Mode::AbCommand => "`cargo energy ab` run as is (3-12 pairs, target 1 %)",
            Mode::PairedAll => "**paired runs, all** (the two rows above together)",
            Mode::SavedRuns => "compare against 3 saved baseline runs (30-200 s earlier), raw",
            Mode::SavedRunsNormalized => "compare against 3 saved baseline runs, energy at 50 °C",
        }
    }
}

/// One comparison's outcome.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How.
    pub mode: Mode,
    /// Knob level (0, 1, 2).
    pub level: usize,
    /// Whether its first run started on a cooled board.
    pub cold: bool,
    /// The board's UUID.
    pub board: String,
    /// The change, percent.
    pub change_pct: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// The smallest change it could detect, percent.
    pub detectable_pct: f64,
    /// Wall time it took on the GPU, s.
    pub wall_s: f64,
    /// Pairs used (paired mode), else 0.
    pub pairs: usize,
}

/// A board's thermal fits: on the calibration kernel (used) and on the measured kernel
/// (a check that dP/dT is the board's, not the kernel's).
#[derive(Clone, Debug)]
pub struct BoardFit {
    /// The board.
    pub uuid: String,
    /// GPU name.
    pub name: String,
    /// The fit on the calibration runs (role K), applied to every result.
    pub calibration: ThermalCalibration,
    /// The same fit on the cold→hot runs of the measured kernel (role V), when they span enough.
    pub check: Option<ThermalCalibration>,
}

fn fit_board(uuid: &str, name: &str, kernel: &str, runs: &[&Run]) -> Result<ThermalCalibration> {
    let points: Vec<ThermalPoint> =
        runs.iter().filter_map(|r| r.result.as_ref()).flat_map(|r| ThermalPoint::of_windows(&r.windows)).collect();
    let fit = fit_thermal(&points)?;
    let first = runs.iter().find_map(|r| r.result.as_ref().map(|x| x.timestamp.clone())).unwrap_or_default();
    Ok(ThermalCalibration {
        schema: THERMAL_SCHEMA.into(),
        device_name: name.into(),
        uuid: uuid.into(),
        simulated: runs.iter().any(|r| r.result.as_ref().is_some_and(|x| x.device.simulated)),
        created_at: first,
        watts_per_c: fit.watts_per_c,
        std_error_w_per_c: fit.std_error_w_per_c,
        sm_clock_mhz: fit.sm_clock_mhz,
        temperature_range_c: fit.temperature_range_c,
        windows: fit.windows,
        mean_power_w: fit.mean_power_w,
        kernel: kernel.into(),
    })
}

/// The cold→hot check on one board: the measured kernel back to back from a cooled board.
#[derive(Clone, Debug)]
pub struct ColdHot {
    /// The board.
    pub uuid: String,
    /// Runs.
    pub runs: usize,
    /// Mean window temperature of the first and the last run, °C.
    pub temperature_c: (f64, f64),
    /// Raw energy per launch of the last run over the first, percent.
    pub raw_change_pct: f64,
    /// Largest deviation of a run's raw figure from the runs' mean, percent.
    pub raw_spread_pct: f64,
    /// Normalized figure of the last run over the first, percent.
    pub normalized_change_pct: f64,
    /// Largest deviation of a run's normalized figure from the runs' mean, percent.
    pub normalized_spread_pct: f64,
    /// The raw figure's least-squares trend over the sequence (first to last run), percent,
    /// with the half-width of its 95 % interval.
    pub raw_trend_pct: (f64, f64),
    /// The normalized figure's trend, percent, with its half-width.
    pub normalized_trend_pct: (f64, f64),
}

/// The least-squares trend of `values` against `times_s` over their span, as a percentage
/// of their mean, with the half-width of its 95 % interval.
fn trend_pct(times_s: &[f64], values: &[f64]) -> (f64, f64) {
    let points: Vec<(f64, f64)> = times_s.iter().copied().zip(values.iter().copied()).collect();
    let Some(fit) = energy_harness::unstable::engine::linear_fit(&points) else { return (f64::NAN, f64::NAN) };
    let span = times_s.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - times_s.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let t = energy_harness::unstable::engine::student_t_975(values.len().saturating_sub(2));
    (100.0 * fit.slope * span / mean, 100.0 * t * fit.slope_std_err * span / mean)
}

/// One board's figures of the baseline kernel (every A and V run): what boards of one
/// model differ by.
#[derive(Clone, Debug)]
pub struct BoardFigures {
    /// The board.
    pub uuid: String,
    /// Runs.
    pub runs: usize,
    /// Mean energy per launch, J.
    pub energy_j: f64,
    /// Mean energy per launch at 50 °C, J.
    pub normalized_j: f64,
    /// Mean dynamic energy per launch (above active idle), J.
    pub dynamic_j: f64,
    /// Mean active idle, W.
    pub idle_w: f64,
    /// Mean window temperature, °C.
    pub temperature_c: f64,
}

/// Everything the experiment shows.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Per board: the baseline kernel's figures.
    pub board_figures: Vec<BoardFigures>,
    /// Per board: its fits.
    pub boards: Vec<BoardFit>,
    /// Per board: the cold→hot check.
    pub cold_hot: Vec<ColdHot>,
    /// Every comparison.
    pub outcomes: Vec<Outcome>,
    /// Processes that failed (tag, n).
    pub failed: Vec<(String, u32)>,
    /// Wall time of one process, s: median.
    pub process_s: f64,
}

/// Mean die temperature of a result's windows, °C (NaN when none recorded one: the table
/// test refuses any NaN).
fn mean_temp(r: &ResultFile) -> f64 {
    r.mean_temperature_c().unwrap_or(f64::NAN)
}

fn set(name: &str, r: &ResultFile, normalized: bool) -> ResultSet {
    let mut r = r.clone();
    if !normalized {
        r.thermal = None;
    }
    ResultSet { dir: PathBuf::from(name), results: BTreeMap::from([(r.id.clone(), r)]), not_run: Default::default() }
}

fn compared(mode: Mode, a: &ResultFile, b: &ResultFile) -> Result<(f64, Verdict, f64)> {
    let normalized = matches!(mode, Mode::Normalized | Mode::NormalizedApart);
    let c = compare(&set("A", a, normalized), &set("B", b, normalized), THRESHOLD_PCT)?;
    let c = &c.changes[0];
    if normalized && !c.normalized {
        return Err(Error::new(ErrorKind::Analysis, format!("`{}`: no normalized figure to compare", c.id)));
    }
    Ok((c.change_pct, c.verdict, c.detectability.detectable_change_pct))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Analyzes every run of the experiment (all calls together).
pub fn analyze(runs: &[Run]) -> Result<Analysis> {
    let failed: Vec<(String, u32)> = runs.iter().filter(|r| r.result.is_none()).map(|r| (r.tag.clone(), r.n)).collect();
    // Boards, by the UUID their results name; a call belongs to one board.
    let mut by_board: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for r in runs {
        if let Some(res) = &r.result {
            by_board.entry(res.device.uuid.clone()).or_default().push(r.clone());
        }
    }
    let mut boards = Vec::new();
    let mut board_figures = Vec::new();
    let mut cold_hot = Vec::new();
    let mut outcomes = Vec::new();
    for (uuid, mut runs) in by_board {
        let name = runs[0].result.as_ref().map(|r| r.device.name.clone()).unwrap_or_default();
        let calib: Vec<&Run> = runs.iter().filter(|r| r.role == 'K').collect();
        if calib.is_empty() {
            return Err(Error::new(ErrorKind::InvalidInput, format!("board {uuid} has no calibration runs (role K)")));
        }
        let calibration = fit_board(&uuid, &name, "FMA loop -O0 (fma_loop_o0), back to back for 60 s", &calib)?;
        let checks: Vec<&Run> = runs.iter().filter(|r| r.role == 'V').collect();
        let check = fit_board(&uuid, &name, "FMA loop (fma_loop)", &checks).ok();
        // Every result of the measured kernel gets its energy at 50 °C.
        for r in runs.iter_mut().filter(|r| r.role != 'K') {
            if let Some(res) = r.result.as_mut() {
                res.thermal = normalize(&uuid, &res.windows, &calibration);
            }
        }
        let v: Vec<&ResultFile> = runs.iter().filter(|r| r.role == 'V').filter_map(|r| r.result.as_ref()).collect();
        let v_times: Vec<f64> =
            runs.iter().filter(|r| r.role == 'V' && r.result.is_some()).map(|r| r.start_ns as f64 * 1e-9).collect();
        if v.len() >= 2 {
            let raw: Vec<f64> = v.iter().map(|r| r.energy_j.mean).collect();
            let norm: Vec<f64> = v.iter().filter_map(|r| r.thermal.as_ref().map(|t| t.energy_j.mean)).collect();
            let spread = |x: &[f64]| {
                let m = x.iter().sum::<f64>() / x.len() as f64;
                x.iter().map(|v| (v / m - 1.0).abs() * 100.0).fold(0.0, f64::max)
            };
            if norm.len() == raw.len() {
                cold_hot.push(ColdHot {
                    uuid: uuid.clone(),
                    runs: v.len(),
                    temperature_c: (mean_temp(v[0]), mean_temp(v[v.len() - 1])),
                    raw_change_pct: (raw[raw.len() - 1] / raw[0] - 1.0) * 100.0,
                    raw_spread_pct: spread(&raw),
                    normalized_change_pct: (norm[norm.len() - 1] / norm[0] - 1.0) * 100.0,
                    normalized_spread_pct: spread(&norm),
                    raw_trend_pct: trend_pct(&v_times, &raw),
                    normalized_trend_pct: trend_pct(&v_times, &norm),
                });
            }
        }
        let base: Vec<&ResultFile> =
            runs.iter().filter(|r| matches!(r.role, 'A' | 'V')).filter_map(|r| r.result.as_ref()).collect();
        if !base.is_empty() {
            let n = base.len() as f64;
            let mean = |f: &dyn Fn(&ResultFile) -> f64| base.iter().map(|r| f(r)).sum::<f64>() / n;
            board_figures.push(BoardFigures {
                uuid: uuid.clone(),
                runs: base.len(),
                energy_j: mean(&|r| r.energy_j.mean),
                normalized_j: mean(&|r| r.thermal.as_ref().map_or(f64::NAN, |t| t.energy_j.mean)),
                dynamic_j: mean(&|r| r.dynamic_j.mean),
                idle_w: mean(&|r| r.idle_w),
                temperature_c: mean(&mean_temp),
            });
        }
        outcomes.extend(board_outcomes(&uuid, &runs)?);
        boards.push(BoardFit { uuid, name, calibration, check });
    }
    let process_s = median(runs.iter().filter(|r| r.result.is_some()).map(Run::wall_s).collect());
    Ok(Analysis { board_figures, boards, cold_hot, outcomes, failed, process_s })
}

/// Two runs, `a` the baseline and `b` the candidate, compared in each of `modes` (plain and
/// normalized, side by side or apart): the level is `b`'s, cold when `a` followed a cool-down.
fn two_run_outcomes(modes: [Mode; 2], uuid: &str, a: &Run, b: &Run) -> Result<Vec<Outcome>> {
    let (Some(ra), Some(rb)) = (a.result.as_ref(), b.result.as_ref()) else { return Ok(Vec::new()) };
    modes
        .into_iter()
        .map(|mode| {
            let (change_pct, verdict, detectable_pct) = compared(mode, ra, rb)?;
            Ok(Outcome {
                mode,
                level: b.level,
                cold: a.idle_before_s >= COLD_IDLE_S,
                board: uuid.into(),
                change_pct,
                verdict,
                detectable_pct,
                wall_s: a.wall_s() + b.wall_s(),
                pairs: 0,
            })
        })
        .collect()
}

fn board_outcomes(uuid: &str, runs: &[Run]) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    // Blocks (A B B A A B B A of one level), keyed by call and block, in order.
    let mut blocks: BTreeMap<(String, u32), Vec<&Run>> = BTreeMap::new();
    for r in runs.iter().filter(|r| matches!(r.role, 'A' | 'B') && r.cold != "zeus") {
        let block: u32 = r.block.parse().unwrap_or(0);
        blocks.entry((r.tag.clone(), block)).or_default().push(r);
    }
    for block in blocks.values() {
        // A cold-mode pair (A then B after a cool-down): plain and normalized only.
        if block.len() == 2 && block[0].role == 'A' && block[1].role == 'B' {
            outcomes.extend(two_run_outcomes([Mode::Plain, Mode::Normalized], uuid, block[0], block[1])?);
            continue;
        }
        if block.len() != 8 || block.iter().any(|r| r.result.is_none()) {
            continue; // cut by the call's time limit, or a failed process: no comparison from it
        }
        let level = block[0].level;
        let cold = block[0].idle_before_s >= COLD_IDLE_S;
        let res = |i: usize| block[i].result.as_ref().expect("checked above");
        // Plain and normalized: the A-first pairs (runs 1-2 and 5-6).
        for (a, b) in [(0usize, 1usize), (4, 5)] {
            outcomes.extend(two_run_outcomes([Mode::Plain, Mode::Normalized], uuid, block[a], block[b])?);
        }
        // Paired: the block's pairs in order, as `ab` would stop.
        let figure = |r: &ResultFile| BenchFigure { energy_j: r.energy_j.mean, temperature_c: r.mean_temperature_c() };
        let pairs: Vec<PairFigures> = (0..4)
            .map(|p| {
                let (first, second) = (2 * p, 2 * p + 1);
                let (a, b, order) =
                    if block[first].role == 'A' { (first, second, "AB") } else { (second, first, "BA") };
                PairFigures::new(p + 1, order, figure(res(a)), figure(res(b)))
            })
            .collect();
        let id = &res(0).id;
        let three = paired_change(id, pairs[..3].to_vec(), THRESHOLD_PCT)?;
        let (change, used) = if three.detectability.detectable_change_pct <= PAIRED_TARGET_PCT {
            (three, 3)
        } else {
            (paired_change(id, pairs.clone(), THRESHOLD_PCT)?, 4)
        };
        outcomes.push(Outcome {
            mode: Mode::Paired,
            level,
            cold,
            board: uuid.into(),
            change_pct: change.change_pct,
            verdict: change.verdict,
            detectable_pct: change.detectability.detectable_change_pct,
            wall_s: block[..2 * used].iter().map(|r| r.wall_s()).sum(),
            pairs: used,
        });
    }
    // Saved runs: each complete block's first B against the first A of the three blocks
    // before it in the same call (earlier runs of the baseline code, as CI keeps them).
    let complete: Vec<&Vec<&Run>> =
        blocks.values().filter(|b| b.len() == 8 && b.iter().all(|r| r.result.is_some())).collect();
    for (i, block) in complete.iter().enumerate() {
        if i < 3 || complete[i - 3][0].tag != block[0].tag {
            continue;
        }
        let candidate = block[1].result.as_ref().expect("complete block");
        let saved: Vec<&ResultFile> = complete[i - 3..i].iter().filter_map(|b| b[0].result.as_ref()).collect();
        for (mode, normalized) in [(Mode::SavedRuns, false), (Mode::SavedRunsNormalized, true)] {
            let bases: Vec<ResultSet> =
                saved.iter().enumerate().map(|(k, r)| set(&format!("saved-{k}"), r, normalized)).collect();
            let c = compare_with_baselines(&bases, &set("B", candidate, normalized), THRESHOLD_PCT)?;
            let c = &c.changes[0];
            outcomes.push(Outcome {
                mode,
                level: block[1].level,
                cold: block[0].idle_before_s >= COLD_IDLE_S,
                board: uuid.into(),
                change_pct: c.change_pct,
                verdict: c.verdict,
                detectable_pct: c.detectability.detectable_change_pct,
                wall_s: block[1].wall_s(),
                pairs: 0,
            });
        }
    }
    // Apart: each cycle's cold first A against the first B of the cycle's later blocks.
    let mut cycles: BTreeMap<(String, String), Vec<&Vec<&Run>>> = BTreeMap::new();
    for block in blocks.values().filter(|b| b.len() == 8 && b.iter().all(|r| r.result.is_some())) {
        cycles.entry((block[0].tag.clone(), block[0].cycle.clone())).or_default().push(block);
    }
    for blocks in cycles.values() {
        let first = blocks[0];
        if first[0].idle_before_s < COLD_IDLE_S || first[0].role != 'A' {
            continue;
        }
        for later in &blocks[1..] {
            outcomes.extend(two_run_outcomes([Mode::PlainApart, Mode::NormalizedApart], uuid, first[0], later[1])?);
        }
    }
    // Zeus-style trials: cool, A, cool, B.
    let zeus: Vec<&Run> = runs.iter().filter(|r| r.cold == "zeus").collect();
    for w in zeus.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.role != 'A' || b.role != 'B' || a.cycle != b.cycle {
            continue;
        }
        let (Some(ra), Some(rb)) = (a.result.as_ref(), b.result.as_ref()) else { continue };
        let cool_before = if a.idle_before_s.is_finite() { a.idle_before_s } else { 0.0 };
        let (change, verdict, detectable) = compared(Mode::Plain, ra, rb)?;
        outcomes.push(Outcome {
            mode: Mode::Zeus,
            level: a.level,
            cold: a.idle_before_s >= COLD_IDLE_S,
            board: uuid.into(),
            change_pct: change,
            verdict,
            detectable_pct: detectable,
            wall_s: cool_before + (b.end_ns.saturating_sub(a.start_ns)) as f64 * 1e-9,
            pairs: 0,
        });
    }
    Ok(outcomes)
}

/// Wilson's 95 % interval of a proportion k/n, percent.
pub fn wilson_pct(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (k, n, z) = (k as f64, n as f64, 1.959964);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    (100.0 * (centre - half).max(0.0), 100.0 * (centre + half).min(1.0))
}

fn short(uuid: &str) -> String {
    uuid.chars().take(12).collect()
}

/// The published tables (markdown), regenerated from the runs.
pub fn render(a: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "<!-- generated by `cargo run --example verdicts -- RAW` (RAW: the raw/ folder beside this table); do not edit -->\n");
    let _ = writeln!(out, "### dP/dT per board\n");
    let _ = writeln!(out, "| board | fitted on | dP/dT (W/°C) | %/°C of its power | windows | °C | check: fitted on the measured kernel |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for b in &a.boards {
        let c = &b.calibration;
        let check = b.check.as_ref().map_or("— (span too small)".to_string(), |k| {
            format!(
                "{:.3} ± {:.3} W/°C ({} windows, {:.0}-{:.0} °C)",
                k.watts_per_c, k.std_error_w_per_c, k.windows, k.temperature_range_c.0, k.temperature_range_c.1
            )
        });
        let _ = writeln!(
            out,
            "| {} {} | {} | {:.3} ± {:.3} | {:.2} | {} | {:.0}-{:.0} | {check} |",
            b.name,
            short(&b.uuid),
            c.kernel,
            c.watts_per_c,
            c.std_error_w_per_c,
            100.0 * c.watts_per_c / c.mean_power_w,
            c.windows,
            c.temperature_range_c.0,
            c.temperature_range_c.1
        );
    }
    let _ = writeln!(out, "\n### Cold → hot: one kernel back to back from a cooled board\n");
    let _ = writeln!(out, "| board | runs | °C first → last | raw: trend over the runs | at 50 °C: trend | raw: last/first | at 50 °C: last/first | raw: largest deviation from mean | at 50 °C: largest deviation |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    if a.cold_hot.is_empty() {
        let _ = writeln!(out, "| — | not measured on these boards | | | | | | | |");
    }
    for c in &a.cold_hot {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} → {:.1} | {:+.2} ± {:.2} % | {:+.2} ± {:.2} % | {:+.2} % | {:+.2} % | {:.2} % | {:.2} % |",
            short(&c.uuid),
            c.runs,
            c.temperature_c.0,
            c.temperature_c.1,
            c.raw_trend_pct.0,
            c.raw_trend_pct.1,
            c.normalized_trend_pct.0,
            c.normalized_trend_pct.1,
            c.raw_change_pct,
            c.normalized_change_pct,
            c.raw_spread_pct,
            c.normalized_spread_pct
        );
    }
    let _ =
        writeln!(out, "\n### Verdicts (threshold {THRESHOLD_PCT} %, regression test one-sided at 1 % false alarms)\n");
    let _ = writeln!(out, "| mode | knob | comparisons (cold + warm) | regression verdicts | rate [95 % interval] | cold | warm | mean change | detectable change, median [range] | wall time per comparison (median) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    let mut groups: BTreeMap<(Mode, usize), Vec<&Outcome>> = BTreeMap::new();
    for o in &a.outcomes {
        groups.entry((o.mode, o.level)).or_default().push(o);
    }
    for ((mode, level), os) in &groups {
        let n = os.len();
        let hits = |f: &dyn Fn(&&Outcome) -> bool| os.iter().filter(|o| f(o)).count();
        let k = hits(&|o| o.verdict == Verdict::Regression);
        let (nc, kc) = (hits(&|o| o.cold), hits(&|o| o.cold && o.verdict == Verdict::Regression));
        let (nw, kw) = (n - nc, k - kc);
        let (lo, hi) = wilson_pct(k, n);
        let rate = |k: usize, n: usize| if n == 0 { "—".to_string() } else { format!("{k}/{n}") };
        let detect: Vec<f64> = os.iter().map(|o| o.detectable_pct).collect();
        let (dmin, dmax) = detect.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
        let mean_change = os.iter().map(|o| o.change_pct).sum::<f64>() / n as f64;
        let pairs = if matches!(mode, Mode::Paired | Mode::AbCommand | Mode::PairedAll) {
            format!(" ({:.1} pairs)", os.iter().map(|o| o.pairs as f64).sum::<f64>() / n as f64)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| {} | +{level} % | {n} ({nc} + {nw}) | {} | {:.1} % [{lo:.1}, {hi:.1}] | {} | {} | {mean_change:+.2} % | {:.2} % [{dmin:.2}, {dmax:.2}] | {:.1} s{pairs} |",
            mode.label(),
            if *level == 0 { format!("{k} false alarms") } else { format!("{k} detected") },
            100.0 * k as f64 / n as f64,
            rate(kc, nc),
            rate(kw, nw),
            median(detect.clone()),
            median(os.iter().map(|o| o.wall_s).collect()),
        );
    }
    let _ = writeln!(out, "\n### Across boards: the baseline kernel (fma0) on each board\n");
    let _ = writeln!(out, "| board | runs | energy per launch | at 50 °C | dynamic | active idle | mean °C |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for b in &a.board_figures {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} mJ | {:.2} mJ | {:.2} mJ | {:.1} W | {:.1} |",
            short(&b.uuid),
            b.runs,
            b.energy_j * 1e3,
            b.normalized_j * 1e3,
            b.dynamic_j * 1e3,
            b.idle_w,
            b.temperature_c
        );
    }
    if let [first, rest @ ..] = a.board_figures.as_slice() {
        for b in rest {
            let _ = writeln!(
                out,
                "\n{} against {}: energy {:+.2} %, at 50 °C {:+.2} %, dynamic {:+.2} %, active idle {:+.1} W.",
                short(&b.uuid),
                short(&first.uuid),
                100.0 * (b.energy_j / first.energy_j - 1.0),
                100.0 * (b.normalized_j / first.normalized_j - 1.0),
                100.0 * (b.dynamic_j / first.dynamic_j - 1.0),
                b.idle_w - first.idle_w
            );
        }
    }
    let _ = writeln!(
        out,
        "\nOne process (build excluded) took {:.2} s (median); {} of the processes failed{}.",
        a.process_s,
        a.failed.len(),
        if a.failed.is_empty() { String::new() } else { format!(": {:?}", a.failed) }
    );
    out
}

/// The files of a call's `ab/` folder whose names end with `suffix`, in name order (none
/// when the call has no such folder).
fn ab_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("ab")) else { return Vec::new() };
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(suffix)).collect();
    files.sort();
    files
}

/// An `ab.json` read back (`AbReport::parse`: every change recomputed from the runs'
/// figures), its errors naming the file.
fn read_ab_report(path: &Path) -> Result<AbReport> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read", e))?;
    AbReport::parse(&text).map_err(|e| Error::new(e.kind(), format!("{}: {}", path.display(), e.message())))
}

/// The outcomes of the `cargo energy ab` invocations of one call: `ab/<n>-level<L>.ab.json`
/// under `dir` (their figures recomputed from each run's, as `AbReport::parse` does).
pub fn read_ab_reports(dir: &Path) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    for path in ab_files(dir, ".ab.json") {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let level = name
            .split("-level")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .and_then(|l| l.parse::<usize>().ok())
            .ok_or_else(|| Error::new(ErrorKind::Format, format!("{}: no level in the name", path.display())))?;
        let report = read_ab_report(&path)?;
        for change in &report.changes {
            outcomes.push(Outcome {
                mode: Mode::AbCommand,
                level,
                // Back to back (`ab` mode) each starts on the board the last one warmed; in
                // `cold` mode (`-cold-` in the name) each follows a fixed cool-down.
                cold: name.contains("-cold-"),
                board: report.device.uuid.clone(),
                change_pct: change.change_pct,
                verdict: change.verdict,
                detectable_pct: change.detectability.detectable_change_pct,
                wall_s: report.wall_s,
                pairs: change.pairs.len(),
            });
        }
    }
    Ok(outcomes)
}

/// Reads every call directory under `dir` (each holding runs.tsv) in name order.
pub fn read_calls(dir: &Path) -> Result<Vec<Run>> {
    let mut calls: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, "list the calls", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("runs.tsv").exists())
        .collect();
    calls.sort();
    let mut runs = Vec::new();
    for call in calls {
        runs.extend(read_call(&call)?);
    }
    Ok(runs)
}

/// Unpacks each call's `<tag>/<tag>.tgz` under `raw` into a temporary folder (with `tar`)
/// and renders the tables.
pub fn unpack_and_render(raw: &Path) -> Result<String> {
    let work = std::env::temp_dir().join(format!("energy-verdicts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| Error::io(&work, "create", e))?;
    let mut calls: Vec<PathBuf> = std::fs::read_dir(raw)
        .map_err(|e| Error::io(raw, "list the calls", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    calls.sort();
    // The unpacked calls, in name order (the runs are read from them, then their `ab` reports).
    let mut unpacked = Vec::new();
    for call in calls {
        let Some(tag) = call.file_name().and_then(|t| t.to_str()).map(str::to_string) else { continue };
        let archive = call.join(format!("{tag}.tgz"));
        if !archive.exists() {
            continue;
        }
        let into = work.join(&tag);
        std::fs::create_dir_all(&into).map_err(|e| Error::io(&into, "create", e))?;
        let status = std::process::Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&into)
            .status()
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not run tar for {}: {e}", archive.display())))?;
        if !status.success() {
            return Err(Error::new(ErrorKind::Format, format!("{}: tar failed ({status})", archive.display())));
        }
        unpacked.push(into);
    }
    let rendered = read_calls(&work).and_then(|runs| analyze(&runs)).and_then(|mut a| {
        for call in &unpacked {
            a.outcomes.extend(read_ab_reports(call)?);
        }
        let all: Vec<Outcome> = a
            .outcomes
            .iter()
            .filter(|o| matches!(o.mode, Mode::Paired | Mode::AbCommand))
            .map(|o| Outcome { mode: Mode::PairedAll, ..o.clone() })
            .collect();
        a.outcomes.extend(all);
        Ok(render(&a))
    });
    let _ = std::fs::remove_dir_all(&work);
    rendered
}
