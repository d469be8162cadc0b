//! Energy budgets as a GPU crate writes them: `#[energy_test]` on a launch function.
//! Without a GPU their code runs on the checked device and their figures come from the
//! simulated H100 (their `sim(…)` models); on a GPU they
//! measure the real kernel. `saxpy_under_20_mj_fails` is ignored: it demonstrates a
//! failing budget (`cargo test --test energy_budgets -- --ignored` on a GPU).

use energy_harness::{
    energy_test, CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Result, Stream,
};

const N: usize = 1 << 24;
const SAXPY_PTX: &str = include_str!("../ptx/examples/saxpy.ptx");

struct Saxpy {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    /// A second argument set working on half the vector: the "previous version" reference.
    half_args: KernelArgs,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = KernelArgs::new().u32(N as u32).f32(1e-3).buffer(&x).buffer(&y);
    let half_args = KernelArgs::new().u32((N / 2) as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Saxpy { kernel, config: LaunchConfig::linear(N.div_ceil(256) as u32, 256), args, half_args, _x: x, _y: y })
}

/// [`setup`] at `block` threads per block (the budget over block sizes below).
fn setup_block(gpu: &CudaGpu, block: &u32) -> Result<Saxpy> {
    let s = setup(gpu)?;
    Ok(Saxpy { config: LaunchConfig::linear(N.div_ceil(*block as usize) as u32, *block), ..s })
}

/// The reference of the relative budget below: the same launch over half the elements.
fn saxpy_half(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.half_args)
}

// ANCHOR: budget
/// An H100 measured 30.6 mJ per launch (research/results/2026-11-22-h100-benches).
#[energy_test(setup = setup, max = "40 mJ", sim(seconds = 76e-6, watts = 400.0))]
fn saxpy_stays_under_40_mj(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}
// ANCHOR_END: budget

/// Per byte: 12 bytes move per element; 152 pJ/B measured.
#[energy_test(setup = setup, bytes = 12 * N, max_per_byte = "200 pJ", sim(seconds = 76e-6, watts = 400.0))]
fn saxpy_stays_under_200_pj_per_byte(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// The full vector costs about twice the half one: within 2.2× of it.
#[energy_test(
    setup = setup,
    relative_to = saxpy_half,
    max_ratio = 2.2,
    sim(seconds = 76e-6, watts = 400.0),
    reference_sim(seconds = 38e-6, watts = 400.0)
)]
fn saxpy_costs_at_most_2_2_times_half_a_saxpy(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

#[ignore = "demonstrates a failing budget; run with --ignored"]
#[energy_test(setup = setup, max = "20 mJ", sim(seconds = 76e-6, watts = 400.0))]
fn saxpy_under_20_mj_fails(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// No simulated model: measured on a GPU; without one, checked, not measured (one line
/// on stderr).
#[energy_test(setup = setup, max = "40 mJ")]
fn saxpy_gpu_only_budget(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// A relative budget whose reference has no simulated model: checked, not measured,
/// without a GPU, and the line names the reference, not the kernel.
#[energy_test(setup = setup, relative_to = saxpy_half, max_ratio = 2.2, sim(seconds = 76e-6, watts = 400.0))]
fn saxpy_relative_without_reference_model(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

/// A budget on a GPU named by UUID, one no machine has: without a GPU the UUID cannot be
/// looked up and the budget runs on the simulated GPU like any other; on a GPU machine it
/// fails, naming the UUID. Run by `a_gpu_named_by_uuid_is_looked_up_where_there_are_gpus`.
#[energy_test(setup = setup, max = "40 mJ", device = "GPU-00000000-0000-0000-0000-000000000000", sim(seconds = 76e-6, watts = 400.0))]
#[ignore = "run by a_gpu_named_by_uuid_is_looked_up_where_there_are_gpus, which knows what to expect"]
fn saxpy_on_a_named_gpu(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    s.kernel.launch(stream, s.config, &s.args)
}

#[test]
fn a_gpu_named_by_uuid_is_looked_up_where_there_are_gpus() {
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "saxpy_on_a_named_gpu", "--include-ignored", "--test-threads", "1"])
        .env("ENERGY_REQUIRE_GPU", "0")
        .output()
        .unwrap();
    let out = format!("{}{}", String::from_utf8_lossy(&child.stdout), String::from_utf8_lossy(&child.stderr));
    if energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0) {
        assert!(!child.status.success(), "a UUID no GPU has must fail: {out}");
        assert!(out.contains("no CUDA device has the UUID GPU-00000000"), "{out}");
    } else {
        assert!(child.status.success(), "without a GPU the named GPU falls back to the simulated one: {out}");
        assert!(out.contains("1 passed"), "{out}");
    }
}

fn has_gpu() -> bool {
    energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0) || std::env::var_os("ENERGY_DEVICE").is_some()
}

