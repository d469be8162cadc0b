//! The ab report (`energy-ab/1`, `ab.json`) and the paired comparison of interleaved runs
//! it records: what `cargo energy ab` and `cargo energy gate` decide on. Reading a report
//! ([`AbReport::parse`]) computes every verdict again from its runs' figures.
//!
//! Between two CI runs the GPU's temperature moves the energy by more than one run's
//! interval (+1.6 % over 80 s as an H100 warms; 0.3-0.55 % per °C), so two runs made apart
//! cannot resolve a change of 1 %. Here the baseline (A) and the candidate (B) run
//! alternately on one GPU in ABBA order (A B B A A B B A …, [`abba_side`]); pair `i` is
//! runs `2i` and `2i + 1`, (A, B) or (B, A), close in time and temperature. Per benchmark,
//! `d_i = 100 · ln(E_B / E_A)` (energy per launch); a drift that is linear in time adds
//! `+δ` to one pair and `−δ` to the next, so it cancels in the mean instead of posing as a
//! change. The change is `exp(mean d / 100) − 1`; its standard error `sd(d) / √n` on
//! `n − 1` degrees of freedom is the noise of one benchmark alone ([`paired_change`],
//! [`NoiseBasis::Pairs`](crate::detect::NoiseBasis::Pairs)). A sequence of several benchmarks judges each with a moderated
//! variance ([`paired_changes`], [`NoiseBasis::PooledPairs`](crate::detect::NoiseBasis::PooledPairs)): its own spread and, weighted
//! as [`POOLED_PRIOR_DF`] degrees of freedom, the spread the other benchmarks of the same
//! runs show, scaled to this benchmark by the runs' own intervals (Smyth's moderated t,
//! 2004). Three pairs give a benchmark 2 degrees of freedom of its own, on which a 1 %
//! one-sided test needs a change of 7 standard errors; with the others' it needs 3.
//! Once both orders have run and three pairs or more leave room, a period effect (the
//! first run of a pair reading more than the second, whichever side it was) is fitted out
//! of the spread at the cost of one degree of freedom ([`PeriodFit`]): ABBA balances it out
//! of the change, but on a board that has one it inflates the spread. In a sequence of
//! several benchmarks each one's period effect is shrunk towards zero by how much the
//! period effects of all of them spread (empirical Bayes, [`shrunk_period_fit`]): fitted
//! nearly in full on a board that has one, nearly not at all, and the degree of freedom
//! kept, on a board that has none.
//! A regression when the change exceeds the threshold and the one-sided lower bound lies
//! above zero, an improvement when the upper bound lies below zero, as `compare` rules
//! ([`Verdict`]).
//!
//! Figures in log units (`d`, the standard error, the detectable change) are percent as
//! `100 · ln(ratio)`: within 1 % of themselves of the percent change for changes below 2 %.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::detect::{student_t_quantile, Verdict, DETECTION_POWER};
use crate::error::echo;
use crate::error::{Error, ErrorKind, Result};
use crate::result::ResultDevice;

mod moderated;
pub use moderated::{
    between_runs_ratio, paired_change, paired_changes, paired_changes_weighted, period_effect_spread, period_fit,
    shrunk_period_fit, PairedChange, PeriodFit, POOLED_PRIOR_DF,
};

/// The schema tag of `cargo energy ab`'s report (`ab.json`).
pub const AB_SCHEMA: &str = "energy-ab/1";

/// Which executable a run is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Side {
    /// The baseline's executable.
    A,
    /// The candidate's executable.
    B,
}

impl Side {
    /// "baseline" or "candidate".
    pub fn role(self) -> &'static str {
        match self {
            Side::A => "baseline",
            Side::B => "candidate",
        }
    }
}

/// The side of run `index` (from 0) in ABBA order: A B B A, A B B A, …
pub fn abba_side(index: usize) -> Side {
    if index.div_ceil(2).is_multiple_of(2) {
        Side::A
    } else {
        Side::B
    }
}

/// The sides of the first `runs` runs in ABBA order.
pub fn abba_order(runs: usize) -> Vec<Side> {
    (0..runs).map(abba_side).collect()
}

