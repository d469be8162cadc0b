//! `cargo energy explain` on a real saxpy result and its real ncu export (H100), priced with
//! a **test fixture** model written here (two data-movement classes; not a fitted model): the
//! arithmetic, the outputs and every refusal; and on real held-out calls of cuBLAS ISAMAX
//! (H100, H200) with the models that ship. The files are copies under `tests/data/` (their
//! READMEs say from where). The published models on the research's own stored runs:
//! `research/tests/explain_stored_runs.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use energy_results::archive::read_archived;
use serde_json::json;

/// The fixtures: real saxpy results of an H100 and an H200 and the H100's ncu export
/// (`saxpy-h100/`, `saxpy-h200/`), and the held-out ISAMAX calls (`isamax-*/`), each stored
/// gzipped and read as written (`<file>.gz` where `<file>` is absent).
fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The text of a fixture, stored gzipped as `<path>.gz`.
fn fixture_text(path: &Path) -> String {
    String::from_utf8(read_archived(path).unwrap()).unwrap()
}

fn fixture_model(dir: &Path, gpu: &str) -> PathBuf {
    let model = json!({
        "format": "energy-model/1",
        "gpu": gpu,
        "fitted_on": ["test fixture"],
        "sm_clock_mhz": 1980.0,
        "source": "test fixture, not fitted",
        "classes": [
            {"name": "DRAM loads", "kind": "data movement", "unit": "32 B sector",
             "ncu_metrics": ["dram__bytes_read.sum"], "scale": 1.0 / 32.0, "j_per_unit": 3.0e-9, "ci_j": [2.9e-9, 3.1e-9]},
            {"name": "stores", "kind": "data movement", "unit": "32 B sector",
             "ncu_metrics": ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"], "scale": 1.0, "j_per_unit": 2.0e-9, "ci_j": null}
        ]
    });
    let path = dir.join(format!("{}.json", gpu.replace(' ', "_")));
    std::fs::write(&path, serde_json::to_string_pretty(&model).unwrap()).unwrap();
    path
}

fn explain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-energy")).arg("explain").args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn a_kernel_is_priced_term_by_term_beside_its_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path(), "NVIDIA H100 80GB HBM3");
    let result = data().join("saxpy-h100/saxpy_energy.json");
    let ncu = data().join("saxpy-h100/saxpy-ncu.csv");
    let out_dir = dir.path().join("out");
    let o = explain(&[
        "--result",
        result.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
        "--kernel",
        "saxpy",
        "--output",
        out_dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let md = text(&o);
    assert!(md.contains("| DRAM loads | data movement | 4194") && md.contains("3 profiled launch"), "{md}");
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("explain.json")).unwrap()).unwrap();
    // Hand arithmetic: the mean DRAM bytes of the three launches / 32 x 3 nJ + stores x 2 nJ.
    let bytes = (134_228_736.0 + 134_226_688.0 + 134_226_176.0) / 3.0;
    let expect = bytes / 32.0 * 3.0e-9 + 2_097_152.0 * 2.0e-9;
    let predicted = e["predicted_dynamic_j"].as_f64().unwrap();
    assert!((predicted - expect).abs() < 1e-9 * expect, "{predicted} against {expect}");
    let measured = e["measured_dynamic_j"][0].as_f64().unwrap();
    assert!((e["unexplained_j"].as_f64().unwrap() - (measured - predicted)).abs() < 1e-12);
    assert!(std::fs::read_to_string(out_dir.join("explain.svg")).unwrap().starts_with("<svg"));
    assert!(out_dir.join("explain.md").exists());
}

