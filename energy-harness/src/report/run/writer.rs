//! The writing side of a run: a bench process's [`RunWriter`] (begin or join the run,
//! commit each result as a unit, record how the target ended) and the run directory's lock
//! that every manifest update holds.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::command::{current_command, current_command_key, target_name_of, CommandRecord, ExeRecord};
use super::{
    Invocation, NotRunEntry, ResultEntry, RunManifest, TargetRecord, TargetStatus, LOCK_FILE, MANIFEST_FILE, RUN_SCHEMA,
};
use crate::report::ResultDevice;
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::hash::content_hash;
use energy_results::trace::format::{remove_stale_temporaries, temporary_writer, write_atomically};

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// A bench process's handle on one run directory.
#[derive(Debug)]
pub struct RunWriter {
    dir: PathBuf,
    target: String,
    pid: u32,
}

/// How long a bench process waits for another that holds the run directory's lock (a
/// live one holds it for the few milliseconds of a manifest update).
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// Holds the run directory's lock while alive: an OS lock (`flock`, exclusive) on
/// `.run.lock`. The kernel releases it when the process ends, however it ends (SIGKILL
/// included), so a killed bench never blocks the next run. The file itself stays: removing
/// it while another process waits on it would let two processes lock two different files.
pub(crate) struct DirLock {
    _file: fs::File,
    /// Without `flock` (not unix): the marker file this process created, removed on drop.
    #[cfg(not(unix))]
    marker: PathBuf,
}

impl DirLock {
    /// Takes the lock, waiting up to [`LOCK_WAIT`] for a live holder.
    pub(crate) fn take(dir: &Path) -> Result<DirLock> {
        DirLock::take_within(dir, LOCK_WAIT)
    }

    pub(crate) fn take_within(dir: &Path, wait: Duration) -> Result<DirLock> {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the run directory", e))?;
        let path = dir.join(LOCK_FILE);
        let deadline = Instant::now() + wait;
        loop {
            match DirLock::try_take(&path) {
                Ok(Some(lock)) => return Ok(lock),
                Ok(None) if Instant::now() >= deadline => {
                    return Err(Error::new(
                        ErrorKind::Io,
                        format!(
                            "`{}` is locked by another bench process that is still running (a live `cargo bench` writing to this run directory), and it did not let go within {} s; wait for it to end, or give this one its own target directory (CARGO_TARGET_DIR)",
                            path.display(),
                            wait.as_secs()
                        ),
                    ))
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(Error::io(&path, "lock the run directory", e)),
            }
        }
    }

    /// `flock(LOCK_EX | LOCK_NB)`: `None` while another process holds it.
    #[cfg(unix)]
    fn try_take(path: &Path) -> std::io::Result<Option<DirLock>> {
        use std::os::unix::io::AsRawFd;
        let file = fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        loop {
            // SAFETY: flock on a descriptor `file` owns and keeps open; no memory is passed.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Some(DirLock { _file: file }));
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(code) if code == libc::EWOULDBLOCK || code == libc::EAGAIN => return Ok(None),
                _ => return Err(e),
            }
        }
    }

    /// Without `flock`: a marker file created exclusively; one older than two minutes is a
    /// crashed process's and is broken.
    #[cfg(not(unix))]
    fn try_take(path: &Path) -> std::io::Result<Option<DirLock>> {
        let marker = path.with_extension("held");
        match fs::OpenOptions::new().write(true).create_new(true).open(&marker) {
            Ok(file) => Ok(Some(DirLock { _file: file, marker })),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = fs::metadata(&marker)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > Duration::from_secs(120));
                if stale {
                    let _ = fs::remove_file(&marker);
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(not(unix))]
impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.marker);
    }
}

/// The bench target name of the current executable: `saxpy-0123456789abcdef` → `saxpy`.
pub fn current_target_name() -> String {
    std::env::current_exe().map_or_else(|_| "bench".into(), |p| target_name_of(&p))
}

/// What a bench process says of itself when it starts or joins a run.
#[derive(Clone, Debug)]
pub struct RunStart {
    /// Its invocation (`ENERGY_RUN_ID`, else its parent cargo process).
    pub invocation: Invocation,
    /// The command it belongs to, with the targets that command runs and the source they
    /// were built from; `None`: unknown (the run is then replaced by a new invocation, never
    /// continued), unless [`RunStart::current`] made it (then it is found when needed).
    pub command: Option<CommandRecord>,
    /// Its executable.
    pub exe: Option<ExeRecord>,
    /// Whether it describes this process, whose command is read when first needed: taken
    /// from the run when an earlier bench binary of the same command recorded it, else asked
    /// of cargo and git once per process.
    this_process: bool,
}

