//! A GPU crate outside the workspace, as a user has it: the library crates packaged (`cargo
//! package`, what a registry would serve), unpacked under `<workspace>/target/user-crate/vendor`,
//! and a crate in a temporary folder depending on `energy-harness = "0.1"` patched to them.
//! Shared by `tests/user_crate.rs` and `cargo-energy/tests/newcomer_mistakes.rs`;
//! both build in `target/user-crate/`, so the harness is compiled once for both.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace's root (the folder with `Cargo.lock`), from the package including this file.
pub fn repo() -> PathBuf {
    let package = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    package.ancestors().find(|p| p.join("Cargo.lock").is_file()).expect("a workspace with Cargo.lock").to_path_buf()
}

/// Where user crates build: one folder, so that a later run rebuilds only what changed. Its
/// runs and results stay there (`energy/`, apart from the workspace's own), but its profile
/// folders (`debug/`, `release/`) are links to the workspace's: the dependencies the outer
/// `cargo build` or `cargo test` has just compiled, with the same versions (the workspace's
/// lock), features and profile ([`workspace_dev_profile`]), are not compiled again. The
/// harness itself is always compiled again: the packaged copy is a package of its own.
pub fn user_target() -> PathBuf {
    // `<target>/tmp`, cargo's folder for tests' files: its parent is the workspace's target.
    let workspace_target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("CARGO_TARGET_TMPDIR has a parent");
    let target = workspace_target.join("user-crate");
    std::fs::create_dir_all(&target).unwrap();
    for profile in ["debug", "release"] {
        let shared = workspace_target.join(profile);
        let link = target.join(profile);
        std::fs::create_dir_all(&shared).unwrap();
        if std::fs::read_link(&link).ok().as_deref() != Some(shared.as_path()) {
            // A folder of an earlier layout, or a link elsewhere: replaced.
            let _ = std::fs::remove_file(&link);
            let _ = std::fs::remove_dir_all(&link);
            if let Err(e) = std::os::unix::fs::symlink(&shared, &link) {
                // Two tests making it at once: the other's link is as good.
                assert!(
                    std::fs::read_link(&link).is_ok(),
                    "could not link {} to {}: {e}",
                    link.display(),
                    shared.display()
                );
            }
        }
    }
    target
}

/// The settings of every `[profile.dev…]` table of the workspace's `Cargo.toml` (as
/// `profile.dev.package."*".debug = false`), given to a user crate's cargo as `--config`:
/// compiled alike, the dependencies it shares with the workspace are reused. The user's
/// manifest stays as a user writes it.
fn workspace_dev_profile() -> Vec<String> {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let mut table = String::new();
    let mut settings = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.trim_matches(|c| c == '[' || c == ']').to_string();
        } else if !line.is_empty() && !line.starts_with('#') && table.starts_with("profile.dev") {
            settings.push(format!("{table}.{line}"));
        }
    }
    settings
}

/// `cargo`, without the variables the outer `cargo test` sets for its own crate.
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for var in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "CARGO_PRIMARY_PACKAGE", "RUSTC_WRAPPER", "ENERGY_RUN_ID"] {
        c.env_remove(var);
    }
    c
}

/// stdout then stderr.
pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs `cmd`: its exit code and its output.
pub fn run(what: &str, cmd: &mut Command) -> (Option<i32>, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: could not start it: {e}"));
    (out.status.code(), text(&out))
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The library crates a user's crate takes (energy-harness and what it depends on), in
/// the order they are packaged.
const LIBRARY_CRATES: [&str; 4] = ["energy-units", "energy-macros", "energy-results", "energy-harness"];

/// The library crates ([`LIBRARY_CRATES`]), packaged and unpacked under `vendor`: a file
/// whose content is unchanged keeps its time, so cargo rebuilds a package only when its
/// sources changed (the two tests that share `target/user-crate/` then build the harness
/// once).
pub fn package_into(vendor: &Path, target: &Path) {
    let (code, out) = run(
        "cargo package",
        cargo()
            .current_dir(repo())
            .args(["package", "--offline", "--no-verify", "--allow-dirty", "--target-dir"])
            .arg(target)
            .args(LIBRARY_CRATES.iter().flat_map(|name| ["-p", name])),
    );
    assert_eq!(code, Some(0), "cargo package failed:\n{out}");
    let staging = tempfile::tempdir().unwrap();
    for name in LIBRARY_CRATES {
        let krate = target.join("package").join(format!("{name}-0.1.0.crate"));
        let status = Command::new("tar").arg("xzf").arg(&krate).arg("-C").arg(staging.path()).status().unwrap();
        assert!(status.success(), "could not unpack {}", krate.display());
    }
    sync_dir(staging.path(), vendor);
}

/// Makes `to` hold what `from` holds, writing only the files whose content differs.
fn sync_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let mut wanted = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        wanted.insert(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if target.is_file() {
                std::fs::remove_file(&target).unwrap();
            }
            sync_dir(&entry.path(), &target);
        } else {
            let new = std::fs::read(entry.path()).unwrap();
            if std::fs::read(&target).ok().as_deref() != Some(new.as_slice()) {
                if target.is_dir() {
                    std::fs::remove_dir_all(&target).unwrap();
                }
                std::fs::write(&target, new).unwrap();
            }
        }
    }
    for entry in std::fs::read_dir(to).unwrap() {
        let entry = entry.unwrap();
        if !wanted.contains(&entry.file_name()) {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                std::fs::remove_dir_all(path).unwrap();
            } else {
                std::fs::remove_file(path).unwrap();
            }
        }
    }
}

/// The template folder `template` copied to `dir`, its `Cargo.toml.in` the manifest with
/// `[patch.crates-io]` pointing at the unpacked packages, and the workspace's lock (the same
/// dependency versions, resolved offline). `extra_manifest` is appended (more targets).
pub fn write_user_crate(template: &Path, dir: &Path, vendor: &Path, extra_manifest: &str) {
    copy_dir(template, dir);
    std::fs::remove_file(dir.join("Cargo.toml.in")).unwrap();
    let mut manifest = std::fs::read_to_string(template.join("Cargo.toml.in")).unwrap();
    manifest.push_str("\n[patch.crates-io]\n");
    for name in LIBRARY_CRATES {
        let path = vendor.join(format!("{name}-0.1.0"));
        manifest.push_str(&format!("{name} = {{ path = {:?} }}\n", path.display().to_string()));
    }
    manifest.push_str(extra_manifest);
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

/// `cargo ARGS… --offline` in the user's crate `dir`, on the simulated GPU, building in
/// `target` with the workspace's dev profile ([`workspace_dev_profile`]).
pub fn user_cargo(dir: &Path, target: &Path, args: &[&str]) -> Command {
    let mut c = cargo();
    c.current_dir(dir).env("CARGO_TARGET_DIR", target).env("ENERGY_DEVICE", "sim").arg(args[0]).arg("--offline");
    for setting in workspace_dev_profile() {
        c.arg("--config").arg(setting);
    }
    c.args(&args[1..]);
    for var in ["ENERGY_REQUIRE_GPU", "ENERGY_STRICT"] {
        c.env_remove(var);
    }
    c
}
