//! The flags `ab` and `gate` share, their defaults, and the duration parser of the
//! measuring commands (feature `measure`).

use std::path::PathBuf;

use crate::ab;
use crate::gate;
use crate::gpus;

/// How a paired sequence runs and judges: the flags `ab` and `gate` share.
#[derive(Debug, clap::Args)]
pub(crate) struct SequenceFlags {
    /// The one GPU both run on: a CUDA ordinal or a UUID (passed as CUDA_VISIBLE_DEVICES)
    /// [default: the GPU ENERGY_DEVICE and CUDA_VISIBLE_DEVICES choose].
    #[arg(long)]
    gpu: Option<String>,
    /// Pairs run before the sequence may stop (2 or more) [default: 3 for ab, 2 for gate:
    /// each benchmark is judged on its own pairs and, as 2 degrees of freedom, the other
    /// benchmarks' (a moderated variance)].
    #[arg(long = "min-pairs")]
    min_pairs: Option<usize>,
    /// Pairs run at most [default: 12 for ab; 6 for gate, where a benchmark still unsettled
    /// then is judged on its six pairs and named in the stop line].
    #[arg(long = "max-pairs")]
    max_pairs: Option<usize>,
    /// A benchmark settles (later pairs leave it out) once its detectable change is at most
    /// this, percent, and the sequence stops when every one has [default: 1 for ab; for gate
    /// twice the threshold: a rise of twice the threshold caught 95 % of the time; gate
    /// settles a benchmark on a clear verdict too: a regression, or clearly within the
    /// threshold].
    #[arg(long)]
    target: Option<f64>,
    /// Regression threshold, percent [default: 5 for ab, 1 for gate].
    #[arg(long)]
    threshold: Option<f64>,
    /// The longest one run of an executable may take: seconds, or `90m`, `2h`; 0 for no limit.
    #[arg(long, default_value = gpus::DEFAULT_TIMEOUT, value_parser = gpus::parse_timeout)]
    timeout: gpus::TimeLimit,
    /// Where the runs and ab.json go [default: <target>/energy/ab/<UTC time>].
    #[arg(long = "output-dir")]
    output_dir: Option<PathBuf>,
    /// A benchmark of the baseline removed on purpose (repeat for several); any other the
    /// candidate lacks is refused.
    #[arg(long = "removed", value_name = "ID")]
    removed: Vec<String>,
    /// The longest the paired runs may take, minutes: no pair starts that would end after
    /// it (at least two pairs are needed for a verdict).
    #[arg(long = "max-minutes", value_parser = gate::parse_minutes)]
    max_minutes: Option<std::time::Duration>,
    /// Windows per benchmark in each run (3-40; a benchmark that fixes its own keeps them)
    /// [default: for ab as each benchmark's precision needs, 10 at least; 6 for gate]: the
    /// pairs' spread is the verdict's noise, so each run needs no interval of its own.
    #[arg(long)]
    windows: Option<usize>,
}

/// What a paired command runs by default where its flags are silent.
pub(crate) struct SequenceDefaults {
    threshold_pct: f64,
    min_pairs: usize,
    max_pairs: usize,
    /// `None`: the target is twice the threshold.
    target_pct: Option<f64>,
    windows: Option<usize>,
    /// The command: `gate` settles a benchmark on a clear verdict too
    /// (`energy_results::ab::Settling::Verdict`).
    command: ab::PairedCommand,
}

/// `cargo energy ab`: a 5 % threshold, 3 to 12 pairs, a 1 % target, the benchmarks' own
/// windows.
pub(crate) const AB_DEFAULTS: SequenceDefaults = SequenceDefaults {
    threshold_pct: 5.0,
    min_pairs: 3,
    max_pairs: 12,
    target_pct: Some(1.0),
    windows: None,
    command: ab::PairedCommand::Ab,
};

