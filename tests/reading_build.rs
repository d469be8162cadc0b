//! Reading a result compiles no runtime (issue 59): `energy-results` (the contract),
//! `energy-report` and `cargo-energy` built without its default feature `measure` depend on
//! no CUDA, NVML or criterion crate, while the harness and the default `cargo-energy` do (so
//! the test can tell). `cargo tree` reads the lock file: nothing is built.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// The runtime's crates: what a reader must not compile.
const RUNTIME: &[&str] = &["cudarc", "nvml-wrapper", "criterion"];

/// The crates `package`'s normal build compiles, by name (`extra`: more cargo arguments).
fn normal_tree(package: &str, extra: &[&str]) -> BTreeSet<String> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none", "-p", package])
        .args(extra)
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn runtime_in(tree: &BTreeSet<String>) -> Vec<&'static str> {
    RUNTIME.iter().copied().filter(|c| tree.contains(*c)).collect()
}

#[test]
fn readers_compile_no_runtime() {
    for (package, extra) in
        [("energy-results", &[][..]), ("energy-report", &[][..]), ("cargo-energy", &["--no-default-features"][..])]
    {
        let tree = normal_tree(package, extra);
        assert!(runtime_in(&tree).is_empty(), "{package} {extra:?} compiles {:?}", runtime_in(&tree));
        assert!(tree.contains("energy-results"), "{package} reads through energy-results: {tree:?}");
        assert!(!tree.contains("energy-harness"), "{package} {extra:?} compiles the harness");
    }
    // The measuring side does compile them: the check above can fail.
    for (package, extra) in [("energy-harness", &[][..]), ("cargo-energy", &[][..])] {
        let tree = normal_tree(package, extra);
        assert_eq!(runtime_in(&tree), RUNTIME, "{package}'s runtime");
    }
}
