//! Where a result came from: the commit, branch and working-tree state of the crate that
//! was benchmarked, the host it ran on, and the temperatures its windows ran at. Every
//! result file carries it (`provenance`, `temperature_range_c`; absent in files of older
//! versions, which still read), so a file is self-describing when it travels alone (a CI
//! artifact) and `cargo energy history` can order runs by commit.
//!
//! The git facts are asked of `git` once per process, in `CARGO_MANIFEST_DIR` (which cargo
//! sets for the bench binaries it runs) or else the current directory. Without git, or
//! outside a repository, they are `None` and nothing fails. On CI the environment fills
//! what git cannot say: `GITHUB_SHA` when git gives no commit (a source tarball), and the
//! branch from `GITHUB_HEAD_REF` (a pull request) or `GITHUB_REF_NAME` when git's HEAD is
//! detached, as a checkout action leaves it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::error::echo;
use crate::measured::WindowResult;

/// Where a result came from (see the module's documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Provenance {
    /// The commit checked out (full hash), when known.
    #[serde(default)]
    pub commit: Option<String>,
    /// The commit's time (committer date), seconds since the Unix epoch, when known.
    #[serde(default)]
    pub commit_time_unix: Option<i64>,
    /// The branch checked out (or the CI's name for it), when known.
    #[serde(default)]
    pub branch: Option<String>,
    /// Whether tracked files had uncommitted changes, when known.
    #[serde(default)]
    pub dirty: Option<bool>,
    /// The host name of the machine that ran the benchmark, when known.
    #[serde(default)]
    pub host: Option<String>,
}

/// The lowest and highest die temperature of a result's windows, °C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TemperatureRange {
    /// The coolest window's temperature, °C.
    pub min_c: u32,
    /// The warmest window's temperature, °C.
    pub max_c: u32,
}

/// The highest temperature a result may record, °C: a GPU shuts down long before.
pub const MAX_SANE_TEMPERATURE_C: u32 = 150;

impl TemperatureRange {
    /// The range of the windows' temperatures; `None` when no window recorded one.
    pub fn of_windows(windows: &[WindowResult]) -> Option<TemperatureRange> {
        let mut temps = windows.iter().filter_map(|w| w.temperature_c);
        let first = temps.next()?;
        let (min_c, max_c) = temps.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)));
        Some(TemperatureRange { min_c, max_c })
    }

    /// Checks that the range is ordered and sane (at most 150 °C).
    pub fn validate(&self) -> Result<(), String> {
        if self.min_c > self.max_c {
            return Err(format!("temperature_range_c: min {} °C is above max {} °C", self.min_c, self.max_c));
        }
        if self.max_c > MAX_SANE_TEMPERATURE_C {
            return Err(format!(
                "temperature_range_c: max {} °C is above {MAX_SANE_TEMPERATURE_C} °C, which no working GPU reaches",
                self.max_c
            ));
        }
        Ok(())
    }
}

/// Whether `text` is a full commit hash: 40 hexadecimal digits (SHA-1), or 64 (a
/// repository in SHA-256 object format).
pub fn is_full_commit(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Provenance {
    /// The provenance of this process's benchmarks, asked of git (and the host) once per
    /// process, on the first call: a run calls it when it begins.
    pub fn current() -> &'static Provenance {
        static CURRENT: OnceLock<Provenance> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let dir = std::env::var_os("CARGO_MANIFEST_DIR")
                .map(std::path::PathBuf::from)
                .filter(|d| d.is_dir())
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| ".".into());
            let mut p = Provenance::of_dir(&dir, &|name| std::env::var(name).ok());
            p.host = host_name();
            p
        })
    }

    /// The git facts of the repository holding `dir` (no host), with CI variables read by
    /// `env` filling in what git cannot say (see the module's documentation). Without git
    /// or outside a repository every git field is `None`.
    pub fn of_dir(dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Provenance {
        let env = |name: &str| env(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let mut p = Provenance::default();
        let commit = git(dir, &["rev-parse", "--verify", "-q", "HEAD"]).filter(|c| is_full_commit(c));
        if let Some(commit) = &commit {
            p.commit_time_unix = git(dir, &["show", "-s", "--format=%ct", commit]).and_then(|t| t.parse().ok());
            p.branch = git(dir, &["symbolic-ref", "-q", "--short", "HEAD"]);
            // Tracked files only: an untracked scratch file does not change what was built.
            p.dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
        }
        p.commit = commit.or_else(|| env("GITHUB_SHA").filter(|c| is_full_commit(c)).map(|c| c.to_ascii_lowercase()));
        if p.branch.is_none() && p.commit.is_some() {
            p.branch = env("GITHUB_HEAD_REF").or_else(|| env("GITHUB_REF_NAME"));
        }
        p
    }

    /// Checks what a reader relies on: a commit of 40 (or 64) hex digits, and a branch and
    /// host of at most 255 bytes. The error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(commit) = self.commit.as_deref().filter(|c| !is_full_commit(c)) {
            return Err(format!(
                "provenance.commit `{}` is not a full commit hash (40 hexadecimal digits)",
                echo(&commit.chars().take(80).collect::<String>())
            ));
        }
        for (name, value) in [("branch", &self.branch), ("host", &self.host)] {
            if value.as_deref().is_some_and(|v| v.len() > 255) {
                return Err(format!("provenance.{name} is longer than 255 bytes"));
            }
        }
        Ok(())
    }

    /// The commit as a short label: its first 8 digits, `*` after them when the tree was
    /// dirty; `None` without a commit.
    pub fn short_label(&self) -> Option<String> {
        let commit = self.commit.as_deref()?;
        Some(format!("{}{}", &commit[..8.min(commit.len())], if self.dirty == Some(true) { "*" } else { "" }))
    }
}

