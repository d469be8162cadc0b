//! Property tests: cleaning, correction and analysis never panic and never produce NaN
//! or infinities on arbitrary input; malformed trace text gets a located error.

use std::path::Path;

use energy_harness::unstable::engine::{analyze_trace, AnalysisOptions, ModelChoice};
use energy_harness::unstable::engine::{clean_buffered, clean_polled};
use energy_harness::unstable::engine::{counter_curve, power_curve};
use energy_harness::SourceKind;
use energy_results::source::model::SensorModel;
use energy_results::trace::format::parse_trace;
use energy_results::trace::Channel;
use energy_results::trace::Reading;
use energy_results::trace::Trace;
use energy_results::trace::WindowEdge;
use energy_results::trace::WindowMark;
use proptest::prelude::*;

fn reading() -> impl Strategy<Value = Reading> {
    (
        prop_oneof![-100.0..100.0f64, 0.0..10.0f64, Just(1.0)],
        prop_oneof![0.0..1e6f64, Just(120_000.0), -1e3..1e3f64, Just(0.0)],
    )
        .prop_map(|(time_s, value)| Reading { time_s, value })
}

fn model() -> impl Strategy<Value = SensorModel> {
    prop_oneof![
        Just(SensorModel::Identity),
        (1e-3..3.0f64).prop_map(|tau_s| SensorModel::FirstOrder { tau_s }),
        (1e-2..3.0f64).prop_map(|width_s| SensorModel::Boxcar { width_s }),
        (1e-3..0.1f64).prop_map(|gate_s| SensorModel::Gated { gate_s, period_s: 0.1 }),
    ]
}

fn all_finite(readings: &[Reading]) -> bool {
    readings.iter().all(|r| r.time_s.is_finite() && r.value.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cleaning_keeps_order_and_finiteness(readings in prop::collection::vec(reading(), 0..300)) {
        for clean in [clean_polled(&readings), clean_buffered(&readings)] {
            prop_assert!(all_finite(&clean));
            prop_assert!(clean.windows(2).all(|w| w[0].time_s <= w[1].time_s));
            prop_assert!(clean.len() <= readings.len());
        }
    }

    #[test]
    fn correction_gives_finite_curves_or_an_error(
        readings in prop::collection::vec(reading(), 0..200),
        model in model(),
        transitions in prop::collection::vec(-100.0..100.0f64, 0..6),
    ) {
        let mut transitions = transitions;
        transitions.sort_by(f64::total_cmp);
        let clean = clean_polled(&readings);
        if let Ok(curve) = power_curve(&clean, &model, &transitions) {
            prop_assert!(curve.points().iter().all(|(t, e)| t.is_finite() && e.is_finite()));
        }
        let mut counter: Vec<Reading> = readings.clone();
        counter.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        if let Ok((curve, _)) = counter_curve(&counter) {
            prop_assert!(curve.points().iter().all(|(t, e)| t.is_finite() && e.is_finite()));
        }
    }

    #[test]
    fn analysis_gives_finite_figures_or_an_error(
        channels in prop::collection::vec((0usize..5, prop::collection::vec(reading(), 0..120)), 1..4),
        marks in prop::collection::vec((-50.0..50.0f64, 0.0..5.0f64), 0..4),
        model in prop::option::of(model()),
        source in prop::option::of(0usize..5),
    ) {
        let mut trace = Trace::new();
        for (c, readings) in &channels {
            for r in readings {
                trace.push(Channel::KNOWN[*c].clone(), *r);
            }
        }
        for (i, (start, len)) in marks.iter().enumerate() {
            trace.push_mark(WindowMark { time_s: *start, index: i as u32, edge: WindowEdge::Start });
            trace.push_mark(WindowMark { time_s: start + len, index: i as u32, edge: WindowEdge::End });
        }
        let options = AnalysisOptions {
            source: source.map(|s| SourceKind::ALL[s]),
            model: model.map_or(ModelChoice::Auto, ModelChoice::Explicit),
            ..AnalysisOptions::default()
        };
        if let Ok(analysis) = analyze_trace(&trace, &options) {
            prop_assert!(analysis.idle_w.is_finite());
            for w in &analysis.windows {
                prop_assert!(w.energy_j.is_finite() && w.dynamic_j.is_finite() && w.idle_w.is_finite(), "{w:?}");
                prop_assert!(w.edge_energy_j.is_finite());
            }
        }
    }

    #[test]
    fn any_text_parses_or_gets_a_located_error(text in ".{0,400}") {
        let with_magic = format!("# energy-trace v1\n{text}");
        for candidate in [text.as_str(), with_magic.as_str()] {
            if let Err(e) = parse_trace(candidate, Path::new("t.csv")) {
                prop_assert!(e.message().starts_with("t.csv:"), "{e}");
            }
        }
    }

    #[test]
    fn data_lines_with_junk_fields_are_rejected_with_their_line(
        good in prop::collection::vec((0.0..10.0f64, 0usize..5, 0.0..1e6f64), 0..20),
        junk in "[a-z,;]{1,12}",
    ) {
        let mut text = String::from("# energy-trace v1\ntime_s,channel,value\n");
        for (t, c, v) in &good {
            text.push_str(&format!("{t},{},{v}\n", Channel::KNOWN[*c].name()));
        }
        text.push_str(&junk);
        text.push('\n');
        let bad_line = good.len() + 3;
        match parse_trace(&text, Path::new("t.csv")) {
            Ok(trace) => {
                // A junk line can only pass as a reading of an unknown channel; it cannot here.
                prop_assert_eq!(trace.reading_count(), good.len() + 1, "junk {} accepted", junk);
            }
            Err(e) => prop_assert!(e.message().starts_with(&format!("t.csv:{bad_line}:")), "{}", e),
        }
    }
}
