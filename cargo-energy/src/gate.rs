//! `cargo energy gate --base REV`: a pull request's energy gate in one step. It builds the
//! base revision (in a git worktree) and the checkout, runs every bench target of both
//! interleaved on one GPU in ABBA order ([`crate::ab::run_sequence`]: paired differences
//! cancel the GPU's drift between runs), and prints the verdict, the smallest change it
//! could detect, and the markdown of a pull-request comment. Exit 1 on a regression, 0
//! otherwise, 2 when nothing could be decided.
//!
//! In two phases for a GPU machine without a Rust toolchain: `--build-only DIR` builds both
//! sides here and copies their bench executables into `DIR/base` and `DIR/candidate` with
//! `DIR/gate-build.json` (`energy-gate-build/1`); `--prebuilt DIR` runs them there.
//!
//! The base is built in a worktree of its own, `<target>/energy/gate/base-src` (checked out at
//! each base in turn: git rewrites the files that differ, so cargo's freshness checks, which
//! go by file times, rebuild what changed), into a target folder of its own,
//! `<target>/energy/gate/base-target` (its dependencies compiled once and kept). Never into
//! the checkout's: cargo would take the base's binaries for fresh builds of the checkout.
//! Its executables are kept per commit and build arguments under
//! `<target>/energy/gate/base-<commit>-<hash>/`: a second gate against the same base builds
//! only the checkout. A path dependency outside the repository is built as it is now (the
//! base's commit cannot say what it was): its files are part of the hash, and the gate says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use energy_harness::unstable::report::source_state_of;
use energy_harness::{Error, ErrorKind, Result};
use energy_report::{ab_markdown, ab_text};
use energy_results::dirs::energy_dir;
use energy_results::hash::content_hash;
use energy_results::trace::format::write_atomically;

use crate::ab::{run_sequence, SequenceArgs, Sides};
use crate::gpus::{self, BenchExe};

/// The schema tag of a gate's build (`gate-build.json`).
pub(super) const GATE_BUILD_SCHEMA: &str = "energy-gate-build/1";
const BUILD_FILE: &str = "gate-build.json";
/// Base builds kept in the cache (the newest by use).
const CACHED_BASES: usize = 3;

/// What `cargo energy gate` was asked.
#[derive(Clone, Debug)]
pub(super) struct GateArgs {
    /// The base revision (`origin/main`); not with `--prebuilt`.
    pub base: Option<String>,
    /// `cargo bench` arguments choosing what is built (`--bench NAME`, `-p PKG`,
    /// `--features F`), the same for both sides.
    pub cargo_args: Vec<String>,
    pub build_only: Option<PathBuf>,
    pub prebuilt: Option<PathBuf>,
    /// Also write the pull-request comment (markdown) here.
    pub markdown: Option<PathBuf>,
    pub sequence: SequenceArgs,
}

/// One side of a gate's build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct BuiltSide {
    /// How it is named in the report (`base origin/main (1a2b3c4d)`, `candidate (…)`).
    pub label: String,
    /// Its commit, when known.
    pub commit: Option<String>,
    /// `clean`, `dirty:<hash>`, or `unknown`.
    pub tree: String,
    /// Its bench executables' file names, in its folder (`base/`, `candidate/`).
    pub exes: Vec<String>,
    /// The folder its executables ran from when built (their package's), for a run on the
    /// same machine; elsewhere they run in the current folder.
    pub package_dir: String,
}

/// A gate's build: `gate-build.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct GateBuild {
    /// Always [`GATE_BUILD_SCHEMA`].
    pub schema: String,
    /// The `cargo bench` arguments both sides were built with.
    pub cargo_args: Vec<String>,
    /// The base.
    pub base: BuiltSide,
    /// The checkout.
    pub candidate: BuiltSide,
}

fn bad(why: String) -> Error {
    Error::new(ErrorKind::InvalidInput, why)
}