#[test]
fn explain_refuses_what_it_cannot_price() {
    let dir = tempfile::tempdir().unwrap();
    let h100_model = fixture_model(dir.path(), "NVIDIA H100 80GB HBM3");
    let h200 = data().join("saxpy-h200/saxpy_energy.json");
    let h100 = data().join("saxpy-h100/saxpy_energy.json");
    let ncu = data().join("saxpy-h100/saxpy-ncu.csv");
    // Another GPU model: no borrowed model.
    let o = explain(&[
        "--result",
        h200.to_str().unwrap(),
        "--model",
        h100_model.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no fitted model for the NVIDIA H200"), "{}", text(&o));
    // No ncu data: the command that produces it, with the model's metrics.
    let o =
        explain(&["--result", h100.to_str().unwrap(), "--model", h100_model.to_str().unwrap(), "--kernel", "saxpy"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("ncu --clock-control none --cache-control none --kernel-name saxpy")
            && text(&o).contains("dram__bytes_read.sum")
            && text(&o).contains("smsp__inst_executed_pipe_tensor_op_gmma.sum"),
        "{}",
        text(&o)
    );
    // Without --kernel: the benchmark's `--test` run, every kernel of its calls (explain's default).
    let o = explain(&["--result", h100.to_str().unwrap(), "--model", h100_model.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--bench --test --exact ") && !text(&o).contains("--kernel-name"), "{}", text(&o));
    // A metric the export lacks is named with the command.
    let mut model: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&h100_model).unwrap()).unwrap();
    model["classes"][0]["ncu_metrics"] = json!(["sm__inst_executed_pipe_fma.sum"]);
    let lacking = dir.path().join("lacking.json");
    std::fs::write(&lacking, model.to_string()).unwrap();
    let o = explain(&[
        "--result",
        h100.to_str().unwrap(),
        "--model",
        lacking.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("sm__inst_executed_pipe_fma.sum") && text(&o).contains("profile with"), "{}", text(&o));
    // A file that is not a model: the result itself (models are read plain, not gzipped).
    let not_a_model = dir.path().join("saxpy_energy.json");
    std::fs::write(&not_a_model, fixture_text(&h100)).unwrap();
    let o = explain(&[
        "--result",
        h100.to_str().unwrap(),
        "--model",
        not_a_model.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not an energy model"), "{}", text(&o));
    // An unknown kernel name lists the launches there are.
    let o = explain(&[
        "--result",
        h100.to_str().unwrap(),
        "--model",
        h100_model.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
        "--kernel",
        "gemm",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no launch of `gemm`") && text(&o).contains("saxpy"), "{}", text(&o));
}

/// docs/RELIABILITY.md, "Explain: models and ncu exports": a model or an export with an
/// impossible figure is refused (exit 2) with the file, the field and what to do, never
/// priced into a table of negative or infinite µJ.
#[test]
fn impossible_models_and_exports_are_refused_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let model_path = fixture_model(dir.path(), "NVIDIA H100 80GB HBM3");
    let h100 = data().join("saxpy-h100/saxpy_energy.json");
    let ncu = data().join("saxpy-h100/saxpy-ncu.csv");
    let run = |model: &Path, ncu: &Path| {
        explain(&[
            "--result",
            h100.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
            "--ncu",
            ncu.to_str().unwrap(),
            "--kernel",
            "saxpy",
        ])
    };
    let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&model_path).unwrap()).unwrap();
    let with = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut model = fixture.clone();
        edit(&mut model);
        let path = dir.path().join(name);
        std::fs::write(&path, model.to_string()).unwrap();
        path
    };
    let expect = |o: &Output, needles: &[&str]| {
        let t = text(o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        for needle in needles {
            assert!(t.contains(needle), "`{needle}` not in:\n{t}");
        }
        assert!(!t.contains("µJ") && !t.contains("panicked"), "{t}");
    };
    let negative = with("negative.json", &|m| m["classes"][0]["j_per_unit"] = json!(-3.0e-9));
    expect(
        &run(&negative, &ncu),
        &[
            "negative.json: class 1 (`DRAM loads`): j_per_unit -3e-9 J is not a cost",
            "the model is corrupt: fit it again",
        ],
    );
    let inverted = with("inverted.json", &|m| m["classes"][0]["ci_j"] = json!([3.1e-9, 2.9e-9]));
    expect(&run(&inverted, &ncu), &["inverted.json: class 1 (`DRAM loads`): the interval ci_j [3.1e-9, 2.9e-9] J"]);
    // A scale of 1e300 is a positive number, but what it prices is more than any GPU draws.
    let huge = with("huge.json", &|m| m["classes"][1]["scale"] = json!(1e300));
    expect(
        &run(&huge, &ncu),
        &[
            "huge.json with ",
            "saxpy-ncu.csv: the model predicts 4.1943e297 J per launch (`stores` alone",
            "more than any GPU draws in the launch's measured 76.32 µs (381.6 mJ at 5000 W)",
        ],
    );
    let zero_scale = with("zero.json", &|m| m["classes"][1]["scale"] = json!(0.0));
    expect(&run(&zero_scale, &ncu), &["class 2 (`stores`): scale 0 is not a positive number"]);
    let clock = with("clock.json", &|m| m["sm_clock_mhz"] = json!(-1980.0));
    expect(&run(&clock, &ncu), &["sm_clock_mhz -1980 is not a GPU's clock"]);
    // More subtracted than counted: a negative count.
    let subtracts = with("subtracts.json", &|m| {
        m["classes"][1]["subtract_metrics"] = json!(["dram__bytes_read.sum"]);
    });
    expect(
        &run(&subtracts, &ncu),
        &[
            "subtracts.json with ",
            "class `stores` counts -1.32131584e8 units",
            "in ncu launch 0 (`saxpy`)",
            "never negative",
        ],
    );
    // A result whose dynamic energy is more than its total: static energy would be negative.
    // The result reader refuses it first (explain's own check stays for results made in memory).
    let mut result: serde_json::Value = serde_json::from_str(&fixture_text(&h100)).unwrap();
    result["dynamic_j"] = json!({"mean": 0.04, "ci_low": 0.039, "ci_high": 0.041, "n": 10, "std_dev": 0.001});
    let more = dir.path().join("more.json");
    std::fs::write(&more, result.to_string()).unwrap();
    let o = explain(&[
        "--result",
        more.to_str().unwrap(),
        "--model",
        model_path.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
    ]);
    expect(&o, &["`saxpy/energy` dynamic_j: mean 0.04 is above the total energy 0.0320415636"]);
    // A negative count in the export.
    let export = fixture_text(&ncu).replace("\"134,228,736\"", "\"-134,228,736\"");
    let bad_ncu = dir.path().join("negative-ncu.csv");
    std::fs::write(&bad_ncu, export).unwrap();
    expect(
        &run(&model_path, &bad_ncu),
        &[
            "negative-ncu.csv: line 37: launch 0 (saxpy): `dram__bytes_read.sum` is -134,228,736",
            "never negative; the export is corrupt: profile the kernel again",
        ],
    );
}

/// A result id with `<` and `&` is escaped in the SVG (the markdown and JSON carry it as
/// it is).
#[test]
fn a_result_id_is_escaped_in_the_svg() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path(), "NVIDIA H100 80GB HBM3");
    let mut result: serde_json::Value =
        serde_json::from_str(&fixture_text(&data().join("saxpy-h100/saxpy_energy.json"))).unwrap();
    result["id"] = json!("saxpy<f32> & co/energy");
    let result_path = dir.path().join("result.json");
    std::fs::write(&result_path, result.to_string()).unwrap();
    let out = dir.path().join("out");
    let o = explain(&[
        "--result",
        result_path.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--ncu",
        data().join("saxpy-h100/saxpy-ncu.csv").to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let svg = std::fs::read_to_string(out.join("explain.svg")).unwrap();
    assert!(svg.contains(">saxpy&lt;f32&gt; &amp; co/energy: energy per launch"), "{svg}");
    assert!(!svg.contains("<f32>") && !svg.contains("& co"), "{svg}");
    // Every `&` starts an entity, every `<` a tag.
    assert_eq!(
        svg.matches('&').count(),
        svg.matches("&amp;").count() + svg.matches("&lt;").count() + svg.matches("&gt;").count()
    );
}

/// An export of 5,000 kernels without the one asked for: the closest names and the count,
/// not a list of every launch (665 kB before).
#[test]
fn an_absent_kernel_among_thousands_names_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path(), "NVIDIA H100 80GB HBM3");
    let mut export = String::from("\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n\"\",\"\",\"byte\"\n");
    for i in 0..5000 {
        export.push_str(&format!("\"{i}\",\"kernel_{i:05}\",\"1024\"\n"));
    }
    let ncu = dir.path().join("many.csv");
    std::fs::write(&ncu, export).unwrap();
    let o = explain(&[
        "--result",
        data().join("saxpy-h100/saxpy_energy.json").to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--ncu",
        ncu.to_str().unwrap(),
        "--kernel",
        "kernel_4242x",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.len() < 1500, "{} bytes:\n{t}", t.len());
    assert!(
        t.contains("many.csv: no launch of `kernel_4242x` among its 5000 launches of 5000 kernels; the closest names: `kernel_04242`"),
        "{t}"
    );
    assert!(t.contains("(4992 more)"), "{t}");
}

/// Protocol v3's board 6: its held-out ISAMAX on its own data, as measured and profiled there
/// (`tests/data/isamax-h100-board6/`).
fn board6() -> PathBuf {
    data().join("isamax-h100-board6")
}

/// `cargo energy explain NAME`: the benchmark's result found in the run, the model that ships
/// for its GPU chosen, ncu run on its `--test` run (a stand-in here, which prints the board's
/// real export and records how it was called), and a page that opens with the bracket.
#[test]
fn a_benchmark_is_explained_by_name_with_the_shipped_model_and_ncu_run_for_it() {
    use energy_harness::unstable::report::RunWriter;
    use energy_results::run::Invocation;
    let dir = tempfile::tempdir().unwrap();
    let energy = dir.path().join("energy");
    let result =
        energy_harness::ResultFile::read_json(&board6().join("heldout_cublas_isamax_own_energy.json")).unwrap();
    let w = RunWriter::begin(&energy.join("new"), "heldout", &Invocation { key: "test:explain".into() }).unwrap();
    let json = serde_json::to_string_pretty(&result).unwrap();
    w.commit(&result.id, "isamax", &result.device, [json.as_bytes(), b"# energy-trace v1\n", b"<svg/>"]).unwrap();
    w.finish(0).unwrap();
    let export = board6().join("heldout_cublas_isamax_own.csv.gz");
    let ncu = dir.path().join("ncu");
    let seen = dir.path().join("ncu-args.txt");
    std::fs::write(&ncu, format!("#!/bin/sh\necho \"$@\" > '{}'\ngzip -dc '{}'\n", seen.display(), export.display()))
        .unwrap();
    std::fs::set_permissions(&ncu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |name: &str, ncu_env: Option<&Path>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cargo-energy"));
        c.args(["explain", name, "--dir", energy.to_str().unwrap(), "--exe", "/bin/true"]);
        match ncu_env {
            Some(p) => c.env("NCU", p),
            None => c.env_remove("NCU").env("PATH", "/usr/bin:/bin"),
        };
        c.output().unwrap()
    };
    let o = run("heldout_cublas_isamax_own", Some(&ncu));
    assert!(o.status.success(), "{}", text(&o));
    let page = String::from_utf8_lossy(&o.stdout).to_string();
    let lead: String = page.lines().take(6).collect::<Vec<_>>().join("\n");
    assert!(lead.contains("**Measured") && lead.contains("the model brackets it from"), "{lead}");
    assert!(lead.contains("Largest terms"), "{lead}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("model: the one that ships for the NVIDIA H100 80GB HBM3: protocol v3"), "{err}");
    let args = std::fs::read_to_string(&seen).unwrap();
    for expected in ["--clock-control none", "--cache-control none", "--csv --page raw", "/bin/true --bench --test"] {
        assert!(args.contains(expected), "ncu called without `{expected}`: {args}");
    }
    assert!(args.contains("--exact heldout_cublas_isamax_own/energy"), "{args}");
    assert!(energy.join("explain/heldout_cublas_isamax_own_energy-ncu.csv").exists());
    // The board's own page priced this call at 85.02 mJ with the same model.
    let json_out = Command::new(env!("CARGO_BIN_EXE_cargo-energy"))
        .args(["explain", "heldout_cublas_isamax_own", "--dir", energy.to_str().unwrap(), "--json", "--ncu"])
        .arg(energy.join("explain/heldout_cublas_isamax_own_energy-ncu.csv"))
        .output()
        .unwrap();
    assert!(json_out.status.success(), "{}", text(&json_out));
    let e: serde_json::Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let predicted = e["predicted_dynamic_j"].as_f64().unwrap();
    assert!((predicted * 1e3 - 85.02).abs() < 0.01, "{predicted}");
    // ncu that fails: its exit and the end of its stderr, in order.
    let failing = dir.path().join("ncu-failing");
    std::fs::write(&failing, "#!/bin/sh\necho 'first line' >&2\necho 'last line' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&failing, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = run("heldout_cublas_isamax_own", Some(&failing));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("ncu could not profile `heldout_cublas_isamax_own/energy`: it exited with code 3"), "{t}");
    assert!(t.find("first line").is_some_and(|a| t.find("last line").is_some_and(|b| a < b)), "{t}");
    // Without ncu: the command to run, exit 2.
    let o = run("heldout_cublas_isamax_own", None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("ncu is not installed") && text(&o).contains("ncu --clock-control none"), "{}", text(&o));
    // A name the run lacks: the ids it holds.
    let o = run("heldout_nothing", Some(&ncu));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no measured result of `heldout_nothing`"), "{}", text(&o));
    assert!(text(&o).contains("heldout_cublas_isamax_own/energy"), "{}", text(&o));
}

/// A result of a GPU model no model ships for is refused, naming how to fit one.
#[test]
fn a_gpu_without_a_shipped_model_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let result = fixture_text(&data().join("saxpy-h200/saxpy_energy.json"));
    assert!(result.contains("\"name\": \"NVIDIA H200\""));
    let a100 = dir.path().join("saxpy_energy.json");
    std::fs::write(&a100, result.replace("\"name\": \"NVIDIA H200\"", "\"name\": \"NVIDIA A100-SXM4-80GB\"")).unwrap();
    let o = explain(&["--result", a100.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("no energy model ships for the NVIDIA A100-SXM4-80GB") && t.contains("--model FILE"), "{t}");
    assert!(t.contains("models ship for: NVIDIA H100 80GB HBM3, NVIDIA H200"), "{t}");
}

/// An H200 result is explained with the H200 model that ships, and prices the call as the
/// board's held-out page does (the same model, the same ncu export): protocol v3's H200 board 1,
/// its held-out ISAMAX (`tests/data/isamax-h200-board1/`).
#[test]
fn an_h200_result_takes_the_h200_model_that_ships() {
    let board = data().join("isamax-h200-board1");
    // Both archived gzipped, read as written (`<file>.gz` where `<file>` is absent).
    let result = board.join("heldout_cublas_isamax_own_energy.json");
    let ncu = board.join("heldout_cublas_isamax_own.csv");
    let o = explain(&["--result", result.to_str().unwrap(), "--ncu", ncu.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("model: the one that ships for the NVIDIA H200: protocol v3"), "{err}");
    let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The call's `predicted_j` on the board's page, as stored
    // (research/results/2026-11-26-model-protocol-v3/h200-board1/heldout.json).
    let published = 0.0751424256849784;
    let predicted = e["predicted_dynamic_j"].as_f64().unwrap();
    assert!((predicted / published - 1.0).abs() < 1e-9, "{predicted} J against the page's {published} J");
}
