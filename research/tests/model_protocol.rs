//! The fit protocol (issue 35, `research/results/model-protocol.json`): its stated hash is its
//! content's, its terms are the model's, its training set is the model suite's and its
//! held-out set the held-out suite's, and any change to it changes the hash.

use energy_suites::model::{CLASSES, TRAINING_PREFIX};
use energy_suites::protocol::{Protocol, PROTOCOLS, PROTOCOL_JSON, PROTOCOL_V2_JSON, PROTOCOL_V3_JSON};

fn parsed() -> Protocol {
    Protocol::parse(PROTOCOL_JSON, "model-protocol.json").unwrap()
}

fn parsed_v2() -> Protocol {
    Protocol::parse(PROTOCOL_V2_JSON, "model-protocol-v2.json").unwrap()
}

fn parsed_v3() -> Protocol {
    Protocol::parse(PROTOCOL_V3_JSON, "model-protocol-v3.json").unwrap()
}

#[test]
fn the_stated_hash_is_the_content_hash() {
    let md = include_str!("../results/model-protocol.md");
    for (version, file, text) in PROTOCOLS {
        let p = Protocol::parse(text, file).unwrap();
        let actual = p.content_hash().unwrap();
        assert_eq!(p.hash, actual, "{file} states hash {} but hashes to {actual}", p.hash);
        assert_eq!(Protocol::version(version).unwrap(), p);
        assert_eq!(Protocol::of_hash(&p.hash).unwrap().0, version);
        // The human-readable protocol names the same hash.
        assert!(md.contains(&p.hash), "model-protocol.md does not state hash {}", p.hash);
    }
    assert_eq!(Protocol::committed().unwrap(), parsed());
    assert!(Protocol::version(4).unwrap_err().to_string().contains("v1, v2, v3"));
}

#[test]
fn any_change_changes_the_hash() {
    let p = parsed();
    let mut changed = p.clone();
    changed.acceptance.max_mean_abs_error_pct = 12.0;
    assert_ne!(changed.content_hash().unwrap(), p.hash);
    let mut dropped = p.clone();
    dropped.held_out.pop();
    let e = dropped.verified("changed").unwrap_err().to_string();
    assert!(e.contains("states hash") && e.contains("hashes to"), "{e}");
    // The hash field itself is not hashed: restating it changes nothing.
    let restated = Protocol { hash: "0".repeat(16), ..p.clone() };
    assert_eq!(restated.content_hash().unwrap(), p.content_hash().unwrap());
}

#[test]
fn its_terms_are_the_models() {
    let p = parsed();
    assert_eq!(p.terms.len(), CLASSES.len());
    for (t, c) in p.terms.iter().zip(CLASSES.iter()) {
        assert_eq!(t.name, c.name);
        assert_eq!(t.metrics, c.metrics);
        assert_eq!(t.subtract, c.subtract);
        assert!((t.scale - c.scale).abs() <= 1e-15 * c.scale, "{}: {} against {}", t.name, t.scale, c.scale);
    }
}

/// The held-out suite's source files: its root (`benches/heldout.rs`) and every file of its
/// `benches/heldout/` folder, by name.
const HELDOUT_FILES: [(&str, &str); 8] = [
    ("heldout.rs", include_str!("../benches/heldout.rs")),
    ("common.rs", include_str!("../benches/heldout/common.rs")),
    ("cublas_complex.rs", include_str!("../benches/heldout/cublas_complex.rs")),
    ("cublas_gemm.rs", include_str!("../benches/heldout/cublas_gemm.rs")),
    ("cublas_streaming.rs", include_str!("../benches/heldout/cublas_streaming.rs")),
    ("cufft.rs", include_str!("../benches/heldout/cufft.rs")),
    ("curand.rs", include_str!("../benches/heldout/curand.rs")),
    ("kernels.rs", include_str!("../benches/heldout/kernels.rs")),
];

/// The held-out suite's whole source (every file of it, so that a benchmark declared in any
/// is read); refuses a file of `benches/heldout/` that [`HELDOUT_FILES`] does not list.
fn heldout_source() -> String {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/heldout");
    let mut on_disk: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = HELDOUT_FILES[1..].iter().map(|(name, _)| name.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "benches/heldout/ holds files HELDOUT_FILES does not list, or lacks some");
    HELDOUT_FILES.iter().map(|(_, text)| *text).collect::<Vec<_>>().join("\n")
}

