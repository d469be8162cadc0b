//! Comparing energies at the reference temperature: when two results' normalized figures
//! compare, the change between them, and why raw figures were compared instead.

use super::change::{judge, within_run};
use super::Change;
use energy_results::Result;
use energy_results::ResultFile;
use energy_results::ThermalNormalized;
use energy_results::{extrapolation_note, validate_normalized};

/// Both results' energies at the reference temperature and what they rest on, when both
/// carry one from the same board's coefficient at the same reference and both are sound.
pub(super) fn normalized_pair<'a>(
    base: &'a ResultFile,
    cand: &'a ResultFile,
) -> Option<(&'a ThermalNormalized, &'a ThermalNormalized, String)> {
    let (b, c) = (base.thermal.as_ref()?, cand.thermal.as_ref()?);
    let same = b.calibration_uuid == c.calibration_uuid
        && b.reference_c == c.reference_c
        && b.watts_per_c == c.watts_per_c
        && b.std_error_w_per_c == c.std_error_w_per_c
        && validate_normalized(b).is_ok()
        && validate_normalized(c).is_ok();
    same.then(|| {
        let mut note = format!(
            "energy at {:.0} °C (runs at {:.1} and {:.1} °C; {})",
            b.reference_c, b.mean_temperature_c, c.mean_temperature_c, b.origin
        );
        for (which, n) in [("baseline", b), ("candidate", c)] {
            if let Some(extra) = extrapolation_note(n) {
                note.push_str(&format!("; {which}: {extra}"));
            }
        }
        (b, c, note)
    })
}

/// Why two runs' energies at the reference temperature were not compared, when one has
/// it and the other does not, or they rest on different coefficients.
pub(super) fn raw_note(base: &ResultFile, cand: &ResultFile) -> Option<String> {
    let missing = "has no energy at 50 °C (no thermal calibration of its GPU was found when it ran: `cargo energy calibrate --thermal` caches one under ENERGY_CALIBRATION_DIR, else ~/.cache/energy-harness/calibration; a CI runner must keep that folder)";
    match (&base.thermal, &cand.thermal) {
        (Some(_), None) => Some(format!("raw energy per launch: the candidate {missing}")),
        (None, Some(_)) => Some(format!("raw energy per launch: the baseline {missing}")),
        (Some(_), Some(_)) => Some(
            "raw energy per launch: the two runs' energies at 50 °C rest on different thermal calibrations".to_string(),
        ),
        (None, None) => None,
    }
}

/// The change between two normalized figures of one board: the windows' spread of each run
/// (Welch) and the coefficient's error once, through the runs' temperature difference (both
/// were moved with the same dP/dT, so its error shifts both alike but for that difference).
pub(super) fn normalized_change(
    id: &str,
    b: &ThermalNormalized,
    c: &ThermalNormalized,
    threshold_pct: f64,
) -> Result<Change> {
    let (base, cand) = (&b.statistical_j, &c.statistical_j);
    let ratio = cand.mean / base.mean;
    let coefficient = b.std_error_w_per_c
        * ((c.mean_temperature_c - c.reference_c) * c.seconds_per_launch
            - (b.mean_temperature_c - b.reference_c) * b.seconds_per_launch)
            .abs()
        / base.mean;
    let detect = within_run(base, cand, ratio, Some(coefficient));
    judge(id, &b.energy_j, &c.energy_j, ratio, detect, threshold_pct)
}
