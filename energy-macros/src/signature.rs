//! The launch function's shape: its parameters for `setup` and `args`, checked with a
//! precise span, and the parameter that takes the argument.

use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType};

use crate::options::Attribute;

/// Checks the launch function's shape: one `&Stream` parameter, or `&mut S` first when
/// `setup` gives state; no async, generics or self; a `Result` returned.
pub fn check_signature(item: &ItemFn, has_setup: bool, has_args: bool, attribute: Attribute) -> syn::Result<()> {
    let sig = &item.sig;
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new(
            a.span(),
            format!("an {} function enqueues a kernel; it cannot be `async`", attribute.name()),
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            sig.generics.span(),
            format!("an {} function cannot be generic", attribute.name()),
        ));
    }
    let expected = usize::from(has_setup) + 1 + usize::from(has_args);
    if sig.inputs.len() != expected {
        let shape = match (has_setup, has_args) {
            (true, false) => "fn(state: &mut S, stream: &Stream) -> energy_harness::Result<()> (S made by `setup`)",
            (false, false) => "fn(stream: &Stream) -> energy_harness::Result<()>, or add `setup = …` to pass state",
            (true, true) => {
                "fn(state: &mut S, stream: &Stream, arg: &T) -> energy_harness::Result<()> (S made by `setup`, which \
                 takes the argument too: fn(gpu: &CudaGpu, arg: &T); T one of `args`)"
            }
            (false, true) => "fn(stream: &Stream, arg: &T) -> energy_harness::Result<()> (T one of `args`)",
        };
        return Err(syn::Error::new(
            sig.inputs.span().join(sig.ident.span()).unwrap_or(sig.ident.span()),
            format!("an {} function launches the kernel once: expected {shape}", attribute.name()),
        ));
    }
    if let Some(receiver) = sig.receiver() {
        return Err(syn::Error::new(receiver.span(), format!("an {} function cannot take `self`", attribute.name())));
    }
    if let ReturnType::Default = sig.output {
        return Err(syn::Error::new(
            sig.ident.span(),
            format!(
                "an {} function returns energy_harness::Result<()> (a CUDA error aborts the measurement)",
                attribute.name()
            ),
        ));
    }
    Ok(())
}

/// With `args`: the launch function's last parameter, which takes the argument by reference
/// (`block: &u32`); its name binds the argument's value in the options' expressions
/// (`ops = 1024 * block`).
pub fn arg_parameter(item: &ItemFn) -> syn::Result<syn::Ident> {
    let last = item.sig.inputs.last().ok_or_else(|| {
        syn::Error::new(item.sig.ident.span(), "with `args`, the function takes the argument last: `arg: &T`")
    })?;
    let syn::FnArg::Typed(typed) = last else {
        return Err(syn::Error::new(last.span(), "with `args`, the function takes the argument last: `arg: &T`"));
    };
    let syn::Pat::Ident(pat) = &*typed.pat else {
        return Err(syn::Error::new(
            typed.pat.span(),
            "with `args`, name the argument (`block: &u32`): its name is the argument's in `ops`, `bytes` and `sim(…)`",
        ));
    };
    if !matches!(&*typed.ty, syn::Type::Reference(r) if r.mutability.is_none()) {
        return Err(syn::Error::new(
            typed.ty.span(),
            "with `args`, the function takes the argument by shared reference, last: `block: &u32`",
        ));
    }
    Ok(pat.ident.clone())
}
