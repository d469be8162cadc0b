//! What a bench binary's command line asks of the run: criterion's filter as criterion
//! reads it, `--save-baseline`, and whether anything runs at all (`--list`, `--help`).

use crate::engine::session::MeasureRequest;
use crate::report::energy_dir;
use crate::report::run::{current_target_name, RunStart, RunWriter};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::run::{PAIRED_LEAN_ENV, PAIRED_RUN_ENV};

/// Options of a run taken from the bench binary's command line.
#[derive(Clone, Debug, Default)]
pub(super) struct RunOptions {
    /// `--save-baseline NAME`: our results are written to `<target>/energy/NAME/` too.
    pub(super) save_baseline: Option<String>,
    /// `--list`, `--help` or `--version`: nothing is measured, no run is started.
    pub(super) nothing_runs: bool,
    /// Criterion's benchmark filter (`cargo bench -- FILTER`, `--exact`, `--ignored`).
    pub(super) filter: BenchFilter,
    /// `--test`: each kernel runs a few launches; nothing is measured.
    pub(super) test_mode: bool,
    /// `ENERGY_SHARD=I/N`: this process runs shard I of N.
    pub(super) shard: Option<Shard>,
    /// `ENERGY_BENCHMARKS`: the result ids this run measures (a paired sequence's
    /// benchmarks not yet settled); `None` when unset or empty.
    pub(super) only: Option<std::collections::BTreeSet<String>>,
    /// `ENERGY_PAIRED_RUN=1`: a run of a paired sequence (`cargo energy ab`, `gate`), lean
    /// with `ENERGY_PAIRED_LEAN=1`.
    pub(super) pairing: Pairing,
}

/// Whether and how a bench process runs as a run of a paired sequence (`cargo energy ab`,
/// `gate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Pairing {
    /// Not a run of a paired sequence.
    #[default]
    Unpaired,
    /// A run of the sequence's first pair: one counter interval of idle tail
    /// ([`MeasureRequest::paired`]).
    Paired,
    /// A run after its first pair (`ENERGY_PAIRED_LEAN=1`): no idle tail
    /// ([`MeasureRequest::lean`]).
    Lean,
}

impl Pairing {
    /// Whether this is a run of a paired sequence at all.
    pub(super) fn is_paired(self) -> bool {
        self != Pairing::Unpaired
    }

    /// `request` as this run measures it.
    pub(super) fn apply(self, request: MeasureRequest) -> MeasureRequest {
        match self {
            Pairing::Unpaired => request,
            Pairing::Paired => request.paired(true),
            Pairing::Lean => request.paired(true).lean(),
        }
    }

    /// What its idle tails are, for the run's first line.
    pub(super) fn tail_phrase(self) -> String {
        match self {
            Pairing::Lean => format!(
                "a lean run ({PAIRED_LEAN_ENV}): no idle tail, the active idle the one measured before this process's \
                 first benchmark"
            ),
            _ => "each idle tail is one counter interval".to_string(),
        }
    }
}

/// The environment variable that splits a bench binary's benchmarks into shards.
pub const SHARD_ENV: &str = "ENERGY_SHARD";

