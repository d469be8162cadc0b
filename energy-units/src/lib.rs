//! Physical quantities with their unit in the type: [`Joules`] and [`Watts`], their SI
//! formatting and their parsing from text ("5 mJ"). One crate so that `energy-harness`
//! (at run time) and `energy-macros` (at compile time, for budgets) share one parser, and
//! one set of limits on the measurement options ([`bounds`]) and one list of sensor source
//! names ([`sources`]).
//!
//! Times stay `f64` seconds named `*_s` inside traces (they are positions on one
//! monotonic clock, not durations) and [`std::time::Duration`] at API edges.

#![deny(missing_docs)]

use std::fmt;
use std::ops::{Add, Div, Mul, Sub};

use serde::{Deserialize, Serialize};

pub mod bounds;
pub mod sources;

/// An amount of energy in joules (J). `energy-harness` re-exports it in its prelude.
///
/// # Examples
///
/// ```
/// # use energy_units::Joules;
/// let per_launch = Joules::from_millijoules(26.86); // NVML's energy counter counts mJ
/// assert_eq!(per_launch.to_string(), "26.86 mJ"); // SI prefix, 4 significant digits
/// assert_eq!(format!("{:.2}", per_launch), "27 mJ"); // the precision is the digits shown
/// assert_eq!((per_launch * 1000.0).to_string(), "26.86 J");
/// let budget = Joules(0.04); // 40 mJ
/// assert!(per_launch < budget);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Joules(pub f64);

/// A power in watts (W). `energy-harness` re-exports it in its prelude.
///
/// # Examples
///
/// ```
/// # use energy_units::Watts;
/// let board = Watts::from_milliwatts(399_700.0); // NVML's power readings are mW
/// assert_eq!(board.to_string(), "399.7 W");
/// assert_eq!((board - Watts(120.7)).to_string(), "279.0 W"); // above active idle
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Watts(pub f64);

impl Joules {
    /// From millijoules (the unit of NVML's energy counter).
    pub fn from_millijoules(mj: f64) -> Self {
        Joules(mj * 1e-3)
    }

    /// The value in joules.
    pub fn joules(self) -> f64 {
        self.0
    }
}

impl Watts {
    /// From milliwatts (the unit of NVML's power readings).
    pub fn from_milliwatts(mw: f64) -> Self {
        Watts(mw * 1e-3)
    }

    /// The value in watts.
    pub fn watts(self) -> f64 {
        self.0
    }
}

impl Add for Joules {
    type Output = Joules;
    fn add(self, rhs: Joules) -> Joules {
        Joules(self.0 + rhs.0)
    }
}

impl Sub for Joules {
    type Output = Joules;
    fn sub(self, rhs: Joules) -> Joules {
        Joules(self.0 - rhs.0)
    }
}

impl Mul<f64> for Joules {
    type Output = Joules;
    fn mul(self, rhs: f64) -> Joules {
        Joules(self.0 * rhs)
    }
}

impl Div<f64> for Joules {
    type Output = Joules;
    fn div(self, rhs: f64) -> Joules {
        Joules(self.0 / rhs)
    }
}

impl Add for Watts {
    type Output = Watts;
    fn add(self, rhs: Watts) -> Watts {
        Watts(self.0 + rhs.0)
    }
}

impl Sub for Watts {
    type Output = Watts;
    fn sub(self, rhs: Watts) -> Watts {
        Watts(self.0 - rhs.0)
    }
}

impl fmt::Display for Joules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_si(self.0, "J", f.precision().unwrap_or(4)))
    }
}

impl fmt::Display for Watts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_si(self.0, "W", f.precision().unwrap_or(4)))
    }
}

