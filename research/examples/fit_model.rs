//! Fits a GPU's energy model from a model-suite run and checks it on the applications.
//!
//! ```sh
//! cargo run --release --example fit_model -- RUN_DIR NCU_DIR OUT_DIR
//! ```
//!
//! RUN_DIR is the run of `cargo bench --bench model` (`target/energy/new`), NCU_DIR holds one
//! Nsight Compute export per benchmark (`<benchmark>.csv`, from `ncu ... ./model --bench
//! --test --exact <benchmark>/energy`). Writes OUT_DIR/model.json (`energy-model/1`, what
//! `cargo energy explain --model` reads), OUT_DIR/fit.md and fit.json (the costs, the fit of
//! the training kernels, the prediction of every application kernel by set), and each
//! application's explanation (OUT_DIR/apps/<benchmark>.md, .svg), as `cargo energy explain`
//! prints it.
//!
//! `--protocol v2` fits under protocol v2 (`research/results/model-protocol-v2.json`: its terms and
//! its training kernels), `--protocol v3` under v3 (v2's terms and training kernels, and the
//! power-limit tolerance the model then states); the default is v1, the protocol of the fits
//! published before them.
//!
//! With `--predict-with MODEL` nothing is fitted: the applications of the run are predicted
//! with MODEL (another board's fit: does the model carry from board to board?), and a model
//! of another GPU model is refused.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use energy_harness::Result;
use energy_report::{render_markdown as render_explanation, render_svg as explanation_svg, EnergyModel, Explanation};
use energy_results::trace::format::write_atomically;
use energy_suites::model::{
    clock_range, fit_regimes, mape_pct, SuiteRun, HELD_OUT_APPS, SELECTION_APPS, ZERO_OPERAND_APPS,
};
use energy_suites::protocol::Protocol;
use serde::Serialize;

/// The model's note on the work it has no term for: the protocol's candidate terms.
fn unpriced_note(protocol: &Protocol) -> String {
    if protocol.candidate_terms.iter().any(|c| c.name == "wgmma") {
        // Protocol v1's wording, as its published models hold it.
        return "atomics, texture, TMA, warpgroup MMA (wgmma) and local memory have no term: their energy falls in \
                `unexplained`"
            .into();
    }
    let names: Vec<&str> = protocol.candidate_terms.iter().map(|c| c.name.as_str()).collect();
    format!("{}, texture and local memory have no term: their energy falls in `unexplained`", names.join(", "))
}

#[derive(Serialize)]
struct Prediction {
    benchmark: String,
    set: &'static str,
    measured_dynamic_j: f64,
    predicted_dynamic_j: f64,
    error_pct: f64,
    /// SM clock range of its windows, MHz (below the model's: at the power cap).
    sm_clock_mhz: Option<(u32, u32)>,
}

#[derive(Serialize)]
struct FitReport {
    gpu: String,
    fitted_on: Vec<String>,
    sm_clock_mhz: f64,
    in_sample: Vec<(String, f64, f64)>,
    in_sample_mape_pct: f64,
    left_out: Vec<String>,
    predictions: Vec<Prediction>,
    /// `None` when the run has no application kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    selection_mape_pct: Option<f64>,
    /// `None` when the run has no application kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    held_out_mape_pct: Option<f64>,
    /// Applications measured but not profiled (their ncu export missing or cut short): not
    /// predicted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_profiled: Vec<String>,
}

