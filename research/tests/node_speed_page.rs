//! Issue 46's published tables are what the four device calls' raw files give
//! (`research/results/2026-11-28-node-and-speed/tables.py`, Python's standard library alone).

use std::path::Path;
use std::process::Command;

#[test]
fn the_node_and_speed_tables_are_regenerated_from_their_raw_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-28-node-and-speed");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let out = match Command::new(&python).arg(dir.join("tables.py")).arg("--check").arg(dir.join("README.md")).output()
    {
        Ok(out) => out,
        // CI installs NVIDIA's wheels with Python; a machine without it says so and fails.
        Err(e) => panic!("could not run {python:?} (needed to regenerate the tables; set PYTHON): {e}"),
    };
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