/// One benchmark's figures in one run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BenchFigure {
    /// Energy per launch (`energy_j.mean`), J.
    pub energy_j: f64,
    /// Mean die temperature over its windows, °C.
    pub temperature_c: Option<f64>,
    /// The run's own 95 % interval of the energy per launch (`energy_j.ci_low`,
    /// `ci_high`), J, and its windows: the within-run noise beside the pairs' spread (absent
    /// in reports of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_run: Option<WithinRun>,
}

impl BenchFigure {
    /// The standard error of `100 · ln(energy)` the run's own 95 % interval gives (its
    /// half-width over Student's t on `windows − 1` degrees of freedom), or `None` without a
    /// finite positive interval on two windows or more.
    pub fn within_run_se_pct(&self) -> Option<f64> {
        let w = self.within_run?;
        let half = 0.5 * (w.ci_high_j - w.ci_low_j);
        let se = 100.0 * half / self.energy_j / student_t_quantile(0.975, (w.windows.max(2) - 1) as f64);
        (w.windows >= 2 && se.is_finite() && se > 0.0).then_some(se)
    }
}

/// A run's own interval of a benchmark's energy per launch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WithinRun {
    /// Lower end of the 95 % interval, J.
    pub ci_low_j: f64,
    /// Upper end of the 95 % interval, J.
    pub ci_high_j: f64,
    /// Windows it rests on.
    pub windows: usize,
}

/// One run of one executable: where it wrote its results and what they hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunFigures {
    /// Its number in the sequence, from 1.
    pub run: usize,
    /// Baseline (A) or candidate (B).
    pub side: Side,
    /// The run's directory (`…/energy/new`).
    pub dir: String,
    /// Seconds from the start of `ab` to the start of this run.
    pub started_s: f64,
    /// How long the executable ran, s.
    pub wall_s: f64,
    /// The GPU its results name.
    pub device: ResultDevice,
    /// Each benchmark's figures, by id.
    pub benchmarks: BTreeMap<String, BenchFigure>,
}

/// One pair's figures of one benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PairFigures {
    /// The pair's number, from 1.
    pub pair: usize,
    /// "AB" or "BA": which ran first.
    pub order: String,
    /// The baseline's energy per launch, J.
    pub baseline_j: f64,
    /// The candidate's energy per launch, J.
    pub candidate_j: f64,
    /// The baseline run's mean temperature, °C.
    pub baseline_temperature_c: Option<f64>,
    /// The candidate run's mean temperature, °C.
    pub candidate_temperature_c: Option<f64>,
    /// `100 · ln(candidate / baseline)`.
    pub difference_pct: f64,
    /// The standard error of `difference_pct` the two runs' own intervals give (between-run
    /// noise not in it), in the same units; absent when either run has no interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_run_se_pct: Option<f64>,
}

impl PairFigures {
    /// The pair's figures from its two runs' figures of one benchmark.
    pub fn new(pair: usize, order: &str, a: BenchFigure, b: BenchFigure) -> PairFigures {
        PairFigures {
            pair,
            order: order.to_string(),
            baseline_j: a.energy_j,
            candidate_j: b.energy_j,
            baseline_temperature_c: a.temperature_c,
            candidate_temperature_c: b.temperature_c,
            difference_pct: 100.0 * (b.energy_j / a.energy_j).ln(),
            within_run_se_pct: match (a.within_run_se_pct(), b.within_run_se_pct()) {
                (Some(x), Some(y)) => Some(x.hypot(y)),
                _ => None,
            },
        }
    }

    /// Mean of the two runs' temperatures, °C (either alone when the other has none).
    pub fn temperature_c(&self) -> Option<f64> {
        match (self.baseline_temperature_c, self.candidate_temperature_c) {
            (Some(a), Some(b)) => Some(0.5 * (a + b)),
            (a, b) => a.or(b),
        }
    }
}

/// The runs of an A/B sequence so far, each checked as it comes: one GPU throughout, each
/// side with the same benchmarks in every run, every baseline benchmark in the candidate
/// (or removed on purpose).
#[derive(Clone, Debug, Default)]
pub struct AbSequence {
    /// The runs, in order.
    pub runs: Vec<RunFigures>,
    /// Benchmarks in both executables' runs (set once both have run).
    pub common: Vec<String>,
    /// Benchmarks only the candidate has.
    pub added: Vec<String>,
    /// Benchmarks only the baseline has, each named in `removed_on_purpose`.
    pub removed: Vec<String>,
    /// Baseline benchmarks the candidate may lack.
    pub removed_on_purpose: Vec<String>,
    /// Benchmarks settled and left out of later pairs ([`AbSequence::settle`]): each id with
    /// the pairs it ran.
    pub settled: BTreeMap<String, usize>,
    /// Why each settled benchmark settled.
    pub settled_because: BTreeMap<String, Settled>,
}