/// Runs one test of this binary in a child process with `env` set, output captured by the
/// test harness as in a plain `cargo test`.
fn run_child(test: &str, env: (&str, &str)) -> std::process::Output {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads", "1"])
        .env(env.0, env.1)
        .output()
        .unwrap()
}

#[test]
fn without_a_gpu_a_budget_without_a_model_is_checked_not_measured_unless_a_gpu_is_required() {
    if has_gpu() {
        eprintln!("skipped: this machine has a GPU (or ENERGY_DEVICE is set)");
        return;
    }
    // The skip line shows without --nocapture, with what is missing.
    let skipped = run_child("saxpy_gpu_only_budget", ("ENERGY_REQUIRE_GPU", "0"));
    let err = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{err}");
    assert!(err.contains("checked, not measured: energy budget saxpy_gpu_only_budget: no NVIDIA GPU"), "{err}");
    assert!(err.contains("setup and 3 launches ran on the checked"), "{err}");
    assert!(err.contains("declares no simulated kernel"), "{err}");
    let required = run_child("saxpy_gpu_only_budget", ("ENERGY_REQUIRE_GPU", "1"));
    let out = format!("{}{}", String::from_utf8_lossy(&required.stdout), String::from_utf8_lossy(&required.stderr));
    assert!(!required.status.success(), "ENERGY_REQUIRE_GPU=1 must fail without a GPU");
    assert!(out.contains("ENERGY_REQUIRE_GPU=1 requires a real NVIDIA GPU"), "{out}");
}

#[test]
fn an_unmeasured_relative_budget_names_the_missing_reference_model() {
    if has_gpu() {
        eprintln!("skipped: this machine has a GPU (or ENERGY_DEVICE is set)");
        return;
    }
    let skipped = run_child("saxpy_relative_without_reference_model", ("ENERGY_REQUIRE_GPU", "0"));
    let err = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{err}");
    assert!(err.contains("its reference kernel saxpy_half has no simulated model (reference_sim("), "{err}");
}

#[test]
fn gpu_required_fails_even_a_budget_that_could_run_simulated() {
    if has_gpu() {
        eprintln!("skipped: this machine has a GPU (or ENERGY_DEVICE is set)");
        return;
    }
    let required = run_child("saxpy_stays_under_40_mj", ("ENERGY_REQUIRE_GPU", "1"));
    let out = format!("{}{}", String::from_utf8_lossy(&required.stdout), String::from_utf8_lossy(&required.stderr));
    assert!(!required.status.success(), "a simulated pass must not count as a GPU pass: {out}");
    assert!(out.contains("ENERGY_REQUIRE_GPU=1 requires a real NVIDIA GPU"), "{out}");
}

/// Every block size under 45 mJ: one budget per argument (`saxpy_blocks_stay_under_45_mj/128`
/// …), all checked, the failures named together. Simulated: small blocks modelled slower
/// (1 + 32/block), a model, not a measurement.
#[energy_test(
    args = [128, 256, 512],
    setup = setup_block,
    max = "45 mJ",
    sim(seconds = 76e-6 * (1.0 + 32.0 / block as f64), watts = 400.0)
)]
fn saxpy_blocks_stay_under_45_mj(s: &mut Saxpy, stream: &Stream, _block: &u32) -> Result<()> {
    // The parameter, unused here, is `_block`; `sim(…)` above names it `block`.
    s.kernel.launch(stream, s.config, &s.args)
}
