//! Unit tests of `run`.

use super::writer::DirLock;
use super::*;
use crate::report::ResultDevice;
use energy_results::archive::read_archived;
use energy_results::hash::content_hash;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn device() -> ResultDevice {
    ResultDevice { name: "GPU".into(), uuid: "GPU-1".into(), driver: None, simulated: true, power_limit_w: None }
}

#[test]
fn targets_of_one_invocation_share_a_run_and_a_new_invocation_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("new");
    let inv = Invocation { key: "test:1".into() };
    let a = RunWriter::begin(&run, "saxpy", &inv).unwrap();
    a.commit("saxpy/energy", "saxpy_energy", &device(), [b"{}", b"t", b"p"]).unwrap();
    a.finish(0).unwrap();
    let b = RunWriter::begin(&run, "fma", &inv).unwrap();
    let clash = b.commit("saxpy/energy", "saxpy_energy", &device(), [b"{}", b"t", b"p"]).unwrap_err();
    assert!(clash.message().contains("already taken in this run by bench target `saxpy`"), "{clash}");
    b.finish(0).unwrap();
    let m = RunManifest::read_manifest(&run).unwrap();
    assert_eq!(m.targets.len(), 2);
    assert_eq!(m.check(&run).unwrap().len(), 1);
    // The same target again, or another invocation: a new run from an empty directory
    // (temporary files of killed writes: `temporaries_of_killed_writers_go_…`).
    fs::write(run.join("old_energy.svg"), "x").unwrap();
    let c = RunWriter::begin(&run, "saxpy", &inv).unwrap();
    let mut names: Vec<String> =
        fs::read_dir(&run).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, vec![LOCK_FILE.to_string(), MANIFEST_FILE.to_string()], "{names:?}");
    c.finish(0).unwrap();
    assert_eq!(RunManifest::read_manifest(&run).unwrap().targets.len(), 1);
}

#[test]
fn interrupted_failed_stray_and_altered_runs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("new");
    let inv = Invocation { key: "test:2".into() };
    let w = RunWriter::begin(&run, "saxpy", &inv).unwrap();
    w.commit("a", "a", &device(), [b"{1}", b"t", b"p"]).unwrap();
    let m = RunManifest::read_manifest(&run).unwrap();
    assert!(m.check(&run).unwrap_err().message().contains("never finished"));
    w.finish(2).unwrap();
    let m = RunManifest::read_manifest(&run).unwrap();
    assert!(m.check(&run).unwrap_err().message().contains("2 failed benchmark"));

    let w = RunWriter::begin(&run, "saxpy", &Invocation { key: "test:3".into() }).unwrap();
    w.commit("a", "a", &device(), [b"{1}", b"t", b"p"]).unwrap();
    w.finish(0).unwrap();
    let m = RunManifest::read_manifest(&run).unwrap();
    assert!(m.check(&run).is_ok());
    fs::write(run.join("b.json"), "{}").unwrap();
    assert!(m.check(&run).unwrap_err().message().contains("does not list"));
    fs::remove_file(run.join("b.json")).unwrap();
    fs::write(run.join("a.trace.csv"), "old trace").unwrap();
    assert!(m.check(&run).unwrap_err().message().contains("not the one its run wrote"));
}

/// A complete run of one result `a` (`{1}`, trace `the trace`, plot `p`) in `dir/new`,
/// and its manifest.
fn run_of_one(dir: &Path) -> (PathBuf, RunManifest) {
    let run = dir.join("new");
    let w = RunWriter::begin(&run, "saxpy", &Invocation { key: "test:gz".into() }).unwrap();
    w.commit("a", "a", &device(), [b"{1}", b"the trace", b"p"]).unwrap();
    w.finish(0).unwrap();
    let m = RunManifest::read_manifest(&run).unwrap();
    (run, m)
}

/// Writes `text` gzipped to `path`.
fn write_gzipped(path: &Path, text: &[u8]) {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(text).unwrap();
    fs::write(path, e.finish().unwrap()).unwrap();
}

