//! The queue of `cargo energy run --gpus` (the default, `--split queue`): made before the
//! bench processes start, with the durations of the previous run, and read when they have
//! all ended: who took what, when each GPU was done, and what was lost (a benchmark claimed
//! by a process that died, or never taken); then the durations are kept for the next run.
//! The queue itself (claims under a lock, longest first) is the harness's
//! (`energy_harness::unstable::bench::WorkQueue`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use energy_harness::unstable::bench::{Durations, ItemStatus, QueueState, WorkQueue};
use energy_harness::Result;
use energy_results::escape::visible;

/// The queue's folder under `<target>/energy-gpus/`.
pub(super) const QUEUE_DIR: &str = "queue";
/// The durations kept between runs, under `<target>/energy-gpus/`.
pub(super) const DURATIONS_FILE: &str = "durations.json";

/// How the benchmarks are split between the GPUs (`--split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Split {
    /// One queue: each GPU's process takes the next benchmark when it is done with one.
    Queue,
    /// Hash shards (`ENERGY_SHARD=i/N`): a benchmark stays on the same GPU run after run.
    Hash,
}

/// Makes the run's queue in `base/queue` with the durations of `base/durations.json` (a
/// file that cannot be read is said and left out: durations only order the queue).
pub(super) fn prepare(base: &Path, run_id: &str) -> Result<PathBuf> {
    let durations = Durations::read_json(&base.join(DURATIONS_FILE)).unwrap_or_else(|e| {
        eprintln!("energy run: {e}; the queue goes in declaration order");
        Durations::default()
    });
    let dir = base.join(QUEUE_DIR);
    WorkQueue::create(&dir, run_id, durations.seconds)?;
    Ok(dir)
}

/// What the queue says once every process has ended.
#[derive(Debug, Default)]
pub(super) struct QueueEnd {
    /// Per GPU label: the benchmarks it took and when it was done with its last, seconds
    /// after the queue was made.
    pub taken: BTreeMap<String, (usize, f64)>,
    /// Benchmarks lost or never run, one line each: the run fails.
    pub problems: Vec<String>,
    /// Benchmarks in the queue.
    pub total: usize,
}

/// Reads the queue in `dir` after the run and keeps its durations in `base`.
pub(super) fn conclude(base: &Path, dir: &Path) -> Result<QueueEnd> {
    let state = WorkQueue::read(dir)?;
    let path = base.join(DURATIONS_FILE);
    let previous = Durations::read_json(&path).unwrap_or_default();
    if let Err(e) = previous.updated(&state).write_json(&path) {
        eprintln!("energy run: the durations were not kept for the next run: {e}");
    }
    Ok(summarize(&state))
}

/// Who took what, and what was lost.
pub(super) fn summarize(state: &QueueState) -> QueueEnd {
    let mut end = QueueEnd { total: state.items.len(), ..QueueEnd::default() };
    for item in &state.items {
        let what = format!("benchmark `{}` of {}", visible(&item.name), visible(&item.exe));
        let worker = item.worker.as_deref().map(visible).unwrap_or_default();
        match item.status {
            ItemStatus::Done | ItemStatus::Failed => {
                let entry = end.taken.entry(worker.into_owned()).or_insert((0, 0.0));
                entry.0 += 1;
                entry.1 = entry.1.max(item.ended_s.unwrap_or(0.0));
            }
            ItemStatus::Claimed => end.problems.push(format!(
                "{what} was taken by {worker} (process {}) and never finished: its process ended with it (a crash, a \
                 signal or the time limit); not measured",
                item.pid.map_or("?".to_string(), |p| p.to_string())
            )),
            ItemStatus::Pending => end.problems.push(format!(
                "{what} was never run: every GPU's process of {} ended before taking it (their devices did not open, \
                 or they were stopped)",
                visible(&item.exe)
            )),
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use energy_harness::unstable::bench::{QueueItem, QUEUE_SCHEMA};

    fn item(name: &str, status: ItemStatus, worker: Option<&str>, ended_s: Option<f64>) -> QueueItem {
        QueueItem {
            exe: "bench-1".into(),
            target: "bench".into(),
            name: name.into(),
            order: 0,
            expected_s: None,
            status,
            worker: worker.map(str::to_string),
            pid: worker.map(|_| 42),
            claimed_s: worker.map(|_| 0.0),
            ended_s,
        }
    }

    #[test]
    fn a_lost_claim_and_a_benchmark_never_taken_are_problems() {
        let state = QueueState {
            schema: QUEUE_SCHEMA.into(),
            run_id: "r".into(),
            created_unix_s: 0.0,
            expected_s: BTreeMap::new(),
            items: vec![
                item("a", ItemStatus::Done, Some("gpu0"), Some(2.0)),
                item("b", ItemStatus::Failed, Some("gpu0"), Some(3.0)),
                item("c", ItemStatus::Done, Some("gpu1"), Some(2.5)),
                item("d", ItemStatus::Claimed, Some("gpu1"), None),
                item("e", ItemStatus::Pending, None, None),
            ],
        };
        let end = summarize(&state);
        assert_eq!(end.total, 5);
        assert_eq!(end.taken["gpu0"], (2, 3.0));
        assert_eq!(end.taken["gpu1"], (1, 2.5));
        assert_eq!(end.problems.len(), 2, "{:?}", end.problems);
        assert!(end.problems[0].contains("`d`") && end.problems[0].contains("taken by gpu1 (process 42)"));
        assert!(end.problems[1].contains("`e`") && end.problems[1].contains("never run"));
    }
}