impl RunStart {
    /// A start that knows only its invocation: a new invocation replaces the run.
    pub fn bare(invocation: &Invocation) -> RunStart {
        RunStart { invocation: invocation.clone(), command: None, exe: None, this_process: false }
    }

    /// This process's start: its invocation and its executable; its command when needed.
    pub fn current() -> RunStart {
        RunStart { invocation: Invocation::current(), command: None, exe: ExeRecord::current(), this_process: true }
    }

    /// The start with this process's command filled in: the one the run in `existing`
    /// recorded for it already (a later bench binary of the same `cargo bench`), else asked
    /// of cargo and git (once per process).
    fn resolved(&self, existing: Option<&RunManifest>) -> RunStart {
        if !self.this_process || self.command.is_some() {
            return self.clone();
        }
        let key = current_command_key();
        let command = match existing.and_then(|m| m.commands.iter().find(|c| c.key == key)) {
            Some(known) => known.clone(),
            None => {
                static COMMAND: std::sync::OnceLock<CommandRecord> = std::sync::OnceLock::new();
                COMMAND.get_or_init(|| current_command(&now_rfc3339())).clone()
            }
        };
        RunStart { command: Some(command), ..self.clone() }
    }
}

/// What a new bench process does with the run it finds in its directory.
#[derive(Debug, PartialEq)]
enum Joining {
    /// Joins it: the same invocation, and this target has not run in it.
    Join,
    /// Continues it: another `cargo bench` built from the same source, whose targets
    /// replace theirs in the run (each listed); the others stay, their executables
    /// unchanged.
    Continue(Vec<String>),
    /// Replaces it with a new run, for the reason given.
    Replace(&'static str),
}

/// The rule for what a run is (docs/GUIDE.md, "What a run is"): `start` joins `existing`
/// when it is the same invocation (one `cargo bench`, or one `ENERGY_RUN_ID`) and its
/// target has not run yet; it continues it when both are plain `cargo bench` commands (no
/// `ENERGY_RUN_ID`) built from one commit and one state of the tracked files, the run is
/// complete, and every target it keeps still has the executable that measured it; anything
/// else starts a new run.
fn joining(existing: &RunManifest, start: &RunStart, target: &str, dir: &Path) -> Joining {
    let same_invocation = existing.invocation == start.invocation;
    if same_invocation {
        return if existing.targets.iter().any(|t| t.name == target) {
            Joining::Replace("this bench target ran in it already")
        } else {
            Joining::Join
        };
    }
    let plain = |key: &str| key.starts_with("cargo:");
    if !plain(&existing.invocation.key) || !plain(&start.invocation.key) {
        return Joining::Replace("ENERGY_RUN_ID names another run");
    }
    let Some(command) = &start.command else { return Joining::Replace("this command is unknown") };
    let (Some(expected), Some(source)) = (&command.expected_targets, &command.source) else {
        return Joining::Replace("this command's targets or source are unknown");
    };
    if existing.commands.is_empty() || existing.commands.iter().any(|c| c.source.as_ref() != Some(source)) {
        return Joining::Replace("the run was built from another source (commit or uncommitted changes)");
    }
    if existing.partial(dir).is_some()
        || existing.targets.iter().any(|t| t.status != TargetStatus::Succeeded)
        || existing.commands.iter().any(|c| c.expected_targets.is_none())
    {
        return Joining::Replace("the run is not complete");
    }
    let replaced: Vec<String> = expected.iter().cloned().chain(std::iter::once(target.to_string())).collect();
    let kept_unchanged = existing
        .targets
        .iter()
        .filter(|t| !replaced.contains(&t.name))
        .all(|t| t.exe.as_ref().is_some_and(ExeRecord::unchanged));
    if !kept_unchanged {
        return Joining::Replace("an executable of a bench target it holds was rebuilt or removed since");
    }
    Joining::Continue(replaced)
}

impl RunWriter {
    /// Starts (or joins) the run in `dir` for the bench target `target` of `invocation`,
    /// knowing nothing else of its command: a run of another invocation, or one this target
    /// already took part in, is replaced (the directory is emptied first).
    pub fn begin(dir: &Path, target: &str, invocation: &Invocation) -> Result<RunWriter> {
        RunWriter::start(dir, target, &RunStart::bare(invocation))
    }