impl AbSequence {
    /// An empty sequence; `removed_on_purpose` are baseline benchmarks the candidate may lack.
    pub fn new(removed_on_purpose: Vec<String>) -> AbSequence {
        AbSequence { removed_on_purpose, ..AbSequence::default() }
    }

    /// The side of the next run.
    pub fn next_side(&self) -> Side {
        abba_side(self.runs.len())
    }

    /// Whole pairs so far.
    pub fn pairs(&self) -> usize {
        self.runs.len() / 2
    }

    /// Adds the next run after checking it against the runs before (see the type's docs).
    pub fn add(&mut self, run: RunFigures) -> Result<()> {
        let refuse = |why: String| Err(Error::new(ErrorKind::InvalidInput, why));
        if run.side != self.next_side() {
            return refuse(format!("run {} is of the {}, but ABBA order wants the other", run.run, run.side.role()));
        }
        if let Some(first) = self.runs.first() {
            let (f, r) = (&first.device, &run.device);
            if f.simulated != r.simulated {
                let kind = |d: &ResultDevice| if d.simulated { "simulated" } else { "measured" };
                return refuse(format!(
                    "run {} ({}) is {} on {}, run 1 ({}) {} on {}: simulated and measured figures are never compared; \
                     give both executables the same ENERGY_DEVICE",
                    run.run,
                    run.side.role(),
                    kind(r),
                    r.uuid,
                    first.side.role(),
                    kind(f),
                    f.uuid
                ));
            }
            if f.uuid != r.uuid {
                return refuse(format!(
                    "run {} ({}) measured on {} ({}), run 1 ({}) on {} ({}): paired runs must share one GPU; pin it \
                     with --gpu",
                    run.run,
                    run.side.role(),
                    r.name,
                    r.uuid,
                    first.side.role(),
                    f.name,
                    f.uuid
                ));
            }
        }
        if let Some(same) = self.runs.iter().find(|r| r.side == run.side) {
            let ids = |r: &RunFigures| r.benchmarks.keys().cloned().collect::<BTreeSet<String>>();
            let (before, now) = (ids(same), ids(&run));
            // A benchmark settled before this run's pair may be left out of it (or run anyway,
            // by an executable that ignores the selection: its later figures are not used).
            let pair = self.runs.len() / 2 + 1;
            let settled_before = |id: &String| self.settled.get(id).is_some_and(|&ran| ran < pair);
            let lost_unsettled = before.difference(&now).any(|id| !settled_before(id));
            if lost_unsettled || !now.is_subset(&before) {
                let names = |s: Vec<&String>| s.into_iter().map(|i| format!("`{}`", echo(i))).collect::<Vec<_>>();
                let lacks = names(before.difference(&now).collect());
                let extra = names(now.difference(&before).collect());
                return refuse(format!(
                    "run {} ({}) in {} differs from run {} of the same executable: it {}{}{}; a run that lost \
                     benchmarks crashed or was filtered; nothing is compared",
                    run.run,
                    run.side.role(),
                    run.dir,
                    same.run,
                    if lacks.is_empty() { String::new() } else { format!("lacks {}", lacks.join(", ")) },
                    if !lacks.is_empty() && !extra.is_empty() { " and " } else { "" },
                    if extra.is_empty() { String::new() } else { format!("holds {} more", extra.join(", ")) },
                ));
            }
        }
        self.runs.push(run);
        if self.runs.len() == 2 {
            self.set_common()?;
        }
        Ok(())
    }

