//! The checks of option values at compile time, each against the bound the harness
//! applies at run time: every number's bound (and what a GPU UUID looks like) comes from
//! `energy_units::bounds`, which `MeasureOptions::resolve` uses too, and the options' test
//! walks them all (`energy_units::bounds::edges`); a benchmark's name is refused where the
//! harness's `benchmark_name_problem` refuses it.
#![allow(missing_docs)]

use energy_units::bounds::{
    is_gpu_uuid, is_positive, precision_allowed, window_s_allowed, windows_allowed, PRECISION_MAX, PRECISION_MIN,
    ROUNDS_MIN, WINDOWS_MAX, WINDOW_MAX_S,
};
use syn::{Expr, ExprLit, Lit, LitStr, UnOp};

/// Why `device = all` is refused, and what to use.
pub const DEVICE_ALL: &str =
    "`device = all`: one benchmark process measures one GPU; run `cargo energy run --gpus all -- \
                          <bench args>` to run the benchmarks on every GPU, one process each";

/// A literal number in an expression (`0.015`, `-2`, `(1e-3)`), if it is one.
pub fn literal_number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<f64>().ok(),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => literal_number(&u.expr).map(|v| -v),
        Expr::Paren(p) => literal_number(&p.expr),
        Expr::Group(g) => literal_number(&g.expr),
        _ => None,
    }
}

/// A number option that must be positive. `example` is the option written right
/// (`watts = 350.0`), shown when a string is given instead.
pub fn positive(expr: Expr, what: &str, example: &str) -> syn::Result<Expr> {
    if let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &expr {
        return Err(syn::Error::new(
            s.span(),
            format!("{what} is a number (an expression), not a string: write it in SI units, e.g. {example}"),
        ));
    }
    if literal_number(&expr).is_some_and(|v| !is_positive(v)) {
        return Err(syn::Error::new_spanned(&expr, format!("{what} must be positive")));
    }
    Ok(expr)
}

