//! Attribute macros of energy-harness. The crate only parses and emits: everything
//! generated calls `energy_harness::__private`, where the logic lives.
#![deny(missing_docs)]

mod bench;

use proc_macro::TokenStream;

/// Turns a function that launches a kernel once into an energy benchmark run by
/// `energy_harness::energy_main!()` under criterion (joules beside time).
///
/// ```ignore
/// #[energy_bench(setup = saxpy_setup, bytes = 12 * N, sim(seconds = 40e-6, watts = 350.0))]
/// fn saxpy(state: &mut Saxpy, stream: &CudaStream) -> energy_harness::Result<()> {
///     state.kernel.launch(stream, state.config, &state.args)
/// }
/// ```
///
/// Options: `name = "…"`; `setup = path` (`fn(&CudaGpu) -> Result<S>`, the function then
/// takes `&mut S` first); `baseline = path` (the same loop without the work under test,
/// for net energy); `ops = expr`, `bytes = expr` (per launch); `device = expr` (NVML
/// index); `source = "counter" | "samples" | "average" | "power" | "instant"`;
/// `precision = expr` (relative, e.g. 0.01); `min_window_s = expr`; `windows = expr`
/// (at least 10); `sim(seconds = expr, watts = expr)` and `baseline_sim(…)`, the kernel's
/// model on the simulated GPU (without one the benchmark is skipped where there is no GPU).
#[proc_macro_attribute]
pub fn energy_bench(args: TokenStream, item: TokenStream) -> TokenStream {
    bench::expand(args.into(), item.into()).into()
}
