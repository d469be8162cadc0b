//! Runs made on different boards of one GPU model compared: dynamic energy only, and a
//! threshold no smaller than the board-to-board spread ([`compare_across_boards`]).

use super::{pair, Comparison, Figure, ResultSet};
use energy_results::ResultFile;
use energy_results::{Error, ErrorKind, Result};

/// The least threshold across boards of one model, percent: dynamic energy per
/// instruction differed by up to 12 % (median 5 %) between two H100s, and by 0.96-1.14
/// (median 1.016) between an H100 and an H200 (research/results/instructions-h100.md), so a
/// smaller change between boards is not a change of the code.
pub const ACROSS_BOARDS_MIN_THRESHOLD_PCT: f64 = 15.0;

/// Compares runs made on different boards of one GPU model (CI runners that differ): the
/// stated rule is that only the **dynamic** energy per launch (above active idle) is
/// compared — static power differs from board to board (active idle 118 against 131 W on
/// two H100s) — and a regression must exceed `max(threshold_pct,`
/// [`ACROSS_BOARDS_MIN_THRESHOLD_PCT`]`)`. Results of different models (names), or
/// simulated against measured, are refused.
pub fn compare_across_boards(baseline: &ResultSet, candidate: &ResultSet, threshold_pct: f64) -> Result<Comparison> {
    let all: Vec<&ResultFile> = baseline.results.values().chain(candidate.results.values()).collect();
    let Some(&first) = all.first() else { return pair(baseline, candidate, threshold_pct, Figure::Dynamic) };
    for r in &all[1..] {
        if r.device.simulated != first.device.simulated {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("cannot compare simulated and measured results (`{}` and `{}`)", first.id, r.id),
            ));
        }
        if r.device.name != first.device.name {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "results come from different GPU models: {} and {}; across boards only one model compares",
                    first.device.name, r.device.name
                ),
            ));
        }
    }
    let threshold = threshold_pct.max(ACROSS_BOARDS_MIN_THRESHOLD_PCT);
    let boards = |set: &ResultSet| {
        let mut u: Vec<String> = set.results.values().map(|r| r.device.uuid.clone()).collect();
        u.sort();
        u.dedup();
        u.join(", ")
    };
    let rule = format!(
        "across boards of the {}: dynamic energy per launch compared (static power differs from board to board), \
         threshold {threshold:.1} % (at least {ACROSS_BOARDS_MIN_THRESHOLD_PCT:.0} %: the board-to-board spread); \
         baseline on {}, candidate on {}",
        first.device.name,
        boards(baseline),
        boards(candidate)
    );
    let mut comparison = pair(baseline, candidate, threshold, Figure::Dynamic)?;
    comparison.rule = Some(rule);
    Ok(comparison)
}
