//! What the verdict tables compare: the comparison modes (`Mode`) and one comparison's
//! outcome (`Outcome`), shared by the reading of the runs and the comparisons.

use energy_results::detect::Verdict;

/// How a comparison was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Two runs, raw energy per launch.
    Plain,
    /// Two runs, energy at 50 °C.
    Normalized,
    /// Interleaved pairs (`cargo energy ab`).
    Paired,
    /// `cargo energy ab` itself, run on the GPU (its `ab.json`, read back).
    AbCommand,
    /// Every paired comparison: [`Mode::Paired`] and [`Mode::AbCommand`] together.
    PairedAll,
    /// Cool-down before each of two runs, raw.
    Zeus,
    /// Two runs apart: the baseline from a cold start, the candidate a block or two later
    /// on the warmed board (a saved baseline's situation), raw.
    PlainApart,
    /// The same pairs, energy at 50 °C.
    NormalizedApart,
    /// Against the three latest saved runs of the baseline code (earlier blocks' A runs),
    /// their spread the noise (`compare --baseline A --baseline B --baseline C`), raw.
    SavedRuns,
    /// The same, energy at 50 °C.
    SavedRunsNormalized,
}

impl Mode {
    /// As the table names it.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Plain => "plain compare",
            Mode::Normalized => "temperature-normalized compare",
            Mode::Paired => "paired runs: `ab`'s rule on each block's pairs (3-4)",
            Mode::Zeus => "Zeus-style (20 s cool-down before each run), plain",
            Mode::PlainApart => "plain compare, baseline cold, candidate 25-50 s later",
            Mode::NormalizedApart => "normalized compare, baseline cold, candidate 25-50 s later",
            Mode::AbCommand => "`cargo energy ab` run as is (3-12 pairs, target 1 %)",
            Mode::PairedAll => "**paired runs, all** (the two rows above together)",
            Mode::SavedRuns => "compare against 3 saved baseline runs (30-200 s earlier), raw",
            Mode::SavedRunsNormalized => "compare against 3 saved baseline runs, energy at 50 °C",
        }
    }
}

/// One comparison's outcome.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How.
    pub mode: Mode,
    /// Knob level (0, 1, 2).
    pub level: usize,
    /// Whether its first run started on a cooled board.
    pub cold: bool,
    /// The board's UUID.
    pub board: String,
    /// The change, percent.
    pub change_pct: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// The smallest change it could detect, percent.
    pub detectable_pct: f64,
    /// Wall time it took on the GPU, s.
    pub wall_s: f64,
    /// Pairs used (paired mode), else 0.
    pub pairs: usize,
}
