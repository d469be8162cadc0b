//! Which command a bench process belongs to, and what that command will run: the bench
//! targets it is expected to start (so that a run cut between two of them is never taken
//! for complete), the source it was built from and each target's executable (so that
//! `cargo bench --bench a` then `cargo bench --bench b` make one run when both were built
//! from one source, and never when they were not).
//!
//! The expected targets come from `ENERGY_EXPECTED_TARGETS` (set by `cargo energy run`,
//! `ab` and `gate`, which know the executables they run), else from cargo itself: the
//! parent `cargo bench …` is asked again with `--no-run --message-format=json` (its own
//! arguments, its own folder: cargo has built everything and answers in milliseconds),
//! which lists exactly the bench executables the parent runs, `bench = false` and
//! `required-features` applied. Of those, the ones that carry the energy bench marker
//! ([`mark_energy_bench`]: every `energy_main!()` binary) are expected: a plain criterion
//! bench beside them never writes to the run and is not waited for. When neither says
//! (a bench executable run by hand, cargo failing), the expected targets are unknown and
//! the manifest says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use energy_results::run::{CommandRecord, ExeRecord, SourceState, EXPECTED_TARGETS_ENV};

/// The marker every energy bench executable carries (split so that the code that looks
/// for it does not carry it whole).
const MARKER_HEAD: &[u8] = b"\0energy-harness:";
const MARKER_TAIL: &[u8] = b"bench-target:v1\0";

// No `#[used]`: rustc keeps a library's `#[used]` statics in every binary that links it;
// referenced from `mark_energy_bench` alone, the marker is only where that is linked.
static ENERGY_BENCH_MARKER: [u8; 32] = *b"\0energy-harness:bench-target:v1\0";

/// Keeps the energy bench marker in this executable: `energy_main!()` calls it, so that
/// [`is_energy_bench`] can tell the bench targets that write to a run from plain criterion
/// benches beside them.
pub fn mark_energy_bench() {
    std::hint::black_box(&ENERGY_BENCH_MARKER);
}

/// Whether the executable at `path` is an energy bench (carries the marker); `None` when it
/// cannot be read.
pub fn is_energy_bench(path: &Path) -> Option<bool> {
    let bytes = std::fs::read(path).ok()?;
    let needle = [MARKER_HEAD, MARKER_TAIL].concat();
    Some(memchr::memmem::find(&bytes, &needle).is_some())
}

/// A bench target's name from its executable's path: `alpha-0123456789abcdef` → `alpha`
/// (cargo's hash dropped), as [`super::current_target_name`] names the running one.
pub fn target_name_of(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "bench".into());
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => stem,
    }
}

/// A bench executable cargo built, as `cargo bench --no-run --message-format=json` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchArtifact {
    /// The executable.
    pub executable: PathBuf,
    /// The manifest of its package, when cargo names it.
    pub manifest_path: Option<PathBuf>,
}

/// The bench executables in cargo's JSON messages (`--message-format=json`): artifacts of
/// targets of kind `bench` that have an executable; other lines are passed over.
pub fn bench_artifacts(messages: &str) -> Vec<BenchArtifact> {
    let mut out = Vec::new();
    for line in messages.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if v["reason"] != "compiler-artifact" {
            continue;
        }
        let is_bench = v["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|x| x == "bench"));
        let Some(exe) = v["executable"].as_str().filter(|_| is_bench) else { continue };
        out.push(BenchArtifact {
            executable: PathBuf::from(exe),
            manifest_path: v["manifest_path"].as_str().map(PathBuf::from),
        });
    }
    out
}

use energy_results::run::process_start_ticks;

/// The process that started this one: its key (`cargo:PID@START` when it is cargo), its
/// arguments after the program, and its working folder.
struct Parent {
    key: String,
    args: Vec<String>,
    is_cargo: bool,
    cwd: Option<PathBuf>,
}

