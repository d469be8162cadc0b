//! One queue of benchmarks shared by the bench processes of one node (`cargo energy run
//! --gpus`, one process per GPU): each process takes the next benchmark when it is done
//! with one, so the GPUs finish within about one benchmark of each other, and each
//! benchmark is measured on exactly one GPU.
//!
//! The queue is a folder ([`QUEUE_ENV`]) holding `queue.json` ([`QUEUE_SCHEMA`]), read and
//! rewritten (atomically) under an OS lock (`flock` on `.run.lock`, as a run directory's:
//! the kernel lets go of it when its holder dies, however it dies). `cargo energy run`
//! creates it with the durations of a previous run ([`DURATIONS_SCHEMA`]); each bench
//! process registers the benchmarks it would run (criterion's filter and a shard applied),
//! under its executable's file name, so every executable's benchmarks are covered and a
//! benchmark is claimed by one process of that executable only. Claim order: benchmarks
//! of unknown duration first (in declaration order: an unknown one may be long), then the
//! known ones longest first. A claim records the process and the time; a benchmark still
//! `claimed` after every process ended was lost with its process, and `run` reports it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::report::run::DirLock;
use energy_results::error::{echo, Error, ErrorKind, Result};
use energy_results::trace::format::write_atomically;

/// The environment variable that points a bench process at its node's queue (a folder).
pub const QUEUE_ENV: &str = "ENERGY_QUEUE";
/// The name a bench process claims under (`cargo energy run` sets its GPU's label; default:
/// `CUDA_VISIBLE_DEVICES`, else the process id).
pub const QUEUE_WORKER_ENV: &str = "ENERGY_QUEUE_WORKER";
/// The schema tag of `queue.json`.
pub const QUEUE_SCHEMA: &str = "energy-queue/1";
/// The queue's file in its folder.
pub const QUEUE_FILE: &str = "queue.json";
/// The schema tag of the durations file `cargo energy run` keeps between runs.
pub const DURATIONS_SCHEMA: &str = "energy-durations/1";

/// Where a benchmark of the queue stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Nobody has taken it yet.
    Pending,
    /// A process took it and has not said how it went (still running, or died with it).
    Claimed,
    /// Run to its end (measured, checked or skipped).
    Done,
    /// Run, and it failed (the process said so).
    Failed,
}

/// One benchmark of the queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueueItem {
    /// The bench executable's file name (`instructions-0123456789abcdef`): the processes
    /// that may claim it.
    pub exe: String,
    /// Its bench target (`instructions`): the key of its duration across builds.
    pub target: String,
    /// The benchmark's name.
    pub name: String,
    /// Its place in the executable's declaration order.
    pub order: usize,
    /// How long it took last time, seconds.
    pub expected_s: Option<f64>,
    /// Where it stands.
    pub status: ItemStatus,
    /// Who claimed it ([`QUEUE_WORKER_ENV`]).
    pub worker: Option<String>,
    /// The process that claimed it.
    pub pid: Option<u32>,
    /// When it was claimed, seconds after the queue was made.
    pub claimed_s: Option<f64>,
    /// When it ended, seconds after the queue was made.
    pub ended_s: Option<f64>,
}

impl QueueItem {
    /// `target::name`: the key of its duration in the durations file.
    pub fn key(&self) -> String {
        duration_key(&self.target, &self.name)
    }

    /// How long it ran, when it ended.
    pub fn ran_s(&self) -> Option<f64> {
        Some(self.ended_s? - self.claimed_s?).filter(|s| s.is_finite() && *s >= 0.0)
    }
}

/// The key of a benchmark's duration: `target::name`.
pub fn duration_key(target: &str, name: &str) -> String {
    format!("{target}::{name}")
}

/// `queue.json`: the queue of one `cargo energy run`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueueState {
    /// Always [`QUEUE_SCHEMA`].
    pub schema: String,
    /// The run it belongs to.
    pub run_id: String,
    /// When it was made, seconds since the Unix epoch.
    pub created_unix_s: f64,
    /// A previous run's durations, seconds, by [`duration_key`].
    pub expected_s: BTreeMap<String, f64>,
    /// The benchmarks registered so far.
    pub items: Vec<QueueItem>,
}