/// Runs `cargo energy gate`; `Ok(true)` on a regression.
pub(super) fn run(a: &GateArgs) -> Result<bool> {
    let (dir, build) = match (&a.prebuilt, &a.build_only, &a.base) {
        (Some(_), Some(_), _) => return Err(bad("--prebuilt runs what --build-only built: give one of them".into())),
        (Some(_), None, Some(base)) => {
            return Err(bad(format!("--base {base} and --prebuilt: the prebuilt folder names its base already")))
        }
        (Some(dir), None, None) => (dir.clone(), read_build(dir)?),
        (None, _, None) => return Err(bad("--base REV: name the revision to gate against (origin/main)".into())),
        (None, only, Some(base)) => {
            let dir = only.clone().unwrap_or_else(|| energy_dir().join("gate").join("build"));
            let build = build_both(base, &a.cargo_args, &dir)?;
            if only.is_some() {
                eprintln!(
                    "energy gate: both sides built into {}; on the GPU machine: cargo energy gate --prebuilt {}",
                    dir.display(),
                    dir.display()
                );
                return Ok(false);
            }
            (dir, build)
        }
    };
    let sides = sides_of(&dir, &build, a.prebuilt.is_some())?;
    let (report, out) = run_sequence(&a.sequence, &sides)?;
    let markdown = format!("{}{}", gate_heading(&report), ab_markdown(&report));
    if let Some(path) = &a.markdown {
        write_atomically(path, markdown.as_bytes())?;
        eprintln!("energy gate: the pull-request comment is in {}", path.display());
    }
    crate::output::emit(&ab_text(&report))?;
    eprintln!("energy gate: report in {}", out.join("ab.json").display());
    Ok(!report.regressions().is_empty())
}

/// The comment's first line: the verdict at a glance. What the gate could have missed is
/// said of the benchmarks it passed: a regression was caught whatever its noise.
fn gate_heading(report: &energy_results::ab::AbReport) -> String {
    use energy_results::detect::Verdict;
    let regressions = report.regressions().len();
    let worst = report
        .changes
        .iter()
        .filter(|c| c.verdict != Verdict::Regression)
        .map(|c| c.detectability.detectable_change_pct)
        .fold(None, |worst: Option<f64>, d| Some(worst.map_or(d, |w| w.max(d))));
    let detectable = match worst {
        Some(d) => format!(
            "in the benchmarks it passed, the smallest change this gate could detect was {d:.2} % (the least certain \
             one; a benchmark settles once that is at most {:.2} %, or once its verdict is clear)",
            report.target_pct
        ),
        None => "every benchmark regressed".to_string(),
    };
    format!(
        "## Energy gate: {}\n\n{} of {} benchmark(s) regressed beyond {:.2} %; {detectable}. Compared: {} against {}.{}\n\n",
        if regressions == 0 { "pass" } else { "REGRESSION" },
        regressions,
        report.changes.len(),
        report.threshold_pct,
        report.candidate,
        report.baseline,
        if report.device.simulated { " SIMULATED figures: no GPU was measured." } else { "" }
    )
}

/// The two sides' executables in `dir`, checked; they run from their package's folder when
/// it exists here (a build on this machine), else from the current folder.
fn sides_of(dir: &Path, build: &GateBuild, prebuilt: bool) -> Result<Sides> {
    let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
    let side = |name: &str, built: &BuiltSide| -> Result<Vec<BenchExe>> {
        let folder = Path::new(&built.package_dir);
        let run_in = if !prebuilt && folder.is_dir() { folder.to_path_buf() } else { here.clone() };
        built
            .exes
            .iter()
            .map(|file| {
                let exe = gpus::check_executable(&format!("{name}/"), &dir.join(name).join(file), &run_in)?;
                Ok(BenchExe { package_dir: run_in.clone(), ..exe })
            })
            .collect()
    };
    Ok(Sides {
        baseline: side("base", &build.base)?,
        candidate: side("candidate", &build.candidate)?,
        baseline_label: build.base.label.clone(),
        candidate_label: build.candidate.label.clone(),
        from_revisions: true,
    })
}

/// Reads `DIR/gate-build.json`.
fn read_build(dir: &Path) -> Result<GateBuild> {
    let path = dir.join(BUILD_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        bad(format!(
            "--prebuilt {}: no {BUILD_FILE} there ({e}): build the folder with `cargo energy gate --base REV --build-only DIR` and copy all of it",
            dir.display()
        ))
    })?;
    let build: GateBuild = serde_json::from_str(&text)
        .map_err(|e| Error::new(ErrorKind::Format, format!("{}: not a gate build ({e})", path.display())))?;
    if build.schema != GATE_BUILD_SCHEMA {
        return Err(Error::new(
            ErrorKind::Format,
            format!("{}: schema `{}`, expected `{GATE_BUILD_SCHEMA}`", path.display(), build.schema),
        ));
    }
    Ok(build)
}

