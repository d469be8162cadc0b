//! The comparisons: how each was made ([`Mode`]), its outcome ([`Outcome`]), and every
//! comparison a board's runs give (plain, normalized, paired, against saved runs, apart,
//! Zeus-style).

use std::collections::BTreeMap;
use std::path::PathBuf;

use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_report::{compare, compare_with_baselines, ResultSet};
use energy_results::ab::{paired_change, BenchFigure, PairFigures};
use energy_results::detect::Verdict;

use super::modes::{Mode, Outcome};
use super::read::Run;
use super::{COLD_IDLE_S, PAIRED_TARGET_PCT, THRESHOLD_PCT};

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

pub(super) fn board_outcomes(uuid: &str, runs: &[Run]) -> Result<Vec<Outcome>> {
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
        let figure = |r: &ResultFile| BenchFigure {
            energy_j: r.energy_j.mean,
            temperature_c: r.mean_temperature_c(),
            within_run: None,
        };
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
