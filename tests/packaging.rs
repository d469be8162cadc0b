//! What `cargo publish` would upload, checked without building anything: for every
//! workspace crate that may be published, `cargo package --list` (a fraction of a second
//! each) must hold every file its sources `include_str!`/`include_bytes!`/`include!`, its own
//! README and both license files, and nothing else than `src/` and those top-level files:
//! no test data, nothing from outside the crate's folder, nothing huge.
//!
//! Why it matters: `cargo package` ships only files under the crate's own folder (an
//! `include = ["../x"]` pattern matches nothing), and it verifies by building the library
//! only, so an `include_str!("../../ptx/…")` in a test module, or a `readme` that points at
//! the workspace's README, goes unnoticed until someone builds or reads the crate from the
//! registry. docs/PUBLISHING.md has the rules and the release steps.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Top-level files a package may hold besides `src/`: the manifests and lockfile cargo
/// writes, the crate's README and the two license files.
const TOP_LEVEL: &[&str] = &[
    "Cargo.toml",
    "Cargo.toml.orig",
    "Cargo.lock",
    ".cargo_vcs_info.json",
    "README.md",
    "LICENSE-MIT",
    "LICENSE-APACHE",
];
/// Files cargo writes into the package itself (not on disk in the crate's folder).
const GENERATED: &[&str] = &["Cargo.toml.orig", "Cargo.lock", ".cargo_vcs_info.json"];
/// Today the biggest file a package holds is 24 KiB of source and the biggest package
/// (energy-harness) 671 KiB; a recorded trace or a result file is far bigger.
const MAX_FILE_BYTES: u64 = 256 * 1024;
const MAX_PACKAGE_BYTES: u64 = 2 * 1024 * 1024;
const LICENSE: &str = "MIT OR Apache-2.0";

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace_root());
    cmd
}

