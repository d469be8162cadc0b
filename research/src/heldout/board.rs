//! One board's held-out test ([`board_report`]): the model and its training run read back,
//! the baselines fitted, every held-out benchmark of the protocol tested or listed as missing,
//! and the earlier protocols' kernels shown apart.

use std::path::Path;

use energy_harness::{Error, ErrorKind, Result};
use energy_report::EnergyModel;
use serde::Serialize;

use super::analysis::{analyse, Analysis, Baselines, TrainingPoint};
use super::case::{instructions, unmeasured, Case};
use crate::model::{measured_launches, SuiteRun};
use crate::protocol::{HeldOutKernel, Protocol};

/// The file stem of a board's held-out report for fit folder `fit`: `heldout` for `fit`,
/// `heldout-<fit>` for another (`heldout-fit-v1`).
pub fn report_stem(fit: &str) -> String {
    if fit == "fit" {
        "heldout".to_string()
    } else {
        format!("heldout-{fit}")
    }
}

/// One board's held-out test under the committed protocol, as `examples/heldout.rs` writes it
/// (`heldout.md`, `heldout.json` in the board's folder).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardReport {
    /// The GPU model.
    pub gpu: String,
    /// The board's UUID.
    pub uuid: String,
    /// The protocol's hash (the model's and the committed protocol's).
    pub protocol_hash: String,
    /// The clock the model was fitted at, MHz.
    pub model_sm_clock_mhz: f64,
    /// The baselines, fitted on the model's training kernels.
    pub baselines: Baselines,
    /// The analysis of every tested benchmark.
    pub analysis: Analysis,
    /// Held-out benchmarks that could not be tested, with why.
    pub missing: Vec<(String, String)>,
    /// What the acceptance rule finds short (empty: met).
    pub shortfalls: Vec<String>,
    /// Training kernels the fit left out, with why (below the fit's clock).
    pub left_out: Vec<String>,
    /// The model's terms whose 95 % interval spans zero, or that the fit held at zero, by
    /// regime (`switching`, `constant`): kept in the model, as the protocol's rules say, and
    /// said here.
    pub spanning_zero: Vec<(String, String)>,
    /// Under a protocol after the first: the held-out kernels of the earlier protocols, seen
    /// before this one was written, predicted by this model and shown apart (never counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<Seen>,
}

/// Held-out kernels of earlier protocols, predicted by a later protocol's model: shown apart,
/// never counted toward the goal (their results shaped the later protocol).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Seen {
    /// The analysis of those measured and profiled.
    pub analysis: Analysis,
    /// Those that could not be tested, with why.
    pub missing: Vec<(String, String)>,
}

/// The held-out test of the board whose folder is `board`: `run-model/` and `ncu-model/`
/// (the training suite and its ncu exports), `run-heldout/` and `ncu-heldout/` (the held-out
/// suite), `<fit>/model.json` (fit_model's fit of that training run under a committed
/// protocol, the one the test follows: a model of no committed protocol is refused). Every held-out benchmark of the protocol
/// is tested or listed as missing with why (not measured, windows shorter than a sensor
/// tick, ncu export missing, partial or not one `--test` run); messages name files under
/// `shown_as` instead of `board`, so the report is the same wherever the folder lies.
pub fn board_report(board: &Path, fit: &str, shown_as: &str) -> Result<BoardReport> {
    let model = EnergyModel::read_json(&board.join(fit).join("model.json"))?;
    let Some(hash) = model.protocol_hash.as_deref() else {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{shown_as}/{fit}/model.json: fitted under no protocol (no protocol_hash): refit it with fit_model"
            ),
        ));
    };
    let (version, protocol) = Protocol::of_hash(hash).map_err(|e| {
        e.context(format!("{shown_as}/{fit}/model.json: refit it with fit_model under a committed protocol"))
    })?;
    // The baselines, fitted on the training kernels the model was fitted on.
    let training = SuiteRun::read_run_and_ncu(&board.join("run-model"), &board.join("ncu-model"))?.under(&protocol)?;
    let (kept, mut left_out) = training.training()?;
    left_out.extend(training.constant_training()?.1);
    let mut spanning_zero = Vec::new();
    for class in &model.classes {
        let regimes = [
            ("switching", Some((class.j_per_unit, class.ci_j))),
            ("constant", class.constant.as_ref().map(|c| (c.j_per_unit, c.ci_j))),
        ];
        for (regime, cost) in regimes {
            match cost {
                Some((_, Some((low, _)))) if low < 0.0 => spanning_zero.push((class.name.clone(), regime.to_string())),
                Some((0.0, None)) => {
                    spanning_zero.push((class.name.clone(), format!("{regime}, held at zero by the fit")))
                }
                _ => {}
            }
        }
    }
    let mut points = Vec::with_capacity(kept.len());
    for o in &kept {
        let (result, launches) = training.profiled(&o.name)?;
        let measured = measured_launches(launches, &o.name)?;
        points.push(TrainingPoint {
            dynamic_j: o.dynamic_j,
            time_s: result.time_s.mean,
            instructions: instructions(&measured).ok().map(|i| i / measured.len() as f64),
        });
    }
    let baselines = Baselines::fit(&points)?;

    let held = SuiteRun::read_run_and_ncu(&board.join("run-heldout"), &board.join("ncu-heldout"))?;
    let relative = |text: String| text.replace(&board.display().to_string(), shown_as);
    let test = |kernels: &[HeldOutKernel], absent_is_missing: bool| {
        let mut cases = Vec::new();
        let mut missing = Vec::new();
        for h in kernels {
            let Some(result) = held.results.get(&h.benchmark) else {
                if absent_is_missing {
                    missing.push((h.benchmark.clone(), "not measured: no result in the run".to_string()));
                }
                continue;
            };
            if let Some(why) = unmeasured(result) {
                missing.push((h.benchmark.clone(), why));
                continue;
            }
            let case = held.profiled(&h.benchmark).and_then(|(result, launches)| {
                Case::measure(&h.benchmark, &h.regime, h.third_party, &model, result, launches)
            });
            match case {
                Ok(c) => cases.push(c),
                Err(e) => missing.push((h.benchmark.clone(), relative(e.to_string()))),
            }
        }
        (cases, missing)
    };
    let (cases, missing) = test(&protocol.held_out, true);
    let analysis = analyse(&cases, &baselines)?;
    // The earlier protocols' held-out kernels this run measured: shown apart.
    let mut earlier = Vec::new();
    for v in 1..version {
        earlier.extend(Protocol::version(v)?.held_out);
    }
    let seen = if earlier.is_empty() {
        None
    } else {
        let (cases, missing) = test(&earlier, false);
        // A run that measured none of them (protocol v3's) shows no such section.
        if cases.is_empty() && missing.is_empty() {
            None
        } else {
            Some(Seen { analysis: analyse(&cases, &baselines)?, missing })
        }
    };
    let shortfalls = analysis.shortfalls(&protocol.acceptance);
    let first =
        held.results.values().next().ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no held-out result"))?;
    Ok(BoardReport {
        gpu: first.device.name.clone(),
        uuid: first.device.uuid.clone(),
        protocol_hash: protocol.hash,
        model_sm_clock_mhz: model.sm_clock_mhz,
        baselines,
        analysis,
        missing,
        shortfalls,
        left_out,
        spanning_zero,
        seen,
    })
}
