//! The fits of issue 35's protocol runs (research/results/2026-11-26-model-protocol-h100-h200)
//! follow from their training runs: each board's `fit/model.json` is what the two-regime fit
//! of its committed results and ncu exports gives, cost by cost, under the committed
//! protocol's hash; the kernels it leaves out are those that ran below the fit's clock.

use std::path::Path;

use energy_report::EnergyModel;
use energy_suites::model::{fit_regimes, SuiteRun};
use energy_suites::protocol::{Protocol, PROTOCOLS};
use energy_suites::published::{HELDOUT_BOARDS, HELDOUT_DIR};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-18)
}

#[test]
fn each_boards_model_is_the_fit_of_its_training_run() {
    let protocol = Protocol::committed().unwrap();
    assert_eq!(protocol.status, "frozen");
    for board in HELDOUT_BOARDS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(HELDOUT_DIR).join(board);
        let run = SuiteRun::read_run_and_ncu(&dir.join("run-model"), &dir.join("ncu-model")).unwrap();
        let (switching, left_out) = run.training().unwrap();
        let (constant, constant_left_out) = run.constant_training().unwrap();
        // The HMMA kernels at the 700 W cap (full, 8 warps and 3 warps per SM) are left out.
        let mut out: Vec<&str> = left_out.iter().map(|l| l.split(':').next().unwrap()).collect();
        out.sort_unstable();
        assert_eq!(out, ["train_hmma", "train_hmma_3warps", "train_hmma_mid"], "{board}: {left_out:?}");
        assert!(constant_left_out.is_empty(), "{board}: {constant_left_out:?}");
        assert_eq!((switching.len(), constant.len()), (26, 28), "{board}");

        let committed = EnergyModel::read_json(&dir.join("fit/model.json")).unwrap();
        assert_eq!(committed.protocol_hash.as_deref(), Some(protocol.hash.as_str()), "{board}");
        let mut template = committed.clone();
        template.classes.clear();
        let (fitted, constant_fit) = fit_regimes(&switching, &constant, template).unwrap();
        assert!(constant_fit.is_some());
        for (mine, theirs) in fitted.model.classes.iter().zip(&committed.classes) {
            assert_eq!(mine.name, theirs.name);
            assert!(
                close(mine.j_per_unit, theirs.j_per_unit),
                "{board} {}: {} against {}",
                mine.name,
                mine.j_per_unit,
                theirs.j_per_unit
            );
            let (a, b) = (mine.constant.as_ref().unwrap(), theirs.constant.as_ref().unwrap());
            assert!(close(a.j_per_unit, b.j_per_unit), "{board} {} (constant)", mine.name);
        }
    }
}

/// The commit that froze the protocol (research/results/2026-11-26-model-protocol-h100-h200/README.md).
const FROZEN_IN: &str = "3093687";