/// The workspace members `cargo publish` would take (no `publish = false`), from
/// `cargo metadata --no-deps`: a new crate is checked without editing this file.
fn publishable() -> Vec<Value> {
    let out = cargo().args(["metadata", "--no-deps", "--format-version", "1"]).output().unwrap();
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: BTreeSet<&str> =
        meta["workspace_members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| members.contains(p["id"].as_str().unwrap()))
        .filter(|p| p["publish"].as_array().is_none_or(|registries| !registries.is_empty()))
        .cloned()
        .collect()
}

fn package_list(name: &str) -> BTreeSet<String> {
    let out = cargo().args(["package", "--list", "--allow-dirty", "-p", name]).output().unwrap();
    assert!(out.status.success(), "cargo package --list -p {name} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

/// `a/b/../c` → `a/c`, without touching the file system: a link inside the crate that
/// points outside is fine (cargo packages its content), a `../` that leaves it is not.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// One file-including macro call in a source file.
#[derive(Debug, PartialEq)]
struct Include {
    line: usize,
    call: String,
    /// The file it reads, relative to the crate's folder (may start with `..`), or why it
    /// cannot be known.
    target: Result<PathBuf, String>,
}

/// Every `include_str!`, `include_bytes!` and `include!` in `source`, a file at `file`
/// (relative to the crate's folder), with the file it reads. Doc comments count: their
/// code is compiled as doctests.
fn includes(source: &str, file: &Path) -> Vec<Include> {
    let mut found = Vec::new();
    for mac in ["include_str!", "include_bytes!", "include!"] {
        for (at, _) in source.match_indices(mac) {
            let before = source[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `my_include!`
            }
            let rest = source[at + mac.len()..].trim_start();
            let Some(args) = rest.strip_prefix('(').and_then(balanced) else { continue };
            let compact: String = args.chars().filter(|c| !c.is_whitespace()).collect();
            if compact.starts_with("concat!(env!(\"OUT_DIR\")") {
                continue; // written by a build script at build time: nothing to ship
            }
            let line = source[..at].matches('\n').count() + 1;
            let call = format!("{mac}({args})");
            let dir = file.parent().unwrap_or(Path::new(""));
            let target = parse_target(args).map(|(from_manifest, rel)| {
                normalize(&if from_manifest { PathBuf::from(rel.trim_start_matches('/')) } else { dir.join(rel) })
            });
            found.push(Include { line, call, target });
        }
    }
    found.sort_by_key(|i| i.line);
    found
}

/// The text up to the parenthesis closing an opened one.
fn balanced(text: &str) -> Option<&str> {
    let mut depth = 1;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[..i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// `"path"` (relative to the including file) or `concat!(env!("CARGO_MANIFEST_DIR"),
/// "/path")` (relative to the crate): `(from_manifest, path)`.
fn parse_target(args: &str) -> Result<(bool, String), String> {
    let args = args.trim();
    let literal = |s: &str| -> Option<String> {
        let s = s.trim();
        let s = s.strip_prefix('r').unwrap_or(s);
        s.strip_prefix('"')?.strip_suffix('"').filter(|inner| !inner.contains('"')).map(str::to_owned)
    };
    if let Some(path) = literal(args) {
        return Ok((false, path));
    }
    let compact: String = args.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(rest) = compact.strip_prefix("concat!(env!(\"CARGO_MANIFEST_DIR\"),") {
        if let Some(path) = rest.strip_suffix(')').and_then(literal) {
            return Ok((true, path));
        }
    }
    Err("not a string literal nor concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/…\"): this test cannot see which file it reads".into())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Paths under `dir` (relative to the workspace root) that git tracks, when this is a git
/// checkout: a file only one working tree has is missing from every clean clone.
fn git_tracked(dir: &str) -> Option<BTreeSet<String>> {
    let out = Command::new("git").current_dir(workspace_root()).args(["ls-files", "-z", "--", dir]).output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout).split('\0').filter(|p| !p.is_empty()).map(str::to_owned).collect()
    })
}

/// Everything wrong with one crate's package, one line each.
fn problems(package: &Value) -> Vec<String> {
    let name = package["name"].as_str().unwrap();
    let root = workspace_root();
    let crate_dir = Path::new(package["manifest_path"].as_str().unwrap()).parent().unwrap().to_path_buf();
    let folder = crate_dir.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
    let mut problems = Vec::new();
    let mut problem = |text: String| problems.push(format!("{name}: {text}"));

    // Metadata a registry page needs (the rest: docs/PUBLISHING.md).
    for field in ["description", "readme", "rust_version"] {
        if package[field].as_str().is_none_or(str::is_empty) {
            problem(format!("no `{}` in {folder}/Cargo.toml", field.replace('_', "-")));
        }
    }
    if package["license"].as_str() != Some(LICENSE) {
        problem(format!("license is {}, not \"{LICENSE}\"", package["license"]));
    }
    for field in ["keywords", "categories"] {
        if package[field].as_array().is_none_or(Vec::is_empty) {
            problem(format!("no `{field}` in {folder}/Cargo.toml"));
        }
    }
    if package["repository"].as_str().is_some_and(|r| r.contains("example.invalid")) {
        problem(format!(
            "`repository` is a placeholder ({}): leave it out until there is a public address",
            package["repository"]
        ));
    }
    for dep in package["dependencies"].as_array().unwrap() {
        let (dep_name, req) = (dep["name"].as_str().unwrap(), dep["req"].as_str().unwrap());
        if dep["path"].is_string() && dep["kind"].as_str() != Some("dev") && req == "*" {
            problem(format!("depends on {dep_name} by path only: cargo publish needs a version as well"));
        }
        if dep_name == "energy-macros" && !req.starts_with('=') {
            problem(format!("requires energy-macros {req}: the macros expand to calls into energy_harness::__private, so pin them with =version"));
        }
    }

    let listed = package_list(name);
    let tracked = git_tracked(&folder);

    // Every file the sources include is in the package (and in git).
    let mut sources = Vec::new();
    rust_files(&crate_dir.join("src"), &mut sources);
    for source in sources {
        let rel = source.strip_prefix(&crate_dir).unwrap();
        for include in includes(&std::fs::read_to_string(&source).unwrap(), rel) {
            let at = format!("{folder}/{}:{}: {}", rel.display(), include.line, include.call);
            match include.target {
                Err(why) => problem(format!("{at}: {why}")),
                Ok(target) if target.starts_with("..") => problem(format!(
                    "{at} reads {}, outside {folder}/: cargo package ships only the crate's own folder. \
                     Move the file into {folder}/ (or link it there, as src/cuda/saxpy.ptx does) and include it from there",
                    normalize(&Path::new(&folder).join(&target)).display()
                )),
                Ok(target) => {
                    let target = target.to_string_lossy().replace('\\', "/");
                    if !listed.contains(&target) {
                        problem(format!("{at}: {target} is not in the package: add it to `include` in {folder}/Cargo.toml"));
                    }
                    if tracked.as_ref().is_some_and(|t| !t.contains(&format!("{folder}/{target}"))) {
                        problem(format!("{at}: {folder}/{target} is not tracked by git, so a clean clone lacks it"));
                    }
                }
            }
        }
    }

    // The README and both licenses, the licenses the workspace's own.
    for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        if !listed.contains(file) {
            problem(format!("{file} is not in the package"));
        }
    }
    for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let ours = std::fs::read(root.join(file)).unwrap();
        if std::fs::read(crate_dir.join(file)).ok().as_ref() != Some(&ours) {
            problem(format!(
                "{folder}/{file} is missing or differs from the workspace's {file} (it links to ../{file})"
            ));
        }
    }

    // Nothing else: only src/ and the top-level files, all from the crate's own folder,
    // none huge.
    let mut total = 0;
    for file in &listed {
        if !(file.starts_with("src/") || TOP_LEVEL.contains(&file.as_str())) {
            problem(format!("{file} is in the package: only src/, the README, the licenses and cargo's manifests belong there (narrow `include`)"));
        }
        if GENERATED.contains(&file.as_str()) {
            continue;
        }
        match std::fs::metadata(crate_dir.join(file)) {
            Err(_) => problem(format!(
                "{file} comes from outside {folder}/ (a `readme` or `license-file` pointing up?): give the crate its own"
            )),
            Ok(meta) => {
                total += meta.len();
                if meta.len() > MAX_FILE_BYTES {
                    problem(format!("{file} is {} KiB (at most {} KiB per file)", meta.len() / 1024, MAX_FILE_BYTES / 1024));
                }
            }
        }
    }
    if total > MAX_PACKAGE_BYTES {
        problem(format!("the package holds {} KiB (at most {} KiB)", total / 1024, MAX_PACKAGE_BYTES / 1024));
    }
    problems
}

#[test]
fn every_published_crate_packages_what_it_needs_and_nothing_else() {
    let packages = publishable();
    let names: BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "cargo-energy",
            "energy-harness",
            "energy-macros",
            "energy-report",
            "energy-results",
            "energy-units"
        ]),
        "the crates to publish changed: update docs/PUBLISHING.md (order, steps) and this list"
    );
    let problems: Vec<String> = packages.iter().flat_map(problems).collect();
    assert!(problems.is_empty(), "packaging problems:\n  {}", problems.join("\n  "));
}

