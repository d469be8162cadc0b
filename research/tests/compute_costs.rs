//! The class-cost fit (issue 20's first step) on the committed H100 instruction tables.

use std::path::Path;

use energy_suites::costs::{class_of, fit_compute, COMPUTE_CLASSES};
use kernel_energy::instructions::suite::read_table;

#[test]
fn every_class_is_fitted_non_negative_from_three_h100_boards() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let tables: Vec<_> = [
        "2026-11-23-instructions-v2-h100/o4-board1.json",
        "2026-11-23-instructions-v2-h100/o4-board2.json",
        "2026-11-24-instructions-v2-h100-h200/o4-board3.json",
    ]
    .iter()
    .map(|p| read_table(&dir.join(p)).unwrap())
    .collect();
    let refs: Vec<_> = tables.iter().collect();
    let fit = fit_compute(&refs, "O4").unwrap();
    assert_eq!(fit.classes.len(), COMPUTE_CLASSES.len());
    assert!(fit.steps.len() >= 80, "{} steps", fit.steps.len());
    for c in &fit.classes {
        assert!(c.j >= 0.0 && c.rows > 0, "{c:?}");
        // A warp-instruction costs between 1 pJ and 10 nJ of dynamic energy on any GPU.
        assert!(c.j < 10e-9, "{c:?}");
    }
    // The plumbing, not the model's target (issue 20 asks 8 % on unseen kernels): the
    // in-sample error of the eight-class fit was 20.6 % on 2026-11-24.
    assert!(fit.mape < 0.3, "in-sample error {:.1} %", fit.mape * 100.0);
    // Every step is also predicted by a fit without it (22.8 % on 2026-11-24).
    assert_eq!(fit.loo_predicted_j.len(), fit.steps.len());
    assert!(fit.loo_mape.is_finite() && fit.loo_mape < 0.4, "left-out error {:.1} %", fit.loo_mape * 100.0);
    // Nothing fits at a level with no rows.
    assert!(fit_compute(&refs, "O2").is_err());
    assert_eq!(class_of("FFMA"), Some(0));
    assert_eq!(class_of("BRA"), None);
}
