//! Generated files: a page the research regenerates from its raw data, and keeping a folder
//! of generated files (the suites' PTX) equal to what a generator writes.

use std::path::{Path, PathBuf};

/// One regenerated file: its path under `research/results/` and its full text.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// Path relative to `research/results/`.
    pub path: PathBuf,
    /// The text the code produces from the raw data.
    pub text: String,
}

/// Makes `dir` hold exactly `files` (name, text) among its files ending in `extension`:
/// writes those that differ (each beside, then renamed: never a half-written file) and
/// removes the others. Returns one line per change.
pub fn sync_dir(dir: &Path, extension: &str, files: &[(String, String)]) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut changes = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(extension) && !files.iter().any(|(n, _)| *n == name) {
                std::fs::remove_file(entry.path())
                    .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
                changes.push(format!("removed {name}"));
            }
        }
    }
    for (name, text) in files {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        changes.push(format!("wrote {}", path.display()));
    }
    Ok(changes)
}

/// Lists what differs between `dir` and `files` (stale, missing or extra files), for tests.
pub fn stale_files(dir: &Path, extension: &str, files: &[(String, String)]) -> Vec<String> {
    let mut stale = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(found) if found == *text => {}
            Ok(_) => stale.push(format!("{} differs", path.display())),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(extension) && !files.iter().any(|(n, _)| *n == name) {
                stale.push(format!("{name} is not generated"));
            }
        }
    }
    stale
}
