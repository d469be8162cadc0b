//! Run identity: which result files make up one `cargo bench`, and whether it finished.
//!
//! A run directory (`<target>/energy/new/`, or a saved baseline's) holds the results of
//! one `cargo bench` invocation and its manifest, `run.json` (`energy-run/1`):
//!
//! - The first bench binary of an invocation starts a **new run**: the directory is emptied
//!   (the previous run's files) and a manifest is written naming the run, its start and the
//!   invocation. Later binaries of the same invocation (same parent `cargo` process, or the
//!   same `ENERGY_RUN_ID`) join it. Either way, the temporary files of writes killed midway
//!   (`.run.json.tmp-<pid>-<n>`) are removed first, unless their writer may still run.
//! - Each bench target records itself as `running`; each result is committed as a unit
//!   (trace, plot, then JSON, each through a temporary file and a rename) and only then
//!   listed in the manifest with the hash of each file.
//! - At the end the target records its exit status (`succeeded`, or `failed` with the
//!   number of failed benchmarks) and its end time. The manifest is written last.
//!
//! [`RunManifest::check`] is what `report` and `compare` trust: a run is usable only when
//! every target finished and succeeded, and the JSON files in the directory are exactly
//! those listed, unchanged. A target interrupted (Ctrl-C, a crash) stays `running`
//! forever, so its run is refused; so is a failed run, and a stray or altered file.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::{archived_exists, read_archived};
use crate::error::{echo, Error, ErrorKind, Result};
use crate::hash::content_hash;
use crate::result::ResultDevice;

/// The schema tag of run manifests.
pub const RUN_SCHEMA: &str = "energy-run/1";
/// The manifest's file name inside a run directory.
pub const MANIFEST_FILE: &str = "run.json";
/// The lock file a run's writers take in its directory (never a result: readers skip it).
pub const LOCK_FILE: &str = ".run.lock";

/// How the bench processes of one `cargo bench` recognise each other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Invocation {
    /// `ENERGY_RUN_ID` when set (several cargo commands make one run), else `cargo:PID@START`
    /// of the parent process (the `cargo` that runs every bench binary in turn).
    pub key: String,
}

impl Invocation {
    /// The invocation of the current process.
    pub fn current() -> Invocation {
        if let Some(id) = std::env::var("ENERGY_RUN_ID").ok().filter(|v| !v.trim().is_empty()) {
            return Invocation { key: format!("env:{}", id.trim()) };
        }
        #[cfg(unix)]
        {
            let ppid = std::os::unix::process::parent_id();
            // The parent's start time (Linux) tells a reused PID apart.
            let start = process_start_ticks(ppid);
            Invocation { key: format!("cargo:{ppid}@{start}") }
        }
        #[cfg(not(unix))]
        {
            Invocation { key: format!("process:{}", std::process::id()) }
        }
    }
}

/// How a bench target ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TargetStatus {
    /// Started and not finished: still running, or interrupted.
    Running,
    /// Every benchmark it ran succeeded (exit 0).
    Succeeded,
    /// Some benchmarks failed (exit 1).
    Failed {
        /// How many.
        failed_benchmarks: usize,
    },
}

/// The files of one result and their hashes (FNV-1a 64, hex).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResultEntry {
    /// Benchmark id.
    pub id: String,
    /// The result JSON, relative to the run directory.
    pub json: String,
    /// Its hash.
    pub json_hash: String,
    /// The trace CSV.
    pub trace: String,
    /// Its hash.
    pub trace_hash: String,
    /// The SVG plot.
    pub plot: String,
    /// Its hash.
    pub plot_hash: String,
}

/// One bench binary's part of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TargetRecord {
    /// Bench target name (the binary's name without cargo's hash).
    pub name: String,
    /// Its process id.
    pub pid: u32,
    /// When it started (RFC 3339).
    pub started: String,
    /// When it finished (RFC 3339); absent while running or after an interrupt.
    #[serde(default)]
    pub finished: Option<String>,
    /// How it ended.
    pub status: TargetStatus,
    /// The device it measured on, once known.
    #[serde(default)]
    pub device: Option<ResultDevice>,
    /// Its results, in the order committed.
    #[serde(default)]
    pub results: Vec<ResultEntry>,
    /// Its benchmarks that were not run, with why (`gpu_only` or raw cudarc without a GPU,
    /// library work on the simulated GPU): listed so that a report and a comparison show them
    /// instead of losing them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<NotRunEntry>,
    /// The command it ran under ([`CommandRecord::key`]), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its executable, when it could be read: a later command keeps this target's results
    /// in the run only while this file is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exe: Option<ExeRecord>,
}