fn main() -> ExitCode {
    let mut args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let mut version = 1;
    if let Some(at) = args.iter().position(|a| a.as_os_str() == "--protocol") {
        let parsed = args.get(at + 1).and_then(|v| v.to_str()).and_then(|v| v.strip_prefix('v')?.parse().ok());
        let Some(v) = parsed else {
            eprintln!("--protocol takes a version: v1, v2 or v3");
            return ExitCode::from(2);
        };
        version = v;
        args.drain(at..at + 2);
    }
    let (given, args) = match args.as_slice() {
        [flag, model, rest @ ..] if flag.as_os_str() == "--predict-with" => (Some(model.clone()), rest.to_vec()),
        _ => (None, args),
    };
    let [run, ncu, out] = args.as_slice() else {
        eprintln!("usage: fit_model [--protocol v1|v2|v3] [--predict-with MODEL] RUN_DIR NCU_DIR OUT_DIR");
        return ExitCode::from(2);
    };
    match Protocol::version(version).and_then(|p| run_fit(&p, run, ncu, out, given.as_deref())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_fit(protocol: &Protocol, run: &Path, ncu: &Path, out: &Path, given: Option<&Path>) -> Result<()> {
    let suite = SuiteRun::read_run_and_ncu(run, ncu)?.under(protocol)?;
    let (training, mut left_out) = suite.training()?;
    // The constant-data kernels (`train_*_const`), when the run has them: a second fit.
    let (constant_training, constant_left_out) = suite.constant_training()?;
    left_out.extend(constant_left_out);
    for reason in &left_out {
        eprintln!("left out of the fit: {reason}");
    }
    let kept: Vec<&str> = training.iter().map(|o| o.name.as_str()).collect();
    let train_results: Vec<_> =
        suite.results.iter().filter(|(n, _)| kept.contains(&n.as_str())).map(|(_, r)| r).collect();
    let first = train_results.first().ok_or_else(|| {
        energy_harness::Error::new(energy_harness::ErrorKind::InvalidInput, "no training kernel in the run")
    })?;
    let mut uuids: Vec<String> = train_results.iter().map(|r| r.device.uuid.clone()).collect();
    uuids.sort();
    uuids.dedup();
    // Every kernel kept ran at this clock in all its windows (the others were left out).
    let clock = suite.reference_clock_mhz();
    let idle_w = train_results.iter().map(|r| r.idle_w).sum::<f64>() / train_results.len() as f64;
    let template = EnergyModel {
        format: String::new(),
        gpu: first.device.name.clone(),
        fitted_on: uuids.clone(),
        sm_clock_mhz: f64::from(clock.unwrap_or(0)),
        source: format!(
            "model suite (cargo bench --bench model), {} training kernels, {}; SM clock {} in every window, read, never set",
            training.len(),
            first.timestamp.get(..10).unwrap_or(&first.timestamp),
            clock.map_or("not recorded".to_string(), |c| format!("{c} MHz"))
        ),
        classes: suite.selection.classes.clone(),
        active_idle_w: Some(idle_w),
        // The fit protocol (term list, training and held-out sets) this fit follows.
        protocol_hash: Some(protocol.hash.clone()),
        // From protocol v3: predictions bounded by the board's power limit.
        power_limit_tolerance: protocol.power_limit_tolerance,
        notes: vec![
            "fitted on kernels whose data has full entropy (random mantissas); zero or constant operands draw less \
             (a GEMM with zero operands: 35–40 % less dynamic energy, over-predicted by the model)"
                .into(),
            unpriced_note(protocol),
        ],
    };
    let (mut fitted, constant_fit) = fit_regimes(&training, &constant_training, template)?;
    if constant_fit.is_some() {
        // Two regimes: the note on full-entropy data no longer says what the model holds for.
        fitted.model.notes[0] = format!(
            "fitted in two data regimes: switching data (random operands, {} kernels: each class's j_per_unit) and \
             constant data ({} train_*_const kernels: each class's constant cost); a kernel's dynamic energy is \
             expected between the two",
            training.len(),
            constant_training.len()
        );
    }
    if let Some(path) = given {
        // The given model prices this run's kernels; the in-sample figures are its, here.
        let model = EnergyModel::read_json(path)?;
        fitted.in_sample = training
            .iter()
            .map(|o| (o.name.clone(), o.dynamic_j, o.predicted_j(model.classes.iter().map(|c| c.j_per_unit))))
            .collect();
        fitted.in_sample_mape_pct = mape_pct(fitted.in_sample.iter().map(|(_, m, p)| (*m, *p))).unwrap_or_default();
        fitted.model = model;
    }
    std::fs::create_dir_all(out.join("apps"))
        .map_err(|e| energy_harness::Error::io(out, "create the output folder", e))?;
    let model_json = serde_json::to_string_pretty(&fitted.model)
        .map_err(|e| energy_harness::Error::new(energy_harness::ErrorKind::Format, e.to_string()))?;
    write_atomically(&out.join("model.json"), (model_json + "\n").as_bytes())?;

    let sets: [(&'static str, &[&str]); 3] =
        [("held out", &HELD_OUT_APPS), ("term selection", &SELECTION_APPS), ("zero operands", &ZERO_OPERAND_APPS)];
    let mut predictions = Vec::new();
    let mut explanations: Vec<Explanation> = Vec::new();
    let mut not_profiled = Vec::new();
    // A run of the training kernels alone (protocol v2's runs) predicts no application.
    let apps_run = sets.iter().flat_map(|(_, names)| names.iter()).any(|n| suite.results.contains_key(*n));
    for (set, names) in sets.into_iter().filter(|_| apps_run) {
        for &name in names {
            if let Some(why) = suite.unprofiled.get(name) {
                eprintln!("not predicted: {why}");
                not_profiled.push(name.to_string());
                continue;
            }
            let e = suite.explain(name, &fitted.model)?;
            write_atomically(
                &out.join("apps").join(format!("{name}.md")),
                render_explanation(&e, &fitted.model).as_bytes(),
            )?;
            write_atomically(&out.join("apps").join(format!("{name}.svg")), explanation_svg(&e).as_bytes())?;
            predictions.push(Prediction {
                benchmark: name.into(),
                set,
                measured_dynamic_j: e.measured_dynamic_j.0,
                predicted_dynamic_j: e.predicted_dynamic_j,
                error_pct: (e.predicted_dynamic_j / e.measured_dynamic_j.0 - 1.0) * 100.0,
                sm_clock_mhz: suite.results.get(name).and_then(clock_range),
            });
            explanations.push(e);
        }
    }
    // The sets are fixed lists, each explained above when the run has applications.
    let set_mape = |set: &str| {
        mape_pct(predictions.iter().filter(|p| p.set == set).map(|p| (p.measured_dynamic_j, p.predicted_dynamic_j)))
    };
    let report = FitReport {
        gpu: fitted.model.gpu.clone(),
        fitted_on: uuids,
        sm_clock_mhz: fitted.model.sm_clock_mhz,
        in_sample: fitted.in_sample.clone(),
        in_sample_mape_pct: fitted.in_sample_mape_pct,
        left_out,
        selection_mape_pct: set_mape("term selection"),
        held_out_mape_pct: set_mape("held out"),
        predictions,
        not_profiled,
    };
    let mut md = render(&fitted.model, &report, &training);
    if let Some(constant_fit) = &constant_fit {
        md.push_str(&render_constant(&fitted.model, constant_fit, &constant_training));
    }
    write_atomically(&out.join("fit.md"), md.as_bytes())?;
    let js = serde_json::to_string_pretty(&report)
        .map_err(|e| energy_harness::Error::new(energy_harness::ErrorKind::Format, e.to_string()))?;
    write_atomically(&out.join("fit.json"), (js + "\n").as_bytes())?;
    println!("{md}");
    println!("wrote {}", out.display());
    Ok(())
}

/// The constant-data costs beside the switching-data ones, and the constant fit's training
/// kernels (only for a run with `train_*_const` kernels).
fn render_constant(
    model: &EnergyModel,
    constant_fit: &energy_suites::model::ModelFit,
    training: &[energy_suites::model::Observation],
) -> String {
    let pj = |j: f64, ci: Option<(f64, f64)>, time: bool| {
        let f = if time { 1.0 } else { 1e12 };
        let u = if time { " W" } else { " pJ" };
        format!(
            "{:.2}{u}{}",
            j * f,
            ci.map_or(" (held at zero)".to_string(), |(a, b)| format!(" [{:.2}, {:.2}]", a * f, b * f))
        )
    };
    let mut s = String::from(
        "\n## Costs on constant data (train_*_const)\n\n| term | constant data [95 % CI] | switching data [95 % CI] | constant above switching |\n|---|---|---|---|\n",
    );
    for c in &model.classes {
        let Some(k) = c.constant else { continue };
        let time = c.kind == "time";
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.name,
            pj(k.j_per_unit, k.ci_j, time),
            pj(c.j_per_unit, c.ci_j, time),
            if c.constant_exceeds_switching() { "yes, beyond the intervals (kept as fitted)" } else { "" }
        ));
    }
    s.push_str("\n| constant-data kernel | measured dynamic, mJ | predicted, mJ | error |\n|---|---|---|---|\n");
    for (name, m, p) in &constant_fit.in_sample {
        s.push_str(&format!("| {name} | {:.1} | {:.1} | {:+.1} % |\n", m * 1e3, p * 1e3, (p / m - 1.0) * 100.0));
    }
    s.push_str(&format!(
        "\nMean absolute error in sample (constant data, {} kernels): {:.1} %.\n",
        training.len(),
        constant_fit.in_sample_mape_pct
    ));
    s
}

fn render(model: &EnergyModel, report: &FitReport, training: &[energy_suites::model::Observation]) -> String {
    let mut s = format!(
        "## Costs ({}, {} MHz; fitted on {})\n\n| term | unit | dynamic energy per unit [95 % CI] | training kernels using it |\n|---|---|---|---|\n",
        model.gpu,
        model.sm_clock_mhz,
        model.fitted_on.join(", ")
    );
    for (i, c) in model.classes.iter().enumerate() {
        let using = training.iter().filter(|o| o.units[i] > 0.0).count();
        let (value, ci) = if c.kind == "time" {
            (format!("{:.2} W", c.j_per_unit), c.ci_j.map(|(a, b)| format!(" [{a:.2}, {b:.2}]")))
        } else {
            (
                format!("{:.0} pJ", c.j_per_unit * 1e12),
                c.ci_j.map(|(a, b)| format!(" [{:.0}, {:.0}]", a * 1e12, b * 1e12)),
            )
        };
        let ci = ci.unwrap_or_else(|| " (held at zero)".into());
        s.push_str(&format!("| {} | {} | {value}{ci} | {using} |\n", c.name, c.unit));
    }
    s.push_str(&format!(
        "\nActive idle (static) power during the fit: {}.\n\n## Training kernels (in sample)\n\n| kernel | measured dynamic, mJ | predicted, mJ | error |\n|---|---|---|---|\n",
        model.active_idle_w.map_or("not recorded".to_string(), |w| format!("{w:.1} W"))
    ));
    for (name, m, p) in &report.in_sample {
        s.push_str(&format!("| {name} | {:.1} | {:.1} | {:+.1} % |\n", m * 1e3, p * 1e3, (p / m - 1.0) * 100.0));
    }
    for reason in &report.left_out {
        s.push_str(&format!("\nLeft out of the fit: {reason}.\n"));
    }
    s.push_str(&format!("\nMean absolute error in sample: {:.1} %.\n", report.in_sample_mape_pct));
    if report.predictions.is_empty() && report.not_profiled.is_empty() {
        s.push_str("\nNo application kernel in this run (the training kernels alone were measured).\n");
        return s;
    }
    s.push_str(
        "\n## Application kernels (not in the fit)\n\n| kernel | set | measured dynamic, mJ | predicted, mJ | error | SM clock, MHz |\n|---|---|---|---|---|---|\n",
    );
    for p in &report.predictions {
        let clock = match p.sm_clock_mhz {
            Some((low, high)) if low == high => format!("{low}"),
            Some((low, high)) => format!("{low}–{high} (power cap)"),
            None => "-".into(),
        };
        s.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} % | {clock} |\n",
            p.benchmark,
            p.set,
            p.measured_dynamic_j * 1e3,
            p.predicted_dynamic_j * 1e3,
            p.error_pct
        ));
    }
    let predicted = |set: &str| report.predictions.iter().filter(|p| p.set == set).count();
    // A set whose applications were all left unpredicted has no mean: a dash, never NaN.
    let mean = |m: Option<f64>| m.map_or("–".to_string(), |m| format!("{m:.1} %"));
    s.push_str(&format!(
        "\nMean absolute error: held out {} ({} kernels); term selection {} ({} kernels).\n",
        mean(report.held_out_mape_pct),
        predicted("held out"),
        mean(report.selection_mape_pct),
        predicted("term selection")
    ));
    if !report.not_profiled.is_empty() {
        s.push_str(&format!(
            "\nNot predicted (measured, their ncu profile missing or cut short): {}.\n",
            report.not_profiled.join(", ")
        ));
    }
    s
}
