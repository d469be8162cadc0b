//! Pairs of results with corrupt energy and dynamic figures, fed to `compare` and
//! `compare_across_boards`.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use energy_harness::ResultFile;
use energy_report::{compare, compare_across_boards, ResultSet};

use super::{cases, mutate_json, result_seed, seed, Rng};

/// Figures a corrupt or hand-edited result may hold: below and at zero, tiny, huge, near
/// the largest float.
const NASTY_FIGURES: [f64; 14] =
    [0.0, -1e-3, -0.5, 5e-324, 1e-300, 1e-10, 0.5, 500.0, 1e300, 1e308, -1e308, f64::MAX, -f64::MAX, 1.0000001];

/// Sets one number of an estimate of `energy_j` or `dynamic_j` (most often the dynamic
/// one, which `--across-boards` compares) to a nasty figure, or an interval to ±1e308.
fn inject_figure(v: &mut serde_json::Value, rng: &mut Rng) {
    let field = ["dynamic_j", "dynamic_j", "energy_j"][rng.below(3)];
    let figure = NASTY_FIGURES[rng.below(NASTY_FIGURES.len())];
    let e = &mut v[field];
    match rng.below(6) {
        0 => {
            e["mean"] = serde_json::json!(figure);
            e["ci_low"] = serde_json::json!(figure * 0.99);
            e["ci_high"] = serde_json::json!(figure * 1.01);
        }
        1 => e["mean"] = serde_json::json!(figure),
        2 => e["ci_low"] = serde_json::json!(figure),
        3 => e["ci_high"] = serde_json::json!(figure),
        4 => {
            e["ci_low"] = serde_json::json!(-1e308);
            e["ci_high"] = serde_json::json!(1e308);
        }
        _ => e["std_dev"] = serde_json::json!(figure.abs()),
    }
}

/// One pair of results of one benchmark: across boards (two UUIDs of one model) and on
/// one board, both comparisons run. Whatever is accepted must be possible: both compared
/// figures positive and finite, a change that is a finite percentage of at least −100 %
/// with an interval that holds it.
fn check_pair(rng: &mut Rng) -> Result<bool, String> {
    let mut parsed = Vec::new();
    for (i, uuid) in ["GPU-1", "GPU-2"].iter().enumerate() {
        let mut v = result_seed("k/energy", 0.01 * (1.0 + 0.2 * i as f64));
        v["device"]["uuid"] = serde_json::json!(uuid);
        for _ in 0..rng.below(3) {
            inject_figure(&mut v, rng);
        }
        if rng.below(4) == 0 {
            mutate_json(&mut v, rng, 0);
        }
        match ResultFile::parse(&v.to_string(), Path::new("fuzz.json")) {
            Ok(r) => parsed.push(r),
            Err(_) => return Ok(false),
        }
    }
    let set = |r: &ResultFile| ResultSet {
        dir: PathBuf::from("fuzz"),
        results: BTreeMap::from([(r.id.clone(), r.clone())]),
        not_run: Default::default(),
    };
    let (base, cand) = (&parsed[0], &parsed[1]);
    let mut same_board = cand.clone();
    same_board.device.uuid = base.device.uuid.clone();
    let mut accepted = false;
    for (mode, outcome) in [
        ("across boards", compare_across_boards(&set(base), &set(cand), 5.0)),
        ("one board", compare(&set(base), &set(&same_board), 5.0)),
    ] {
        let Ok(comparison) = outcome else { continue };
        accepted = true;
        for c in &comparison.changes {
            let figures_ok = [c.baseline_j.mean, c.candidate_j.mean].iter().all(|m| m.is_finite() && *m > 0.0);
            let change_ok = [c.change_pct, c.change_low_pct, c.change_high_pct].iter().all(|p| p.is_finite())
                && c.change_low_pct >= -100.0
                && c.change_low_pct <= c.change_pct
                && c.change_pct <= c.change_high_pct;
            if !(figures_ok && change_ok) {
                return Err(format!("{mode}: accepted an impossible change: {c:?}"));
            }
        }
    }
    Ok(accepted)
}

#[test]
fn both_comparison_modes_never_panic_nor_accept_the_impossible() {
    let mut rng = Rng(seed() ^ 0x00b0_a7d5);
    let (n, mut accepted, mut rejected, mut panics, mut violations) = (cases(), 0u64, 0u64, 0u64, Vec::new());
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..n {
        match catch_unwind(AssertUnwindSafe(|| check_pair(&mut rng))) {
            Ok(Ok(true)) => accepted += 1,
            Ok(Ok(false)) => rejected += 1,
            Ok(Err(violation)) => violations.push(format!("case {case}: {violation}")),
            Err(_) => panics += 1,
        }
    }
    std::panic::set_hook(previous_hook);
    println!("fuzz_readers (compare, --across-boards): {n} inputs (seed {:#x}): {accepted} accepted, {rejected} rejected with an error, {panics} panics, {} impossible figures accepted", seed(), violations.len());
    assert_eq!(panics, 0, "compare panicked");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(accepted > n / 20, "the mutations are too destructive to test acceptance: {accepted} of {n}");
    assert!(rejected > n / 20, "the mutations are too gentle to test refusal: {rejected} of {n}");
}
