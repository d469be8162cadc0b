//! The GPU-memory power rail (issue 31 item 6): recorded beside the board's source whenever
//! the GPU offers it, analyzed over the same windows, reported (never subtracted) in the
//! result, its file and the summary; never the source of the board's energy. Simulated
//! H100 (virtual clock): the rail's truth is its own idle level plus a share of the board's
//! power above idle; and a real H100's rail, recorded (`tests/data/h100-rail`).

use energy_harness::unstable::device::{DeviceFacts, SimGpu, SimKernel, SimPreset};
use energy_harness::unstable::engine::{
    analyze_trace, calibrate, fit_calibration, measure, virtual_sim_device, AnalysisOptions, MeasureRequest,
    Measurement, SimWorkload, StepPlan,
};
use energy_harness::unstable::report::render_summary;
use energy_harness::{ErrorKind, MeasureOptions, ResultFile, SourceKind};
use energy_results::source::model::SensorModel;
use energy_results::trace::format::read_trace;
use energy_results::trace::is_auxiliary_window;
use energy_results::trace::Channel;
use energy_results::trace::Trace;

const LAUNCH_S: f64 = 1e-3;

fn measured(preset: SimPreset, watts: f64) -> (Measurement, Trace, SimGpu) {
    let (mut device, gpu) = virtual_sim_device(preset);
    let mut kernel = SimWorkload::new(gpu.clone(), SimKernel::new(LAUNCH_S, watts));
    let (m, trace) = measure(&mut device, &mut kernel, MeasureRequest::new("rail", MeasureOptions::DEFAULT))
        .expect("a simulated measurement");
    (m, trace, gpu)
}

/// The rail's true energy per launch over the measured windows, and above its idle.
fn rail_truth_per_launch(m: &Measurement, trace: &Trace, gpu: &SimGpu) -> f64 {
    let truth = gpu.rail_truth(SourceKind::MemoryRail).expect("the H100 preset has the memory rail");
    let windows: Vec<_> = trace.windows().unwrap().into_iter().filter(|w| !is_auxiliary_window(w.index)).collect();
    let per_launch: Vec<f64> =
        windows.iter().map(|w| truth.energy_j(w.start_s, w.end_s) / m.launches_per_window as f64).collect();
    per_launch.iter().sum::<f64>() / per_launch.len() as f64
}

#[test]
fn a_simulated_run_reports_the_memory_rail_within_its_interval_of_the_truth() {
    for seed in [1u64, 2, 3] {
        let preset = SimPreset::h100().with_seed(seed);
        let rail = preset.rails[&SourceKind::MemoryRail];
        let (m, trace, gpu) = measured(preset.clone(), 400.0);
        // The board's figure is the counter's, as without the rail.
        assert_eq!(m.source, SourceKind::Counter);
        let board_truth = LAUNCH_S * 400.0;
        assert!((m.energy_j.mean / board_truth - 1.0).abs() < 0.01, "seed {seed}: board {}", m.energy_j.mean);
        // Recorded in the trace, on its own channel.
        assert!(trace.series(&Channel::Source(SourceKind::MemoryRail)).len() > 10, "seed {seed}");
        assert_eq!(m.rails.len(), 1, "seed {seed}: {:?}", m.rails);
        let r = &m.rails[0];
        assert_eq!(r.source, SourceKind::MemoryRail);
        assert_eq!(r.sensor_model, SourceKind::MemoryRail.default_model());
        let truth = rail_truth_per_launch(&m, &trace, &gpu);
        // Steady windows: the truth is the rail's power at the kernel's board power.
        assert!((truth / (LAUNCH_S * rail.power_w(400.0, preset.idle_w)) - 1.0).abs() < 0.01, "{truth}");
        assert!(
            r.energy_j.ci_low <= truth && truth <= r.energy_j.ci_high,
            "seed {seed}: truth {truth} outside [{}, {}]",
            r.energy_j.ci_low,
            r.energy_j.ci_high
        );
        assert!((r.energy_j.mean / truth - 1.0).abs() < 0.03, "seed {seed}: {} vs {truth}", r.energy_j.mean);
        // Above its own idle: the share of the kernel's board power above idle.
        let dynamic_truth = LAUNCH_S * rail.share * (400.0 - preset.idle_w);
        let dynamic = r.dynamic_j.expect("a dynamic figure");
        assert!((dynamic.mean / dynamic_truth - 1.0).abs() < 0.1, "seed {seed}: {} vs {dynamic_truth}", dynamic.mean);
        // Its active idle: its share of the board's active-idle tail above its idle level
        // (within 3.5 W: the 1 s boxcar sees only the 0.3 s of idle planned for the counter
        // on each side; 55.7-59.0 W over twelve seeds against 58.5 W, since the counter is
        // read 1 ms apart, 56.6-59.2 W before).
        let active_idle = rail.power_w(preset.tail.unwrap().level_w, preset.idle_w);
        assert!((r.idle_w.unwrap() - active_idle).abs() < 3.5, "seed {seed}: idle {:?} vs {active_idle}", r.idle_w);
        // Reported beside the board's figure, not subtracted from it.
        assert!(m.energy_j.mean > r.energy_j.mean);
    }
}