fn parent() -> Parent {
    #[cfg(unix)]
    {
        let ppid = std::os::unix::process::parent_id();
        let start = process_start_ticks(ppid);
        let cmdline: Vec<String> = std::fs::read(format!("/proc/{ppid}/cmdline"))
            .map(|raw| {
                raw.split(|b| *b == 0)
                    .filter(|s| !s.is_empty())
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let program = cmdline.first().map(|p| target_name_of(Path::new(p))).unwrap_or_default();
        let is_cargo = program == "cargo" || program == "cargo.exe";
        let key = format!("{}:{ppid}@{start}", if is_cargo { "cargo" } else { "process" });
        let cwd = std::fs::read_link(format!("/proc/{ppid}/cwd")).ok();
        Parent { key, args: cmdline.into_iter().skip(1).collect(), is_cargo, cwd }
    }
    #[cfg(not(unix))]
    {
        Parent { key: format!("process:{}", std::process::id()), args: Vec::new(), is_cargo: false, cwd: None }
    }
}

/// The command this bench process belongs to (see the module's documentation).
pub fn current_command(started: &str) -> CommandRecord {
    let parent = parent();
    let (expected_targets, expected_from) = expected_targets(&parent);
    CommandRecord {
        key: parent.key,
        args: parent.args,
        started: started.to_string(),
        expected_targets,
        expected_from,
        source: source_state(),
    }
}

/// The key of the command this bench process belongs to ([`CommandRecord::key`]), without
/// asking cargo or git anything.
pub fn current_command_key() -> String {
    parent().key
}

fn expected_targets(parent: &Parent) -> (Option<Vec<String>>, String) {
    if let Ok(list) = std::env::var(EXPECTED_TARGETS_ENV) {
        let mut names: Vec<String> =
            list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
        names.sort();
        names.dedup();
        return (Some(names), EXPECTED_TARGETS_ENV.to_string());
    }
    if !parent.is_cargo {
        return (None, "unknown: the bench executable was not started by `cargo bench`".into());
    }
    match cargo_bench_targets(parent) {
        Ok(names) => (Some(names), "cargo bench --no-run".into()),
        Err(why) => (None, format!("unknown: {why}")),
    }
}

/// The energy bench targets the parent `cargo bench …` runs, asked of cargo.
fn cargo_bench_targets(parent: &Parent) -> std::result::Result<Vec<String>, String> {
    let Some(at) = parent.args.iter().position(|a| a == "bench" || a == "b") else {
        return Err("the parent cargo's command line names no `bench`".into());
    };
    let cargo = std::env::var_os("CARGO").ok_or("CARGO is not set")?;
    let mut args: Vec<String> = parent.args[..at].to_vec();
    args.extend(["bench".to_string(), "--no-run".to_string(), "--message-format=json".to_string()]);
    let mut skip_value = false;
    for a in parent.args[at + 1..].iter().take_while(|a| a.as_str() != "--") {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if a == "--message-format" {
            skip_value = true;
            continue;
        }
        if a.starts_with("--message-format=") || a == "--no-run" {
            continue;
        }
        args.push(a.clone());
    }
    args.push("--quiet".into());
    let mut cmd = Command::new(cargo);
    cmd.args(&args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    if let Some(cwd) = &parent.cwd {
        cmd.current_dir(cwd);
    }
    let out = run_with_limit(cmd, Duration::from_secs(120))?;
    let mut names = Vec::new();
    for artifact in bench_artifacts(&out) {
        let exe = &artifact.executable;
        match is_energy_bench(exe) {
            Some(true) => names.push(target_name_of(exe)),
            Some(false) => {}
            None => return Err(format!("cargo names the bench executable `{}`, which cannot be read", exe.display())),
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Runs `cmd` and returns its standard output, or why not (an exit status, the limit).
fn run_with_limit(mut cmd: Command, limit: Duration) -> std::result::Result<String, String> {
    let mut child = cmd.spawn().map_err(|e| format!("could not run cargo ({e})"))?;
    let mut stdout = child.stdout.take().ok_or("no standard output")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`cargo bench --no-run` did not answer within {} s", limit.as_secs()));
            }
        }
    };
    let text = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("`cargo bench --no-run` with the parent's arguments failed ({status})"));
    }
    Ok(text)
}

/// The source of this process's crate (git in `CARGO_MANIFEST_DIR`, else the current
/// folder), when git knows its commit.
fn source_state() -> Option<SourceState> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .or_else(|| std::env::current_dir().ok())?;
    source_state_of(&dir)
}

