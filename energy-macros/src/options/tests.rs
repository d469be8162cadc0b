//! Unit tests of `options`.

use super::{measure_options_literal, parse_options, Attribute};
use energy_units::bounds::edges;
use energy_units::sources::{self, Role};
use proc_macro2::TokenStream;

#[test]
fn source_accepts_exactly_the_listed_board_names() {
    let parse = |name: &str| parse_options(quote::quote!(source = #name), Attribute::Bench);
    for source in sources::ALL {
        match (source.role, parse(source.name)) {
            (Role::Board, Ok(options)) => {
                let literal = measure_options_literal(&options).to_string();
                let call = format!("SourceKind :: from_name (\"{}\")", source.name);
                assert!(literal.contains(&call), "{literal}");
            }
            (Role::Rail, Err(e)) => assert!(e.to_string().contains("is a rail"), "{e}"),
            (role, other) => {
                panic!("{} ({role:?}): {:?}", source.name, other.map(|_| ()).map_err(|e| e.to_string()))
            }
        }
    }
    for unknown in ["thermometer", "Counter", "SampleBuffer", ""] {
        let e = parse(unknown).err().unwrap().to_string();
        assert_eq!(e, format!("unknown source `{unknown}`: expected {}", sources::board_names()));
    }
}

/// Every bound of every measurement option, walked at compile time: the macro accepts
/// a literal on the allowed side and refuses one on the other, exactly as the harness's
/// `MeasureOptions::resolve` does at run time (its own test walks the same edges).
#[test]
fn the_macro_walks_the_shared_bounds() {
    for edge in edges() {
        let attributes: &[Attribute] = match edge.option {
            "windows" if edge.windows_floor == energy_units::bounds::BUDGET_WINDOWS_MIN => &[Attribute::Test],
            "windows" | "baseline_ops" | "baseline_bytes" => &[Attribute::Bench],
            _ => &[Attribute::Bench, Attribute::Test],
        };
        for &attribute in attributes {
            let mut args = format!("{} = {}", edge.option, edge.literal());
            if edge.option.starts_with("baseline_") {
                args.push_str(", baseline = base");
            }
            if attribute == Attribute::Test {
                args.push_str(", max = \"5 mJ\"");
            }
            let tokens: TokenStream = args.parse().unwrap();
            let parsed = parse_options(tokens, attribute);
            assert_eq!(parsed.is_ok(), edge.allowed, "{args}: {:?}", parsed.err().map(|e| e.to_string()));
        }
    }
}