/// A benchmark a run did not run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NotRunEntry {
    /// Benchmark id, as its result would have had it (`saxpy_cudarc/energy (simulated)`).
    pub id: String,
    /// Why, as the bench printed it (`needs a GPU (declared gpu_only)`).
    pub reason: String,
}

/// A run directory's manifest (`run.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunManifest {
    /// Always [`RUN_SCHEMA`].
    pub schema: String,
    /// A unique name for the run (start time and process id).
    pub run_id: String,
    /// The run's name: `new` or a saved baseline.
    pub name: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// Which invocation it belongs to.
    pub invocation: Invocation,
    /// The bench targets that took part, in order.
    pub targets: Vec<TargetRecord>,
    /// The commands that wrote to it (one `cargo bench`, or several joined by
    /// `ENERGY_RUN_ID` or continued from one source), each with the targets it was expected
    /// to run; empty in manifests of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandRecord>,
}

impl RunManifest {
    /// Reads `dir/run.json`. Errors: missing (with the runs that do exist beside it),
    /// unreadable, or not a manifest.
    pub fn read_manifest(dir: &Path) -> Result<RunManifest> {
        let path = dir.join(MANIFEST_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir.is_dir() => {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "`{}` has no run manifest ({MANIFEST_FILE}): it was not written by a complete `cargo bench` of this version, or the run was interrupted before it began; run `cargo bench` again",
                        dir.display()
                    ),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing_run(dir)),
            Err(e) => return Err(Error::io(&path, "read the run manifest", e)),
        };
        let manifest: RunManifest = serde_json::from_str(&text).map_err(|e| {
            Error::new(ErrorKind::Format, format!("{}: not a run manifest ({})", path.display(), echo(&e.to_string())))
        })?;
        if manifest.schema != RUN_SCHEMA {
            return Err(Error::new(
                ErrorKind::Format,
                format!("{}: schema `{}`, expected `{RUN_SCHEMA}`", path.display(), echo(&manifest.schema)),
            ));
        }
        Ok(manifest)
    }

    /// The results listed by every target.
    pub fn results(&self) -> impl Iterator<Item = &ResultEntry> {
        self.targets.iter().flat_map(|t| t.results.iter())
    }

    /// The benchmarks every target listed as not run.
    pub fn not_run(&self) -> impl Iterator<Item = &NotRunEntry> {
        self.targets.iter().flat_map(|t| t.not_run.iter())
    }

    /// Checks that the run can be trusted: every target finished and succeeded, and the
    /// `*.json` results in `dir` are exactly those listed, each unchanged (with its trace
    /// and plot). Returns the listed JSON paths.
    pub fn check(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        // The first target that did not succeed says why, as it always has.
        let first_unfinished = self.targets.iter().find(|t| t.status != TargetStatus::Succeeded);
        if let Some(partial) = self.partial(dir) {
            if first_unfinished.is_none_or(|t| t.status == TargetStatus::Running) {
                return Err(partial.refusal());
            }
        }
        self.check_partial(dir)
    }

    /// The bench targets its commands were expected to run (the union of every command's
    /// [`CommandRecord::expected_targets`] that is known), by name.
    pub fn expected_targets(&self) -> BTreeSet<&str> {
        self.commands.iter().filter_map(|c| c.expected_targets.as_ref()).flatten().map(String::as_str).collect()
    }

    /// The expected bench targets ([`RunManifest::expected_targets`]) that never started:
    /// the run was cut before them (Ctrl-C or a kill between two targets, a target that
    /// crashed before its run began), or its command still runs.
    pub fn never_started(&self) -> Vec<String> {
        self.expected_targets()
            .into_iter()
            .filter(|name| !self.targets.iter().any(|t| t.name == *name))
            .map(str::to_string)
            .collect()
    }

    /// The bench targets that never finished (`running`: interrupted, crashed, or still
    /// running) or never started though expected ([`RunManifest::never_started`]), as a
    /// [`PartialRun`] of `dir`; `None` when every expected target ran and finished.
    pub fn partial(&self, dir: &Path) -> Option<PartialRun> {
        let unfinished: Vec<UnfinishedTarget> = self
            .targets
            .iter()
            .filter(|t| t.status == TargetStatus::Running)
            .map(|t| UnfinishedTarget { name: t.name.clone(), pid: t.pid, started: t.started.clone() })
            .collect();
        let never_started = self.never_started();
        if unfinished.is_empty() && never_started.is_empty() {
            return None;
        }
        let finished = self.targets.iter().filter(|t| t.status != TargetStatus::Running).map(|t| t.name.clone());
        Some(PartialRun {
            dir: dir.to_path_buf(),
            name: self.name.clone(),
            unfinished,
            never_started,
            finished: finished.collect(),
            results: self.results().count(),
        })
    }

    /// [`RunManifest::check`], except that bench targets that never finished are let
    /// through ([`RunManifest::partial`] says which): the results every target committed,
    /// each checked as `check` checks it. A run without a target, a failed target, a stray
    /// or an altered file are refused as by `check`.
    pub fn check_partial(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let refuse = |why: String| {
            Err(Error::new(ErrorKind::InvalidInput, format!("run `{}` in `{}` {why}", self.name, dir.display())))
        };
        if self.targets.is_empty() {
            return refuse("lists no bench target: it never got past its start; run `cargo bench` again".into());
        }
        for t in &self.targets {
            if let TargetStatus::Failed { failed_benchmarks } = t.status {
                return refuse(format!(
                    "failed: bench target `{}` exited with {failed_benchmarks} failed benchmark(s) (see its output); a failed run is never compared: fix it and run `cargo bench` again",
                    t.name
                ));
            }
        }
        let listed: BTreeSet<&str> = self.results().map(|r| r.json.as_str()).collect();
        let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, "list the run directory", e))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // A result may be archived gzipped (`<id>.json.gz`): listed as `<id>.json`.
            let unzipped = name.strip_suffix(".gz").unwrap_or(&name);
            if unzipped.ends_with(".json") && unzipped != MANIFEST_FILE && !listed.contains(unzipped) {
                return refuse(format!(
                    "holds `{}`, which its manifest does not list: a file left by another run or copied in; remove it or run `cargo bench` again",
                    echo(&name)
                ));
            }
        }
        let mut paths = Vec::new();
        for r in self.results() {
            for (file, hash) in [(&r.trace, &r.trace_hash), (&r.plot, &r.plot_hash), (&r.json, &r.json_hash)] {
                if file.contains('/') || file.contains('\\') || file.starts_with('.') {
                    return refuse(format!("lists `{}`, which is not a file of the run directory", echo(file)));
                }
                let path = dir.join(file);
                // A trace or plot left behind (a CI artifact downloaded without them) takes
                // nothing from the figures: it is let through, and said by `missing_attachments`.
                // A result file never is, and one present but changed is refused below.
                if file != &r.json && !archived_exists(&path) {
                    continue;
                }
                // A trace, plot or result may be archived gzipped (`<file>.gz`): read as written.
                let bytes = read_archived(&path).map_err(|e| {
                    Error::new(
                        ErrorKind::InvalidInput,
                        format!(
                            "run `{}`: `{}` of `{}` is listed but cannot be read ({e}); run `cargo bench` again",
                            self.name,
                            path.display(),
                            echo(&r.id)
                        ),
                    )
                })?;
                if &content_hash(&bytes) != hash {
                    return refuse(format!(
                        "holds a `{}` that is not the one its run wrote (changed since, or left half-replaced by an interrupted run); run `cargo bench` again",
                        echo(file)
                    ));
                }
            }
            paths.push(dir.join(&r.json));
        }
        Ok(paths)
    }
}

