//! Options and function shape shared by `#[energy_bench]` and `#[energy_test]`, parsed
//! with `syn::meta` so unknown, repeated or malformed options get precise spans.
#![allow(missing_docs)]

use energy_units::bounds::{BENCH_WINDOWS_MIN, BUDGET_WINDOWS_MIN};
use energy_units::sources::{self, Role, SourceName};
use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Path, Token};

use crate::bounds::{
    budget_value, device_uuid, max_ratio_value, max_rounds_value, name_problem, positive, precision_value,
    window_s_value, windows_value, DEVICE_ALL,
};

/// Which attribute is being parsed: some options belong to one of them only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Attribute {
    /// `#[energy_bench]`.
    Bench,
    /// `#[energy_test]`.
    Test,
}

impl Attribute {
    pub fn name(self) -> &'static str {
        match self {
            Attribute::Bench => "#[energy_bench]",
            Attribute::Test => "#[energy_test]",
        }
    }

    /// The fewest windows the attribute may ask for, and why.
    fn windows_floor(self) -> (usize, &'static str) {
        match self {
            Attribute::Bench => (BENCH_WINDOWS_MIN, "criterion's minimum sample count"),
            Attribute::Test => {
                (BUDGET_WINDOWS_MIN, "a budget decides on an interval, and fewer windows give one too wide")
            }
        }
    }

    fn options(self) -> &'static str {
        match self {
            Attribute::Bench => {
                "name, args, setup, baseline, ops, bytes, baseline_ops, baseline_bytes, device, source, precision, window_s, windows, group, gpu_only, any_stream, wait, graph, sim(...), baseline_sim(...)"
            }
            Attribute::Test => {
                "max, max_per_op, max_per_byte, max_power, relative_to, max_ratio, args, setup, ops, bytes, device, source, precision, window_s, windows, max_rounds, inconclusive, gpu_only, any_stream, wait, graph, sim(...), reference_sim(...)"
            }
        }
    }
}

const BENCH_ONLY: [&str; 6] = ["name", "baseline", "baseline_sim", "baseline_ops", "baseline_bytes", "group"];
const TEST_ONLY: [&str; 9] = [
    "max",
    "max_per_op",
    "max_per_byte",
    "max_power",
    "relative_to",
    "max_ratio",
    "reference_sim",
    "max_rounds",
    "inconclusive",
];
/// A kernel's model on the simulated GPU.
pub struct SimModel {
    /// Seconds per launch.
    pub seconds: Expr,
    /// Board power, W.
    pub watts: Expr,
    /// Where it was given: the option's name (`sim`, `baseline_sim`, `reference_sim`).
    pub span: Span,
}

/// A budget limit, parsed and checked at compile time.
pub enum LimitOption {
    /// Joules per launch.
    PerLaunch(f64),
    /// Joules per op.
    PerOp(f64),
    /// Joules per byte.
    PerByte(f64),
    /// Watts.
    Power(f64),
}

/// The options of either attribute.
#[derive(Default)]
pub struct Options {
    pub name: Option<LitStr>,
    pub setup: Option<Path>,
    pub baseline: Option<Path>,
    pub ops: Option<Expr>,
    pub bytes: Option<Expr>,
    pub baseline_ops: Option<(Expr, Span)>,
    pub baseline_bytes: Option<(Expr, Span)>,
    pub device: Option<Expr>,
    /// `device = "GPU-…"`: the GPU by its UUID.
    pub device_uuid: Option<LitStr>,
    pub source: Option<(String, Span)>,
    pub precision: Option<Expr>,
    pub window_s: Option<Expr>,
    pub windows: Option<Expr>,
    pub sim: Option<SimModel>,
    pub baseline_sim: Option<SimModel>,
    pub limit: Option<(LimitOption, Span)>,
    pub relative_to: Option<Path>,
    pub max_ratio: Option<(f64, Span)>,
    pub reference_sim: Option<SimModel>,
    pub max_rounds: Option<Expr>,
    pub inconclusive_passes: Option<bool>,
    /// `gpu_only`: the code cannot run on the checked device (raw cudarc, a library with
    /// its own launches); where the flag was given.
    pub gpu_only: Option<Span>,
    /// `group = "…"`: with a node's queue (`cargo energy run --gpus`), the benchmarks of one
    /// group are claimed together, so they run on one GPU (figures compared with each other).
    pub group: Option<LitStr>,
    /// `any_stream`: the launch's GPU work may run on any stream of the GPU's CUDA context
    /// (a library's own): batches end with a context-wide synchronize; where it was given.
    pub any_stream: Option<Span>,
    /// `wait = f`: the library's wait, `fn(&mut S) -> Result<()>` on `setup`'s state.
    pub wait: Option<Path>,
    /// `graph = N`: the launch captured N times into a CUDA graph, replayed per batch.
    pub graph: Option<Expr>,
    /// `args = expr`: the arguments (any `IntoIterator` of `Clone + Display` values), each its
    /// own benchmark or budget (`name/arg`); the functions take the argument last, `&T`.
    pub args: Option<Expr>,
}