/// The trimmed standard output of `git -C dir ARGS`, or `None` when git is missing, fails
/// or says nothing.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out =
        Command::new("git").arg("-C").arg(dir).args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    // `status --porcelain` on a clean tree says nothing, which is an answer.
    (!text.is_empty() || args.first() == Some(&"status")).then(|| text.to_string())
}

/// This machine's host name: the kernel's (`/proc/sys/kernel/hostname`, else
/// `gethostname`), else `HOSTNAME` or `COMPUTERNAME` from the environment.
pub fn host_name() -> Option<String> {
    let clean = |s: String| Some(s.trim().to_string()).filter(|s| !s.is_empty() && s.len() <= 255);
    if let Some(name) = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().and_then(clean) {
        return Some(name);
    }
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is writable for its whole length, which is passed.
        if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            if let Some(name) = String::from_utf8(buf[..end].to_vec()).ok().and_then(clean) {
                return Some(name);
            }
        }
    }
    ["HOSTNAME", "COMPUTERNAME"].iter().find_map(|v| std::env::var(v).ok().and_then(clean))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_directory_outside_any_repository_has_no_git_facts() {
        let dir = tempfile::tempdir().unwrap();
        let p = Provenance::of_dir(dir.path(), &no_env);
        assert_eq!(p, Provenance::default());
        // A directory that does not exist either.
        assert_eq!(Provenance::of_dir(&dir.path().join("gone"), &no_env), Provenance::default());
        // CI's variables fill in the commit (a valid one only) and the branch.
        let ci = |name: &str| match name {
            "GITHUB_SHA" => Some("A".repeat(40)),
            "GITHUB_REF_NAME" => Some("main".into()),
            _ => None,
        };
        let p = Provenance::of_dir(dir.path(), &ci);
        assert_eq!(p.commit.as_deref(), Some("a".repeat(40).as_str()));
        assert_eq!(p.branch.as_deref(), Some("main"));
        let bad = |name: &str| (name == "GITHUB_SHA").then(|| "not-a-sha".to_string());
        assert_eq!(Provenance::of_dir(dir.path(), &bad), Provenance::default());
    }

    #[test]
    fn a_repository_gives_commit_branch_time_and_dirt() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !run(&["init", "-q", "-b", "trunk"]) {
            eprintln!("git is not available: skipped");
            return;
        }
        std::fs::write(dir.path().join("a.txt"), "1").unwrap();
        assert!(run(&["add", "a.txt"]) && run(&["commit", "-q", "-m", "one"]));
        let p = Provenance::of_dir(dir.path(), &no_env);
        assert!(p.commit.as_deref().is_some_and(is_full_commit), "{p:?}");
        assert_eq!(p.branch.as_deref(), Some("trunk"));
        assert_eq!(p.dirty, Some(false));
        assert!(p.commit_time_unix.is_some_and(|t| t > 1_600_000_000), "{p:?}");
        // An untracked file is not dirt; a changed tracked file is.
        std::fs::write(dir.path().join("scratch.txt"), "x").unwrap();
        assert_eq!(Provenance::of_dir(dir.path(), &no_env).dirty, Some(false));
        std::fs::write(dir.path().join("a.txt"), "2").unwrap();
        let dirty = Provenance::of_dir(dir.path(), &no_env);
        assert_eq!(dirty.dirty, Some(true));
        assert!(dirty.short_label().unwrap().ends_with('*'));
        // A detached HEAD takes the CI's branch name.
        assert!(run(&["checkout", "-q", "--detach"]));
        let ci = |name: &str| (name == "GITHUB_REF_NAME").then(|| "pr-7".to_string());
        assert_eq!(Provenance::of_dir(dir.path(), &ci).branch.as_deref(), Some("pr-7"));
    }

    #[test]
    fn provenance_and_temperatures_are_validated() {
        let ok = Provenance { commit: Some("0123456789abcdef0123456789abcdef01234567".into()), ..Default::default() };
        assert!(ok.validate().is_ok());
        assert_eq!(ok.short_label().as_deref(), Some("01234567"));
        for bad in ["0123", "g123456789abcdef0123456789abcdef01234567", "\u{1b}[2J"] {
            let p = Provenance { commit: Some(bad.into()), ..Default::default() };
            assert!(p.validate().unwrap_err().contains("not a full commit hash"), "{bad}");
        }
        let long = Provenance { host: Some("h".repeat(300)), ..Default::default() };
        assert!(long.validate().unwrap_err().contains("provenance.host"));
        assert!(TemperatureRange { min_c: 30, max_c: 40 }.validate().is_ok());
        assert!(TemperatureRange { min_c: 41, max_c: 40 }.validate().unwrap_err().contains("above max"));
        assert!(TemperatureRange { min_c: 30, max_c: 400 }.validate().unwrap_err().contains("no working GPU"));
    }

    #[test]
    fn the_host_name_is_found() {
        assert!(host_name().is_some_and(|h| !h.is_empty()));
    }
}