impl RunManifest {
    /// The traces and plots it lists that are not in `dir` (neither as written nor gzipped),
    /// file names in the manifest's order: the figures stand without them, the plots of those
    /// benchmarks cannot be shown, and commands that read a trace say it is missing.
    pub fn missing_attachments(&self, dir: &Path) -> Vec<String> {
        self.results()
            .flat_map(|r| [&r.trace, &r.plot])
            .filter(|file| !file.contains('/') && !file.contains('\\') && !archived_exists(&dir.join(file)))
            .cloned()
            .collect()
    }
}

/// A bench target of a run that never recorded its end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UnfinishedTarget {
    /// Its name.
    pub name: String,
    /// Its process id.
    pub pid: u32,
    /// When it started (RFC 3339).
    pub started: String,
}

/// A partial run: some of its bench targets never finished (Ctrl-C, a crash, a kill, or
/// still running), so it holds only the results they committed before. `compare` refuses
/// it; `report` shows what it holds under its line
/// (`energy_report::partial_line`) and exits 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialRun {
    /// The run directory.
    pub dir: PathBuf,
    /// The run's name (`new`, a saved baseline's).
    pub name: String,
    /// The bench targets that never finished, in the order they started.
    pub unfinished: Vec<UnfinishedTarget>,
    /// The bench targets its commands were expected to run that never started.
    pub never_started: Vec<String>,
    /// Those that did.
    pub finished: Vec<String>,
    /// How many results its targets committed (those a report of it shows).
    pub results: usize,
}

