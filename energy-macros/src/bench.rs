//! `#[energy_bench]`: registers a launch function as a benchmark. Everything emitted
//! calls `energy_harness::__private`; the logic lives there.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, LitStr, Path};

use crate::options::{measure_options_literal, parse_options, Attribute, Options, SimModel};
use crate::signature::{arg_parameter, check_signature};

/// The variable that holds one argument of `args` in the expansion.
pub const ARG: &str = "__energy_arg";
/// The variable that holds its label (as its id shows it).
pub const ARG_LABEL: &str = "__energy_arg_label";

/// The bindings at the top of an `args` loop's body, and the parameter's name as tables show
/// it: the argument's value under the launch function's parameter name and, for `_block`
/// (unused in the body), under `block` too (the options may name it either way), then its
/// label.
pub fn arg_bindings(item: &ItemFn) -> syn::Result<(TokenStream, String)> {
    let param = arg_parameter(item)?;
    let (arg, label) = (format_ident!("{}", ARG), format_ident!("{}", ARG_LABEL));
    let mut bindings = quote! {
        #[allow(unused_variables)]
        let #param = ::core::clone::Clone::clone(&#arg);
    };
    let mut shown = param.to_string();
    // `_block` is also `block`; `_0` has no such name (`0` is not an identifier).
    if let Ok(alias) = syn::parse_str::<Ident>(shown.trim_start_matches('_')) {
        if alias != param {
            bindings.extend(quote! {
                #[allow(unused_variables)]
                let #alias = ::core::clone::Clone::clone(&#arg);
            });
            shown = alias.to_string();
        }
    }
    bindings.extend(quote! { let #label = ::energy_harness::__private::arg_label(&#arg); });
    Ok((bindings, shown))
}

/// The kernel code of a launch path: with `setup` state or without, and for library work
/// (`any_stream`, `wait = …`) waited for context-wide; with `args`, the functions also get
/// the argument (a clone of it, owned by the code).
pub fn factory(o: &Options, launch: &Path) -> TokenStream {
    let p = quote! { ::energy_harness::__private };
    // With `args`, the `_arg` twin of each constructor, given a clone of the argument last.
    let (suffix, arg) = match o.args {
        Some(_) => {
            let arg = format_ident!("{}", ARG);
            ("_arg", quote! { , ::core::clone::Clone::clone(&#arg) })
        }
        None => ("", TokenStream::new()),
    };
    let constructor = |base: &str| format_ident!("{base}{suffix}");
    let code = match (&o.setup, &o.wait) {
        (Some(setup), Some(wait)) => {
            let f = constructor("code_with_wait");
            quote_spanned! { launch.span() => #p::#f(#setup, #launch, #wait #arg) }
        }
        (Some(setup), None) => {
            let f = constructor("code_with_setup");
            quote_spanned! { launch.span() => #p::#f(#setup, #launch #arg) }
        }
        (None, _) => {
            let f = constructor("code_launch");
            quote_spanned! { launch.span() => #p::#f(#launch #arg) }
        }
    };
    let code = match o.any_stream {
        Some(flag) => quote_spanned! { flag => #code.any_stream() },
        None => code,
    };
    match &o.graph {
        Some(launches) => quote_spanned! { launches.span() => #code.graph(#p::graph_launches(#launches)) },
        None => code,
    }
}

/// Parses an item that must be a function, or returns the item with an error.
pub fn parse_fn(item: TokenStream, attribute: &str) -> Result<ItemFn, TokenStream> {
    syn::parse2(item.clone()).map_err(|_| {
        let err = syn::Error::new(Span::call_site(), format!("{attribute} goes on a function that launches a kernel"))
            .into_compile_error();
        quote! { #err #item }
    })
}

/// Expands `attribute(args) item` with `expand_fn`: the item must be a function; an error
/// is emitted beside the function, which is kept (so the error is the only one reported).
pub fn expand_attribute(
    args: TokenStream,
    item: TokenStream,
    attribute: &str,
    expand_fn: fn(TokenStream, &ItemFn) -> syn::Result<TokenStream>,
) -> TokenStream {
    let item_fn = match parse_fn(item, attribute) {
        Ok(f) => f,
        Err(tokens) => return tokens,
    };
    match expand_fn(args, &item_fn) {
        Ok(tokens) => tokens,
        Err(err) => {
            let compile_error = err.into_compile_error();
            quote! { #item_fn #compile_error }
        }
    }
}

/// Expands `#[energy_bench(args)] item`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_attribute(args, item, "#[energy_bench]", expand_fn)
}

fn expand_fn(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let o = parse_options(args, Attribute::Bench)?;
    check_signature(item, o.setup.is_some(), o.args.is_some(), Attribute::Bench)?;
    let ident = &item.sig.ident;
    let name = o.name.as_ref().map_or_else(|| ident.to_string(), LitStr::value);
    let builder = format_ident!("__energy_bench_spec_{}", ident);
    let p = quote! { ::energy_harness::__private };
    let factory = |launch: &Path| factory(&o, launch);
    let main_path: Path = ident.clone().into();
    let main_factory = factory(&main_path);
    let mut steps = vec![quote! { let spec = spec.code(#main_factory); }];
    if let Some(base) = &o.baseline {
        let base_factory = factory(base);
        let base_name = quote!(#base).to_string().replace(' ', "");
        steps.push(quote! { let spec = spec.baseline(#base_name, #base_factory); });
    }
    if let Some(SimModel { seconds, watts, .. }) = &o.sim {
        steps.push(quote! { let spec = spec.sim((#seconds) as f64, (#watts) as f64); });
    }
    if let Some(SimModel { seconds, watts, .. }) = &o.baseline_sim {
        steps.push(quote! { let spec = spec.baseline_sim((#seconds) as f64, (#watts) as f64); });
    }
    let options = measure_options_literal(&o);
    steps.push(quote! { let spec = spec.options(#options); });
    if let Some(flag) = o.gpu_only {
        steps.push(quote_spanned! { flag => let spec = spec.gpu_only(); });
    }
    if let Some(group) = &o.group {
        steps.push(quote! { let spec = spec.queue_group(#group); });
    }
    let Some(args) = &o.args else {
        return Ok(quote! {
            #item
            #[doc(hidden)]
            #[allow(non_snake_case)]
            fn #builder() -> ::std::vec::Vec<#p::BenchSpec> {
                let spec = #p::BenchSpec::new(#name, ::core::file!(), ::core::line!());
                #(#steps)*
                ::std::vec![spec]
            }
            #p::inventory::submit! {
                #p::BenchDef { build: #builder }
            }
        });
    };
    // One benchmark per argument, `name/arg` (or `name` with `{}` replaced).
    let (bindings, param_name) = arg_bindings(item)?;
    let (arg, label) = (format_ident!("{}", ARG), format_ident!("{}", ARG_LABEL));
    Ok(quote! {
        #item
        #[doc(hidden)]
        #[allow(non_snake_case)]
        fn #builder() -> ::std::vec::Vec<#p::BenchSpec> {
            let mut specs = ::std::vec::Vec::new();
            for #arg in ::core::iter::IntoIterator::into_iter(#args) {
                #bindings
                let spec = #p::BenchSpec::new(&#p::arg_id(#name, &#label), ::core::file!(), ::core::line!());
                #(#steps)*
                let spec = spec.sweep_point(#name, #param_name, &#label);
                specs.push(spec);
            }
            specs
        }
        #p::inventory::submit! {
            #p::BenchDef { build: #builder }
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::options::{parse_options, Attribute};
    use quote::quote;

    /// The expansion of `#[energy_bench(args)] fn kernel(stream: &Stream) -> Result<()>`,
    /// as text (a failing case's text holds `compile_error`).
    fn expand_text(args: proc_macro2::TokenStream) -> String {
        let item = quote! { fn kernel(stream: &Stream) -> Result<()> { Ok(()) } };
        super::expand(args, item).to_string()
    }

    #[test]
    fn a_group_queues_the_spec_with_its_group() {
        let text = expand_text(quote! { group = "heldout_reduce", ops = 1024 });
        assert!(text.contains("let spec = spec . queue_group (\"heldout_reduce\") ;"), "{text}");
        assert!(!expand_text(quote! { ops = 1024 }).contains("queue_group"));
        for (args, needle) in [
            (quote! { group = 3 }, "`group` takes a string"),
            (quote! { group = "" }, "`group` needs a name"),
            (quote! { group = "a", group = "b" }, "group"),
        ] {
            let err = parse_options(args, Attribute::Bench).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        let err = parse_options(quote! { group = "a", max = "1 J" }, Attribute::Test).map(|_| ()).unwrap_err();
        assert!(err.to_string().contains("`group` is an option of #[energy_bench]"), "{err}");
    }

    #[test]
    fn graph_captures_the_code_and_refuses_library_work_and_bad_sizes() {
        let text = expand_text(quote! { graph = 100, ops = 1024 });
        assert!(!text.contains("compile_error"), "{text}");
        assert!(text.contains(". graph (:: energy_harness :: __private :: graph_launches (100))"), "{text}");
        assert!(!expand_text(quote! { ops = 1024 }).contains(". graph"));
        for (args, needle) in [
            (quote! { graph = 0 }, "a whole number from 1 to 10000"),
            (quote! { graph = 10001 }, "a whole number from 1 to 10000"),
            (quote! { graph = 2.5 }, "a whole number"),
            (quote! { graph = "100" }, "not a string"),
            (quote! { graph }, "`graph` takes the launches"),
            (quote! { graph = 10, graph = 20 }, "`graph` is given twice"),
            (quote! { graph = 10, any_stream }, "library work"),
            (quote! { graph = 10, setup = s, wait = w }, "library work"),
            // `graph` is the first thing wrong with library work, before its `sim` model.
            (quote! { graph = 10, any_stream, sim(seconds = 1e-6, watts = 300.0) }, "which no capture holds"),
        ] {
            let err = parse_options(args.clone(), Attribute::Bench).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(needle), "{args}: {err}");
        }
        let budget = parse_options(quote! { graph = 100, max = "1 mJ" }, Attribute::Test);
        assert!(budget.is_ok(), "a budget takes `graph` too");
    }

    #[test]
    fn gpu_only_declares_the_spec_gpu_only() {
        let text = expand_text(quote! { gpu_only, ops = 1024 });
        assert!(!text.contains("compile_error"), "{text}");
        assert!(text.contains("let spec = spec . gpu_only () ;"), "{text}");
        assert!(!expand_text(quote! { ops = 1024 }).contains("gpu_only"));
    }

    #[test]
    fn the_gpu_by_uuid_and_the_baseline_counts_are_options() {
        let text = expand_text(quote! { device = "GPU-c744a1b2", baseline = base, ops = 1024, baseline_ops = 10 });
        assert!(!text.contains("compile_error"), "{text}");
        let literal = text.split("MeasureOptions {").nth(1).expect("one MeasureOptions literal");
        for field in [
            "ops : :: core :: option :: Option :: Some ((1024) as f64)",
            "baseline_ops : :: core :: option :: Option :: Some ((10) as f64)",
            "device_uuid : :: core :: option :: Option :: Some (:: std :: string :: String :: from (\"GPU-c744a1b2\"))",
        ] {
            assert!(literal.contains(field), "{field} in {literal}");
        }
        assert!(!text.contains("spec . device_uuid") && !text.contains("spec . baseline_ops"), "{text}");
    }
}