/// Shard `index` (1-based) of `count`: the benchmarks whose name hashes to it. The hash
/// (FNV-1a of the name) depends on the name alone, so a benchmark stays in its shard
/// across runs, machines and orderings, and every benchmark is in exactly one shard.
/// (An environment variable, not `-- --shard`: criterion refuses options it does not know.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, 1 ..= count.
    pub index: u32,
    /// How many.
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` (1 <= I <= N).
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || {
            Error::new(
                ErrorKind::InvalidInput,
                format!("{SHARD_ENV}=`{}`: expected I/N with 1 <= I <= N, e.g. 2/4", energy_results::error::echo(text)),
            )
        };
        let (i, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Reads `ENERGY_SHARD` (unset: no sharding).
    pub fn from_env() -> Result<Option<Shard>> {
        match std::env::var(SHARD_ENV) {
            Ok(text) if text.trim().is_empty() => Ok(None),
            Ok(text) => Shard::parse(&text).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// The shard (1-based) of the benchmark `name` among `count`.
    pub fn of(name: &str, count: u32) -> u32 {
        (energy_results::hash::fnv1a(name.as_bytes()) % u64::from(count.max(1))) as u32 + 1
    }

    /// Whether this shard runs the benchmark `name`.
    pub fn runs(&self, name: &str) -> bool {
        Shard::of(name, self.count) == self.index
    }
}

/// Which benchmark ids criterion runs: its `FILTER` argument, read as criterion reads it.
#[derive(Clone, Debug, Default)]
pub(super) enum BenchFilter {
    #[default]
    All,
    Nothing,
    Exact(String),
    Regex(regex::Regex),
}

impl BenchFilter {
    /// Criterion's options that take a value (the filter is the first other positional).
    const VALUE_OPTIONS: &'static [&'static str] = &[
        "--color",
        "-c",
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--baseline-lenient",
        "--format",
        "--profile-time",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
    ];

    fn from_args(args: &[String]) -> Self {
        if args.iter().any(|a| a == "--ignored") {
            return BenchFilter::Nothing;
        }
        let mut positional = None;
        let mut i = 1;
        while i < args.len() {
            let a = &args[i];
            if Self::VALUE_OPTIONS.contains(&a.as_str()) {
                i += 2;
                continue;
            }
            if !a.starts_with('-') {
                positional = Some(a.clone());
                break;
            }
            i += 1;
        }
        match positional {
            None => BenchFilter::All,
            Some(f) if args.iter().any(|a| a == "--exact") => BenchFilter::Exact(f),
            // An invalid regex makes criterion itself stop with a message; run everything here.
            Some(f) => regex::Regex::new(&f).map(BenchFilter::Regex).unwrap_or(BenchFilter::All),
        }
    }

    /// Whether criterion runs any of `ids`.
    pub(super) fn runs_any(&self, ids: &[String]) -> bool {
        match self {
            BenchFilter::All => true,
            BenchFilter::Nothing => false,
            BenchFilter::Exact(f) => ids.iter().any(|id| id == f),
            BenchFilter::Regex(r) => ids.iter().any(|id| r.is_match(id)),
        }
    }
}

/// Reads a switch an orchestrator sets in a bench process's environment
/// ([`parse_switch`]).
fn switch_from_env(name: &str, zero_is_off: bool) -> Result<bool> {
    parse_switch(name, std::env::var(name).ok().as_deref(), zero_is_off)
}

/// A switch's value (`None`: unset): unset or empty, off; `1`, on; `0`, off where
/// `zero_is_off` (`ENERGY_PAIRED_LEAN`; `ENERGY_PAIRED_RUN` has only `1`); anything else an
/// error naming the variable and what it takes.
fn parse_switch(name: &str, value: Option<&str>, zero_is_off: bool) -> Result<bool> {
    match value.map(str::trim) {
        None | Some("") => Ok(false),
        Some("0") if zero_is_off => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{name}=`{}`: set it to {} (cargo energy ab and gate set it in their runs) or leave it unset",
                energy_results::error::echo(other),
                if zero_is_off { "1 or 0" } else { "1" }
            ),
        )),
    }
}

impl RunOptions {
    pub(super) fn from_args() -> Result<Self> {
        let args: Vec<String> = std::env::args().collect();
        let save_baseline = args
            .iter()
            .position(|a| a == "--save-baseline" || a == "-s")
            .and_then(|i| args.get(i + 1).cloned())
            .or_else(|| args.iter().find_map(|a| a.strip_prefix("--save-baseline=").map(str::to_string)));
        let nothing_runs =
            args.iter().skip(1).any(|a| matches!(a.as_str(), "--list" | "--help" | "-h" | "--version" | "-V"));
        let test_mode = args.iter().skip(1).any(|a| a == "--test");
        let shard = Shard::from_env()?;
        let only = std::env::var(energy_results::run::BENCHMARKS_ENV)
            .ok()
            .map(|text| text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect())
            .filter(|ids: &std::collections::BTreeSet<String>| !ids.is_empty());
        // ENERGY_PAIRED_LEAN is read in a paired run only (elsewhere it means nothing).
        let pairing = match switch_from_env(PAIRED_RUN_ENV, false)? {
            false => Pairing::Unpaired,
            true if switch_from_env(PAIRED_LEAN_ENV, true)? => Pairing::Lean,
            true => Pairing::Paired,
        };
        Ok(RunOptions {
            save_baseline,
            nothing_runs,
            filter: BenchFilter::from_args(&args),
            test_mode,
            shard,
            only,
            pairing,
        })
    }

    /// Starts (or joins) the runs this process writes: `new`, and the saved baseline.
    pub(super) fn begin_runs(&self) -> Result<Vec<RunWriter>> {
        // `--list` and `--test` measure nothing: the last real run stays as it is (a
        // `cargo bench -- --test` after `cargo bench` must not empty `new/`).
        if self.nothing_runs || self.test_mode {
            return Ok(Vec::new());
        }
        let mut names = vec!["new".to_string()];
        if let Some(name) = &self.save_baseline {
            let bad = name.is_empty()
                || name == "new"
                || name.starts_with('.')
                || name.contains(['/', '\\'])
                || name.chars().any(char::is_control);
            if bad {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "--save-baseline `{}`: a baseline name is a plain folder name other than `new`",
                        energy_results::error::echo(name)
                    ),
                ));
            }
            names.push(name.clone());
        }
        let base = energy_dir();
        let start = RunStart::current();
        let target = current_target_name();
        names.iter().map(|name| RunWriter::start(&base.join(name), &target, &start)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_is_in_exactly_one_shard_and_stays_there() {
        let names: Vec<String> = (0..500).map(|i| format!("instructions/int/add_u32/O4/k{i}")).collect();
        for count in [1, 2, 3, 8] {
            let shards: Vec<Shard> = (1..=count).map(|index| Shard { index, count }).collect();
            let mut sizes = vec![0usize; count as usize];
            for name in &names {
                let owners: Vec<&Shard> = shards.iter().filter(|s| s.runs(name)).collect();
                assert_eq!(owners.len(), 1, "{name} in {} shards of {count}", owners.len());
                sizes[owners[0].index as usize - 1] += 1;
            }
            // Roughly even: no shard with under half its share.
            assert!(sizes.iter().all(|&n| n * 2 * count as usize >= names.len()), "{count}: {sizes:?}");
        }
        // Stable: a fixed value, whatever runs before.
        assert_eq!(Shard::of("saxpy", 4), Shard::of("saxpy", 4));
        assert_eq!(Shard::of("saxpy", 1), 1);
    }

    #[test]
    fn shards_parse_or_say_what_is_wrong() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        assert_eq!(Shard::parse(" 1 / 1 ").unwrap(), Shard { index: 1, count: 1 });
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "-1/2"] {
            let err = Shard::parse(bad).unwrap_err().to_string();
            assert!(err.contains("ENERGY_SHARD") && err.contains("I/N"), "{bad}: {err}");
        }
    }

    fn filter(args: &[&str]) -> BenchFilter {
        let args: Vec<String> = std::iter::once("bench").chain(args.iter().copied()).map(String::from).collect();
        BenchFilter::from_args(&args)
    }

    #[test]
    fn the_filter_is_read_as_criterion_reads_it() {
        let ids = |name: &str| vec![format!("{name}/energy (simulated)"), format!("{name}/time (simulated)")];
        assert!(filter(&["--bench"]).runs_any(&ids("saxpy")));
        assert!(filter(&["--bench", "sax"]).runs_any(&ids("saxpy")));
        assert!(!filter(&["--bench", "fma"]).runs_any(&ids("saxpy")));
        assert!(filter(&["--bench", "^saxpy/"]).runs_any(&ids("saxpy")));
        // An option's value is not the filter.
        assert!(filter(&["--save-baseline", "fma", "--bench"]).runs_any(&ids("saxpy")));
        assert!(!filter(&["--save-baseline", "x", "fma"]).runs_any(&ids("saxpy")));
        assert!(filter(&["--exact", "saxpy/time (simulated)"]).runs_any(&ids("saxpy")));
        assert!(!filter(&["--exact", "saxpy"]).runs_any(&ids("saxpy")));
        assert!(!filter(&["--ignored"]).runs_any(&ids("saxpy")));
    }

    #[test]
    fn a_paired_run_is_one_and_anything_else_is_named() {
        assert!(!parse_switch(PAIRED_RUN_ENV, None, false).unwrap());
        assert!(!parse_switch(PAIRED_RUN_ENV, Some(" "), false).unwrap());
        assert!(parse_switch(PAIRED_RUN_ENV, Some("1"), false).unwrap());
        let err = parse_switch(PAIRED_RUN_ENV, Some("yes"), false).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains("ENERGY_PAIRED_RUN=`yes`: set it to 1"), "{err}");
    }

    #[test]
    fn a_lean_paired_run_is_one_and_anything_else_is_named() {
        assert!(!parse_switch(PAIRED_LEAN_ENV, None, true).unwrap());
        assert!(!parse_switch(PAIRED_LEAN_ENV, Some(""), true).unwrap());
        assert!(!parse_switch(PAIRED_LEAN_ENV, Some("0"), true).unwrap());
        assert!(parse_switch(PAIRED_LEAN_ENV, Some(" 1 "), true).unwrap());
        let err = parse_switch(PAIRED_LEAN_ENV, Some("yes"), true).unwrap_err();
        assert!(err.to_string().contains("ENERGY_PAIRED_LEAN=`yes`: set it to 1 or 0"), "{err}");
    }
}