impl PartialRun {
    /// What is missing, in words: each target that never finished, then those that never
    /// started.
    pub fn what_is_missing(&self) -> String {
        let mut parts: Vec<String> = self
            .unfinished
            .iter()
            .map(|t| {
                format!(
                    "bench target `{}` (pid {}, started {}) never finished: it was interrupted, crashed, or is still running",
                    echo(&t.name),
                    t.pid,
                    echo(&t.started)
                )
            })
            .collect();
        if !self.never_started.is_empty() {
            let names: Vec<String> = self.never_started.iter().map(|n| format!("`{}`", echo(n))).collect();
            parts.push(format!(
                "bench target{} {} never started, though its command was to run {}: the run was cut between two bench targets (Ctrl-C, a kill, a target that crashed before its run began), or is still running",
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                if names.len() == 1 { "it" } else { "them" }
            ));
        }
        parts.join("; ")
    }

    /// The error of a reader that does not take partial runs (`compare`, a baseline, a
    /// tracker format).
    pub fn refusal(&self) -> Error {
        Error::new(
            ErrorKind::InvalidInput,
            format!(
                "run `{}` in `{}` is incomplete: {}; its results are not trusted: run `cargo bench` again",
                self.name,
                self.dir.display(),
                self.what_is_missing()
            ),
        )
    }
}

/// The run a reader must find: the one a CI job's own `cargo bench` wrote with
/// `ENERGY_RUN_ID` set to [`RunPin::id`]. Another job's run, a stale one left when this
/// job's bench could not start its own, or one copied in from elsewhere is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunPin {
    /// The `ENERGY_RUN_ID` the run was written with.
    pub id: String,
    /// Where the id was given (`--run-id`, or `ENERGY_RUN_ID` in the environment), for
    /// messages.
    pub given_by: String,
}

impl RunManifest {
    /// Checks that this run was written by the bench processes `pin` names (their
    /// invocation is `ENERGY_RUN_ID=`[`RunPin::id`]); the error says whose run it is and
    /// what to do.
    pub fn check_pin(&self, dir: &Path, pin: &RunPin) -> Result<()> {
        let id = pin.id.trim();
        if self.invocation.key.strip_prefix("env:") == Some(id) {
            return Ok(());
        }
        let whose = match self.invocation.key.strip_prefix("env:") {
            Some(other) => format!("with ENERGY_RUN_ID={} (", echo(other)),
            None => format!("by a `cargo bench` without ENERGY_RUN_ID (invocation `{}`, ", echo(&self.invocation.key)),
        };
        let targets: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
        Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "run `{}` in `{}` is not the run asked for: it was written {whose}started {}, bench targets: {}), and {} asks for ENERGY_RUN_ID={}. It is another job's run, a run left from before this job's `cargo bench` (which did not start its own: see its output), or one copied in. Set ENERGY_RUN_ID={} for this job's `cargo bench`, run it, then compare",
                self.name,
                dir.display(),
                echo(&self.started),
                if targets.is_empty() { "none".to_string() } else { echo(&targets.join(", ")) },
                pin.given_by,
                echo(id),
                echo(id)
            ),
        ))
    }
}

/// The error for a run directory that does not exist, naming those that do.
pub fn missing_run(dir: &Path) -> Error {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let mut runs: Vec<String> = fs::read_dir(parent)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().join(MANIFEST_FILE).is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    let existing = if runs.is_empty() {
        format!("no run exists under `{}`", parent.display())
    } else {
        format!("the runs under `{}` are: {}", parent.display(), runs.join(", "))
    };
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let hint = if name == "new" {
        "run `cargo bench` first (or, where cargo is missing, the bench executable with `--bench`, `--dir` naming its \
         target/energy)"
            .to_string()
    } else {
        format!(
            "save it with `cargo bench -- --save-baseline {name}` (if that failed with \"Unrecognized option: 'save-baseline'\", a library or binary target's libtest harness rejected criterion's option: set `bench = false` under its [lib] or [[bin]] in Cargo.toml; see the README)"
        )
    };
    Error::new(ErrorKind::InvalidInput, format!("no run `{name}` in `{}`: {existing}; {hint}", parent.display()))
}