/// The benchmark names a bench source declares: `"train_…"` strings, `fn heldout_…`.
fn names_in(source: &str, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = source
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(prefix) && w.len() > prefix.len())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The benchmark ids the held-out suite declares: each `fn heldout_…` (one benchmark), and
/// each `name = "heldout_…_{}"` over `args = REGIMES` (its `_own` and `_constant`, as
/// `Data`'s `Display` writes them).
fn heldout_benchmarks() -> Vec<String> {
    let source = heldout_source();
    assert!(source.contains("pub(crate) const REGIMES: [Data; 2] = [Data::Own, Data::Constant];"));
    assert!(source.contains("Data::Own => \"own\",") && source.contains("Data::Constant => \"constant\","));
    let mut names: Vec<String> = names_in(&source, "heldout_").into_iter().filter(|n| !n.ends_with('_')).collect();
    for (at, _) in source.match_indices("name = \"heldout_") {
        let rest = &source[at + "name = \"".len()..];
        let end = rest.find('"').expect("a closed name");
        let template = &rest[..end];
        assert!(
            template.ends_with("_{}") && rest[end..].starts_with("\", args = REGIMES"),
            "a held-out benchmark over other arguments than the regimes: {template}"
        );
        names.extend(["own", "constant"].map(|regime| template.replace("{}", regime)));
    }
    names.sort();
    names.dedup();
    names
}

/// v2's training set is the model suite's; v1's is that less v2's new kernels.
#[test]
fn its_training_set_is_the_model_suites() {
    // (`train_sm90` is the Hopper kernels' PTX file, no benchmark.)
    let mut suite = names_in(include_str!("../benches/model/main.rs"), TRAINING_PREFIX);
    suite.retain(|n| n != "train_sm90");
    let (v1, v2) = (parsed(), parsed_v2());
    let listed = |p: &Protocol| {
        let mut l: Vec<String> = p.training.iter().map(|t| t.benchmark.clone()).collect();
        l.sort();
        l
    };
    assert_eq!(listed(&v2), suite);
    let new: Vec<&String> = suite.iter().filter(|n| n.contains("_dmma") || n.contains("_hgmma")).collect();
    assert_eq!(new.len(), 14, "{new:?}");
    let older: Vec<String> = suite.iter().filter(|n| !new.contains(n)).cloned().collect();
    assert_eq!(listed(&v1), older);
    // v3 keeps v2's training set and terms.
    let v3 = parsed_v3();
    assert_eq!(v3.training, v2.training);
    assert_eq!(v3.terms, v2.terms);
    for t in v1.training.iter().chain(&v2.training) {
        let constant = t.benchmark.ends_with("_const");
        assert_eq!(t.regime, if constant { "constant" } else { "switching" }, "{}", t.benchmark);
    }
}

/// v2's and v3's held-out sets are new: no benchmark of an earlier one's, every one a
/// third-party library call, at least as many on their own data as the goal counts; together
/// the three are the suite's.
#[test]
fn the_later_held_out_sets_are_fresh_and_third_party() {
    let (v1, v2, v3) = (parsed(), parsed_v2(), parsed_v3());
    let mut all: Vec<String> =
        v1.held_out.iter().chain(&v2.held_out).chain(&v3.held_out).map(|h| h.benchmark.clone()).collect();
    all.sort();
    let count = all.len();
    all.dedup();
    assert_eq!(all.len(), count, "a benchmark is in two held-out sets");
    assert_eq!(all, heldout_benchmarks());
    for (version, p) in [(2, &v2), (3, &v3)] {
        assert!(p.held_out.iter().all(|h| h.third_party && h.benchmark.ends_with(&format!("_{}", h.regime))));
        let own = p.held_out.iter().filter(|h| h.regime == "own").count();
        assert!(own >= p.acceptance.min_kernels, "v{version}: {own} own-data kernels");
        assert_eq!(p.status, "frozen");
        let rules = p.rules.join("\n");
        for needed in ["shown apart, never counted", "fewer than one sensor tick", "==ERROR==", "threefold repeat"] {
            assert!(rules.contains(needed), "protocol v{version}'s rules do not say `{needed}`");
        }
        for h in &p.held_out {
            assert!(h.origin.contains(&format!("before protocol v{version} was committed")), "{}", h.benchmark);
        }
    }
}