    /// After the first pair: which benchmarks both have; refuses a baseline benchmark the
    /// candidate lacks unless removed on purpose, and two sets with none in common.
    fn set_common(&mut self) -> Result<()> {
        let (a, b) = (&self.runs[0], &self.runs[1]);
        let (a, b) = if a.side == Side::A { (a, b) } else { (b, a) };
        self.common = a.benchmarks.keys().filter(|id| b.benchmarks.contains_key(*id)).cloned().collect();
        self.added = b.benchmarks.keys().filter(|id| !a.benchmarks.contains_key(*id)).cloned().collect();
        let only_a: Vec<String> = a.benchmarks.keys().filter(|id| !b.benchmarks.contains_key(*id)).cloned().collect();
        let missing: Vec<String> = only_a
            .iter()
            .filter(|id| !self.removed_on_purpose.contains(id))
            .map(|id| format!("`{}`", echo(id)))
            .collect();
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the candidate's run lacks {} benchmark(s) of the baseline's: {}. A benchmark that vanished is not \
                     a pass: if it was removed on purpose, say so with --removed ID",
                    missing.len(),
                    missing.join(", ")
                ),
            ));
        }
        self.removed = only_a;
        if self.common.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("`{}` and `{}` have no benchmark in common: nothing to compare", a.dir, b.dir),
            ));
        }
        Ok(())
    }

    /// Settles every benchmark still running that `rule` settles ([`settles`]): it is left
    /// out of later pairs ([`AbSequence::running`]) and keeps the verdict of the pair it
    /// settled after ([`AbSequence::changes`]). A gate's cost then follows each benchmark's
    /// own noise and change: a quiet (or, by [`Settling::Verdict`], clearly judged) benchmark
    /// stops after the pairs it needs while the others run on. Returns the benchmarks settled
    /// now, each with why.
    pub fn settle(&mut self, changes: &[PairedChange], rule: Settling) -> Vec<(String, Settled)> {
        let pairs = self.pairs();
        let now: Vec<(String, Settled)> = changes
            .iter()
            .filter(|c| !self.settled.contains_key(&c.id))
            .filter_map(|c| settles(c, rule).map(|why| (c.id.clone(), why)))
            .collect();
        for (id, why) in &now {
            self.settled.insert(id.clone(), pairs);
            self.settled_because.insert(id.clone(), *why);
        }
        now
    }

    /// The common benchmarks not settled: those the next pair runs.
    pub fn running(&self) -> Vec<String> {
        self.common.iter().filter(|id| !self.settled.contains_key(*id)).cloned().collect()
    }

    /// Every common benchmark's figures, pair by pair (a settled benchmark's up to the pair
    /// it settled after).
    pub fn pair_figures(&self) -> BTreeMap<String, Vec<PairFigures>> {
        let mut out: BTreeMap<String, Vec<PairFigures>> = BTreeMap::new();
        for (i, two) in self.runs.chunks_exact(2).enumerate() {
            let (a, b) = if two[0].side == Side::A { (&two[0], &two[1]) } else { (&two[1], &two[0]) };
            let order = if two[0].side == Side::A { "AB" } else { "BA" };
            for id in &self.common {
                if self.settled.get(id).is_some_and(|&ran| i + 1 > ran) {
                    continue;
                }
                if let (Some(fa), Some(fb)) = (a.benchmarks.get(id), b.benchmarks.get(id)) {
                    out.entry(id.clone()).or_default().push(PairFigures::new(i + 1, order, *fa, *fb));
                }
            }
        }
        out
    }

    /// Every common benchmark's paired change (two pairs or more needed), each on its
    /// moderated noise ([`paired_changes`]). A settled benchmark keeps the judgement of the
    /// pair it settled after (its pairs and the others' up to then): the others' later pairs
    /// neither add to nor take from a verdict already reached.
    pub fn changes(&self, threshold_pct: f64) -> Result<Vec<PairedChange>> {
        let figures = self.pair_figures();
        let mut changes = paired_changes(figures.clone(), threshold_pct)?;
        let settled_after: BTreeSet<usize> = self.settled.values().copied().collect();
        for pairs in settled_after {
            let upto: BTreeMap<String, Vec<PairFigures>> = figures
                .iter()
                .map(|(id, f)| (id.clone(), f.iter().filter(|p| p.pair <= pairs).cloned().collect::<Vec<_>>()))
                .filter(|(_, f)| f.len() >= 2)
                .collect();
            if upto.len() < figures.len() {
                continue; // a benchmark with fewer than two pairs then: none settled there
            }
            for then in paired_changes(upto, threshold_pct)? {
                if self.settled.get(&then.id) == Some(&pairs) {
                    if let Some(now) = changes.iter_mut().find(|c| c.id == then.id) {
                        *now = then;
                    }
                }
            }
        }
        Ok(changes)
    }
}

