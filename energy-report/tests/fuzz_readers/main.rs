//! A mutation fuzzer for the readers untrusted files reach: `energy-trace v1` (parsed,
//! then analyzed with every source and model choice) and `energy-result/1` (parsed, then
//! compared); and, in two more campaigns, `cargo energy analyze` (traces with clock steps,
//! wrong sensor models, every printed figure and the plot) and `cargo energy explain`'s
//! inputs (an `energy-model/1` file and an ncu export). Properties: nothing panics, and
//! whatever is accepted is physically possible (finite, non-negative total energies and
//! idle power; compare's changes finite; no window below its idle by more than noise
//! allows; no negative or infinite µJ in an explanation; no non-finite SVG coordinate). A
//! further campaign feeds pairs of results with corrupt energy and dynamic figures to
//! `compare` and `compare_across_boards`; another sends benchmark names through every writer.
//!
//! CI runs a short campaign; `FUZZ_CASES=1000000 cargo test --release -p energy-harness
//! --test fuzz_readers -- --nocapture` runs the long one (docs/RELIABILITY.md has the
//! counts). `FUZZ_SEED` changes the sequence.

mod analyze;
mod common;
mod comparisons;
mod explain;
mod names;
mod traces;

use common::{campaign, cases, seed, Rng};
use traces::{mutate_json, mutate_lines, result_seed, trace_seeds};
