//! The fit protocol of the energy model (issue 35): the term list, the training set (each
//! kernel in its data regimes), the held-out set, the error metrics, the baselines and the
//! acceptance rule, fixed in `research/results/model-protocol.json` before any held-out kernel
//! is measured. The file states its own hash ([`Protocol::content_hash`]): a test refuses
//! a file whose content no longer matches it, so the protocol cannot change silently, and
//! `fit_model` records the hash in every model it writes (`protocol_hash`).

use energy_harness::{Error, ErrorKind, Result};
use energy_results::hash::content_hash;
use serde::{Deserialize, Serialize};

/// The schema tag of a protocol file.
pub const PROTOCOL_SCHEMA: &str = "energy-model-protocol/1";

/// The protocol file, as committed (`research/results/model-protocol.json`): version 1.
pub const PROTOCOL_JSON: &str = include_str!("../results/model-protocol.json");

/// Protocol version 2 (`research/results/model-protocol-v2.json`): v1's held-out kernels had been
/// seen, so v2 adds the terms their results called for (FP64 tensor MMA, warpgroup MMA) and
/// tests on a fresh held-out set.
pub const PROTOCOL_V2_JSON: &str = include_str!("../results/model-protocol-v2.json");

/// Protocol version 3 (`research/results/model-protocol-v3.json`): v2's terms and training set,
/// every prediction bounded by the board's power limit, and a fresh held-out set (v2's
/// results, which shaped the bound, had been seen).
pub const PROTOCOL_V3_JSON: &str = include_str!("../results/model-protocol-v3.json");

/// Every committed protocol: its version, its file and its text.
pub const PROTOCOLS: [(u32, &str, &str); 3] = [
    (1, "research/results/model-protocol.json", PROTOCOL_JSON),
    (2, "research/results/model-protocol-v2.json", PROTOCOL_V2_JSON),
    (3, "research/results/model-protocol-v3.json", PROTOCOL_V3_JSON),
];

/// The protocol's data regimes, by name: the data a kernel runs on.
pub const REGIMES: [&str; 3] = ["switching", "constant", "own"];

/// A term of the model the protocol fits (one of `energy_suites::model::CLASSES`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    /// The class's name.
    pub name: String,
    /// Its ncu metrics, summed.
    pub metrics: Vec<String>,
    /// Metrics subtracted.
    #[serde(default)]
    pub subtract: Vec<String>,
    /// Units per metric count.
    pub scale: f64,
}

/// A term the model lacks that a held-out kernel may use (not fitted: its energy shows as
/// unexplained until a training kernel exercises it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateTerm {
    /// Name.
    pub name: String,
    /// The ncu metrics that would count it.
    pub metrics: Vec<String>,
    /// How the count is read, and what is not yet known about it.
    pub how: String,
    /// Whether the metric names were checked against `ncu --query-metrics` for the GPU.
    pub confirmed: bool,
}

/// A training benchmark of the model suite and the regime of its data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingKernel {
    /// The benchmark (`train_l2_ld`, `train_l2_ld_const`).
    pub benchmark: String,
    /// `switching` (random operands and data) or `constant`.
    pub regime: String,
}

/// A held-out kernel: a benchmark of `benches/heldout.rs`, never in the fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldOutKernel {
    /// The benchmark (`heldout_reduce_own`).
    pub benchmark: String,
    /// The source file, or the library call.
    pub source: String,
    /// Where its algorithm or code comes from, and under which license.
    pub origin: String,
    /// `own` (the data the source's own test uses) or `constant` (low entropy).
    pub regime: String,
    /// What it uses that the model has no term for (candidate terms' names).
    #[serde(default)]
    pub uses_untermed: Vec<String>,
    /// Whether the model's authors did not write it (a library's kernels): the goal is
    /// judged on these alone.
    #[serde(default)]
    pub third_party: bool,
}

/// A baseline predictor run on the same test as the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Name.
    pub name: String,
    /// How it predicts.
    pub how: String,
}

/// What the held-out test must show for the model to be accepted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Acceptance {
    /// Highest mean absolute error on dynamic energy over the held-out kernels, %.
    pub max_mean_abs_error_pct: f64,
    /// Fewest held-out kernels (distinct sources, each on its own data).
    pub min_kernels: usize,
    /// Smallest share of held-out measurements inside the predicted bracket.
    pub min_in_bracket_share: f64,
    /// The GPU models it must hold on.
    pub gpus: Vec<String>,
}

