//! `#[energy_bench]`: parsing the options and the function, emitting the registration.
//! Everything emitted calls `energy_harness::__private`; the logic lives there.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, LitStr, Path, ReturnType};

const OPTIONS: &str =
    "name, setup, baseline, ops, bytes, device, source, precision, min_window_s, windows, sim(...), baseline_sim(...)";
const SOURCES: [(&str, &str); 5] = [
    ("counter", "Counter"),
    ("instant", "InstantField"),
    ("average", "AverageField"),
    ("power", "PowerUsage"),
    ("samples", "SampleBuffer"),
];

struct SimModel {
    seconds: Expr,
    watts: Expr,
}

#[derive(Default)]
struct Options {
    name: Option<LitStr>,
    setup: Option<Path>,
    baseline: Option<Path>,
    ops: Option<Expr>,
    bytes: Option<Expr>,
    device: Option<Expr>,
    source: Option<(String, Span)>,
    precision: Option<Expr>,
    min_window_s: Option<Expr>,
    windows: Option<Expr>,
    sim: Option<SimModel>,
    baseline_sim: Option<(SimModel, Span)>,
}

fn once<T>(slot: &mut Option<T>, meta: &ParseNestedMeta<'_>, value: T) -> syn::Result<()> {
    if slot.is_some() {
        let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        return Err(meta.error(format!("`{name}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

/// A literal number in an expression, if it is one.
fn literal_number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<f64>().ok(),
        _ => None,
    }
}

fn positive(expr: Expr, what: &str) -> syn::Result<Expr> {
    if let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &expr {
        return Err(syn::Error::new(
            s.span(),
            format!("{what} is a number (an expression), not a string: write it in SI units, e.g. 20e-6"),
        ));
    }
    if literal_number(&expr).is_some_and(|v| v <= 0.0) {
        return Err(syn::Error::new(expr.span(), format!("{what} must be positive")));
    }
    Ok(expr)
}

fn parse_sim(meta: &ParseNestedMeta<'_>) -> syn::Result<SimModel> {
    let mut seconds = None;
    let mut watts = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("seconds") {
            let e = positive(inner.value()?.parse()?, "`seconds` (simulated duration of one launch)")?;
            once(&mut seconds, &inner, e)
        } else if inner.path.is_ident("watts") {
            let e = positive(inner.value()?.parse()?, "`watts` (simulated board power while it runs)")?;
            once(&mut watts, &inner, e)
        } else {
            Err(inner.error("unknown simulation parameter: expected `seconds = …` and `watts = …`"))
        }
    })?;
    match (seconds, watts) {
        (Some(seconds), Some(watts)) => Ok(SimModel { seconds, watts }),
        _ => Err(meta.error("the simulated kernel needs both `seconds = …` and `watts = …`")),
    }
}

fn parse_options(args: TokenStream) -> syn::Result<Options> {
    let mut o = Options::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match key.as_str() {
            "name" => {
                let lit: LitStr = meta.value()?.parse()?;
                if lit.value().trim().is_empty() {
                    return Err(syn::Error::new(lit.span(), "the benchmark name must not be empty"));
                }
                once(&mut o.name, &meta, lit)
            }
            "setup" => {
                let path: Path = meta.value()?.parse()?;
                once(&mut o.setup, &meta, path)
            }
            "baseline" => {
                let path: Path = meta.value()?.parse()?;
                once(&mut o.baseline, &meta, path)
            }
            "ops" => {
                let e = positive(meta.value()?.parse()?, "`ops` (operations per launch)")?;
                once(&mut o.ops, &meta, e)
            }
            "bytes" => {
                let e = positive(meta.value()?.parse()?, "`bytes` (bytes per launch)")?;
                once(&mut o.bytes, &meta, e)
            }
            "device" => {
                let e: Expr = meta.value()?.parse()?;
                once(&mut o.device, &meta, e)
            }
            "source" => {
                let lit: LitStr = meta.value()?.parse()?;
                let value = lit.value();
                if !SOURCES.iter().any(|(n, _)| *n == value) {
                    return Err(syn::Error::new(
                        lit.span(),
                        format!("unknown source `{value}`: expected counter, instant, average, power or samples"),
                    ));
                }
                once(&mut o.source, &meta, (value, lit.span()))
            }
            "precision" => {
                let e: Expr = meta.value()?.parse()?;
                if literal_number(&e).is_some_and(|v| !(v > 0.0 && v < 1.0)) {
                    return Err(syn::Error::new(
                        e.span(),
                        "`precision` is relative (the half-width of the 95 % interval over the mean): between 0 and 1, e.g. 0.01",
                    ));
                }
                once(&mut o.precision, &meta, e)
            }
            "min_window_s" => {
                let e = positive(meta.value()?.parse()?, "`min_window_s` (shortest window, seconds)")?;
                once(&mut o.min_window_s, &meta, e)
            }
            "windows" => {
                let e: Expr = meta.value()?.parse()?;
                if literal_number(&e).is_some_and(|v| v < 10.0) {
                    return Err(syn::Error::new(
                        e.span(),
                        "`windows` must be at least 10 (criterion's minimum sample count)",
                    ));
                }
                once(&mut o.windows, &meta, e)
            }
            "sim" => {
                let model = parse_sim(&meta)?;
                once(&mut o.sim, &meta, model)
            }
            "baseline_sim" => {
                let span = meta.path.span();
                let model = parse_sim(&meta)?;
                once(&mut o.baseline_sim, &meta, (model, span))
            }
            _ => Err(meta.error(format!("unknown option `{key}`: expected one of {OPTIONS}"))),
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    if let (Some((_, span)), None) = (&o.baseline_sim, &o.baseline) {
        return Err(syn::Error::new(*span, "`baseline_sim` describes a baseline kernel: add `baseline = …` too"));
    }
    Ok(o)
}

fn check_signature(item: &ItemFn, has_setup: bool) -> syn::Result<()> {
    let sig = &item.sig;
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new(a.span(), "an #[energy_bench] function enqueues a kernel; it cannot be `async`"));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(sig.generics.span(), "an #[energy_bench] function cannot be generic"));
    }
    let expected = if has_setup { 2 } else { 1 };
    if sig.inputs.len() != expected {
        let shape = if has_setup {
            "fn(state: &mut S, stream: &CudaStream) -> energy_harness::Result<()> (S made by `setup`)"
        } else {
            "fn(stream: &CudaStream) -> energy_harness::Result<()>, or add `setup = …` to pass state"
        };
        return Err(syn::Error::new(
            sig.inputs.span().join(sig.ident.span()).unwrap_or(sig.ident.span()),
            format!("an #[energy_bench] function launches the kernel once: expected {shape}"),
        ));
    }
    if let Some(receiver) = sig.receiver() {
        return Err(syn::Error::new(receiver.span(), "an #[energy_bench] function cannot take `self`"));
    }
    if let ReturnType::Default = sig.output {
        return Err(syn::Error::new(
            sig.ident.span(),
            "an #[energy_bench] function returns energy_harness::Result<()> (a CUDA error aborts the benchmark)",
        ));
    }
    Ok(())
}

