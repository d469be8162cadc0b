//! Five mistakes a GPU crate makes in its kernel code, and one correct launch, shared by
//! `tests/kernel_mistakes_benches.rs` (`#[energy_bench]`, as `cargo bench` runs them) and
//! `tests/kernel_mistakes_budgets.rs` (`#[energy_test]`, as `cargo test` runs them). Each
//! mistake must be a clear error naming the benchmark or test, the kernel and the fix, with
//! and without a GPU (issue 13).

use energy_harness::{CudaGpu, DeviceBuffer, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Result, Stream};

const N: usize = 1 << 16;
const SAXPY_PTX: &str = include_str!("../../ptx/examples/saxpy.ptx");

/// One kernel and what a launch needs.
pub struct Saxpy {
    kernel: Kernel,
    args: KernelArgs,
    threads_per_block: u32,
    _x: DeviceBuffer<f32>,
    _y: DeviceBuffer<f32>,
}

type Arguments = fn(&DeviceBuffer<f32>, &DeviceBuffer<f32>) -> KernelArgs;

fn all_four(x: &DeviceBuffer<f32>, y: &DeviceBuffer<f32>) -> KernelArgs {
    KernelArgs::new().u32(N as u32).f32(2.0).buffer(x).buffer(y)
}

fn build(gpu: &CudaGpu, ptx: &str, file: &str, entry: &str, args: Arguments, threads: u32) -> Result<Saxpy> {
    let kernel = gpu.load_ptx(ptx, file, JitOptLevel::O4)?.kernel(entry)?;
    let x = gpu.upload(&vec![1.0f32; N])?;
    let y = gpu.upload(&vec![2.0f32; N])?;
    let args = args(&x, &y);
    Ok(Saxpy { kernel, args, threads_per_block: threads, _x: x, _y: y })
}

/// The correct setup.
pub fn setup_correct(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu, SAXPY_PTX, "saxpy.ptx", "saxpy", all_four, 256)
}

/// `.kernel("saxpi")`.
pub fn setup_misspelled_kernel(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu, SAXPY_PTX, "saxpy.ptx", "saxpi", all_four, 256)
}

/// `y` forgotten.
pub fn setup_one_argument_too_few(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu, SAXPY_PTX, "saxpy.ptx", "saxpy", |x, _y| KernelArgs::new().u32(N as u32).f32(2.0).buffer(x), 256)
}

/// A `u32` where the PTX has `.u64 x`.
pub fn setup_u32_for_u64(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu, SAXPY_PTX, "saxpy.ptx", "saxpy", |_x, y| KernelArgs::new().u32(N as u32).f32(2.0).u32(7).buffer(y), 256)
}

/// Blocks of 2048 threads (the limit is 1024).
pub fn setup_2048_threads(gpu: &CudaGpu) -> Result<Saxpy> {
    build(gpu, SAXPY_PTX, "saxpy.ptx", "saxpy", all_four, 2048)
}

/// A typo in the PTX body: `fma.rn.f33`.
pub fn setup_ptx_syntax_error(gpu: &CudaGpu) -> Result<Saxpy> {
    let broken = SAXPY_PTX.replace("fma.rn.f32", "fma.rn.f33");
    build(gpu, &broken, "broken_saxpy.ptx", "saxpy", all_four, 256)
}

/// One launch.
pub fn launch(s: &mut Saxpy, stream: &Stream) -> Result<()> {
    let blocks = N.div_ceil(s.threads_per_block as usize) as u32;
    s.kernel.launch(stream, LaunchConfig::linear(blocks, s.threads_per_block), &s.args)
}

/// Each mistake: the benchmark/test name, what its error must say (kernel and fix), and
/// whether it needs ptxas to be caught without a GPU.
pub const MISTAKES: &[(&str, &[&str], bool)] = &[
    ("misspelled_kernel", &["has no kernel `saxpi`", "did you mean `saxpy`?"], false),
    (
        "one_argument_too_few",
        &["kernel `saxpy` (PTX saxpy.ptx) takes 4 parameter(s)", "one of x: .u64, y: .u64 is missing"],
        false,
    ),
    (
        "u32_for_u64",
        &["kernel `saxpy` (PTX saxpy.ptx): argument 3 is a u32 (7) but parameter 3 `x` is .u64", ".buffer(&buffer)"],
        false,
    ),
    ("threads_2048", &["kernel `saxpy`", "2048 threads per block", "use more blocks of fewer threads"], false),
    ("ptx_syntax_error", &["could not compile PTX `broken_saxpy.ptx` at O4", "JIT log", ".f33"], true),
];

/// Whether a mistake can be checked here: with a GPU always; without one, the PTX syntax
/// error needs ptxas.
pub fn checkable(needs_ptxas: bool) -> bool {
    let gpu = energy_harness::unstable::device::gpu_count().is_ok_and(|n| n > 0);
    gpu || !needs_ptxas || energy_harness::unstable::cuda::find_ptxas().is_some()
}
