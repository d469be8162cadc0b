//! The published energy models on the research's stored runs, priced as `cargo energy
//! explain` prices them (energy-report's `explain`, with the command's choice of launches):
//! the H100 model explains a held-out application kernel as its page reports; a board's
//! two-regime model explains a library call whole, naming the work it has no term for; each
//! model that ships prices its board's held-out ISAMAX as the board's page does, and is that
//! board's published fit byte for byte. The command itself is tested on copies of a few of
//! these files (`cargo-energy/tests/explain.rs`, `cargo-energy/tests/data/`).

use std::path::{Path, PathBuf};

use energy_harness::{Result, ResultFile};
use energy_report::{
    explain, one_call_of, read_ncu_launches, render_markdown, shipped_model_for, EnergyModel, Explanation,
    KernelChoice, SHIPPED_MODELS,
};

/// The research's stored results (`research/results/`).
fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

/// The repository's root: the shipped models' `published` paths are relative to it.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// What `cargo energy explain --result RESULT --model … --ncu NCU [--kernel KERNEL]` computes
/// (cargo-energy/src/explain.rs): the model's metrics read from the export, the launches of
/// `kernel` or else one measured call; and the note the command prints on the launches it chose.
fn explain_stored(
    result: &Path,
    model: &EnergyModel,
    ncu: &Path,
    kernel: Option<&str>,
) -> Result<(Explanation, Option<String>)> {
    let result = ResultFile::read_json(result)?;
    let metrics = model.metric_names_with_unpriced();
    let (launches, note) = match kernel {
        Some(name) => (read_ncu_launches(ncu, KernelChoice::Named(name), Some(&metrics))?, None),
        None => one_call_of(read_ncu_launches(ncu, KernelChoice::All, Some(&metrics))?, result.time_s.mean)?,
    };
    let chosen: Vec<_> = launches.iter().collect();
    Ok((explain(model, &result, &chosen)?, note))
}

/// The `predicted_j` of call `benchmark` on a board's held-out page (`heldout.json`).
fn published_prediction_j(page: &Path, benchmark: &str) -> f64 {
    let page: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(page).unwrap()).unwrap();
    let rows = page["analysis"]["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["case"]["benchmark"] == benchmark).unwrap();
    row["case"]["predicted_j"].as_f64().unwrap()
}