/// The environment variable an orchestrator sets to the bench targets it will run, by
/// name, comma-separated (`alpha,beta`).
pub const EXPECTED_TARGETS_ENV: &str = "ENERGY_EXPECTED_TARGETS";

/// The environment variable an orchestrator sets to the benchmarks a run measures, by
/// result id (`saxpy/energy`), one per line: a bench binary then runs those of its
/// benchmarks only, beside its filter and shard (`cargo energy ab` and `gate` leave a
/// settled benchmark out of later pairs with it). Unset: every benchmark runs.
pub const BENCHMARKS_ENV: &str = "ENERGY_BENCHMARKS";

/// The environment variable an orchestrator sets to `1` in each run of a paired sequence
/// (`cargo energy ab`, `cargo energy gate`): the sequence's verdict rests on the runs' total
/// energies, so a bench binary hands criterion nothing (its statistics would go unread) and
/// each measurement's idle tail is one counter interval instead of two.
pub const PAIRED_RUN_ENV: &str = "ENERGY_PAIRED_RUN";

/// The environment variable an orchestrator sets to `1`, beside [`PAIRED_RUN_ENV`], in the
/// runs of a paired sequence after its first pair: a lean run measures no idle tail, its
/// active idle carried from before its process's first benchmark. The first pair's runs
/// measure one interval of tail, and refuse work that outlives its windows. A harness that
/// predates it ignores it and measures the tail.
pub const PAIRED_LEAN_ENV: &str = "ENERGY_PAIRED_LEAN";

/// One command (a `cargo bench`, or an orchestrator's sequence) that wrote to a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CommandRecord {
    /// The parent process that ran the bench targets: `cargo:PID@START` (START is its start
    /// time in clock ticks since boot: a reused PID is told apart), `process:PID@START` for
    /// another parent.
    pub key: String,
    /// Its command line after the program (`bench --bench alpha`), when it could be read.
    #[serde(default)]
    pub args: Vec<String>,
    /// When its first bench target joined the run (RFC 3339).
    pub started: String,
    /// The bench targets it runs that write to a run (energy benches), by target name;
    /// `None` when unknown ([`CommandRecord::expected_from`] says why).
    #[serde(default)]
    pub expected_targets: Option<Vec<String>>,
    /// Where the expected targets came from, or why they are unknown.
    #[serde(default)]
    pub expected_from: String,
    /// The source its executables were built from, when git knows it.
    #[serde(default)]
    pub source: Option<SourceState>,
}

/// The source a command's executables were built from: the commit and the state of the
/// tracked files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceState {
    /// The commit checked out (full hash).
    pub commit: String,
    /// `clean`, or `dirty:<hash>` with the hash of `git diff HEAD` (tracked files).
    pub tree: String,
}

/// A bench target's executable: where it was and the hash of its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExeRecord {
    /// Its absolute path.
    pub path: String,
    /// FNV-1a 64 of its contents (hex).
    pub hash: String,
}

impl ExeRecord {
    /// The record of the executable at `path`, or `None` when it cannot be read.
    pub fn of(path: &Path) -> Option<ExeRecord> {
        let bytes = std::fs::read(path).ok()?;
        Some(ExeRecord { path: path.display().to_string(), hash: crate::hash::content_hash(&bytes) })
    }

    /// This process's executable.
    pub fn current() -> Option<ExeRecord> {
        ExeRecord::of(&std::env::current_exe().ok()?)
    }

    /// Whether the file at the recorded path still has the recorded contents.
    pub fn unchanged(&self) -> bool {
        ExeRecord::of(Path::new(&self.path)).is_some_and(|now| now.hash == self.hash)
    }
}

/// The start time of process `pid` in clock ticks since boot (`/proc/PID/stat`, field 22):
/// with the pid, it tells a process from a later one given the same pid. Empty when unknown.
pub fn process_start_ticks(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.to_string()))
        .and_then(|rest| rest.split_whitespace().nth(19).map(str::to_string))
        .unwrap_or_default()
}