fn now_unix_s() -> f64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The claim order of `items` (indices): unknown durations first in declaration order,
/// then known ones longest first (ties in declaration order).
pub fn claim_order(items: &[&QueueItem]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (items[a], items[b]);
        match (a.expected_s, b.expected_s) {
            (None, None) => a.order.cmp(&b.order),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.total_cmp(&x).then(a.order.cmp(&b.order)),
        }
    });
    order
}

/// A bench process's handle on its node's queue.
#[derive(Clone, Debug)]
pub struct WorkQueue {
    dir: PathBuf,
    exe: String,
    target: String,
    worker: String,
}

impl WorkQueue {
    /// Makes the queue in `dir` for the run `run_id`, empty, with a previous run's
    /// durations; a queue left there by an earlier run is replaced.
    pub fn create(dir: &Path, run_id: &str, expected_s: BTreeMap<String, f64>) -> Result<()> {
        let _lock = DirLock::take(dir)?;
        let state = QueueState {
            schema: QUEUE_SCHEMA.into(),
            run_id: run_id.into(),
            created_unix_s: now_unix_s(),
            expected_s,
            items: Vec::new(),
        };
        write_state(dir, &state)
    }

    /// Reads the queue in `dir` (as it stands; no lock needed: it is replaced whole).
    pub fn read(dir: &Path) -> Result<QueueState> {
        let path = dir.join(QUEUE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, "read the benchmark queue", e))?;
        let state: QueueState = serde_json::from_str(&text)
            .map_err(|e| Error::new(ErrorKind::Format, format!("{}: not a benchmark queue: {e}", path.display())))?;
        if state.schema != QUEUE_SCHEMA {
            return Err(Error::new(
                ErrorKind::Format,
                format!("{}: schema `{}`, expected {QUEUE_SCHEMA}", path.display(), echo(&state.schema)),
            ));
        }
        Ok(state)
    }

    /// The queue of `dir` as the executable `exe` (of bench target `target`) claims from it,
    /// under the name `worker`.
    pub fn join(dir: &Path, exe: &str, target: &str, worker: &str) -> WorkQueue {
        WorkQueue { dir: dir.to_path_buf(), exe: exe.into(), target: target.into(), worker: worker.into() }
    }

    /// The queue [`QUEUE_ENV`] names, joined as the current executable; `None` when unset.
    /// A folder without a queue is an error (exit 2 material).
    pub fn from_env() -> Result<Option<WorkQueue>> {
        let Some(dir) = std::env::var_os(QUEUE_ENV).filter(|v| !v.is_empty()) else { return Ok(None) };
        let dir = PathBuf::from(dir);
        if !dir.join(QUEUE_FILE).is_file() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("{QUEUE_ENV}={}: no benchmark queue ({QUEUE_FILE}) there", dir.display()),
            ));
        }
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "bench".into());
        let worker = std::env::var(QUEUE_WORKER_ENV)
            .ok()
            .filter(|w| !w.trim().is_empty())
            .or_else(|| std::env::var("CUDA_VISIBLE_DEVICES").ok().filter(|w| !w.trim().is_empty()))
            .unwrap_or_else(|| format!("pid {}", std::process::id()));
        Ok(Some(WorkQueue::join(&dir, &exe, &crate::report::run::current_target_name(), &worker)))
    }

    /// The name this process claims under.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// Reads, changes and writes the queue under its lock.
    fn update<T>(&self, change: impl FnOnce(&mut QueueState) -> T) -> Result<T> {
        let _lock = DirLock::take(&self.dir)?;
        let mut state = WorkQueue::read(&self.dir)?;
        let out = change(&mut state);
        write_state(&self.dir, &state)?;
        Ok(out)
    }

    /// Adds the benchmarks `names` (declaration order) of this executable that are not in
    /// the queue yet: every process of it registers the same ones, the first adds them.
    pub fn register(&self, names: &[String]) -> Result<()> {
        self.update(|state| {
            for (order, name) in names.iter().enumerate() {
                if state.items.iter().any(|i| i.exe == self.exe && &i.name == name) {
                    continue;
                }
                let expected_s = state.expected_s.get(&duration_key(&self.target, name)).copied();
                state.items.push(QueueItem {
                    exe: self.exe.clone(),
                    target: self.target.clone(),
                    name: name.clone(),
                    order,
                    expected_s,
                    status: ItemStatus::Pending,
                    worker: None,
                    pid: None,
                    claimed_s: None,
                    ended_s: None,
                });
            }
        })
    }

    /// Claims the next pending benchmark of this executable ([`claim_order`]): its name,
    /// or `None` when none is left. Atomic across processes: one benchmark, one claimer.
    pub fn claim_next(&self) -> Result<Option<String>> {
        self.update(|state| {
            let now = now_unix_s() - state.created_unix_s;
            let pending: Vec<usize> = (0..state.items.len())
                .filter(|&i| state.items[i].exe == self.exe && state.items[i].status == ItemStatus::Pending)
                .collect();
            let refs: Vec<&QueueItem> = pending.iter().map(|&i| &state.items[i]).collect();
            let first = claim_order(&refs).first().map(|&k| pending[k])?;
            let item = &mut state.items[first];
            item.status = ItemStatus::Claimed;
            item.worker = Some(self.worker.clone());
            item.pid = Some(std::process::id());
            item.claimed_s = Some(now);
            Some(item.name.clone())
        })
    }

    /// Records how the claimed benchmark `name` ended (`ok`: it did not fail).
    pub fn finish(&self, name: &str, ok: bool) -> Result<()> {
        self.update(|state| {
            let now = now_unix_s() - state.created_unix_s;
            if let Some(item) = state.items.iter_mut().find(|i| i.exe == self.exe && i.name == name) {
                item.status = if ok { ItemStatus::Done } else { ItemStatus::Failed };
                item.ended_s = Some(now);
            }
        })
    }

    /// Hands the claimed benchmark `name` back, for another process to take (this one
    /// cannot run it: its device did not open).
    pub fn release(&self, name: &str) -> Result<()> {
        self.update(|state| {
            if let Some(item) = state.items.iter_mut().find(|i| i.exe == self.exe && i.name == name) {
                item.status = ItemStatus::Pending;
                item.worker = None;
                item.pid = None;
                item.claimed_s = None;
            }
        })
    }
}

