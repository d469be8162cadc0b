//! The held-out test of the energy model (issue 35, `research/results/model-protocol.json`):
//! each held-out benchmark's dynamic energy predicted as `cargo energy explain` predicts it
//! ([`predict`]: every launch of one iteration priced by `explain`, summed), set beside the
//! measured one; the mean absolute error over the kernels on their own data with a bootstrap interval;
//! the protocol's two baselines on the same kernels ([`Baselines`]: kernel time × the
//! training kernels' mean dynamic power, and executed warp-instructions × one cost fitted
//! over the training kernels); and the share of measurements inside the predicted bracket
//! ([`analyse`], [`render_markdown`]).
//!
//! One benchmark's case and its prediction are in `case.rs`, the baselines and the analysis
//! in `analysis.rs`, one board's report in `board.rs` and the markdown in `render.rs`.

mod analysis;
mod board;
mod case;
mod render;

pub use analysis::{
    analyse, bootstrap_mean, Analysis, Baselines, MeanError, Row, TrainingPoint, WithoutBound, BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
};
pub use board::{board_report, report_stem, BoardReport, Seen};
pub use case::{
    instructions, predict, unmeasured, Case, Prediction, Unbounded, INSTRUCTIONS_METRIC, MIN_TICKS_PER_WINDOW,
};
pub use render::{render_board, render_markdown, render_repeat};