/// The published H100 model (results/model-h100.json) explains an application kernel outside
/// its fit, from the committed run: SGEMV on board 1, as results/model-h100.md reports it
/// (predicted 154.4 mJ against 146.0 mJ measured), with the model's notes.
#[test]
fn the_published_h100_model_explains_a_held_out_kernel() {
    let board = results().join("2026-11-24-model-h100-h200/h100-board1");
    let model = EnergyModel::read_json(&results().join("model-h100.json")).unwrap();
    let (e, _) = explain_stored(
        &board.join("run/app_sgemv_energy.json"),
        &model,
        &board.join("ncu/app_sgemv.csv"),
        Some("sgemv"),
    )
    .unwrap();
    let md = render_markdown(&e, &model);
    assert!(md.contains("DRAM reads") && md.contains("kernel time") && md.contains("Note: fitted on kernels"), "{md}");
    let (predicted, measured) = (e.predicted_dynamic_j, e.measured_dynamic_j.0);
    assert!((predicted * 1e3 - 154.4).abs() < 0.5 && (measured * 1e3 - 146.0).abs() < 0.05, "{predicted} {measured}");
    // The H200's run with the H100's model: refused, not borrowed.
    let h200 = results().join("2026-11-24-model-h100-h200/h200");
    let err = explain_stored(&h200.join("run/app_sgemv_energy.json"), &model, &h200.join("ncu/app_sgemv.csv"), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no fitted model for the NVIDIA H200"), "{err}");
}

/// A held-out run of issue 35 (results/2026-11-26-model-protocol-h100-h200, board 1) with its
/// board's two-regime model, as a user runs it without `--kernel`: a library call of two
/// kernels (cuBLAS SASUM) is explained as one call, its counts summed, and agrees with the
/// published held-out table; a call whose profile counts warpgroup MMA, TMA and atomics (cuBLAS
/// HGEMM) names that work and lies above the bracket; cuRAND's seeding launch is not taken
/// for the call.
#[test]
fn a_library_call_is_explained_whole_with_the_work_it_has_no_term_for() {
    let board = results().join("2026-11-26-model-protocol-h100-h200/h100-board1");
    let model = EnergyModel::read_json(&board.join("fit/model.json")).unwrap();
    // The command's output (the markdown, then the note on the launches it chose) and its JSON.
    let run = |name: &str| {
        let result = board.join(format!("run-heldout/{name}_energy.json"));
        let ncu = board.join(format!("ncu-heldout/{name}.csv"));
        let (e, note) = explain_stored(&result, &model, &ncu, None).unwrap();
        let out = format!("{}\n{}", render_markdown(&e, &model), note.unwrap_or_default());
        (out, serde_json::to_value(&e).unwrap())
    };
    let page = board.join("heldout.json");
    let (out, e) = run("heldout_cublas_sasum_own");
    assert!(out.contains("explaining one call: 2 launch(es) of asum_kernel"), "{out}");
    let predicted = e["predicted_dynamic_j"].as_f64().unwrap();
    let published = published_prediction_j(&page, "heldout_cublas_sasum_own");
    assert!((predicted / published - 1.0).abs() < 1e-9, "{predicted} against the table's {published}");
    assert_eq!(e["bracket"]["placement"], "inside");

    let (out, e) = run("heldout_cublas_hgemm_own");
    assert_eq!(e["bracket"]["placement"], "above", "{out}");
    let unpriced: Vec<&str> = e["unpriced"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(unpriced, ["wgmma", "tma", "atomics"], "{out}");
    assert!(out.contains("Work the model has no term for: **wgmma**"), "{out}");

    let (out, e) = run("heldout_curand_uniform_own");
    assert!(out.contains("1 launch(es) of gen_sequenced"), "{out}");
    let published = published_prediction_j(&page, "heldout_curand_uniform_own");
    assert!((e["predicted_dynamic_j"].as_f64().unwrap() / published - 1.0).abs() < 1e-9);
}

/// Each model that ships is the one `cargo energy explain` takes for its board's results, and
/// prices the board's held-out cuBLAS ISAMAX call as the board's page does (the same model,
/// the same ncu export).
#[test]
fn each_shipped_model_prices_its_boards_held_out_call_as_its_page_does() {
    for m in SHIPPED_MODELS {
        let board = repo().join(m.published).parent().and_then(Path::parent).unwrap().to_path_buf();
        let result = board.join("run-heldout/heldout_cublas_isamax_own_energy.json");
        let (model, shipped) = shipped_model_for(&ResultFile::read_json(&result).unwrap().device.name).unwrap();
        assert_eq!(shipped.gpu, m.gpu);
        let ncu = board.join("ncu-heldout/heldout_cublas_isamax_own.csv");
        let (e, _) = explain_stored(&result, &model, &ncu, None).unwrap();
        let published = published_prediction_j(&board.join("heldout.json"), "heldout_cublas_isamax_own");
        let predicted = e.predicted_dynamic_j;
        assert!(
            (predicted / published - 1.0).abs() < 1e-9,
            "{}: {predicted} J against the page's {published} J",
            m.gpu
        );
    }
}

/// Each shipped model is its published fit, byte for byte.
#[test]
fn the_shipped_models_are_the_published_fits_byte_for_byte() {
    for m in SHIPPED_MODELS {
        let published = std::fs::read_to_string(repo().join(m.published)).unwrap();
        assert_eq!(m.text, published, "{} differs from {}", m.gpu, m.published);
        assert!(m.text.contains(&format!("\"gpu\": \"{}\"", m.gpu)), "{}", m.gpu);
    }
}