/// The fit protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protocol {
    /// [`PROTOCOL_SCHEMA`].
    pub format: String,
    /// [`Protocol::content_hash`] of the rest, as written when the protocol was fixed.
    pub hash: String,
    /// `draft` (may still change) or `frozen` (committed before any held-out measurement).
    pub status: String,
    /// What it is for, in words.
    pub goal: String,
    /// The model's terms.
    pub terms: Vec<Term>,
    /// Terms the model lacks, for what held-out kernels use.
    pub candidate_terms: Vec<CandidateTerm>,
    /// The data regimes, by name, with what each means.
    pub regimes: Vec<(String, String)>,
    /// The training kernels, one entry per benchmark and regime.
    pub training: Vec<TrainingKernel>,
    /// Training kernels whose constant regime is still to be written, with why.
    pub training_pending: Vec<String>,
    /// The held-out kernels.
    pub held_out: Vec<HeldOutKernel>,
    /// The error metrics reported.
    pub metrics: Vec<String>,
    /// The baselines.
    pub baselines: Vec<Baseline>,
    /// The acceptance rule.
    pub acceptance: Acceptance,
    /// Rules fixed before the held-out measurements: how the fit, the predictions and a
    /// missing measurement are handled.
    #[serde(default)]
    pub rules: Vec<String>,
    /// From protocol v3: the power controller's tolerance about the board's limit, a fraction
    /// of it; the model's predictions are bounded by what the board draws at its limit over
    /// the measured time (`energy_harness::explain::PowerBound`). Absent before v3 (no bound;
    /// absent from the hashed text, so earlier protocols keep their hashes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_tolerance: Option<f64>,
}

impl Protocol {
    /// Parses a protocol file (`what` names it in errors), checking its schema, regimes and
    /// names (not its hash: [`Protocol::verified`] does).
    pub fn parse(text: &str, what: &str) -> Result<Protocol> {
        let p: Protocol = serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorKind::Format, format!("{what} is not a model protocol: {e}")))?;
        if p.format != PROTOCOL_SCHEMA {
            return Err(Error::new(ErrorKind::Format, format!("{what}: format `{}`, not {PROTOCOL_SCHEMA}", p.format)));
        }
        let regimes = p.training.iter().map(|t| (&t.benchmark, &t.regime));
        for (name, regime) in regimes.chain(p.held_out.iter().map(|h| (&h.benchmark, &h.regime))) {
            if !REGIMES.contains(&regime.as_str()) {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("{what}: `{name}` has regime `{regime}`, none of {}", REGIMES.join(", ")),
                ));
            }
        }
        let candidates: Vec<&str> = p.candidate_terms.iter().map(|c| c.name.as_str()).collect();
        for h in &p.held_out {
            if let Some(u) = h.uses_untermed.iter().find(|u| !candidates.contains(&u.as_str())) {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("{what}: `{}` uses `{u}`, which is no candidate term", h.benchmark),
                ));
            }
        }
        Ok(p)
    }

    /// The protocol's hash: FNV-1a over its compact JSON with `hash` left empty (the same
    /// on every machine: fields in declaration order, lists in file order).
    pub fn content_hash(&self) -> Result<String> {
        let unhashed = Protocol { hash: String::new(), ..self.clone() };
        let text = serde_json::to_string(&unhashed).map_err(|e| Error::new(ErrorKind::Format, e.to_string()))?;
        Ok(content_hash(text.as_bytes()))
    }

    /// The protocol if the hash it states is its content's, else an error giving both.
    pub fn verified(self, what: &str) -> Result<Protocol> {
        let actual = self.content_hash()?;
        if actual != self.hash {
            return Err(Error::new(
                ErrorKind::Format,
                format!(
                    "{what} states hash {} but its content hashes to {actual}: the protocol changed without its \
                     hash (a frozen protocol must not change; a draft's new hash is written with the change)",
                    self.hash
                ),
            ));
        }
        Ok(self)
    }

    /// The committed protocol version 1 ([`PROTOCOL_JSON`]), its hash verified.
    pub fn committed() -> Result<Protocol> {
        Protocol::version(1)
    }

    /// The committed protocol of version `version` ([`PROTOCOLS`]), its hash verified.
    pub fn version(version: u32) -> Result<Protocol> {
        let Some((_, file, text)) = PROTOCOLS.iter().find(|(v, _, _)| *v == version) else {
            let known: Vec<String> = PROTOCOLS.iter().map(|(v, _, _)| format!("v{v}")).collect();
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("no model protocol v{version}: the committed ones are {}", known.join(", ")),
            ));
        };
        Protocol::parse(text, file)?.verified(file)
    }

    /// The committed protocol whose hash is `hash` (a model's `protocol_hash`), and its version.
    pub fn of_hash(hash: &str) -> Result<(u32, Protocol)> {
        for (version, _, _) in PROTOCOLS {
            let p = Protocol::version(version)?;
            if p.hash == hash {
                return Ok((version, p));
            }
        }
        Err(Error::new(ErrorKind::InvalidInput, format!("no committed model protocol has hash {hash}")))
    }

    /// The distinct held-out sources (a kernel on two data regimes counts once).
    pub fn held_out_sources(&self) -> Vec<&str> {
        let mut s: Vec<&str> = self.held_out.iter().map(|h| h.source.as_str()).collect();
        s.sort_unstable();
        s.dedup();
        s
    }
}