/// The source state of the repository holding `dir`.
pub fn source_state_of(dir: &Path) -> Option<SourceState> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| o.stdout)
    };
    let commit = String::from_utf8(git(&["rev-parse", "--verify", "-q", "HEAD"])?).ok()?.trim().to_string();
    if !super::super::provenance::is_full_commit(&commit) {
        return None;
    }
    let diff = git(&["diff", "HEAD", "--no-ext-diff", "--binary"])?;
    let tree = if diff.is_empty() {
        "clean".to_string()
    } else {
        format!("dirty:{}", energy_results::hash::content_hash(&diff))
    };
    Some(SourceState { commit, tree })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_names_drop_cargos_hash_only() {
        assert_eq!(target_name_of(Path::new("/t/release/deps/alpha-0123456789abcdef")), "alpha");
        assert_eq!(target_name_of(Path::new("/t/release/deps/my_bench-0123456789abcdef")), "my_bench");
        assert_eq!(target_name_of(Path::new("/t/alpha-beta")), "alpha-beta");
        assert_eq!(target_name_of(Path::new("/usr/bin/cargo")), "cargo");
    }

    #[test]
    fn the_marker_is_found_in_a_marked_file_and_not_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let marked = dir.path().join("marked");
        let mut bytes = vec![7u8; 10_000];
        bytes.extend_from_slice(&ENERGY_BENCH_MARKER);
        bytes.extend_from_slice(&[1u8; 100]);
        std::fs::write(&marked, &bytes).unwrap();
        assert_eq!(is_energy_bench(&marked), Some(true));
        let plain = dir.path().join("plain");
        std::fs::write(&plain, &bytes[..10_020]).unwrap();
        assert_eq!(is_energy_bench(&plain), Some(false));
        assert_eq!(is_energy_bench(&dir.path().join("missing")), None);
        mark_energy_bench();
    }

    #[test]
    fn an_executable_record_notices_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("alpha-0123456789abcdef");
        std::fs::write(&exe, b"one").unwrap();
        let record = ExeRecord::of(&exe).unwrap();
        assert!(record.unchanged());
        std::fs::write(&exe, b"two").unwrap();
        assert!(!record.unchanged());
        std::fs::remove_file(&exe).unwrap();
        assert!(!record.unchanged());
    }

    #[test]
    fn a_folder_outside_git_has_no_source_state_and_a_repository_has_one() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(source_state_of(dir.path()), None);
        let git = |args: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !git(&["init", "-q"]) {
            return; // no git here: nothing more to check
        }
        std::fs::write(dir.path().join("f"), "1").unwrap();
        assert!(git(&["add", "f"]) && git(&["commit", "-q", "-m", "one"]));
        let clean = source_state_of(dir.path()).unwrap();
        assert_eq!(clean.tree, "clean");
        std::fs::write(dir.path().join("f"), "2").unwrap();
        let dirty = source_state_of(dir.path()).unwrap();
        assert_eq!(dirty.commit, clean.commit);
        assert!(dirty.tree.starts_with("dirty:"), "{dirty:?}");
        std::fs::write(dir.path().join("f"), "3").unwrap();
        assert_ne!(source_state_of(dir.path()).unwrap().tree, dirty.tree, "another edit, another tree");
    }
}