/// When a benchmark of a sequence settles ([`settles`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Settling {
    /// Once its detectable change is at most `target_pct`: measured as precisely as asked
    /// (`cargo energy ab`, whose report is a measurement of the change).
    Precise {
        /// The detectable change aimed at, percent.
        target_pct: f64,
    },
    /// That, or once its verdict against `threshold_pct` is clear (`cargo energy gate`,
    /// whose report is a verdict).
    Verdict {
        /// The detectable change aimed at, percent.
        target_pct: f64,
        /// The regression threshold, percent.
        threshold_pct: f64,
    },
}

/// Why a benchmark settled ([`settles`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Settled {
    /// Its detectable change reached the target.
    Precise,
    /// Called a regression: above the threshold and significant.
    Regression,
    /// Clearly within the threshold: the one-sided upper bound of its change at
    /// [`DETECTION_POWER`] (the top of the two-sided 90 % interval) lies below the threshold.
    WithinThreshold,
}

impl Settled {
    /// A few words for a progress line.
    pub fn describe(self) -> &'static str {
        match self {
            Settled::Precise => "precise enough",
            Settled::Regression => "a regression",
            Settled::WithinThreshold => "clearly within the threshold: its one-sided 95 % upper bound is below it",
        }
    }
}

/// Whether `rule` settles a benchmark, and why: its detectable change is at most the target
/// (it is measured as precisely as asked); or, by [`Settling::Verdict`], it is called a
/// regression (above the threshold and significant at
/// [`FALSE_ALARM_RATE`](crate::detect::FALSE_ALARM_RATE)), or its change's one-sided upper
/// bound at [`DETECTION_POWER`] lies below the threshold (a rise of the threshold's size is
/// already ruled out). The last two end a benchmark whose verdict is clear before its
/// detectable change reaches the target: on the H200 gate study's runs
/// (`research/results/2026-12-01-ci-gate/gpu-gates.md`, calls 19-21 replayed) they cut the
/// GPU time per 10 benchmarks from 64 s to 58 s, with the same verdicts. A rise of twice the
/// threshold ends within the threshold only when its estimate falls `t · se` plus the
/// threshold below itself (at most 5 % of the time at one look, far less once `se` is below
/// the threshold); a regression called at an early look is a look more at a 1 % false-alarm
/// test (the study's unchanged code: none at any look).
pub fn settles(change: &PairedChange, rule: Settling) -> Option<Settled> {
    let d = &change.detectability;
    let (target_pct, threshold_pct) = match rule {
        Settling::Precise { target_pct } => (target_pct, None),
        Settling::Verdict { target_pct, threshold_pct } => (target_pct, Some(threshold_pct)),
    };
    if d.detectable_change_pct <= target_pct {
        return Some(Settled::Precise);
    }
    let threshold_pct = threshold_pct?;
    let threshold_log = 100.0 * (threshold_pct / 100.0).ln_1p();
    let upper =
        change.mean_difference_pct + student_t_quantile(DETECTION_POWER, d.degrees_of_freedom) * d.standard_error_pct;
    if change.verdict == Verdict::Regression {
        Some(Settled::Regression)
    } else if upper < threshold_log {
        Some(Settled::WithinThreshold)
    } else {
        None
    }
}

