//! `#[energy_test]`: turns a launch function into a `#[test]` that checks an energy budget.
//! Budgets are parsed at compile time ("5 mJ"); the check runs in `energy_harness::budget`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, Path};

use crate::bench::{arg_bindings, expand_attribute, factory, ARG, ARG_LABEL};
use crate::options::{measure_options_literal, parse_options, Attribute, LimitOption, SimModel};
use crate::signature::check_signature;

/// Expands `#[energy_test(args)] item`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_attribute(args, item, "#[energy_test]", expand_fn)
}

fn expand_fn(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let o = parse_options(args, Attribute::Test)?;
    check_signature(item, o.setup.is_some(), o.args.is_some(), Attribute::Test)?;
    let p = quote! { ::energy_harness::__private };
    let test_name = &item.sig.ident;
    let launch_name = format_ident!("__energy_test_launch_{}", test_name);
    let mut launch = item.clone();
    launch.sig.ident = launch_name.clone();
    launch.attrs.retain(|a| !a.path().is_ident("test") && !a.path().is_ident("ignore"));
    let name = test_name.to_string();
    let launch_path: Path = launch_name.clone().into();
    let kernel_factory = factory(&o, &launch_path);
    let (arg, label) = (format_ident!("{}", ARG), format_ident!("{}", ARG_LABEL));
    let kernel_name = match o.args {
        Some(_) => quote! { &#p::arg_id(#name, &#label) },
        None => quote! { #name },
    };
    let mut kernel = quote! { #p::KernelUnderTest::new(#kernel_name).code(#kernel_factory) };
    if let Some(SimModel { seconds, watts, .. }) = &o.sim {
        kernel = quote! { #kernel.sim((#seconds) as f64, (#watts) as f64) };
    }
    let limit = match (&o.limit, &o.max_ratio) {
        (Some((LimitOption::PerLaunch(j), _)), _) => quote! { #p::Limit::PerLaunch(#p::Joules(#j)) },
        (Some((LimitOption::PerOp(j), _)), _) => quote! { #p::Limit::PerOp(#p::Joules(#j)) },
        (Some((LimitOption::PerByte(j), _)), _) => quote! { #p::Limit::PerByte(#p::Joules(#j)) },
        (Some((LimitOption::Power(w), _)), _) => quote! { #p::Limit::Power(#p::Watts(#w)) },
        (None, Some((ratio, _))) => quote! { #p::Limit::Relative(#ratio) },
        (None, None) => unreachable!("parse_options requires a budget"),
    };
    let mut steps = vec![quote! { let budget = #p::EnergyBudget::new(#kernel, #limit); }];
    if let Some(reference) = &o.relative_to {
        let reference_name = quote!(#reference).to_string().replace(' ', "");
        let reference_factory = factory(&o, reference);
        let mut r = quote! { #p::KernelUnderTest::new(#reference_name).code(#reference_factory) };
        if let Some(SimModel { seconds, watts, .. }) = &o.reference_sim {
            r = quote! { #r.sim((#seconds) as f64, (#watts) as f64) };
        }
        steps.push(quote! { let budget = budget.reference(#r); });
    }
    let options = measure_options_literal(&o);
    steps.push(quote! { let budget = budget.options(#options); });
    if let Some(rounds) = &o.max_rounds {
        steps.push(quote_spanned! { rounds.span() => let budget = budget.max_rounds((#rounds) as usize); });
    }
    if let Some(passes) = o.inconclusive_passes {
        steps.push(quote! { let budget = budget.inconclusive_passes(#passes); });
    }
    if let Some(flag) = o.gpu_only {
        steps.push(quote_spanned! { flag => let budget = budget.gpu_only(); });
    }
    let attrs: Vec<_> = item.attrs.iter().filter(|a| a.path().is_ident("ignore") || a.path().is_ident("doc")).collect();
    let Some(args) = &o.args else {
        // `assert_budget` is `#[track_caller]`: spanned by the user's function, a failed
        // budget's panic points at the test's line, not at the harness.
        let assert = quote_spanned! { test_name.span() => ::energy_harness::__private::assert_budget(&budget); };
        return Ok(quote! {
            #[allow(dead_code)]
            #launch
            #[test]
            #(#attrs)*
            fn #test_name() {
                #(#steps)*
                #assert
            }
        });
    };
    // One budget per argument (`name/arg`), all checked, then one verdict naming each that
    // failed: the argument's value bound to the launch function's parameter name.
    let (bindings, _) = arg_bindings(item)?;
    let assert = quote_spanned! { test_name.span() => ::energy_harness::__private::assert_budgets(&budgets); };
    Ok(quote! {
        #[allow(dead_code)]
        #launch
        #[test]
        #(#attrs)*
        fn #test_name() {
            let mut budgets = ::std::vec::Vec::new();
            for #arg in ::core::iter::IntoIterator::into_iter(#args) {
                #bindings
                #(#steps)*
                budgets.push(budget);
            }
            #assert
        }
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The expansion of `#[energy_test(args)] fn kernel(stream: &Stream) -> Result<()>`,
    /// as text (a failing case's text holds `compile_error`).
    fn expand_text(args: proc_macro2::TokenStream) -> String {
        let item = quote! { fn kernel(stream: &Stream) -> Result<()> { Ok(()) } };
        super::expand(args, item).to_string()
    }

    #[test]
    fn gpu_only_declares_the_budget_gpu_only() {
        let text = expand_text(quote! { max = "5 mJ", gpu_only });
        assert!(!text.contains("compile_error"), "{text}");
        assert!(text.contains("let budget = budget . gpu_only () ;"), "{text}");
        assert!(!expand_text(quote! { max = "5 mJ" }).contains("gpu_only"));
    }

    #[test]
    fn the_expansion_asserts_the_budget() {
        let text = expand_text(quote! { max = "5 mJ" });
        assert!(text.contains(":: energy_harness :: __private :: assert_budget (& budget) ;"), "{text}");
    }
}