#[test]
fn an_include_from_outside_the_crate_is_seen() {
    let source = r#"
        //! ```
        //! let readme = include_str!("../README.md");
        //! ```
        const PTX: &str = include_str!("../../../ptx/examples/saxpy.ptx");
        const FMA: &str = include_str!("fma_loop.ptx");
        const DATA: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/data.bin"));
        const BUILT: &str = include_str!(concat!(env!("OUT_DIR"), "/x"));
        my_include!("not/ours");
    "#;
    let found = includes(source, Path::new("src/cuda/fma.rs"));
    let targets: Vec<_> =
        found.iter().map(|i| (i.line, i.target.clone().map(|p| p.to_string_lossy().into_owned()))).collect();
    assert_eq!(targets[0], (3, Ok("src/README.md".into())));
    assert_eq!(targets[1], (5, Ok("../ptx/examples/saxpy.ptx".into())), "outside the crate: starts with ..");
    assert_eq!(targets[2], (6, Ok("src/cuda/fma_loop.ptx".into())));
    assert_eq!(targets[3], (7, Ok("src/data.bin".into())));
    assert_eq!(found.len(), 4, "a build script's OUT_DIR file ships nothing; my_include! is not include!: {found:?}");
    let opaque = includes(r#"include_str!(PATH)"#, Path::new("src/lib.rs"));
    assert!(opaque[0].target.is_err(), "a path this test cannot read is a problem: {opaque:?}");
}