/// Why the sequence stops after `pairs` pairs, or `None` to run another pair: never
/// before `min_pairs`; then when `changes` (the benchmarks still running) is empty (every
/// one settled, [`settles`]), when every one's detectable change is at most `target_pct`,
/// or at `max_pairs`.
pub fn stop_reason(
    changes: &[PairedChange],
    pairs: usize,
    min_pairs: usize,
    max_pairs: usize,
    target_pct: f64,
) -> Option<String> {
    if pairs < min_pairs {
        return None;
    }
    if changes.is_empty() {
        return Some(format!("every benchmark settled, the last after {pairs} pairs (why: on each benchmark's line)"));
    }
    let worst = changes
        .iter()
        .max_by(|a, b| a.detectability.detectable_change_pct.total_cmp(&b.detectability.detectable_change_pct));
    let worst_pct = worst.map_or(0.0, |c| c.detectability.detectable_change_pct);
    if worst_pct <= target_pct {
        return Some(format!(
            "every benchmark's detectable change is at most the target {target_pct:.2} % after {pairs} pairs"
        ));
    }
    (pairs >= max_pairs).then(|| {
        let between = worst.and_then(between_runs_ratio).filter(|r| *r >= BETWEEN_RUNS_NOTE_RATIO).map_or(
            String::new(),
            |r| {
                format!(
                    "; its pairs differ {r:.1} times as much as its runs' windows say: a difference between runs \
                     (processes) that more windows do not remove; more pairs (--max-pairs) or a higher --threshold \
                     gate it"
                )
            },
        );
        let others = changes.iter().filter(|c| c.detectability.detectable_change_pct > target_pct).count() - 1;
        let more = match others {
            0 => String::new(),
            n => format!(" (and {n} more benchmark(s) above it)"),
        };
        format!(
            "--max-pairs {max_pairs} reached; the detectable change of `{}` is {:.2} %, above the target {target_pct:.2} %{more}{between}",
            worst.map_or(String::new(), |c| echo(&c.id)),
            worst_pct
        )
    })
}

/// From this ratio on, [`stop_reason`] says that a benchmark's pairs differ by more than its
/// runs' windows say (in the H200 gate study's four-pair gates: an L2-resident saxpy's ratio
/// 3-8, cuBLAS calls' mostly below 1).
pub const BETWEEN_RUNS_NOTE_RATIO: f64 = 2.0;

/// What `cargo energy ab` found: every run's raw figures and each benchmark's paired change
/// (`ab.json`, schema [`AB_SCHEMA`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AbReport {
    /// Always [`AB_SCHEMA`].
    pub schema: String,
    /// The baseline's executable (or revision).
    pub baseline: String,
    /// The candidate's executable (or revision).
    pub candidate: String,
    /// The arguments both executables got.
    pub args: Vec<String>,
    /// The GPU every run measured on.
    pub device: ResultDevice,
    /// The regression threshold, percent.
    pub threshold_pct: f64,
    /// The detectable change the sequence aimed at, percent.
    pub target_pct: f64,
    /// `--min-pairs`.
    pub min_pairs: usize,
    /// `--max-pairs`.
    pub max_pairs: usize,
    /// Pairs run.
    pub pairs: usize,
    /// Why the sequence stopped.
    pub stop: String,
    /// Wall time of the whole sequence, s.
    pub wall_s: f64,
    /// Every run, in order.
    pub runs: Vec<RunFigures>,
    /// Each common benchmark's paired change (computed again on read from `runs`).
    #[serde(default, skip_deserializing)]
    pub changes: Vec<PairedChange>,
    /// Benchmarks only the candidate has.
    pub added: Vec<String>,
    /// Baseline benchmarks the candidate lacks, removed on purpose.
    pub removed: Vec<String>,
    /// Benchmarks settled (`energy_results::ab::settles`: measured to the target, or, in a
    /// gate, a clear verdict), each with the pairs it ran; later pairs left them out (absent
    /// in reports of earlier versions: none were).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settled: BTreeMap<String, usize>,
    /// Why each settled benchmark settled (absent in reports of earlier versions).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settled_because: BTreeMap<String, Settled>,
}

impl AbReport {
    /// The benchmarks that regressed.
    pub fn regressions(&self) -> Vec<&PairedChange> {
        self.changes.iter().filter(|c| c.verdict == Verdict::Regression).collect()
    }

    /// Reads a report written before, checking its schema; its changes are computed again
    /// from its runs' raw figures, so a table can always be regenerated from the file.
    pub fn parse(text: &str) -> Result<AbReport> {
        let report: AbReport = serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorKind::Format, format!("not an {AB_SCHEMA} report: {e}")))?;
        if report.schema != AB_SCHEMA {
            return Err(Error::new(ErrorKind::Format, format!("schema `{}` is not {AB_SCHEMA}", echo(&report.schema))));
        }
        let mut sequence = AbSequence::new(report.removed.clone());
        sequence.settled = report.settled.clone();
        sequence.settled_because = report.settled_because.clone();
        for run in &report.runs {
            sequence.add(run.clone())?;
        }
        let changes = sequence.changes(report.threshold_pct)?;
        Ok(AbReport { changes, ..report })
    }
}

#[cfg(test)]
mod tests;