/// `git -C dir ARGS`: its trimmed standard output, or the error naming what failed.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out =
        Command::new("git").arg("-C").arg(dir).args(args).stdin(Stdio::null()).output().map_err(|e| {
            bad(format!("could not run git ({e}): the gate builds the base revision in a git worktree"))
        })?;
    if !out.status.success() {
        return Err(bad(format!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `cargo bench --no-run` with `cargo_args` in `dir` (`CARGO_TARGET_DIR=target`): the bench
/// executables it built.
fn cargo_build(dir: &Path, cargo_args: &[String], target: &Path, side: &str) -> Result<Vec<PathBuf>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let shown: String = cargo_args.iter().map(|a| format!(" {a}")).collect();
    eprintln!("energy gate: building the {side} (cargo bench --no-run{shown}) in {}", dir.display());
    let built = Command::new(&cargo)
        .args(["bench", "--no-run", "--message-format=json"])
        .args(cargo_args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not run cargo: {e}")))?;
    if !built.status.success() {
        return Err(bad(format!("the {side}'s `cargo bench --no-run` failed (its errors are above)")));
    }
    let exes = gpus::bench_executables(&String::from_utf8_lossy(&built.stdout));
    if exes.is_empty() {
        return Err(bad(format!("cargo built no bench target for the {side}: nothing to gate")));
    }
    Ok(exes.into_iter().map(|e| e.path).collect())
}

/// Copies `exes` into `dir` (emptied first); their file names.
fn copy_exes(exes: &[PathBuf], dir: &Path) -> Result<Vec<String>> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, "empty the folder", e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the folder", e))?;
    let mut names = Vec::new();
    for exe in exes {
        let name = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        std::fs::copy(exe, dir.join(&name)).map_err(|e| Error::io(exe, "copy the bench executable", e))?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// The tree state of a source, as [`BuiltSide::tree`] says it.
fn tree_of(dir: &Path) -> (Option<String>, String) {
    match source_state_of(dir) {
        Some(s) => (Some(s.commit), s.tree),
        None => (None, "unknown".into()),
    }
}

/// Builds the base (cached) and the checkout into `dir`.
fn build_both(base: &str, cargo_args: &[String], dir: &Path) -> Result<GateBuild> {
    let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
    let root = PathBuf::from(git(&here, &["rev-parse", "--show-toplevel"])?);
    // Both as the file system resolves them: a folder reached through a link still lies
    // under the repository git names.
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let package_rel = canonical(&here).strip_prefix(canonical(&root)).unwrap_or(Path::new("")).to_path_buf();
    let commit = git(&here, &["rev-parse", "--verify", &format!("{base}^{{commit}}")])
        .map_err(|e| bad(format!("--base {base}: not a revision here ({e}); fetch it first (git fetch origin)")))?;
    let target = energy_dir().parent().map(Path::to_path_buf).unwrap_or_else(|| here.join("target"));
    let target = std::path::absolute(&target).unwrap_or(target);
    let toolchain = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // The base's build depends on the arguments, the toolchain and the flags cargo passes on.
    let flags: String = ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS"]
        .iter()
        .map(|v| std::env::var(v).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\u{1f}");
    let gate = target.join("energy").join("gate");
    let short = &commit[..8.min(commit.len())];
    let worktree = gate.join("base-src");
    check_out(&root, &worktree, &commit)?;
    let package_dir = worktree.join(&package_rel);
    // Path dependencies outside the repository are built as they are now, whatever the
    // base's commit: their files are part of the key.
    let outside = outside_path_dependencies(&package_dir, &canonical(&worktree));
    let outside_key = match &outside {
        Ok(deps) => {
            if !deps.is_empty() {
                eprintln!(
                    "energy gate: the base reads {} path dependenc{} from outside the repository as {} now, not as at \
                     {base}: {}",
                    deps.len(),
                    if deps.len() == 1 { "y" } else { "ies" },
                    if deps.len() == 1 { "it is" } else { "they are" },
                    named(deps)
                );
            }
            deps.iter().map(|d| format!("{}={}", d.dir.display(), d.files_hash)).collect::<Vec<_>>().join("\u{1f}")
        }
        Err(why) => {
            // The checkout resolves what the base's worktree cannot: a relative path out of
            // the repository, which from the worktree points elsewhere.
            if let Ok(deps) = outside_path_dependencies(&here, &canonical(&root)) {
                if !deps.is_empty() {
                    return Err(bad(relative_outside_message(why, &deps, &worktree)));
                }
            }
            eprintln!("energy gate: {why}: the base is built again, not taken from the cache");
            String::new()
        }
    };
    let key = content_hash(format!("{}\n{toolchain}\n{flags}\n{outside_key}", cargo_args.join("\u{1f}")).as_bytes());
    let cache = gate.join(format!("base-{}-{}", &commit[..12.min(commit.len())], &key[..8]));
    let base_side = match cached_base(&cache).filter(|_| outside.is_ok()) {
        Some(side) => {
            eprintln!("energy gate: the base {base} ({short}) is cached in {}", cache.display());
            side
        }
        None => {
            let exes =
                cargo_build(&package_dir, cargo_args, &gate.join("base-target"), &format!("base {base} ({short})"))?;
            std::fs::create_dir_all(&cache).map_err(|e| Error::io(&cache, "create the base's cache", e))?;
            let names = copy_exes(&exes, &cache.join("exes"))?;
            let side = BuiltSide {
                label: format!("base {base} ({short})"),
                commit: Some(commit.clone()),
                tree: "clean".into(),
                exes: names,
                package_dir: package_dir.display().to_string(),
            };
            let json = serde_json::to_string_pretty(&side).map_err(|e| bad(format!("could not encode: {e}")))?;
            write_atomically(&cache.join("side.json"), json.as_bytes())?;
            side
        }
    };
    prune_cache(&gate, &cache);
    let exes = cargo_build(&here, cargo_args, &target, "candidate (the checkout)")?;
    let (cand_commit, tree) = tree_of(&here);
    let cand_label = format!(
        "candidate {}{}",
        cand_commit.as_deref().map_or("(no commit)".to_string(), |c| format!("({})", &c[..8.min(c.len())])),
        if tree.starts_with("dirty") { " with uncommitted changes" } else { "" }
    );
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the gate's folder", e))?;
    let candidate = BuiltSide {
        label: cand_label,
        commit: cand_commit,
        tree,
        exes: copy_exes(&exes, &dir.join("candidate"))?,
        package_dir: here.display().to_string(),
    };
    let cached: Vec<PathBuf> = base_side.exes.iter().map(|n| cache.join("exes").join(n)).collect();
    let base_exes = copy_exes(&cached, &dir.join("base"))?;
    let build = GateBuild {
        schema: GATE_BUILD_SCHEMA.into(),
        cargo_args: cargo_args.to_vec(),
        base: BuiltSide { exes: base_exes, ..base_side },
        candidate,
    };
    let json = serde_json::to_string_pretty(&build).map_err(|e| bad(format!("could not encode: {e}")))?;
    write_atomically(&dir.join(BUILD_FILE), format!("{json}\n").as_bytes())?;
    Ok(build)
}

/// A path dependency of a package that lies outside its repository, with a hash of its files.
#[derive(Debug)]
struct OutsideDependency {
    name: String,
    dir: PathBuf,
    files_hash: String,
}

/// The path dependencies of the package at `package_dir` (from `cargo metadata`) whose
/// manifests lie outside `root`, each with a hash of its files (`target/` and `.git/` left
/// out), sorted by folder; or why they could not be told.
fn outside_path_dependencies(package_dir: &Path, root: &Path) -> std::result::Result<Vec<OutsideDependency>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(package_dir)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("could not run `cargo metadata` for the base's path dependencies: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`cargo metadata` failed in {} ({}), so the base's path dependencies are unknown",
            package_dir.display(),
            err.lines().find(|l| l.contains("error")).unwrap_or("no error line").trim()
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("`cargo metadata` printed no JSON: {e}"))?;
    let mut deps = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        // A path dependency has no source (a registry's or a git repository's).
        let Some(manifest) = package["manifest_path"].as_str().filter(|_| package["source"].is_null()) else {
            continue;
        };
        let dir = Path::new(manifest).parent().unwrap_or(Path::new("/"));
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if dir.starts_with(root) {
            continue;
        }
        let mut files = Vec::new();
        list_files(&dir, &dir, &mut files);
        files.sort();
        // Each file's path and hash, one file in memory at a time.
        let listing: String = files
            .iter()
            .map(|(rel, path)| format!("{rel}\0{}\n", content_hash(&std::fs::read(path).unwrap_or_default())))
            .collect();
        let name = package["name"].as_str().unwrap_or("?").to_string();
        deps.push(OutsideDependency { name, dir, files_hash: content_hash(listing.as_bytes()) });
    }
    deps.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(deps)
}

/// What to do when the base's worktree cannot resolve its path dependencies while the
/// checkout, which has `deps` outside the repository, can.
fn relative_outside_message(why: &str, deps: &[OutsideDependency], worktree: &Path) -> String {
    format!(
        "{why}, while the checkout resolves its path dependencies outside the repository: {}. The base is \
         built in {}, from where a relative path out of the repository points elsewhere: give such a \
         dependency by an absolute path (or as a git dependency)",
        named(deps),
        worktree.display()
    )
}

/// `deps` as a message names them: "`name` (folder), …".
fn named(deps: &[OutsideDependency]) -> String {
    deps.iter().map(|d| format!("`{}` ({})", d.name, d.dir.display())).collect::<Vec<_>>().join(", ")
}

/// Every file under `dir` but `target/` and `.git/`, as (path from `top`, path).
fn list_files(top: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if path != top.join("target") && entry.file_name() != ".git" {
                list_files(top, &path, out);
            }
        } else if kind.is_file() {
            let rel = path.strip_prefix(top).unwrap_or(&path).display().to_string();
            out.push((rel, path));
        }
    }
}

/// Checks out `commit` (detached, every tracked file as committed) in the base's worktree
/// `worktree` of the repository at `root`, adding the worktree the first time.
fn check_out(root: &Path, worktree: &Path, commit: &str) -> Result<()> {
    let path = worktree.display().to_string();
    if worktree.join(".git").exists() {
        git(worktree, &["checkout", "--quiet", "--detach", "--force", commit])?;
        git(worktree, &["clean", "--quiet", "-d", "--force", "-x", "--exclude=/target"])?;
        return Ok(());
    }
    if worktree.exists() {
        let _ = std::fs::remove_dir_all(worktree);
    }
    let _ = git(root, &["worktree", "prune"]);
    git(root, &["worktree", "add", "--quiet", "--detach", "--force", &path, commit]).map(drop)
}

/// The cached base in `cache`, when its record and every executable it names are there.
fn cached_base(cache: &Path) -> Option<BuiltSide> {
    let side: BuiltSide = serde_json::from_str(&std::fs::read_to_string(cache.join("side.json")).ok()?).ok()?;
    let all_there = side.exes.iter().all(|n| cache.join("exes").join(n).is_file());
    (all_there && Path::new(&side.package_dir).is_dir()).then(|| {
        // Its use, for the pruning below.
        let _ = touch(&cache.join("side.json"));
        side
    })
}

/// Marks `path` as used now (its modification time).
fn touch(path: &Path) -> std::io::Result<()> {
    let file = std::fs::File::options().append(true).open(path)?;
    file.set_modified(std::time::SystemTime::now())
}

/// Keeps the [`CACHED_BASES`] most recently used base executables under `gate` (and
/// `keep`), removing the others.
fn prune_cache(gate: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(gate) else { return };
    let mut cached: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("base-") && n != "base-src" && n != "base-target")
                && p != keep
        })
        .map(|p| {
            let used =
                std::fs::metadata(p.join("side.json")).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
            (used, p)
        })
        .collect();
    cached.sort_by_key(|c| std::cmp::Reverse(c.0));
    for (_, old) in cached.into_iter().skip(CACHED_BASES.saturating_sub(1)) {
        let _ = std::fs::remove_dir_all(&old);
    }
}