#[test]
fn the_summary_shows_the_rail_beside_the_board() {
    let (m, _, _) = measured(SimPreset::h100(), 400.0);
    let summary = render_summary(&m.result_file(None), None);
    let board = summary.lines().position(|l| l.starts_with("  energy per launch")).expect(&summary);
    let rail = summary.lines().position(|l| l.starts_with("  memory rail")).expect(&summary);
    assert!(rail > board && rail <= board + 2, "{summary}");
    assert!(summary.contains("not subtracted"), "{summary}");
    assert!(summary.contains("NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY"), "{summary}");
}

#[test]
fn without_the_rail_nothing_changes_and_the_file_has_no_rails() {
    let mut preset = SimPreset::h100();
    assert!(preset.sensors.remove(&SourceKind::MemoryRail).is_some());
    let (m, trace, _) = measured(preset, 400.0);
    assert!(m.rails.is_empty());
    assert!(trace.series(&Channel::Source(SourceKind::MemoryRail)).is_empty());
    let json = m.result_file(None).to_json().unwrap();
    assert!(!json.contains("\"rails\""), "no empty field in the file");
    assert!(!render_summary(&m.result_file(None), None).contains("memory rail"));
}

#[test]
fn result_files_with_and_without_rails_read_back_and_old_spellings_read() {
    let (m, _, _) = measured(SimPreset::h100(), 400.0);
    let file = m.result_file(None);
    let json = file.to_json().unwrap();
    assert!(json.contains("\"rails\"") && json.contains("\"source\": \"memory\""), "{json}");
    let path = std::path::Path::new("r.json");
    assert_eq!(ResultFile::parse(&json, path).unwrap(), file);
    let mut without = file.clone();
    without.rails = Vec::new();
    let text = without.to_json().unwrap();
    assert!(!text.contains("\"rails\""));
    assert_eq!(ResultFile::parse(&text, path).unwrap(), without);
    // A file of an older version: the source spelled as its variant, no rails.
    let old = text.replace("\"source\": \"counter\"", "\"source\": \"Counter\"");
    assert!(old.contains("\"Counter\""));
    assert_eq!(ResultFile::parse(&old, path).unwrap(), without);
    // A rail's figures are checked as the board's are.
    let mut board_as_rail = file.clone();
    board_as_rail.rails[0].source = SourceKind::Counter;
    let e = ResultFile::parse(&serde_json::to_string(&board_as_rail).unwrap(), path).unwrap_err();
    assert!(e.message().contains("not a rail"), "{}", e.message());
    let mut above_total = file.clone();
    let mut dynamic = above_total.rails[0].energy_j;
    dynamic.mean *= 2.0;
    dynamic.ci_low *= 2.0;
    dynamic.ci_high *= 2.0;
    above_total.rails[0].dynamic_j = Some(dynamic);
    let e = ResultFile::parse(&serde_json::to_string(&above_total).unwrap(), path).unwrap_err();
    assert!(e.message().contains("rails.memory.dynamic_j"), "{}", e.message());
}

