//! The fits of issue 35's protocol runs (docs/results/2026-11-26-model-protocol-h100-h200)
//! follow from their training runs: each board's `fit/model.json` is what the two-regime fit
//! of its committed results and ncu exports gives, cost by cost, under the committed
//! protocol's hash; the kernels it leaves out are those that ran below the fit's clock.

use std::path::Path;

use energy_harness::unstable::explain::EnergyModel;
use energy_suites::model::{fit_regimes, SuiteRun};
use energy_suites::protocol::Protocol;
use energy_suites::published::{HELDOUT_BOARDS, HELDOUT_DIR};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-18)
}

#[test]
fn each_boards_model_is_the_fit_of_its_training_run() {
    let protocol = Protocol::committed().unwrap();
    assert_eq!(protocol.status, "frozen");
    for board in HELDOUT_BOARDS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results").join(HELDOUT_DIR).join(board);
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