/// `cargo energy gate`: a 1 % threshold, 2 to 6 pairs, a target of twice the threshold, 6
/// windows per benchmark and run. On H200s (research/results/2026-12-01-ci-gate) a gate's
/// verdict rests on the spread of its pairs, and a run costs ~0.3-0.8 s besides each
/// benchmark's: two pairs of 8 windows cost about as much as three of 3 and caught more.
/// Calls 13-15's gates (6 windows) replayed from their own runs keeping each run's first 4
/// or 5 windows: one A/A false alarm in 63 benchmark-gates at either, and +2 % caught 58 and
/// 59 of 63 against 60 of 63 at 6 (the cuBLAS benchmarks' windows still average noise out);
/// calls 16-18 at 4 windows caught 57 of 63. Calls 19-21 (6 windows, the guard ending the
/// warm-up): A/A 0 of 81, +2 % 79 of 81, 64 s per 10 benchmarks; settling on clear verdicts
/// (`PairedCommand::Gate`) replays them at 58 s with the same verdicts, and cost 68 s live on
/// another board (calls 22-24: A/A 0 of 63, +2 % 71 of 72). Calls 13-28 ran four pairs at
/// most; on a board whose pairs spread 0.7 % (calls 26-28) a benchmark needs five to reach
/// the target, and +2 % was caught 56 of 72 times. Calls 29-31 ran six at most (the period
/// effect shrunk): A/A 0 of 81, +2 % 71 of 72, 68 s per 10 benchmarks; the same runs stopped
/// after four, 68 of 72 at an estimated 63 s. A benchmark still unsettled after six is named
/// in the stop line, with whether its runs differ more than its windows say.
pub(crate) const GATE_DEFAULTS: SequenceDefaults = SequenceDefaults {
    threshold_pct: 1.0,
    min_pairs: 2,
    max_pairs: 6,
    target_pct: None,
    windows: Some(6),
    command: ab::PairedCommand::Gate,
};

impl SequenceFlags {
    pub(crate) fn into_args(self, defaults: &SequenceDefaults, args: Vec<String>) -> ab::SequenceArgs {
        let threshold_pct = self.threshold.unwrap_or(defaults.threshold_pct);
        let min_pairs = self.min_pairs.unwrap_or(defaults.min_pairs);
        ab::SequenceArgs {
            gpu: self.gpu,
            min_pairs,
            // A --min-pairs above the default maximum raises it, as asked.
            max_pairs: self.max_pairs.unwrap_or(defaults.max_pairs.max(min_pairs)),
            target_pct: self.target.or(defaults.target_pct).unwrap_or(2.0 * threshold_pct),
            threshold_pct,
            timeout: self.timeout.0,
            budget: self.max_minutes,
            windows: self.windows.or(defaults.windows),
            output_dir: self.output_dir,
            removed: self.removed,
            args,
            command: defaults.command,
        }
    }
}

pub(crate) fn parse_seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .ok_or_else(|| format!("`{text}` is not a duration in seconds (0 < S <= 86400)"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use energy_results::ab::Settling;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        sequence: SequenceFlags,
    }

    /// `gate` gives a verdict and settles a benchmark on a clear one; `ab` measures the change
    /// and settles a benchmark only once it is measured to its target.
    #[test]
    fn gate_settles_on_a_verdict_ab_on_precision() {
        let flags = |args: &[&str]| Flags::parse_from([&["t"], args].concat()).sequence;
        let gate = flags(&[]).into_args(&GATE_DEFAULTS, vec![]);
        assert_eq!(gate.settling(), Settling::Verdict { target_pct: 2.0, threshold_pct: 1.0 });
        let gate = flags(&["--threshold", "2", "--target", "3"]).into_args(&GATE_DEFAULTS, vec![]);
        assert_eq!(gate.settling(), Settling::Verdict { target_pct: 3.0, threshold_pct: 2.0 });
        let ab = flags(&[]).into_args(&AB_DEFAULTS, vec![]);
        assert_eq!(ab.settling(), Settling::Precise { target_pct: 1.0 });
    }

    /// `gate` runs 2-6 pairs (what the H200 study measured last), `ab` 3-12; a --min-pairs above
    /// the default maximum raises it, a --max-pairs given is kept.
    #[test]
    fn the_pairs_run_at_most_are_the_commands_own() {
        let flags = |args: &[&str]| Flags::parse_from([&["t"], args].concat()).sequence;
        let pairs = |args: &[&str], defaults: &SequenceDefaults| {
            let a = flags(args).into_args(defaults, vec![]);
            (a.min_pairs, a.max_pairs)
        };
        assert_eq!(pairs(&[], &GATE_DEFAULTS), (2, 6));
        assert_eq!(pairs(&[], &AB_DEFAULTS), (3, 12));
        assert_eq!(pairs(&["--min-pairs", "7"], &GATE_DEFAULTS), (7, 7));
        assert_eq!(pairs(&["--max-pairs", "8"], &GATE_DEFAULTS), (2, 8));
        assert_eq!(pairs(&["--min-pairs", "5", "--max-pairs", "3"], &GATE_DEFAULTS), (5, 3));
    }
}