#[test]
fn the_rail_is_never_the_source_of_the_board_energy() {
    let (mut device, gpu) = virtual_sim_device(SimPreset::h100());
    let mut kernel = SimWorkload::new(gpu, SimKernel::new(LAUNCH_S, 400.0));
    let options = MeasureOptions { source: Some(SourceKind::MemoryRail), ..MeasureOptions::DEFAULT };
    let e = measure(&mut device, &mut kernel, MeasureRequest::new("rail", options)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message().contains("memory is a rail"), "{}", e.message());
    assert_eq!(SourceKind::preferred(&[SourceKind::MemoryRail]), None);
    assert_eq!(*SourceKind::PREFERENCE.last().unwrap(), SourceKind::MemoryRail);
    // A trace holding the rail and nothing else has no board figure to give.
    let (m, trace, _) = measured(SimPreset::h100(), 400.0);
    let mut rail_only = Trace::new();
    for r in trace.series(&Channel::Source(SourceKind::MemoryRail)) {
        rail_only.push(Channel::Source(SourceKind::MemoryRail), *r);
    }
    for mark in trace.marks() {
        rail_only.push_mark(*mark);
    }
    assert!(analyze_trace(&rail_only, &AnalysisOptions::default()).is_err());
    // Asked for by name, analysis reads it (what `cargo energy analyze --source memory` does).
    let named = AnalysisOptions { source: Some(SourceKind::MemoryRail), ..AnalysisOptions::default() };
    let analysis = analyze_trace(&rail_only, &named).unwrap();
    assert_eq!(analysis.windows.len(), m.windows.len());
}

#[test]
fn calibration_leaves_the_rail_at_its_default_model() {
    // The step is an FMA loop: the rail's response to it says little about the rail (see the
    // recorded H100 step below), so its default model stands, in the simulator too.
    let preset = SimPreset::h100();
    let (device, gpu) = virtual_sim_device(preset.clone());
    let mut workload = SimWorkload::new(gpu, SimKernel::new(0.05, preset.busy_kernel_w));
    let (cal, trace) = calibrate(&device, &mut workload, StepPlan::default()).unwrap();
    assert!(!trace.series(&Channel::Source(SourceKind::MemoryRail)).is_empty(), "recorded all the same");
    assert!(!cal.sources.contains_key(&SourceKind::MemoryRail));
    assert_eq!(cal.model_for(SourceKind::MemoryRail), None);
    // The board's sources are calibrated as before, whatever the rail draws.
    assert!(cal.sources.contains_key(&SourceKind::AverageField));
    assert!((cal.busy_w / preset.busy_kernel_w - 1.0).abs() < 0.005, "{}", cal.busy_w);
}