fn write_state(dir: &Path, state: &QueueState) -> Result<()> {
    let text = serde_json::to_string_pretty(state)
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the benchmark queue: {e}")))?;
    write_atomically(&dir.join(QUEUE_FILE), text.as_bytes())
}

/// The durations file: each benchmark's last duration, seconds, by [`duration_key`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Durations {
    /// Always [`DURATIONS_SCHEMA`].
    pub schema: String,
    /// Seconds, by [`duration_key`].
    pub seconds: BTreeMap<String, f64>,
}

impl Durations {
    /// Reads `path`; a missing file is no durations. A file that cannot be read is an
    /// error (the caller may go on without it: the durations only order the queue).
    pub fn read_json(path: &Path) -> Result<Durations> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Durations::default()),
            Err(e) => return Err(Error::io(path, "read the durations", e)),
        };
        let d: Durations = serde_json::from_str(&text)
            .map_err(|e| Error::new(ErrorKind::Format, format!("{}: not a durations file: {e}", path.display())))?;
        if d.schema != DURATIONS_SCHEMA {
            return Err(Error::new(
                ErrorKind::Format,
                format!("{}: schema `{}`, expected {DURATIONS_SCHEMA}", path.display(), echo(&d.schema)),
            ));
        }
        Ok(d)
    }

    /// These durations updated with the benchmarks of `queue` that ended (done or failed).
    pub fn updated(mut self, queue: &QueueState) -> Durations {
        self.schema = DURATIONS_SCHEMA.into();
        for item in &queue.items {
            if let (Some(s), ItemStatus::Done | ItemStatus::Failed) = (item.ran_s(), item.status) {
                self.seconds.insert(item.key(), s);
            }
        }
        self
    }

    /// Writes them to `path`, atomically.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the durations: {e}")))?;
        write_atomically(path, text.as_bytes())
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