    /// Starts, joins or continues the run in `dir` for the bench target `target`, as the
    /// rule of [`RunStart`]'s documentation and docs/GUIDE.md say.
    pub fn start(dir: &Path, target: &str, start: &RunStart) -> Result<RunWriter> {
        // The commit, branch and host every result of this process records, asked of git
        // once, now, before anything is measured.
        let _ = crate::report::Provenance::current();
        // This process's command, asked of cargo and git (when the run does not know it
        // yet) before the lock is taken: another bench process never waits on that.
        let start = &start.resolved(RunManifest::read_manifest(dir).ok().as_ref());
        let _lock = DirLock::take(dir)?;
        // A temporary file of a write killed midway (the manifest's, a result's) goes now,
        // whether this process starts a run or joins one; a live writer's stays.
        remove_stale_temporaries(dir);
        let pid = std::process::id();
        let existing = RunManifest::read_manifest(dir).ok();
        let how = match &existing {
            Some(m) => joining(m, start, target, dir),
            None => Joining::Replace("there is no run"),
        };
        let shown = dir.display();
        match (&existing, &how) {
            (Some(m), Joining::Replace(why)) if m.invocation != start.invocation => {
                eprintln!("energy: a new run in {shown} (the one there is replaced: {why})");
            }
            (Some(m), Joining::Continue(replaced)) => {
                let kept: Vec<&str> =
                    m.targets.iter().filter(|t| !replaced.contains(&t.name)).map(|t| t.name.as_str()).collect();
                if kept.is_empty() {
                    // Every target of the run there runs again: its results are replaced.
                    eprintln!(
                        "energy: a new run in {shown} (built from the same source; bench target(s) {} run again)",
                        replaced.join(", ")
                    );
                } else {
                    eprintln!(
                        "energy: continuing the run in {shown}, built from the same source: keeping bench target(s) {}",
                        kept.join(", ")
                    );
                }
            }
            _ => {}
        }
        let mut manifest = match (existing, how) {
            (Some(m), Joining::Join) => m,
            (Some(mut m), Joining::Continue(replaced)) => {
                for t in m.targets.iter().filter(|t| replaced.contains(&t.name)) {
                    for r in &t.results {
                        for file in [&r.json, &r.trace, &r.plot] {
                            remove_result_file(&dir.join(file))?;
                        }
                    }
                }
                m.targets.retain(|t| !replaced.contains(&t.name));
                // A command none of whose targets is left says nothing more of the run.
                let targets = &m.targets;
                m.commands.retain(|c| targets.iter().any(|t| t.command.as_deref() == Some(c.key.as_str())));
                m.invocation = start.invocation.clone();
                m
            }
            _ => {
                clear_run_dir(dir)?;
                RunManifest {
                    schema: RUN_SCHEMA.into(),
                    run_id: format!("{}-{pid}", now_rfc3339()),
                    name: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    started: now_rfc3339(),
                    invocation: start.invocation.clone(),
                    targets: Vec::new(),
                    commands: Vec::new(),
                }
            }
        };
        if let Some(command) = &start.command {
            if !manifest.commands.iter().any(|c| c.key == command.key) {
                manifest.commands.push(command.clone());
            }
        }
        manifest.targets.push(TargetRecord {
            name: target.to_string(),
            pid,
            started: now_rfc3339(),
            finished: None,
            status: TargetStatus::Running,
            device: None,
            results: Vec::new(),
            not_run: Vec::new(),
            command: start.command.as_ref().map(|c| c.key.clone()),
            exe: start.exe.clone(),
        });
        write_manifest(dir, &manifest)?;
        Ok(RunWriter { dir: dir.to_path_buf(), target: target.to_string(), pid })
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Commits one result: refuses an id another target (or this one) already wrote in
    /// this run; writes the trace, the plot and then the JSON (each atomically); lists
    /// them in the manifest with their hashes.
    pub fn commit(&self, id: &str, stem: &str, device: &ResultDevice, files: [&[u8]; 3]) -> Result<ResultEntry> {
        let _lock = DirLock::take(&self.dir)?;
        let mut manifest = RunManifest::read_manifest(&self.dir)?;
        if let Some(other) = manifest.targets.iter().find(|t| t.results.iter().any(|r| r.id == id)) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "benchmark id `{id}` is already taken in this run by bench target `{}`: two benchmarks may not share an id (rename one with `name = \"…\"`)",
                    other.name
                ),
            ));
        }
        let [json, trace, plot] = files;
        let entry = ResultEntry {
            id: id.to_string(),
            json: format!("{stem}.json"),
            json_hash: content_hash(json),
            trace: format!("{stem}.trace.csv"),
            trace_hash: content_hash(trace),
            plot: format!("{stem}.svg"),
            plot_hash: content_hash(plot),
        };
        if manifest.results().any(|r| r.json == entry.json) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "benchmark id `{id}` maps to the file `{}` of another benchmark in this run; rename one",
                    entry.json
                ),
            ));
        }
        write_atomically(&self.dir.join(&entry.trace), trace)?;
        write_atomically(&self.dir.join(&entry.plot), plot)?;
        write_atomically(&self.dir.join(&entry.json), json)?;
        let record = self.record(&mut manifest)?;
        record.device = Some(device.clone());
        record.results.push(entry.clone());
        write_manifest(&self.dir, &manifest)?;
        Ok(entry)
    }

    /// Lists a benchmark this target did not run, with why (once per id).
    pub fn record_not_run(&self, id: &str, reason: &str) -> Result<()> {
        let _lock = DirLock::take(&self.dir)?;
        let mut manifest = RunManifest::read_manifest(&self.dir)?;
        let record = self.record(&mut manifest)?;
        if !record.not_run.iter().any(|n| n.id == id) {
            record.not_run.push(NotRunEntry { id: id.to_string(), reason: reason.to_string() });
        }
        write_manifest(&self.dir, &manifest)
    }

    /// Records how the target ended: succeeded when `failed_benchmarks` is 0.
    pub fn finish(self, failed_benchmarks: usize) -> Result<()> {
        let _lock = DirLock::take(&self.dir)?;
        let mut manifest = RunManifest::read_manifest(&self.dir)?;
        let record = self.record(&mut manifest)?;
        record.finished = Some(now_rfc3339());
        record.status =
            if failed_benchmarks == 0 { TargetStatus::Succeeded } else { TargetStatus::Failed { failed_benchmarks } };
        write_manifest(&self.dir, &manifest)
    }

    fn record<'m>(&self, manifest: &'m mut RunManifest) -> Result<&'m mut TargetRecord> {
        let dir = self.dir.display().to_string();
        manifest.targets.iter_mut().rev().find(|t| t.name == self.target && t.pid == self.pid).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                format!("the run in `{dir}` was replaced by another `cargo bench` while this one ran; run again, one at a time"),
            )
        })
    }
}

