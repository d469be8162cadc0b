//! A GPU crate outside this workspace adopts the harness as a user would (issue 29).
//!
//! The crates are packaged (`cargo package`, what a registry would serve), unpacked, and a
//! fresh crate in a temporary folder depends on `energy-harness = "0.1"` with
//! `[patch.crates-io]` pointing at the packages: every file the harness needs must be in its
//! package. The crate (`tests/user_crate/`) has a PTX benchmark, a CUDA C benchmark, a raw
//! cudarc benchmark, five interleaved rounds of the three (`gpu_only`) and three budgets.
//! Without a GPU (`ENERGY_DEVICE=sim`, so a GPU machine gives the same answers):
//! - `cargo bench` exits 0: PTX and CUDA C measured on the simulated GPU, the raw cudarc one
//!   "not run: needs a GPU (uses raw cudarc: …)", the `gpu_only` rounds "not run"; the
//!   README's quick start and the book's two complete bench files (`docs/book/examples/`:
//!   PTX saxpy, your own cudarc code) build and run as copied;
//! - `cargo test` exits 0: two budgets met (simulated), the `gpu_only` one "not run";
//! - `ENERGY_STRICT=1 cargo bench` fails on the raw cudarc benchmark (not `gpu_only`: it
//!   could not be checked), naming the fix;
//! - `ENERGY_REQUIRE_GPU=1 cargo bench` exits 1 with the reason;
//! - a bench target without `harness = false` fails at start saying to add it;
//! - a bench file without `energy_main!()`, and `#[energy_bench]` in a test file, are
//!   compile errors naming the fix.
//!
//! The first run builds the harness twice (release for benches, debug for tests) in
//! `target/user-crate/`: a few minutes on 2 cores; later runs reuse it.

#[path = "../cargo-energy/tests/common/user_crate_kit.rs"]
mod kit;

use std::path::Path;

use kit::{package_into, repo, run, user_cargo, user_target};

/// The user's crate in `dir`: the template (`tests/user_crate/`), the README's quick-start
/// bench file and the book's complete bench files (`docs/book/examples/`, which the book
/// includes), as a reader copies them (with the PTX the PTX one includes).
fn write_user_crate(dir: &Path, vendor: &Path) {
    const DOC_BENCHES: [(&str, &str); 4] = [
        ("quickstart.rs", "readme_quickstart"),
        ("saxpy_ptx.rs", "book_saxpy_ptx"),
        ("cudarc.rs", "book_cudarc"),
        ("graph.rs", "book_graph"),
    ];
    let targets: String =
        DOC_BENCHES.iter().map(|(_, bench)| format!("\n[[bench]]\nname = \"{bench}\"\nharness = false\n")).collect();
    kit::write_user_crate(&repo().join("tests/user_crate"), dir, vendor, &targets);
    for (file, bench) in DOC_BENCHES {
        std::fs::copy(repo().join("docs/book/examples").join(file), dir.join("benches").join(format!("{bench}.rs")))
            .unwrap();
    }
    std::fs::create_dir_all(dir.join("ptx/examples")).unwrap();
    std::fs::copy(repo().join("ptx/examples/saxpy.ptx"), dir.join("ptx/examples/saxpy.ptx")).unwrap();
}

/// The README's quick start shows the book's `quickstart.rs` word for word.
#[test]
fn the_readme_quick_start_is_the_compiled_file() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme.split("\n## Quick start\n").nth(1).expect("README has `## Quick start`");
    let code = section.split("```rust\n").nth(1).expect("a rust block").split("```").next().unwrap();
    let file = std::fs::read_to_string(repo().join("docs/book/examples/quickstart.rs")).unwrap();
    assert_eq!(code, file, "README's quick start differs from docs/book/examples/quickstart.rs: copy the file in");
}

