//! Attribute macros of energy-harness. The crate only parses and emits: everything
//! generated calls `energy_harness::__private`, where the logic lives.
#![deny(missing_docs)]

mod bench;
mod bounds;
mod main_check;
mod options;
mod signature;
mod test;

use proc_macro::TokenStream;

/// Turns a function that launches a kernel once into an energy benchmark run by
/// `energy_harness::energy_main!()` under criterion (joules beside time).
///
/// Options, all optional: `name = "…"`; `setup = path` (`fn(&CudaGpu) -> Result<S>`, the
/// function then takes `&mut S` first); `baseline = path` (the same loop without the work
/// under test, for net energy); `ops = expr`, `bytes = expr` (per launch); `baseline_ops = expr`,
/// `baseline_bytes = expr` (the baseline's own counts: it never inherits the kernel's);
/// `device = expr` (a CUDA device ordinal, counted after `CUDA_VISIBLE_DEVICES`) or
/// `device = "GPU-…"` (a UUID as `cargo energy info` prints it; `all` is refused: `cargo
/// energy run --gpus all` runs one process per GPU);
/// `source = "…"`, a board source by its one name (`energy_units::sources`: "counter",
/// "samples", "average", "power", "instant"; a rail is refused, being recorded beside the
/// board's source whenever the GPU has it);
/// `precision = expr` (a fraction of the estimate, 0.0001 to 0.5, e.g. 0.01 for ±1 %: windows
/// are added until the 95 % interval is that narrow); `window_s = expr` (window length aimed
/// at, at most 60 s); `windows = expr` (exactly that many, 10 to 1000);
/// `sim(seconds = expr, watts = expr)` and `baseline_sim(…)`, the kernel's model on the
/// simulated GPU; `gpu_only` (a bare flag: the code cannot run on the checked device, e.g.
/// raw cudarc or a library with its own launches; it excludes `sim(…)`); `any_stream` (a
/// bare flag: the launch's GPU work may run on any stream of the GPU's CUDA context, as a
/// library's does, so each window ends with a context-wide synchronize and is timed on the
/// host clock); `wait = path` (with `setup`: `fn(&mut S) -> Result<()>`, the library's own
/// wait, called at the end of each window before that synchronize). Library work
/// (`any_stream`, `wait`) never runs without a GPU, so both exclude `sim(…)`. Without a GPU,
/// `setup` and the function still run on the checked device (PTX, kernel names, arguments
/// and launch limits checked); the figures come from `sim(…)`, and a benchmark without it
/// is "checked, not measured". Literal values are checked at compile time against the
/// bounds the harness checks at run time (`energy_units::bounds`).
///
/// Compiled examples are in the documentation of `energy_harness::energy_bench`, which
/// re-exports this macro (this crate cannot build code that uses the harness).
#[proc_macro_attribute]
pub fn energy_bench(args: TokenStream, item: TokenStream) -> TokenStream {
    let ident = syn::parse::<syn::ItemFn>(item.clone()).ok().map(|f| f.sig.ident);
    let mut tokens = bench::expand(args.into(), item.into());
    // Only a benchmark that expanded cleanly: a misuse keeps its own one error.
    if let (false, Some(ident)) = (tokens.to_string().contains("compile_error"), ident) {
        if let Some(problem) = main_check::bench_file_problem() {
            tokens.extend(quote::quote! { ::core::compile_error!(#problem); });
        }
        // Under the test harness (a bench target without `harness = false`, or a file in
        // tests/ with the default harness) the benchmark would never run, and libtest would
        // print "running 0 tests … ok". A #[test] function exists only there (cargo passes
        // `--cfg test` to `harness = false` targets too, so cfg(test) cannot tell them apart);
        // the constructor inside it stops the binary at start with the fix.
        let guard = quote::format_ident!("__energy_bench_needs_harness_false_{}", ident);
        tokens.extend(quote::quote! {
            #[test]
            #[doc(hidden)]
            #[allow(non_snake_case)]
            fn #guard() {
                ::energy_harness::__refuse_libtest!();
            }
        });
    }
    tokens.into()
}

/// Turns a function that launches a kernel once into a `#[test]` asserting an energy budget.
///
/// One budget: `max = "5 mJ"` (per launch), `max_per_op = "…"` (with `ops`), `max_per_byte
/// = "…"` (with `bytes`), `max_power = "300 W"`, or `relative_to = path, max_ratio = 1.10`
/// (at most 1.10 × the reference launch; `reference_sim(…)` models it). Units: J, mJ,
/// uJ/µJ, nJ, pJ; W, mW, kW. Also: `setup`, `ops`, `bytes`, `device`, `source`,
/// `precision`, `window_s`, `windows` (5 to 1000), `max_rounds` (re-measurements when the
/// interval straddles the budget), `inconclusive = "fail" | "pass"`, `sim(seconds = …,
/// watts = …)`, `gpu_only`, `any_stream`, `wait = path` (as for `#[energy_bench]`). A
/// failed budget panics at the test's line. The test passes when the upper end of the 95 %
/// interval is within the budget and fails when the lower end exceeds it. Without a GPU,
/// `setup` and the function run on the checked device (a wrong kernel name, argument list,
/// launch configuration or PTX fails the test), then the budget is checked on the simulated
/// H100 if `sim(…)` is given, else the test is "checked, not measured" (a line on stderr);
/// `ENERGY_REQUIRE_GPU=1` makes a missing GPU fail it.
///
/// Compiled examples are in the documentation of `energy_harness::energy_test`, which
/// re-exports this macro (this crate cannot build code that uses the harness).
#[proc_macro_attribute]
pub fn energy_test(args: TokenStream, item: TokenStream) -> TokenStream {
    test::expand(args.into(), item.into()).into()
}