fn write_manifest(dir: &Path, manifest: &RunManifest) -> Result<()> {
    let text = serde_json::to_string_pretty(manifest)
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the run manifest: {e}")))?;
    write_atomically(&dir.join(MANIFEST_FILE), text.as_bytes())
}

/// Empties a run directory for a new run: results, traces, plots and the manifest. The
/// lock's files stay (the caller holds it), and so do temporary files of writes, which
/// [`remove_stale_temporaries`] has already removed unless their writer may still run.
fn clear_run_dir(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, "list the run directory", e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_lock_file(&name) || temporary_writer(&name).is_some() {
            continue;
        }
        let path = entry.path();
        let removed = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
        removed.map_err(|e| Error::io(&path, "remove the previous run's file", e))?;
    }
    Ok(())
}

/// Removes one file of a result replaced by a continuing command (a gzipped copy too).
fn remove_result_file(path: &Path) -> Result<()> {
    let gz = PathBuf::from(format!("{}.gz", path.display()));
    for p in [path, gz.as_path()] {
        match fs::remove_file(p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(p, "remove a replaced result's file", e)),
        }
    }
    Ok(())
}

/// The lock's files: `.run.lock` and, without `flock` (not unix), its marker `.run.held`.
fn is_lock_file(name: &str) -> bool {
    name == LOCK_FILE || Path::new(LOCK_FILE).with_extension("held").as_os_str() == name
}