/// v3 bounds every prediction by the power limit, with a tolerance it fixes and its rules
/// state; the protocols before it have none (their hashes unchanged by the new field).
#[test]
fn v3_bounds_predictions_by_the_power_limit() {
    let v3 = parsed_v3();
    let tolerance = v3.power_limit_tolerance.expect("protocol v3 states the power controller's tolerance");
    assert!((0.0..0.1).contains(&tolerance), "{tolerance}");
    let rules = v3.rules.join("\n");
    assert!(rules.contains(&format!("power_limit_tolerance is {tolerance}")), "{rules}");
    assert!(rules.contains("PowerBound") && rules.contains("device.power_limit_w"), "{rules}");
    assert_eq!((parsed().power_limit_tolerance, parsed_v2().power_limit_tolerance), (None, None));
}

#[test]
fn its_held_out_set_is_the_held_out_suites() {
    let p = parsed();
    let mut listed: Vec<String> = p.held_out.iter().map(|h| h.benchmark.clone()).collect();
    listed.sort();
    let suite = heldout_benchmarks();
    assert!(listed.iter().all(|n| suite.contains(n)), "{listed:?}");
    for h in &p.held_out {
        assert!(h.benchmark.ends_with(&format!("_{}", h.regime)), "{}: regime {}", h.benchmark, h.regime);
        assert!(!h.origin.is_empty(), "{}", h.benchmark);
    }
    // Each held-out CUDA C file states its origin and license in its header.
    let own: Vec<&str> = p.held_out_sources().into_iter().filter(|s| s.ends_with(".cu")).collect();
    assert!(own.len() >= 8, "{own:?}");
    for source in own {
        let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(source)).unwrap();
        let header: String = text.lines().take_while(|l| l.starts_with("//")).collect::<Vec<_>>().join("\n");
        assert!(header.contains("Origin:") && header.contains("License:"), "{source}: {header}");
    }
    assert!(p.acceptance.min_kernels >= 8 && p.acceptance.max_mean_abs_error_pct <= 10.0);
    // The goal is judged on kernels the model's authors did not write: at least as many
    // third-party library calls on their own data as the goal counts, and no CUDA C file of
    // this repository among them.
    let third: Vec<&str> =
        p.held_out.iter().filter(|h| h.third_party && h.regime == "own").map(|h| h.source.as_str()).collect();
    assert!(third.len() >= p.acceptance.min_kernels, "{third:?}");
    assert!(third.iter().all(|s| !s.ends_with(".cu")), "{third:?}");
    for h in p.held_out.iter().filter(|h| h.third_party) {
        assert!(h.origin.contains("NVIDIA") && h.origin.contains("loaded at run time"), "{}", h.benchmark);
    }
}

#[test]
fn it_is_frozen_with_its_rules() {
    let p = parsed();
    assert_eq!(p.status, "frozen");
    assert!(p.training_pending.is_empty());
    // The rules fixed before the held-out measurements: the fit reads only training kernels,
    // a missing measurement is named, the goal is judged on the third-party kernels.
    let rules = p.rules.join("\n");
    for needed in ["before any held-out benchmark is measured", "counts as missing", "third_party"] {
        assert!(rules.contains(needed), "the protocol's rules do not say `{needed}`:\n{rules}");
    }
}

#[test]
fn the_candidate_terms_are_the_work_explain_reports_unpriced() {
    use energy_report::{PRICED_BY, UNPRICED_WORK};
    let explain: Vec<(String, Vec<String>)> = UNPRICED_WORK
        .iter()
        .map(|(name, metrics)| (name.to_string(), metrics.iter().map(|m| m.to_string()).collect()))
        .collect();
    let mut named = std::collections::BTreeSet::new();
    for (_, file, text) in PROTOCOLS {
        let protocol = Protocol::parse(text, file).unwrap();
        for c in &protocol.candidate_terms {
            assert!(
                explain.contains(&(c.name.clone(), c.metrics.clone())),
                "{file}: {} is not in UNPRICED_WORK",
                c.name
            );
            named.insert(c.name.clone());
        }
        // What a protocol's terms price is no candidate of it: PRICED_BY names its metric.
        for (work, metrics) in PRICED_BY {
            let priced = protocol.terms.iter().any(|t| t.metrics.iter().any(|m| metrics.contains(&m.as_str())));
            let candidate = protocol.candidate_terms.iter().any(|c| c.name == work);
            assert!(priced != candidate, "{file}: `{work}` priced {priced}, candidate {candidate}");
        }
    }
    for (name, _) in &explain {
        assert!(named.contains(name), "UNPRICED_WORK's `{name}` is no protocol's candidate term");
    }
}
