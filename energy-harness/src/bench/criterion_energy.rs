//! Energy as a criterion [`Measurement`]: values are joules, formatted J … pJ, and
//! throughput is work per joule (ops/J, bytes/J).
//!
//! Energy cannot be read around an arbitrary stretch of code: the sensors update every
//! 20-100 ms. So the values never come from `start`/`end`; `#[energy_bench]` feeds
//! criterion through `Bencher::iter_custom`, each sample being one synchronized window
//! measured by the engine.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

use energy_units::{si_scale, si_scale_large};

/// Energy in joules, for `Criterion<Energy>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Energy;

impl Measurement for Energy {
    type Intermediate = ();
    type Value = f64;

    fn start(&self) -> Self::Intermediate {}

    fn end(&self, _: Self::Intermediate) -> Self::Value {
        // Reading energy around a sample would give the naive figures DESIGN.md §1 warns of.
        panic!(
            "energy_harness::bench::Energy has no start/end reading: energy is measured in synchronized \
             windows; use #[energy_bench] (or Bencher::iter_custom with the engine)"
        )
    }

    fn add(&self, v1: &Self::Value, v2: &Self::Value) -> Self::Value {
        v1 + v2
    }

    fn zero(&self) -> Self::Value {
        0.0
    }

    fn to_f64(&self, value: &Self::Value) -> f64 {
        *value
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &EnergyFormatter
    }
}

/// Formats joules with SI prefixes.
pub struct EnergyFormatter;

/// Static unit strings for the SI prefixes (criterion wants `&'static str`).
fn unit_for(prefix: &str, base: &'static [&'static str; 7]) -> &'static str {
    let index = ["k", "", "m", "µ", "n", "p", "f"].iter().position(|p| *p == prefix).unwrap_or(1);
    base[index]
}

const JOULES: [&str; 7] = ["kJ", "J", "mJ", "µJ", "nJ", "pJ", "fJ"];

impl ValueFormatter for EnergyFormatter {
    fn scale_values(&self, typical_value: f64, values: &mut [f64]) -> &'static str {
        let (factor, prefix) = si_scale(typical_value);
        for v in values.iter_mut() {
            *v /= factor;
        }
        unit_for(prefix, &JOULES)
    }

    fn scale_throughputs(&self, typical_value: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        // Work per joule: the energy efficiency of the kernel.
        let (per_launch, kind) = match *throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => (b as f64, "B"),
            Throughput::Bits(b) => (b as f64, "bit"),
            Throughput::Elements(e) => (e as f64, "op"),
            Throughput::ElementsAndBytes { elements, .. } => (elements as f64, "op"),
        };
        let typical = if typical_value > 0.0 { per_launch / typical_value } else { 0.0 };
        // Criterion writes kilo as `K` in throughputs.
        let (factor, prefix) = si_scale_large(typical);
        for v in values.iter_mut() {
            *v = if *v > 0.0 { per_launch / *v / factor } else { 0.0 };
        }
        match (prefix, kind) {
            ("", "B") => "B/J",
            ("k", "B") => "KB/J",
            ("M", "B") => "MB/J",
            ("G", "B") => "GB/J",
            ("T", "B") => "TB/J",
            ("", "bit") => "bit/J",
            ("k", "bit") => "Kbit/J",
            ("M", "bit") => "Mbit/J",
            ("G", "bit") => "Gbit/J",
            ("T", "bit") => "Tbit/J",
            ("", _) => "op/J",
            ("k", _) => "Kop/J",
            ("M", _) => "Mop/J",
            ("G", _) => "Gop/J",
            _ => "Top/J",
        }
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "J"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_energy_and_work_per_joule() {
        let mut values = [0.00272, 0.00274];
        assert_eq!(EnergyFormatter.scale_values(0.00273, &mut values), "mJ");
        assert!((values[0] - 2.72).abs() < 1e-9);
        let mut tiny = [82.1e-12];
        assert_eq!(EnergyFormatter.scale_values(82.1e-12, &mut tiny), "pJ");
        // 12 MB per launch at 2 mJ per launch: 6 GB/J.
        let mut per_launch = [0.002];
        let unit = EnergyFormatter.scale_throughputs(0.002, &Throughput::Bytes(12_000_000), &mut per_launch);
        assert_eq!(unit, "GB/J");
        assert!((per_launch[0] - 6.0).abs() < 1e-9);
        assert_eq!(EnergyFormatter.format_value(0.5), "500.00 mJ");
        let mut machine = [1.5];
        assert_eq!(EnergyFormatter.scale_for_machines(&mut machine), "J");
        assert_eq!(machine[0], 1.5);
    }
}