/// A run archived with its traces gzipped (`a.trace.csv.gz`, as under `research/results/`)
/// reads as written; a gzipped trace of other content is refused like a plain one; a
/// missing one is let through and named (issue 61).
#[test]
fn a_run_with_gzipped_traces_is_read_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m) = run_of_one(dir.path());
    fs::remove_file(run.join("a.trace.csv")).unwrap();
    write_gzipped(&run.join("a.trace.csv.gz"), b"the trace");
    assert_eq!(m.check(&run).unwrap().len(), 1);
    assert_eq!(read_archived(&run.join("a.trace.csv")).unwrap(), b"the trace");
    write_gzipped(&run.join("a.trace.csv.gz"), b"another trace");
    assert!(m.check(&run).unwrap_err().message().contains("not the one its run wrote"));
    // A trace gone altogether takes nothing from the figures: let through, and named.
    fs::remove_file(run.join("a.trace.csv.gz")).unwrap();
    assert_eq!(m.check(&run).unwrap().len(), 1);
    assert_eq!(m.missing_attachments(&run), ["a.trace.csv"]);
}

/// A run archived with its results gzipped too (`a.json.gz`) checks as written; a stray
/// gzipped result is refused like a plain one.
#[test]
fn a_run_with_gzipped_results_is_checked_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let (run, m) = run_of_one(dir.path());
    let json = m.results().next().unwrap().json.clone();
    let written = fs::read(run.join(&json)).unwrap();
    fs::remove_file(run.join(&json)).unwrap();
    write_gzipped(&run.join(format!("{json}.gz")), &written);
    assert_eq!(m.check(&run).unwrap(), vec![run.join(&json)]);
    assert_eq!(read_archived(&run.join(&json)).unwrap(), written);
    write_gzipped(&run.join("b.json.gz"), b"{}");
    assert!(m.check(&run).unwrap_err().message().contains("does not list"));
}

#[test]
fn a_missing_run_names_the_runs_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let w = RunWriter::begin(&dir.path().join("main"), "x", &Invocation { key: "k".into() }).unwrap();
    w.finish(0).unwrap();
    let err = RunManifest::read_manifest(&dir.path().join("nightly")).unwrap_err();
    assert!(err.message().contains("the runs under"), "{err}");
    assert!(err.message().contains("main"), "{err}");
    assert!(err.message().contains("bench = false"), "{err}");
    fs::create_dir_all(dir.path().join("bare")).unwrap();
    assert!(RunManifest::read_manifest(&dir.path().join("bare")).unwrap_err().message().contains("no run manifest"));
}

/// The child of `a_killed_lock_holder_never_blocks_the_next_run`: takes the lock of
/// `RUN_LOCK_CHILD_DIR`, says so, and holds it until killed.
#[test]
#[ignore = "a helper process of a_killed_lock_holder_never_blocks_the_next_run"]
fn lock_holder_child() {
    let Some(dir) = std::env::var_os("RUN_LOCK_CHILD_DIR") else { return };
    let dir = PathBuf::from(dir);
    let _lock = DirLock::take(&dir).unwrap();
    fs::write(dir.join("held"), "").unwrap();
    std::thread::sleep(Duration::from_secs(120));
}

#[cfg(unix)]
#[test]
fn a_killed_lock_holder_never_blocks_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("new");
    fs::create_dir_all(&run).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "report::run::tests::lock_holder_child", "--ignored", "--nocapture"])
        .env("RUN_LOCK_CHILD_DIR", &run)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !run.join("held").exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "the child never took the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    // A live holder: waited for, then refused with the reason.
    let err = DirLock::take_within(&run, Duration::from_millis(300)).err().expect("the live child holds the lock");
    assert!(err.message().contains("locked by another bench process that is still running"), "{err}");
    // Killed while holding it (SIGKILL: no destructor runs): the lock file stays, the
    // lock does not, and the next run starts at once.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(run.join(LOCK_FILE).exists());
    let start = Instant::now();
    let w = RunWriter::begin(&run, "next", &Invocation { key: "after-kill".into() }).unwrap();
    assert!(start.elapsed() < Duration::from_secs(2), "the next run waited {:?}", start.elapsed());
    w.finish(0).unwrap();
}