/// Recorded on an H100 80GB HBM3 (driver 580.159.04, 2026-11-25) by `cargo bench --bench
/// saxpy` and `cargo energy calibrate --trace`: real readings of the memory rail.
fn recorded(name: &str) -> Trace {
    read_trace(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h100-rail").join(name)).unwrap()
}

#[test]
fn a_recorded_h100_saxpy_gives_the_memory_rail_beside_the_board() {
    let trace = recorded("saxpy.csv");
    assert_eq!(trace.metadata("sources"), Some("counter, samples, memory"));
    let launches: f64 = trace.metadata("launches per window").unwrap().parse().unwrap();
    let per_launch = |source: Option<SourceKind>| {
        let a = analyze_trace(&trace, &AnalysisOptions { source, ..AnalysisOptions::default() }).unwrap();
        let n = a.windows.len() as f64;
        let energy = a.windows.iter().map(|w| w.energy_j / launches).sum::<f64>() / n;
        let dynamic = a.windows.iter().map(|w| w.dynamic_j / launches).sum::<f64>() / n;
        (a.source, energy, dynamic, a.idle_w)
    };
    let (source, board_j, board_dynamic_j, _) = per_launch(None);
    assert_eq!(source, SourceKind::Counter, "the rail is never chosen for the board");
    let (_, rail_j, rail_dynamic_j, rail_idle_w) = per_launch(Some(SourceKind::MemoryRail));
    eprintln!("board {board_j:.5} J (dynamic {board_dynamic_j:.5}); memory rail {rail_j:.5} J (dynamic {rail_dynamic_j:.5}, idle {rail_idle_w:.1} W)");
    // The run printed 31.05 mJ for the board and 11.29 mJ (dynamic 7.88 mJ) for the rail.
    assert!((0.0300..0.0320).contains(&board_j), "{board_j}");
    assert!((0.0100..0.0125).contains(&rail_j), "{rail_j}");
    // 201 MB of HBM traffic per launch: 7.9 mJ is 4.9 pJ/bit above the rail's idle (DESIGN.md
    // §7: 5.3-6.7 pJ/bit streaming HBM at 2.9 TB/s; this saxpy streams 2.6 TB/s).
    let bits = 12.0 * f64::from(1u32 << 24) * 8.0;
    assert!((3e-12..8e-12).contains(&(rail_dynamic_j / bits)), "{} pJ/bit", rail_dynamic_j / bits * 1e12);
    assert!(rail_dynamic_j < board_dynamic_j && rail_j < board_j);
    assert!((30.0..60.0).contains(&rail_idle_w), "{rail_idle_w}");
}

#[test]
fn a_recorded_h100_step_calibrates_the_board_and_leaves_the_rail_at_its_default() {
    let trace = recorded("step.csv");
    let cal = fit_calibration(&trace, &DeviceFacts::default()).unwrap();
    assert!(!cal.sources.contains_key(&SourceKind::MemoryRail), "{:?}", cal.sources.get(&SourceKind::MemoryRail));
    match cal.sources[&SourceKind::AverageField].model {
        SensorModel::Boxcar { width_s } => assert!((width_s - 1.0).abs() < 0.03, "{width_s}"),
        other => panic!("average fitted as {other}"),
    }
    assert!(cal.counter.is_some());
    // Why: under the FMA step the rail is no step response. It dips first, then rises about
    // 5 W (34 to 39 W), and bumps up again when the step ends.
    let busy = trace.windows().unwrap().into_iter().find(|w| w.index == 0).unwrap();
    let rail: Vec<(f64, f64)> = trace
        .sorted_series(&Channel::Source(SourceKind::MemoryRail))
        .iter()
        .map(|r| (r.time_s - busy.start_s, r.value * 1e-3))
        .collect();
    let mean = |from: f64, to: f64| {
        let inside: Vec<f64> = rail.iter().filter(|r| r.0 >= from && r.0 < to).map(|r| r.1).collect();
        inside.iter().sum::<f64>() / inside.len() as f64
    };
    let (before, dip, plateau) = (mean(-1.0, 0.0), mean(0.15, 0.4), mean(2.0, 2.9));
    assert!(dip < before - 1.0 && plateau > before + 3.0, "{before:.1} W, {dip:.1} W, {plateau:.1} W");
    let after = busy.duration_s();
    assert!(mean(after + 0.1, after + 0.5) > plateau + 0.5, "a bump after the step");
}

/// A real H100 saxpy result measured with the memory rail (driver 580.159.04, 2026-11-25),
/// copied from `research/results/2026-11-25-h100-memory-rail/saxpy_default.json` into
/// `tests/data/h100-rail/` (gzipped, read as written). Every stored result of that run:
/// `research/tests/memory_rail_results.rs`.
#[test]
fn a_recorded_h100_result_with_the_rail_reads_back() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h100-rail/saxpy_default.json");
    let r = ResultFile::read_json(&path).unwrap();
    assert_eq!(r.source, SourceKind::Counter);
    assert_eq!(r.rails.len(), 1);
    let rail = &r.rails[0];
    assert_eq!(rail.source, SourceKind::MemoryRail);
    assert!((0.010..0.012).contains(&rail.energy_j.mean), "{}", rail.energy_j.mean);
    assert!(rail.energy_j.mean < r.energy_j.mean);
}