/// Expands `#[energy_bench(args)] item`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = syn::Error::new(Span::call_site(), "#[energy_bench] goes on a function that launches a kernel")
                .into_compile_error();
            return quote! { #err #item };
        }
    };
    match expand_fn(args, &item_fn) {
        Ok(tokens) => tokens,
        Err(err) => {
            let compile_error = err.into_compile_error();
            quote! { #item_fn #compile_error }
        }
    }
}

fn expand_fn(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let o = parse_options(args)?;
    check_signature(item, o.setup.is_some())?;
    let ident = &item.sig.ident;
    let name = o.name.as_ref().map_or_else(|| ident.to_string(), LitStr::value);
    let builder = format_ident!("__energy_bench_spec_{}", ident);
    let p = quote! { ::energy_harness::__private };
    let factory = |launch: &Path| match &o.setup {
        Some(setup) => quote_spanned! { launch.span() => #p::stateful_workload(#setup, #launch) },
        None => quote_spanned! { launch.span() => #p::stateless_workload(#launch) },
    };
    let main_path: Path = ident.clone().into();
    let main_factory = factory(&main_path);
    let mut steps = vec![quote! { let spec = spec.workload(#main_factory); }];
    if let Some(base) = &o.baseline {
        let base_factory = factory(base);
        let base_name = quote!(#base).to_string().replace(' ', "");
        steps.push(quote! { let spec = spec.baseline(#base_name, #base_factory); });
    }
    if let Some(SimModel { seconds, watts }) = &o.sim {
        steps.push(quote! { let spec = spec.sim((#seconds) as f64, (#watts) as f64); });
    }
    if let Some((SimModel { seconds, watts }, _)) = &o.baseline_sim {
        steps.push(quote! { let spec = spec.baseline_sim((#seconds) as f64, (#watts) as f64); });
    }
    if let Some(ops) = &o.ops {
        steps.push(quote_spanned! { ops.span() => let spec = spec.ops((#ops) as f64); });
    }
    if let Some(bytes) = &o.bytes {
        steps.push(quote_spanned! { bytes.span() => let spec = spec.bytes((#bytes) as f64); });
    }
    if let Some(device) = &o.device {
        steps.push(quote_spanned! { device.span() => let spec = spec.device((#device) as u32); });
    }
    if let Some((source, _)) = &o.source {
        let variant =
            format_ident!("{}", SOURCES.iter().find(|(n, _)| n == source).map(|(_, v)| *v).unwrap_or("Counter"));
        steps.push(quote! { let spec = spec.source(#p::SourceKind::#variant); });
    }
    if let Some(precision) = &o.precision {
        steps.push(quote_spanned! { precision.span() => let spec = spec.precision((#precision) as f64); });
    }
    if let Some(min_window) = &o.min_window_s {
        steps.push(quote_spanned! { min_window.span() => let spec = spec.min_window_s((#min_window) as f64); });
    }
    if let Some(windows) = &o.windows {
        steps.push(quote_spanned! { windows.span() => let spec = spec.windows((#windows) as usize); });
    }
    Ok(quote! {
        #item
        #[doc(hidden)]
        #[allow(non_snake_case)]
        fn #builder() -> #p::BenchSpec {
            let spec = #p::BenchSpec::new(#name, ::core::file!(), ::core::line!());
            #(#steps)*
            spec
        }
        #p::inventory::submit! {
            #p::BenchDef { build: #builder }
        }
    })
}