/// The id of a process that has ended (and been waited for): no process runs under it.
#[cfg(unix)]
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "report::run::tests::no_such_test"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// The names in `dir`.
fn names_in(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect()
}

/// A bench killed (SIGKILL) while it wrote `run.json` or a result leaves its temporary
/// (`.run.json.tmp-<pid>-<n>`); the next run of the directory removes it, whether it joins
/// the run or starts a new one. A temporary of a process that still runs stays, as does one
/// of a write of this process under way; this process's id on a temporary no write of it
/// uses is an earlier process's (the id reused), and goes.
#[cfg(unix)]
#[test]
fn temporaries_of_killed_writers_go_with_the_next_run_and_live_ones_stay() {
    use energy_results::trace::format::Temporary;
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("new");
    let inv = Invocation { key: "test:temps".into() };
    let a = RunWriter::begin(&run, "saxpy", &inv).unwrap();
    a.commit("a", "a", &device(), [b"{1}", b"t", b"p"]).unwrap();
    a.finish(0).unwrap();
    let dead = ended_pid();
    let mut live = std::process::Command::new("sleep").arg("120").spawn().unwrap();
    let killed = [format!(".run.json.tmp-{dead}-3"), format!(".a.json.tmp-{dead}-0")];
    let lives = format!(".run.json.tmp-{}-5", live.id());
    let reused = format!(".run.json.tmp-{}-{}", std::process::id(), u64::MAX);
    let writing = Temporary::new(&run.join(MANIFEST_FILE));
    let writing_name = writing.path().file_name().unwrap().to_str().unwrap().to_string();
    for name in killed.iter().chain([&lives, &reused, &writing_name]) {
        fs::write(run.join(name), "{\"targets\": [").unwrap();
    }
    // The next bench target of the same `cargo bench` joins the run: the killed writer's
    // temporaries and the reused id's go; the live ones stay.
    let b = RunWriter::begin(&run, "fma", &inv).unwrap();
    let left = names_in(&run);
    for gone in killed.iter().chain([&reused]) {
        assert!(!left.contains(gone), "{gone} stayed: {left:?}");
    }
    assert!(left.contains(&lives) && left.contains(&writing_name), "{left:?}");
    b.finish(0).unwrap();
    let m = RunManifest::read_manifest(&run).unwrap();
    assert_eq!((m.targets.len(), m.check(&run).unwrap().len()), (2, 1));
    // A new run empties the directory, except for the live writers' temporaries.
    let c = RunWriter::begin(&run, "saxpy", &Invocation { key: "test:temps-2".into() }).unwrap();
    let expected: BTreeSet<String> =
        [LOCK_FILE, MANIFEST_FILE, &lives, &writing_name].into_iter().map(String::from).collect();
    assert_eq!(names_in(&run), expected);
    c.finish(0).unwrap();
    // Once their writers are gone, the next run removes them too.
    live.kill().unwrap();
    live.wait().unwrap();
    drop(writing);
    let d = RunWriter::begin(&run, "saxpy", &Invocation { key: "test:temps-3".into() }).unwrap();
    let expected: BTreeSet<String> = [LOCK_FILE, MANIFEST_FILE].into_iter().map(String::from).collect();
    assert_eq!(names_in(&run), expected);
    d.finish(0).unwrap();
}

#[test]
fn a_live_holder_in_this_process_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let held = DirLock::take(dir.path()).unwrap();
    let start = Instant::now();
    assert!(DirLock::take_within(dir.path(), Duration::from_millis(200)).is_err());
    assert!(start.elapsed() >= Duration::from_millis(200));
    drop(held);
    assert!(DirLock::take_within(dir.path(), Duration::ZERO).is_ok());
}

#[test]
fn target_names_drop_cargos_hash() {
    assert!(!current_target_name().is_empty());
    assert_eq!(content_hash(b""), "cbf29ce484222325");
}