/// `value` (in the base unit `unit`) as a budget string, with an SI prefix and no
/// trailing zeros: 0.015 J is "15 mJ".
fn quantity_text(value: f64, unit: &str) -> String {
    let text = energy_units::format_si(value, unit, 6);
    match text.split_once(' ') {
        Some((number, unit)) if number.contains('.') => {
            format!("{} {unit}", number.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => text,
    }
}

/// `precision = …` written right, with the ± percentage it asks for: from `percent` when
/// that fits the bounds (what the user seems to have meant), else ±1 %.
fn precision_example(percent: Option<f64>) -> String {
    let percent = percent.filter(|p| precision_allowed(p / 100.0)).unwrap_or(1.0);
    // Rounded so that 1.1 % reads 0.011, not 0.011000000000000001.
    let fraction = (percent / 100.0 * 1e12).round() / 1e12;
    format!("precision = {fraction} for ±{percent} %")
}

/// Checks a `precision` value: a number (not a string such as "1 %") and, when it is a
/// literal, within the bounds the harness checks at run time.
pub fn precision_value(e: Expr) -> syn::Result<Expr> {
    if let Expr::Lit(ExprLit { lit, .. }) = &e {
        if !matches!(lit, Lit::Float(_) | Lit::Int(_)) {
            let percent = match lit {
                Lit::Str(s) => s.value().trim().strip_suffix('%').and_then(|p| p.trim().parse::<f64>().ok()),
                _ => None,
            };
            return Err(syn::Error::new(
                lit.span(),
                format!("`precision` is a fraction of the estimate: {}", precision_example(percent)),
            ));
        }
    }
    match literal_number(&e) {
        Some(v) if !precision_allowed(v) => Err(syn::Error::new_spanned(
            &e,
            format!(
                "`precision` is between {PRECISION_MIN} and {PRECISION_MAX}, a fraction of the estimate (the \
                 half-width of its 95 % interval over the mean): {}",
                // 5.0 is most likely ±5 %.
                precision_example(Some(v).filter(|v| *v >= 1.0))
            ),
        )),
        _ => Ok(e),
    }
}

/// Parses the value of budget option `key`, a string such as "5 mJ" or "300 W", with the
/// shared unit parser. A number is refused with the string it means in SI units
/// (`max = 0.015` → `max = "15 mJ"`), anything else with an example.
pub fn budget_value(key: &str, e: &Expr) -> syn::Result<f64> {
    let watts = key == "max_power";
    let Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) = e else {
        let example = match literal_number(e) {
            Some(v) if is_positive(v) => quantity_text(v, if watts { "W" } else { "J" }),
            _ => match key {
                "max" => "5 mJ".to_string(),
                "max_power" => "300 W".to_string(),
                _ => "2 nJ".to_string(),
            },
        };
        return Err(syn::Error::new_spanned(
            e,
            format!("`{key}` takes a quantity with a unit as a string: {key} = \"{example}\""),
        ));
    };
    let parsed = if watts {
        energy_units::parse_watts(&lit.value()).map(|w| w.0)
    } else {
        energy_units::parse_joules(&lit.value()).map(|j| j.0)
    };
    match parsed {
        Ok(v) if is_positive(v) => Ok(v),
        Ok(_) => Err(syn::Error::new(lit.span(), "a budget must be above zero")),
        Err(message) => Err(syn::Error::new(lit.span(), message)),
    }
}

/// Checks a `window_s` value: a positive number, at most `WINDOW_MAX_S` when a literal.
pub fn window_s_value(e: Expr) -> syn::Result<Expr> {
    let e = positive(e, "`window_s` (window length, seconds)", "window_s = 0.5")?;
    if literal_number(&e).is_some_and(|v| !window_s_allowed(v)) {
        return Err(syn::Error::new_spanned(
            &e,
            format!("`window_s` must be at most {WINDOW_MAX_S} s (windows are seconds long at most)"),
        ));
    }
    Ok(e)
}

/// Checks a `windows` value, when a literal, against the attribute's floor `least` (`why`
/// it is that) and `WINDOWS_MAX`.
pub fn windows_value(e: Expr, (least, why): (usize, &str)) -> syn::Result<Expr> {
    match literal_number(&e) {
        Some(v) if v.fract() == 0.0 && v >= 0.0 && windows_allowed(v as usize, least) => Ok(e),
        Some(v) if v < least as f64 => {
            Err(syn::Error::new_spanned(&e, format!("`windows` must be at least {least} ({why})")))
        }
        Some(v) if v > WINDOWS_MAX as f64 => Err(syn::Error::new_spanned(
            &e,
            format!("`windows` must be at most {WINDOWS_MAX} (between {least} and {WINDOWS_MAX} here)"),
        )),
        _ => Ok(e),
    }
}

/// Checks a `graph` value: a whole number from 1 to `GRAPH_LAUNCHES_MAX` when a literal
/// (an expression is checked when the kernel is measured).
pub fn graph_value(e: Expr) -> syn::Result<Expr> {
    use energy_units::bounds::{graph_launches_allowed, GRAPH_LAUNCHES_MAX};
    if let Expr::Lit(ExprLit { lit: Lit::Str(_), .. }) = &e {
        return Err(syn::Error::new_spanned(&e, "`graph` takes a number, not a string: `graph = 100`"));
    }
    match literal_number(&e) {
        Some(v) if v.fract() == 0.0 && v >= 1.0 && graph_launches_allowed(v as u64) => Ok(e),
        Some(_) => Err(syn::Error::new_spanned(
            &e,
            format!("`graph` is the launches each CUDA graph captures: a whole number from 1 to {GRAPH_LAUNCHES_MAX}"),
        )),
        None => Ok(e),
    }
}

/// Checks a `max_rounds` value: at least `ROUNDS_MIN` when a literal.
pub fn max_rounds_value(e: Expr) -> syn::Result<Expr> {
    if literal_number(&e).is_some_and(|v| v < ROUNDS_MIN as f64) {
        return Err(syn::Error::new_spanned(&e, format!("`max_rounds` must be at least {ROUNDS_MIN}")));
    }
    Ok(e)
}

/// The value of `max_ratio`: a positive literal number.
pub fn max_ratio_value(e: &Expr) -> syn::Result<f64> {
    match literal_number(e) {
        Some(v) if is_positive(v) => Ok(v),
        _ => Err(syn::Error::new_spanned(e, "`max_ratio` is a positive number, e.g. 1.10")),
    }
}

/// Checks `device = "…"`: a GPU's UUID (as `MeasureOptions::resolve` checks
/// `device_uuid`), not `"all"`.
pub fn device_uuid(lit: &LitStr) -> syn::Result<LitStr> {
    if lit.value().trim().eq_ignore_ascii_case("all") {
        return Err(syn::Error::new(lit.span(), DEVICE_ALL));
    }
    if !is_gpu_uuid(&lit.value()) {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`device = \"{}\"` is not a GPU UUID: give a CUDA device ordinal (`device = 1`) or a UUID as `cargo \
                 energy info` prints it (`device = \"GPU-c744…\"`)",
                lit.value()
            ),
        ));
    }
    Ok(lit.clone())
}

/// Why a `name = "…"` cannot name a benchmark (the harness's `benchmark_name_problem`
/// refuses the same at run time for specs built by hand). `/`, `..` segments, `|`,
/// backticks, markup, long and non-Latin names are allowed: the harness escapes them in
/// every output and gives them short file names inside the run directory. Refused: empty;
/// `.` and `..` (criterion makes a folder of the name, and `target/criterion/..` is
/// `target/`); control characters and the invisible ones that break or reorder lines.
pub fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("the benchmark name must not be empty".into());
    }
    if name == "." || name == ".." {
        return Some(format!(
            "the benchmark name `{name}` is a folder's name: criterion makes a folder of it under target/criterion/ \
             (`..` is target/ itself); choose another"
        ));
    }
    name.chars().find(|&c| energy_units::bounds::is_invisible(c)).map(|c| {
        format!(
            "the benchmark name holds the control or invisible character U+{:04X} ({}): a name is printed, tabled, \
             plotted and made a file name; write it without",
            u32::from(c),
            c.escape_debug()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::name_problem;

    #[test]
    fn names_that_cannot_work_are_refused_and_the_rest_allowed() {
        for bad in ["", " ", ".", "..", "a\nb", "bell\u{7}", "\u{1b}[2J", "x\u{202e}y", "line\u{2028}sep"] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
        assert!(name_problem("a\nb").unwrap().contains("U+000A (\\n)"), "{:?}", name_problem("a\nb"));
        for good in ["saxpy", "gemm/fp16", "../../../../tmp/escape", "a|b`c", "<b>&amp;", "a - b", "能量", "..."] {
            assert_eq!(name_problem(good), None, "{good:?}");
        }
        assert_eq!(name_problem(&"n".repeat(550)), None);
    }
}