/// `--max-minutes`: a positive number of minutes.
pub(super) fn parse_minutes(text: &str) -> std::result::Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|m| m.is_finite() && *m > 0.0 && *m <= 10_000.0)
        .map(|m| Duration::from_secs_f64(m * 60.0))
        .ok_or_else(|| format!("`{text}` is not a number of minutes (0 < M <= 10000)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_parse_or_say_why_not() {
        assert_eq!(parse_minutes("1.5").unwrap(), Duration::from_secs(90));
        for bad in ["0", "-1", "x", "nan", "1e9"] {
            assert!(parse_minutes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn contradictory_phases_are_refused() {
        let sequence = SequenceArgs {
            gpu: None,
            min_pairs: 2,
            max_pairs: 2,
            target_pct: 1.0,
            threshold_pct: 2.0,
            timeout: None,
            budget: None,
            windows: None,
            output_dir: None,
            removed: vec![],
            args: vec![],
            command: crate::ab::PairedCommand::Gate,
        };
        let a = GateArgs { base: None, cargo_args: vec![], build_only: None, prebuilt: None, markdown: None, sequence };
        assert!(run(&a).unwrap_err().message().contains("--base REV"));
        let both = GateArgs { prebuilt: Some("p".into()), build_only: Some("b".into()), ..a.clone() };
        assert!(run(&both).unwrap_err().message().contains("give one of them"));
        let base = GateArgs { prebuilt: Some("p".into()), base: Some("main".into()), ..a.clone() };
        assert!(run(&base).unwrap_err().message().contains("names its base already"));
        let dir = tempfile::tempdir().unwrap();
        let missing = GateArgs { prebuilt: Some(dir.path().into()), ..a };
        assert!(run(&missing).unwrap_err().message().contains("no gate-build.json there"));
    }

    /// A path dependency outside the repository is found, with a hash that follows its files;
    /// one inside is not listed.
    #[test]
    fn a_path_dependency_outside_the_repository_is_part_of_the_base_key() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        let write = |rel: &str, text: &str| {
            let path = top.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let manifest = |name: &str, deps: &str| {
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}")
        };
        write("ext/Cargo.toml", &manifest("ext", ""));
        write("ext/src/lib.rs", "pub fn f() {}\n");
        write("repo/inner/Cargo.toml", &manifest("inner", ""));
        write("repo/inner/src/lib.rs", "");
        let deps = format!("ext = {{ path = \"{}\" }}\ninner = {{ path = \"inner\" }}\n", top.join("ext").display());
        write("repo/Cargo.toml", &format!("{}\n[workspace]\n", manifest("p", &deps)));
        write("repo/src/lib.rs", "");
        let repo = top.join("repo");
        let found = outside_path_dependencies(&repo, &repo).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].name.as_str(), found[0].dir.as_path()), ("ext", top.join("ext").as_path()));
        // Its files are its key: a change to them is a different base build.
        write("ext/src/lib.rs", "pub fn f() { let _ = 1; }\n");
        let again = outside_path_dependencies(&repo, &repo).unwrap();
        assert_ne!(again[0].files_hash, found[0].files_hash);
        // A relative path out of the repository resolves from the repository, not from a copy
        // of it elsewhere (the base's worktree): the copy fails, and the message says what to do.
        write("rel/Cargo.toml", &format!("{}\n[workspace]\n", manifest("r", "ext = { path = \"../ext\" }\n")));
        write("rel/src/lib.rs", "");
        let rel = outside_path_dependencies(&top.join("rel"), &top.join("rel")).unwrap();
        assert_eq!(rel.len(), 1, "{rel:?}");
        write("elsewhere/copy/Cargo.toml", &std::fs::read_to_string(top.join("rel/Cargo.toml")).unwrap());
        write("elsewhere/copy/src/lib.rs", "");
        let copy = top.join("elsewhere/copy");
        let err = outside_path_dependencies(&copy, &copy).unwrap_err();
        let message = relative_outside_message(&err, &rel, &copy);
        assert!(
            message.contains("give such a dependency by an absolute path") && message.contains("`ext`"),
            "{message}"
        );
        // A folder that is no package: said, not guessed.
        let err = outside_path_dependencies(&top, &top).unwrap_err();
        assert!(err.contains("`cargo metadata` failed"), "{err}");
    }
}