impl Options {
    /// Whether the code's GPU work is a library's, waited for context-wide (`any_stream`
    /// or `wait`): where it was declared.
    pub fn library_work(&self) -> Option<Span> {
        self.any_stream.or_else(|| self.wait.as_ref().map(|w| w.span()))
    }
}

fn once<T>(slot: &mut Option<T>, meta: &ParseNestedMeta<'_>, value: T) -> syn::Result<()> {
    if slot.is_some() {
        let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        return Err(meta.error(format!("`{name}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

/// The values inside `name(…)`, if it is a parenthesized list of expressions.
fn parenthesized_values(input: ParseStream<'_>) -> syn::Result<Vec<Expr>> {
    let content;
    syn::parenthesized!(content in input);
    Ok(Punctuated::<Expr, Token![,]>::parse_terminated(&content)?.into_iter().collect())
}

/// Parses `sim(seconds = …, watts = …)` (or `baseline_sim`, `reference_sim`: `option`).
fn parse_sim(meta: &ParseNestedMeta<'_>, option: &str) -> syn::Result<SimModel> {
    // `sim(22e-6, 350.0)`: syn would say "expected identifier"; say which name goes where.
    if let Ok(values) = parenthesized_values(&meta.input.fork()) {
        if let Some(positional) = values.iter().find(|v| !matches!(v, Expr::Assign(_))) {
            // The values by position (seconds, then watts), as written; an example for a missing one.
            let written = |i: usize, default: &str| match values.get(i) {
                Some(Expr::Assign(a)) => quote::ToTokens::to_token_stream(&a.right).to_string(),
                Some(v) => quote::ToTokens::to_token_stream(v).to_string(),
                None => default.to_string(),
            };
            return Err(syn::Error::new_spanned(
                positional,
                format!(
                    "`{option}` takes named values: {option}(seconds = {}, watts = {})",
                    written(0, "20e-6"),
                    written(1, "350.0")
                ),
            ));
        }
    }
    let mut seconds = None;
    let mut watts = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("seconds") {
            let e =
                positive(inner.value()?.parse()?, "`seconds` (simulated duration of one launch)", "seconds = 20e-6")?;
            once(&mut seconds, &inner, e)
        } else if inner.path.is_ident("watts") {
            let e =
                positive(inner.value()?.parse()?, "`watts` (simulated board power while it runs)", "watts = 350.0")?;
            once(&mut watts, &inner, e)
        } else {
            Err(inner.error("unknown simulation parameter: expected `seconds = …` and `watts = …`"))
        }
    })?;
    match (seconds, watts) {
        (Some(seconds), Some(watts)) => Ok(SimModel { seconds, watts, span: meta.path.span() }),
        _ => Err(meta.error("the simulated kernel needs both `seconds = …` and `watts = …`")),
    }
}

/// The one `MeasureOptions` literal both attributes emit: the options given, the
/// engine's defaults for the rest (decided and checked in `MeasureOptions::resolve`).
pub fn measure_options_literal(o: &Options) -> TokenStream {
    let p = quote::quote! { ::energy_harness::__private };
    let mut fields = Vec::new();
    let number = |name: &str, e: &Expr, ty: TokenStream| {
        let field = syn::Ident::new(name, e.span());
        quote::quote_spanned! { e.span() => #field: ::core::option::Option::Some((#e) as #ty) }
    };
    if let Some(e) = &o.ops {
        fields.push(number("ops", e, quote::quote!(f64)));
    }
    if let Some(e) = &o.bytes {
        fields.push(number("bytes", e, quote::quote!(f64)));
    }
    if let Some((e, _)) = &o.baseline_ops {
        fields.push(number("baseline_ops", e, quote::quote!(f64)));
    }
    if let Some((e, _)) = &o.baseline_bytes {
        fields.push(number("baseline_bytes", e, quote::quote!(f64)));
    }
    if let Some(e) = &o.device {
        fields.push(number("device", e, quote::quote!(u32)));
    }
    if let Some(uuid) = &o.device_uuid {
        fields.push(quote::quote_spanned! { uuid.span() =>
            device_uuid: ::core::option::Option::Some(::std::string::String::from(#uuid))
        });
    }
    if let Some((source, _)) = &o.source {
        // The kind of the name, found at compile time in the harness's table (the name was
        // checked against the shared list, which a harness test holds to the table).
        fields.push(quote::quote! {
            source: ::core::option::Option::Some(const {
                match #p::SourceKind::from_name(#source) {
                    ::core::option::Option::Some(kind) => kind,
                    ::core::option::Option::None => ::core::panic!("a source name the harness does not know"),
                }
            })
        });
    }
    if let Some(e) = &o.precision {
        fields.push(number("precision", e, quote::quote!(f64)));
    }
    if let Some(e) = &o.window_s {
        fields.push(number("window_s", e, quote::quote!(f64)));
    }
    if let Some(e) = &o.windows {
        fields.push(number("windows", e, quote::quote!(usize)));
    }
    quote::quote! { #p::MeasureOptions { #(#fields,)* ..#p::MeasureOptions::DEFAULT } }
}

/// Parses the options of `attribute`.
pub fn parse_options(args: TokenStream, attribute: Attribute) -> syn::Result<Options> {
    let mut o = Options::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if attribute == Attribute::Test && BENCH_ONLY.contains(&key.as_str()) {
            return Err(meta.error(format!("`{key}` is an option of #[energy_bench], not of #[energy_test]")));
        }
        if attribute == Attribute::Bench && TEST_ONLY.contains(&key.as_str()) {
            return Err(meta.error(format!("`{key}` is an option of #[energy_test], not of #[energy_bench]")));
        }
        let mut set_limit = |limit: LimitOption, meta: &ParseNestedMeta<'_>| {
            if o.limit.is_some() {
                return Err(meta.error("give one budget: max, max_per_op, max_per_byte or max_power (or relative_to)"));
            }
            o.limit = Some((limit, meta.path.span()));
            Ok(())
        };
        match key.as_str() {
            "max" => {
                let e: Expr = meta.value()?.parse()?;
                set_limit(LimitOption::PerLaunch(budget_value(&key, &e)?), &meta)
            }
            "max_per_op" => {
                let e: Expr = meta.value()?.parse()?;
                set_limit(LimitOption::PerOp(budget_value(&key, &e)?), &meta)
            }
            "max_per_byte" => {
                let e: Expr = meta.value()?.parse()?;
                set_limit(LimitOption::PerByte(budget_value(&key, &e)?), &meta)
            }
            "max_power" => {
                let e: Expr = meta.value()?.parse()?;
                set_limit(LimitOption::Power(budget_value(&key, &e)?), &meta)
            }
            "relative_to" => {
                let path: Path = meta.value()?.parse()?;
                once(&mut o.relative_to, &meta, path)
            }
            "max_ratio" => {
                let e: Expr = meta.value()?.parse()?;
                once(&mut o.max_ratio, &meta, (max_ratio_value(&e)?, e.span()))
            }
            "reference_sim" => {
                let model = parse_sim(&meta, "reference_sim")?;
                once(&mut o.reference_sim, &meta, model)
            }
            "max_rounds" => {
                let e = max_rounds_value(meta.value()?.parse()?)?;
                once(&mut o.max_rounds, &meta, e)
            }
            "inconclusive" => {
                let lit: LitStr = meta.value()?.parse()?;
                let passes = match lit.value().as_str() {
                    "fail" => false,
                    "pass" => true,
                    other => {
                        return Err(syn::Error::new(
                            lit.span(),
                            format!("`inconclusive` is \"fail\" (the default) or \"pass\", not \"{other}\""),
                        ))
                    }
                };
                once(&mut o.inconclusive_passes, &meta, passes)
            }
            "name" => {
                let lit: LitStr = meta.value()?.parse()?;
                if let Some(problem) = name_problem(&lit.value()) {
                    return Err(syn::Error::new(lit.span(), problem));
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
                let e = positive(meta.value()?.parse()?, "`ops` (operations per launch)", "ops = 1048576")?;
                once(&mut o.ops, &meta, e)
            }
            "bytes" => {
                let e = positive(meta.value()?.parse()?, "`bytes` (bytes per launch)", "bytes = 4096")?;
                once(&mut o.bytes, &meta, e)
            }
            "baseline_ops" => {
                let e = positive(
                    meta.value()?.parse()?,
                    "`baseline_ops` (the baseline's operations per launch)",
                    "baseline_ops = 1048576",
                )?;
                once(&mut o.baseline_ops, &meta, (e, meta.path.span()))
            }
            "baseline_bytes" => {
                let e = positive(
                    meta.value()?.parse()?,
                    "`baseline_bytes` (the baseline's bytes per launch)",
                    "baseline_bytes = 4096",
                )?;
                once(&mut o.baseline_bytes, &meta, (e, meta.path.span()))
            }
            "device" => {
                let e: Expr = meta.value()?.parse()?;
                if o.device.is_some() || o.device_uuid.is_some() {
                    return Err(meta.error("`device` is given twice"));
                }
                match &e {
                    Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => {
                        o.device_uuid = Some(device_uuid(lit)?);
                        Ok(())
                    }
                    Expr::Path(path) if path.path.is_ident("all") => Err(syn::Error::new_spanned(&e, DEVICE_ALL)),
                    _ => once(&mut o.device, &meta, e),
                }
            }
            "source" => {
                let lit: LitStr = meta.value()?.parse()?;
                let value = lit.value();
                match sources::find(&value) {
                    Some(SourceName { role: Role::Board, .. }) => {}
                    Some(SourceName { role: Role::Rail, .. }) => {
                        return Err(syn::Error::new(
                            lit.span(),
                            format!(
                                "`{value}` is a rail (a part of the board): it is recorded and reported beside the board's energy whenever the GPU has it, never the source of that energy; expected {}",
                                sources::board_names()
                            ),
                        ));
                    }
                    None => {
                        return Err(syn::Error::new(
                            lit.span(),
                            format!("unknown source `{value}`: expected {}", sources::board_names()),
                        ));
                    }
                }
                once(&mut o.source, &meta, (value, lit.span()))
            }
            "precision" => {
                let e = precision_value(meta.value()?.parse()?)?;
                once(&mut o.precision, &meta, e)
            }
            "min_window_s" => Err(meta.error(
                "`min_window_s` is now `window_s`: the window length aimed at, in seconds (each window holds as many launches as fit)",
            )),
            "window_s" => {
                let e = window_s_value(meta.value()?.parse()?)?;
                once(&mut o.window_s, &meta, e)
            }
            "windows" => {
                let e = windows_value(meta.value()?.parse()?, attribute.windows_floor())?;
                once(&mut o.windows, &meta, e)
            }
            "sim" => {
                let model = parse_sim(&meta, "sim")?;
                once(&mut o.sim, &meta, model)
            }
            "baseline_sim" => {
                let model = parse_sim(&meta, "baseline_sim")?;
                once(&mut o.baseline_sim, &meta, model)
            }
            "group" => {
                let lit: LitStr = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(e.span(), "`group` takes a string: `group = \"my_pair\"` (benchmarks of one group run on one GPU of a node)")
                })?;
                if lit.value().trim().is_empty() {
                    return Err(syn::Error::new(lit.span(), "`group` needs a name: `group = \"my_pair\"`"));
                }
                once(&mut o.group, &meta, lit)
            }
            "gpu_only" => {
                if !(meta.input.is_empty() || meta.input.peek(Token![,])) {
                    return Err(meta.error("`gpu_only` is a bare flag: write `gpu_only`, without a value"));
                }
                once(&mut o.gpu_only, &meta, meta.path.span())
            }
            "any_stream" => {
                if !(meta.input.is_empty() || meta.input.peek(Token![,])) {
                    return Err(meta.error(
                        "`any_stream` is a bare flag: write `any_stream`, without a value (for a function that waits for a library, write `wait = your_fn`)",
                    ));
                }
                once(&mut o.any_stream, &meta, meta.path.span())
            }
            "args" => {
                let e: Expr = meta.value().map_err(|_| {
                    meta.error("`args` takes the arguments: `args = [64, 128, 256]` or an expression yielding them")
                })?.parse()?;
                if let Expr::Array(list) = &e {
                    if list.elems.is_empty() {
                        return Err(syn::Error::new(
                            e.span(),
                            "`args` needs at least one value: `args = [64, 128, 256]` (each is its own benchmark)",
                        ));
                    }
                }
                once(&mut o.args, &meta, e)
            }
            "graph" => {
                let e = crate::bounds::graph_value(meta.value().map_err(|_| {
                    meta.error("`graph` takes the launches each CUDA graph captures: `graph = 100`")
                })?.parse()?)?;
                once(&mut o.graph, &meta, e)
            }
            "wait" => {
                let path: Path = meta.value().map_err(|_| {
                    meta.error("`wait` names the function that waits for the library: `wait = sync` with `fn sync(state: &mut S) -> energy_harness::Result<()>`")
                })?.parse()?;
                once(&mut o.wait, &meta, path)
            }
            _ => Err(meta.error(format!("unknown option `{key}`: expected one of {}", attribute.options()))),
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    if let (Some(wait), None) = (&o.wait, &o.setup) {
        return Err(syn::Error::new(
            wait.span(),
            "`wait = …` waits on the state `setup` returns (`fn(state: &mut S) -> energy_harness::Result<()>`): give `setup = …` too, or write `any_stream` for CUDA work that a context-wide synchronize covers",
        ));
    }
    if let (Some(graph), Some(_)) = (&o.graph, o.library_work()) {
        return Err(syn::Error::new(
            graph.span(),
            "`graph` captures what the launch enqueues on the stream it is given into a CUDA graph; library work \
             (`any_stream`, `wait`) goes to the library's own streams or queue, which no capture holds: remove `graph`",
        ));
    }
    if o.library_work().is_some() {
        let models = [("sim", &o.sim), ("baseline_sim", &o.baseline_sim), ("reference_sim", &o.reference_sim)];
        if let Some((option, model)) = models.into_iter().find_map(|(n, m)| m.as_ref().map(|m| (n, m))) {
            return Err(syn::Error::new(
                model.span,
                format!(
                    "library work (`any_stream`, `wait`) never runs without a GPU (the checked device runs no \
                     library), so a `{option}(…)` model would simulate figures for code nobody checked: remove it"
                ),
            ));
        }
    }
    if o.gpu_only.is_some() {
        let models = [("sim", &o.sim), ("baseline_sim", &o.baseline_sim), ("reference_sim", &o.reference_sim)];
        if let Some((option, model)) = models.into_iter().find_map(|(n, m)| m.as_ref().map(|m| (n, m))) {
            return Err(syn::Error::new(
                model.span,
                format!(
                    "`gpu_only` code never runs without a GPU, so a `{option}(…)` model would simulate figures for \
                     code nobody checked: remove one"
                ),
            ));
        }
    }
    for (option, span) in [("baseline_ops", &o.baseline_ops), ("baseline_bytes", &o.baseline_bytes)]
        .into_iter()
        .filter_map(|(n, v)| v.as_ref().map(|(_, s)| (n, *s)))
    {
        if o.baseline.is_none() {
            return Err(syn::Error::new(
                span,
                format!("`{option}` describes a baseline kernel: add `baseline = …` too"),
            ));
        }
    }
    if let (Some(model), None) = (&o.baseline_sim, &o.baseline) {
        return Err(syn::Error::new(model.span, "`baseline_sim` describes a baseline kernel: add `baseline = …` too"));
    }
    // `{}` in `name` is where the argument goes (`name = "reduce_{}"`: `reduce_own`, …).
    if let Some(name) = &o.name {
        let places = name.value().matches("{}").count();
        if places > 0 && o.args.is_none() {
            return Err(syn::Error::new(
                name.span(),
                "`{}` in `name` stands for the argument: it needs `args = [...]`",
            ));
        }
        if places > 1 {
            return Err(syn::Error::new(
                name.span(),
                "`name` holds `{}` more than once: the argument goes in one place",
            ));
        }
    }
    if attribute == Attribute::Test {
        match (&o.relative_to, &o.max_ratio, &o.limit) {
            (Some(_), None, _) => {
                return Err(syn::Error::new(Span::call_site(), "`relative_to` needs `max_ratio = …` (e.g. 1.10)"))
            }
            (None, Some((_, span)), _) => {
                return Err(syn::Error::new(*span, "`max_ratio` needs `relative_to = path` (the reference launch)"))
            }
            (Some(path), Some(_), Some(_)) => {
                return Err(syn::Error::new(path.span(), "give one budget: an absolute one or `relative_to`, not both"))
            }
            (None, None, None) => {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "#[energy_test] needs a budget: max = \"5 mJ\", max_per_op, max_per_byte, max_power, or relative_to + max_ratio",
                ))
            }
            _ => {}
        }
        if let (Some(model), None) = (&o.reference_sim, &o.relative_to) {
            return Err(syn::Error::new(
                model.span,
                "`reference_sim` describes the reference kernel: add `relative_to = …` too",
            ));
        }
        if let Some((LimitOption::PerOp(_), span)) = &o.limit {
            if o.ops.is_none() {
                return Err(syn::Error::new(*span, "`max_per_op` needs `ops = …` (operations per launch)"));
            }
        }
        if let Some((LimitOption::PerByte(_), span)) = &o.limit {
            if o.bytes.is_none() {
                return Err(syn::Error::new(*span, "`max_per_byte` needs `bytes = …` (bytes per launch)"));
            }
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests;