/// Git's output for `args` in the repository (CI runs on a clone with its history).
fn git(args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The commit time of `commit`, as result files stamp theirs (RFC 3339, UTC `Z`).
fn commit_time(commit: &str) -> String {
    git(&["show", "-s", "--format=%cI", commit]).trim().replace("+00:00", "Z")
}

/// The commit time of `commit`, after asserting that it holds protocol `version`'s file as
/// committed now (the protocol was frozen in it).
fn frozen_in(commit: &str, version: u32) -> String {
    let (_, file, _) = PROTOCOLS.iter().find(|(v, _, _)| *v == version).unwrap();
    // The path the file had in that commit: the research lived under docs/ until 2026-11-28.
    let then_path = file.replacen("research/results/", "docs/results/", 1);
    let then = git(&["show", &format!("{commit}:{then_path}")]);
    assert_eq!(Protocol::parse(&then, &format!("v{version} as frozen")).unwrap(), Protocol::version(version).unwrap());
    commit_time(commit)
}

/// Asserts that every result of the `run-model` and `run-heldout` runs of each board folder
/// under `dir` postdates `frozen`; the number of results checked.
fn results_after(dir: &Path, boards: &[&str], frozen: &str) -> usize {
    let mut checked = 0;
    for board in boards {
        for suite in ["run-model", "run-heldout"] {
            let set = energy_report::ResultSet::read_run(&dir.join(board).join(suite)).unwrap();
            for (id, r) in &set.results {
                // RFC 3339 UTC stamps of one format compare as strings.
                assert!(r.timestamp.as_str() > frozen, "{board}/{suite}/{id} at {} predates {frozen}", r.timestamp);
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn every_result_of_the_protocol_runs_postdates_the_protocols_commit() {
    let frozen = frozen_in(FROZEN_IN, 1);
    assert_eq!(frozen, "2026-11-26T08:39:41Z");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(HELDOUT_DIR);
    let checked = results_after(&dir, &["h100-board1", "h100-board1-repeat", "h100-board2"], &frozen);
    assert!(checked > 250, "{checked} results");
}

/// The model in `board/fit/model.json` is the two-regime fit of the board's committed training
/// run under protocol `version`'s terms and training lists, cost by cost, and states what the
/// protocol says (its hash, its power-limit tolerance).
fn assert_is_the_fit_of_the_training_run(board: &Path, fit: &str, version: u32) {
    let protocol = Protocol::version(version).unwrap();
    let run = SuiteRun::read_run_and_ncu(&board.join("run-model"), &board.join("ncu-model")).unwrap();
    let run = run.under(&protocol).unwrap();
    let (switching, _) = run.training().unwrap();
    let (constant, _) = run.constant_training().unwrap();
    let committed = EnergyModel::read_json(&board.join(fit).join("model.json")).unwrap();
    let at = format!("{} {fit}", board.display());
    assert_eq!(committed.protocol_hash.as_deref(), Some(protocol.hash.as_str()), "{at}");
    assert_eq!(committed.power_limit_tolerance, protocol.power_limit_tolerance, "{at}");
    assert_eq!(committed.classes.len(), protocol.terms.len(), "{at}");
    let mut template = committed.clone();
    template.classes = run.selection.classes.clone();
    let (fitted, _) = fit_regimes(&switching, &constant, template).unwrap();
    for (mine, theirs) in fitted.model.classes.iter().zip(&committed.classes) {
        assert_eq!(mine.name, theirs.name);
        assert!(close(mine.j_per_unit, theirs.j_per_unit), "{at} {}", mine.name);
        let (a, b) = (mine.constant.as_ref().unwrap(), theirs.constant.as_ref().unwrap());
        assert!(close(a.j_per_unit, b.j_per_unit), "{at} {} (constant)", mine.name);
    }
}

/// The commit that froze protocol v2 (research/results/2026-11-26-model-protocol-v2/README.md).
const V2_FROZEN_IN: &str = "7821fce";

/// Protocol v2's boards: each fit (`fit/` under v2, `fit-v1/` under v1) is the two-regime fit
/// of the board's committed training run under that protocol's terms and training lists, cost
/// by cost; every result of the v2 runs postdates the commit that froze v2, which holds v2 as
/// committed now.
#[test]
fn each_v2_boards_models_are_the_fits_of_its_training_run_after_the_freeze() {
    use energy_suites::published::{HELDOUT_V2_BOARDS, HELDOUT_V2_DIR, HELDOUT_V2_FITS};
    let frozen = frozen_in(V2_FROZEN_IN, 2);
    assert_eq!(frozen, "2026-11-26T11:25:44Z");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(HELDOUT_V2_DIR);
    for board in HELDOUT_V2_BOARDS {
        for (fit, version) in HELDOUT_V2_FITS {
            assert_is_the_fit_of_the_training_run(&dir.join(board), fit, version);
        }
    }
    let boards: Vec<&str> = HELDOUT_V2_BOARDS.iter().copied().chain(["h100-board3-repeat"]).collect();
    let checked = results_after(&dir, &boards, &frozen);
    assert!(checked > 300, "{checked} results");
}

/// The commit that froze protocol v3 (research/results/2026-11-26-model-protocol-v3/README.md).
const V3_FROZEN_IN: &str = "2ced604";

/// Protocol v3's boards: each fit is the two-regime fit of its training run under v3, stating
/// v3's power-limit tolerance; every result of the v3 runs postdates the commit that froze v3,
/// which holds v3 as committed now; every held-out result records the board's power limit
/// (the bound rests on it).
#[test]
fn each_v3_boards_model_is_the_fit_of_its_training_run_after_the_freeze() {
    use energy_suites::published::{HELDOUT_V3_BOARDS, HELDOUT_V3_DIR};
    let frozen = frozen_in(V3_FROZEN_IN, 3);
    assert_eq!(frozen, "2026-11-26T14:22:51Z");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(HELDOUT_V3_DIR);
    for board in HELDOUT_V3_BOARDS {
        assert_is_the_fit_of_the_training_run(&dir.join(board), "fit", 3);
        let held = energy_report::ResultSet::read_run(&dir.join(board).join("run-heldout")).unwrap();
        for (id, r) in &held.results {
            assert!(r.device.power_limit_w.is_some_and(|w| w > 0.0), "{board} {id}: no power limit recorded");
        }
    }
    let checked = results_after(&dir, &HELDOUT_V3_BOARDS, &frozen);
    assert!(checked >= 70 * HELDOUT_V3_BOARDS.len(), "{checked} results");
}

/// Each model that ships with `cargo energy explain` states, in its origin line, its board's
/// held-out figures as the board's page computes them (a figure typed there by hand and then
/// left behind by a new fit fails here).
#[test]
fn each_shipped_models_origin_states_its_boards_held_out_figures() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for m in energy_report::SHIPPED_MODELS {
        let board_dir = repo.join(m.published).parent().and_then(Path::parent).unwrap().to_path_buf();
        let board = board_dir.file_name().unwrap().to_str().unwrap().to_string();
        let report = energy_suites::heldout::board_report(&board_dir, "fit", &board).unwrap();
        let mae = report.analysis.model.unwrap().mean_pct;
        assert!(m.origin.contains(&format!("{mae:.1} % mean absolute error")), "{board}: {mae:.1} %: {}", m.origin);
        let (inside, of) = report.analysis.in_bracket;
        assert!(
            m.origin.contains(&format!("{inside} of {of} measurements inside the bracket")),
            "{board}: {}",
            m.origin
        );
    }
}