/// The SI prefixes used for energy and power, largest first: (factor, prefix).
const SI_PREFIXES: [(f64, &str); 7] =
    [(1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f")];

/// The SI prefix factor and symbol that puts `value` in [1, 1000), clamped to the
/// range kilo..femto. Zero and non-finite values take no prefix.
pub fn si_scale(value: f64) -> (f64, &'static str) {
    let magnitude = value.abs();
    if magnitude == 0.0 || !magnitude.is_finite() {
        return (1.0, "");
    }
    for (factor, prefix) in SI_PREFIXES {
        // A hair below the boundary so that 0.9999995 rounds into the larger unit's 1.000.
        if magnitude >= factor * (1.0 - 1e-9) {
            return (factor, prefix);
        }
    }
    let (factor, prefix) = SI_PREFIXES[SI_PREFIXES.len() - 1];
    (factor, prefix)
}

/// The SI prefix for counts and rates above one (work per joule, operations per launch):
/// the factor and symbol (k, M, G, T) that puts `value` below 1000, or (1, "") under 1000.
pub fn si_scale_large(value: f64) -> (f64, &'static str) {
    for (factor, prefix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if value >= factor {
            return (factor, prefix);
        }
    }
    (1.0, "")
}

/// Formats `value` (in the base unit `unit`) with an SI prefix and `significant` significant digits:
/// `format_si(0.00274, "J", 4)` is `"2.740 mJ"`.
pub fn format_si(value: f64, unit: &str, significant: usize) -> String {
    if !value.is_finite() {
        return format!("{value} {unit}");
    }
    let (factor, prefix) = si_scale(value);
    let scaled = value / factor;
    let significant = significant.max(1);
    let integer_digits = if scaled.abs() >= 100.0 {
        3
    } else if scaled.abs() >= 10.0 {
        2
    } else {
        1
    };
    let decimals = significant.saturating_sub(integer_digits);
    format!("{scaled:.decimals$} {prefix}{unit}")
}

/// Parses an energy such as `"5 mJ"`, `"2.5e-3 J"`, `"40 uJ"`, `"40 µJ"`, `"3nJ"`, `"120 pJ"`.
///
/// Returns a message naming the problem on bad input (unknown unit, missing number,
/// negative or non-finite value).
pub fn parse_joules(text: &str) -> Result<Joules, String> {
    parse_quantity(text, "J").map(Joules)
}

/// Parses a power such as `"300 W"`, `"250mW"`, `"1.2 kW"`.
pub fn parse_watts(text: &str) -> Result<Watts, String> {
    parse_quantity(text, "W").map(Watts)
}

fn parse_quantity(text: &str, unit: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '+'
                || c == '-'
                || ((c == 'e' || c == 'E')
                    && trimmed[i + 1..].chars().next().is_some_and(|n| n.is_ascii_digit() || n == '-' || n == '+')))
        })
        .map(|(i, _)| i)
        .unwrap_or(trimmed.len());
    let (number, suffix) = trimmed.split_at(split);
    if number.is_empty() {
        return Err(format!("`{text}` has no number: write an amount such as `5 m{unit}`"));
    }
    let value: f64 = number.parse().map_err(|_| format!("`{number}` in `{text}` is not a number"))?;
    let suffix = suffix.trim();
    let Some(prefix) = suffix.strip_suffix(unit) else {
        return Err(format!(
            "`{text}` has no unit or a wrong one: end it with {unit}, m{unit}, u{unit} (µ{unit}), n{unit} or p{unit}"
        ));
    };
    let factor = match prefix {
        "k" => 1e3,
        "" => 1.0,
        "m" => 1e-3,
        "u" | "µ" | "μ" => 1e-6,
        "n" => 1e-9,
        "p" => 1e-12,
        other => {
            return Err(format!(
                "`{other}{unit}` in `{text}` is not a unit: use {unit}, m{unit}, u{unit} (µ{unit}), n{unit} or p{unit}"
            ))
        }
    };
    let scaled = value * factor;
    if !scaled.is_finite() || scaled < 0.0 {
        return Err(format!("`{text}` must be a finite, non-negative amount"));
    }
    Ok(scaled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_each_prefix() {
        assert_eq!(format_si(2.74, "J", 4), "2.740 J");
        assert_eq!(format_si(0.00274, "J", 4), "2.740 mJ");
        assert_eq!(format_si(6.04e-6, "J", 3), "6.04 µJ");
        assert_eq!(format_si(82.1e-12, "J", 3), "82.1 pJ");
        assert_eq!(format_si(2.09e-9, "J", 3), "2.09 nJ");
        assert_eq!(format_si(272.0, "W", 4), "272.0 W");
        assert_eq!(format_si(0.0, "J", 3), "0.00 J");
        assert_eq!(format_si(-0.5, "J", 2), "-500 mJ"); // dynamic energy can be negative
        assert_eq!(format!("{}", Joules(0.0275)), "27.50 mJ");
        assert_eq!(format!("{:.3}", Watts(120.4)), "120 W");
    }

    #[test]
    fn large_values_take_k_to_t() {
        assert_eq!(si_scale_large(999.0), (1.0, ""));
        assert_eq!(si_scale_large(1e3), (1e3, "k"));
        assert_eq!(si_scale_large(3.5e10), (1e9, "G"));
        assert_eq!(si_scale_large(7e15), (1e12, "T"));
    }

    #[test]
    fn boundary_rounds_into_larger_unit() {
        assert_eq!(si_scale(0.9999999999).1, "");
        assert_eq!(si_scale(999.0e-6).1, "µ");
    }

    #[test]
    fn parses_energy_units() {
        assert_eq!(parse_joules("5 mJ").unwrap(), Joules(5e-3));
        assert_eq!(parse_joules("5mJ").unwrap(), Joules(5e-3));
        assert!((parse_joules("40 uJ").unwrap().0 - 40e-6).abs() < 1e-18);
        assert!((parse_joules("40 µJ").unwrap().0 - 40e-6).abs() < 1e-18);
        assert!((parse_joules("2.5e-3 J").unwrap().0 - 2.5e-3).abs() < 1e-18);
        assert!((parse_joules("120 pJ").unwrap().0 - 120e-12).abs() < 1e-24);
        assert_eq!(parse_watts("300 W").unwrap(), Watts(300.0));
    }

    #[test]
    fn rejects_bad_energy() {
        assert!(parse_joules("5").unwrap_err().contains("no unit"));
        assert!(parse_joules("mJ").unwrap_err().contains("no number"));
        assert!(parse_joules("5 xJ").unwrap_err().contains("not a unit"));
        assert!(parse_joules("5 W").unwrap_err().contains("no unit"));
        assert!(parse_joules("-5 J").unwrap_err().contains("non-negative"));
        assert!(parse_joules("1..2 J").unwrap_err().contains("not a number"));
    }
}