#[test]
fn a_crate_outside_the_workspace_adopts_the_harness_without_a_gpu() {
    // The packages and the build stay under target/user-crate/ (at one path, so a later
    // run rebuilds only what changed); the user's crate is in a temporary folder, outside
    // any workspace.
    let target = user_target();
    let vendor = target.join("vendor");
    package_into(&vendor, &target.join("package"));
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("userkern");
    write_user_crate(&dir, &vendor);
    let _ = std::fs::remove_dir_all(target.join("energy"));
    let nvrtc = std::env::var_os("NVRTC_LIBRARY").is_some_and(|p| !p.is_empty());

    // cargo bench: PTX and CUDA C simulated, raw cudarc not run, exit 0.
    let (code, out) = run("cargo bench", &mut user_cargo(&dir, &target, &["bench"]));
    assert_eq!(code, Some(0), "cargo bench in the user's crate:\n{out}");
    assert!(out.contains("saxpy_ptx/energy (simulated)") && out.contains("saxpy_cuda_c/energy (simulated)"), "{out}");
    assert!(out.contains("saxpy_cudarc: not run: needs a GPU (uses raw cudarc: CudaGpu::cuda_context)"), "{out}");
    assert!(!out.contains("the same code fails on a GPU"), "{out}");
    // The documents' bench files, unchanged: the quick start's and the book's PTX one
    // simulated, the cudarc one not run.
    assert!(out.contains("saxpy/energy (simulated)"), "README's quick start:\n{out}");
    assert!(out.contains("saxpy_from_ptx/energy (simulated)"), "the book's PTX benchmark:\n{out}");
    assert!(out.contains("saxpy_cudarc: not run: needs a GPU (declared gpu_only)"), "the book's cudarc file:\n{out}");
    for round in 1..=5 {
        for path in ["ptx", "cuda_c", "cudarc"] {
            let line = format!("r{round}_{path}: not run: needs a GPU (declared gpu_only)");
            assert!(out.contains(&line), "missing `{line}`:\n{out}");
        }
    }
    let cuda_c_line = out.lines().find(|l| l.starts_with("saxpy_cuda_c: kernel code checked")).unwrap_or_default();
    if nvrtc {
        assert!(cuda_c_line.contains("1 CUDA C module(s) compiled by NVRTC"), "{out}");
        assert!(!cuda_c_line.contains("checked without compiling"), "NVRTC_LIBRARY is set:\n{cuda_c_line}");
    } else {
        assert!(cuda_c_line.contains("checked without compiling: "), "{out}");
    }
    let results = target.join("energy").join("new");
    for id in ["saxpy_ptx_energy__simulated_.json", "saxpy_cuda_c_energy__simulated_.json"] {
        assert!(results.join(id).is_file(), "no {id} in {}:\n{out}", results.display());
    }

    // `cargo bench -- --test` after a real run keeps the run.
    let (code, out) =
        run("cargo bench -- --test", &mut user_cargo(&dir, &target, &["bench", "--bench", "kernels", "--", "--test"]));
    assert_eq!(code, Some(0), "{out}");
    assert!(results.join("saxpy_ptx_energy__simulated_.json").is_file(), "--test emptied the last run:\n{out}");

    // cargo test: two budgets met on the simulated GPU, the gpu_only one not run.
    let (code, out) = run("cargo test", &mut user_cargo(&dir, &target, &["test"]));
    assert_eq!(code, Some(0), "cargo test in the user's crate:\n{out}");
    assert!(out.contains("test result: ok. 3 passed"), "{out}");
    assert!(
        out.contains("not run: energy budget cudarc_saxpy_stays_under_40_mj: needs a GPU (declared gpu_only)"),
        "{out}"
    );

    // Strict mode: the raw cudarc benchmark not declared gpu_only cannot be checked: the run
    // fails, naming it and the fix (the gpu_only rounds are declared and stay "not run").
    let (code, out) = run(
        "ENERGY_STRICT=1 cargo bench",
        user_cargo(&dir, &target, &["bench", "--bench", "kernels"]).env("ENERGY_STRICT", "1"),
    );
    assert_ne!(code, Some(0), "strict mode passed a raw cudarc benchmark it could not check:\n{out}");
    assert!(out.contains("error: benchmark saxpy_cudarc ("), "{out}");
    assert!(out.contains("ENERGY_STRICT=1") && out.contains("declare it `gpu_only`"), "{out}");

    // A GPU runner's job: without a GPU it fails with the reason.
    let (code, out) =
        run("ENERGY_REQUIRE_GPU=1 cargo bench", user_cargo(&dir, &target, &["bench"]).env("ENERGY_REQUIRE_GPU", "1"));
    assert!(matches!(code, Some(c) if c != 0), "cargo bench under ENERGY_REQUIRE_GPU=1 must fail:\n{out}");
    assert!(out.contains("ENERGY_REQUIRE_GPU=1 requires a real NVIDIA GPU"), "{out}");

    // Without `harness = false`: libtest would run 0 tests and pass; the binary refuses.
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let libtest = manifest.replacen("name = \"kernels\"\nharness = false", "name = \"kernels\"", 1);
    assert_ne!(libtest, manifest);
    std::fs::write(dir.join("Cargo.toml"), &libtest).unwrap();
    let (code, out) = run("cargo bench (libtest)", &mut user_cargo(&dir, &target, &["bench", "--bench", "kernels"]));
    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("add `harness = false` to the target in Cargo.toml"), "{out}");
    assert!(out.contains("[[bench]]\nname = \"kernels\"\nharness = false"), "{out}");
    std::fs::write(dir.join("Cargo.toml"), &manifest).unwrap();

    // A bench file without energy_main!(), and #[energy_bench] in an integration test:
    // compile errors naming the fix (rustc alone says only "`main` function not found").
    let bench = std::fs::read_to_string(dir.join("benches/kernels.rs")).unwrap();
    std::fs::write(dir.join("benches/kernels.rs"), bench.replace("energy_main!();", "")).unwrap();
    let (code, out) = run(
        "cargo build (no energy_main)",
        &mut user_cargo(&dir, &target, &["bench", "--no-run", "--bench", "kernels"]),
    );
    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("but no `energy_main!()`") && out.contains("add `energy_harness::energy_main!();`"), "{out}");
    std::fs::write(dir.join("benches/kernels.rs"), bench).unwrap();
    std::fs::write(
        dir.join("tests/misplaced.rs"),
        "mod common { include!(\"../benches/common/mod.rs\"); }\nuse common::*;\nuse energy_harness::prelude::*;\n\
         #[energy_bench(setup = ptx_setup)]\nfn misplaced(s: &mut Saxpy, stream: &Stream) -> Result<()> { launch(s, stream) }\n",
    )
    .unwrap();
    let (code, out) =
        run("cargo test (misplaced)", &mut user_cargo(&dir, &target, &["test", "--no-run", "--test", "misplaced"]));
    assert_ne!(code, Some(0), "{out}");
    assert!(
        out.contains("an integration test: a benchmark there never runs") && out.contains("#[energy_test]"),
        "{out}"
    );
}
