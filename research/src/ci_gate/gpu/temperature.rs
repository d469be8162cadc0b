//! What the runs' temperatures explain of a pair's difference on unchanged code: whether a
//! gate would gain from judging energy at one temperature (issue 58 names "energy at 50 °C"
//! as a basis for drift).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use energy_results::ab::PairedChange;

use super::StudyGate;

/// One benchmark's pair differences of unchanged code, each gate's about its own mean: the
/// difference (B − A, percent), the period sign (+1 when A ran first), the temperature
/// difference (B − A, °C); and how many gates they came from.
#[derive(Default)]
struct Centered {
    rows: Vec<[f64; 3]>,
    gates: usize,
}

impl Centered {
    /// Adds `change`'s pairs when every one has both temperatures.
    fn add(&mut self, change: &PairedChange) {
        let rows: Option<Vec<[f64; 3]>> = change
            .pairs
            .iter()
            .map(|p| {
                let sign = if p.order == "AB" { 1.0 } else { -1.0 };
                Some([p.difference_pct, sign, p.candidate_temperature_c? - p.baseline_temperature_c?])
            })
            .collect();
        let Some(rows) = rows.filter(|r| r.len() >= 2) else { return };
        self.rows.extend(centered(&rows));
        self.gates += 1;
    }

    /// The residual variance of the difference on the period sign alone and on the sign and
    /// the temperature difference (each on its degrees of freedom: pairs less gates less
    /// slopes), and the temperature slope, %/°C; `None` where the fit has no degrees of freedom
    /// or no spread of temperature.
    fn fits(&self) -> Option<(f64, f64, f64)> {
        let sum = |f: &dyn Fn(&[f64; 3]) -> f64| self.rows.iter().map(f).sum::<f64>();
        let (yy, ss, tt) = (sum(&|r| r[0] * r[0]), sum(&|r| r[1] * r[1]), sum(&|r| r[2] * r[2]));
        let (ys, yt, st) = (sum(&|r| r[0] * r[1]), sum(&|r| r[0] * r[2]), sum(&|r| r[1] * r[2]));
        let df = self.rows.len() as f64 - self.gates as f64;
        let det = ss * tt - st * st;
        if df < 3.0 || ss <= 0.0 || tt <= 0.0 || det <= 0.0 {
            return None;
        }
        let period_only = (yy - ys * ys / ss) / (df - 1.0);
        let slope_sign = (ys * tt - yt * st) / det;
        let slope_temperature = (yt * ss - ys * st) / det;
        let with_temperature = (yy - slope_sign * ys - slope_temperature * yt) / (df - 2.0);
        Some((period_only, with_temperature, slope_temperature))
    }
}

/// One gate's rows less their means, column by column.
fn centered(rows: &[[f64; 3]]) -> Vec<[f64; 3]> {
    let n = rows.len() as f64;
    let mean = |k: usize| rows.iter().map(|r| r[k]).sum::<f64>() / n;
    let means = [mean(0), mean(1), mean(2)];
    rows.iter().map(|r| [r[0] - means[0], r[1] - means[1], r[2] - means[2]]).collect()
}

/// The table: every A/A gate of the study, each benchmark's pair differences about their
/// gate's mean, fitted on the period effect and then on the runs' temperature difference too.
pub(super) fn temperature_table(t: &mut String, gates: &[StudyGate]) {
    let mut by_id: BTreeMap<&str, Centered> = BTreeMap::new();
    let unchanged: Vec<&StudyGate> =
        gates.iter().filter(|g| g.kind == "aa" && g.name != "workflow" && g.report.is_some()).collect();
    for report in unchanged.iter().filter_map(|g| g.report.as_ref()) {
        for change in &report.changes {
            by_id.entry(change.id.as_str()).or_default().add(change);
        }
    }
    let fitted: Vec<(&str, &Centered, (f64, f64, f64))> =
        by_id.iter().filter_map(|(id, c)| c.fits().map(|f| (*id, c, f))).collect();
    if fitted.is_empty() {
        return;
    }
    let _ = writeln!(
        t,
        "\nWhat temperature explains (every A/A gate of the study, calls {}: unchanged code, each benchmark's pair \
         differences about their gate's mean): the spread of one difference with the period effect fitted, and with \
         the two runs' temperature difference fitted too (each run's mean temperature, NVML's whole degrees), \
         pooled over gates; the slope is the energy's rise per °C the fit finds.\n",
        super::calls_of(unchanged.iter().copied())
    );
    let _ = writeln!(
        t,
        "| benchmark | gates | pairs | difference sd, period fitted | temperature fitted too | slope | temperature difference sd |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|");
    let mut shares = Vec::new();
    for (id, c, (period_only, with_temperature, slope)) in &fitted {
        let spread_t = (c.rows.iter().map(|r| r[2] * r[2]).sum::<f64>() / c.rows.len() as f64).sqrt();
        let _ = writeln!(
            t,
            "| `{id}` | {} | {} | {:.2} % | {:.2} % | {slope:+.2} %/°C | {spread_t:.2} °C |",
            c.gates,
            c.rows.len(),
            period_only.sqrt(),
            with_temperature.sqrt()
        );
        // Fitting a slope costs a degree of freedom: a spread that does not narrow reads as 0.
        shares.push((((1.0 - (with_temperature / period_only).sqrt()) * 100.0).max(0.0), *id));
    }
    shares.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (least, most) = (shares[0], shares[shares.len() - 1]);
    let _ = writeln!(
        t,
        "\nThe temperature difference narrows a benchmark's spread by {:.0} % (`{}`) to {:.0} % (`{}`). A gate \
         judging energy at one temperature would spend a degree of freedom a benchmark for that, and would take \
         back part of a real change's effect with the heat it makes.\n",
        least.0, least.1, most.0, most.1
    );
}

#[cfg(test)]
mod tests {
    use super::{centered as gate, Centered};

    #[test]
    fn a_difference_made_of_period_and_temperature_leaves_no_spread() {
        // d = 0.3 · sign + 0.5 · ΔT (+ a gate's own offset), plus a little noise on one pair.
        let make = |offset: f64, temps: [f64; 4], noise: f64| {
            let signs = [1.0, -1.0, 1.0, -1.0];
            let rows: Vec<[f64; 3]> = (0..4)
                .map(|i| {
                    [offset + 0.3 * signs[i] + 0.5 * temps[i] + if i == 0 { noise } else { 0.0 }, signs[i], temps[i]]
                })
                .collect();
            gate(&rows)
        };
        let mut c = Centered::default();
        for (offset, temps) in
            [(0.1, [1.0, -1.0, 0.0, 2.0]), (-0.2, [0.0, 1.0, -2.0, 1.0]), (0.4, [2.0, 0.0, 1.0, -1.0])]
        {
            c.rows.extend(make(offset, temps, 0.0));
            c.gates += 1;
        }
        let (period_only, with_temperature, slope) = c.fits().expect("a fit");
        assert!((slope - 0.5).abs() < 1e-9, "{slope}");
        assert!(with_temperature.abs() < 1e-12 && period_only > 0.1, "{period_only} {with_temperature}");
        // Noise the temperature cannot explain stays.
        let mut noisy = Centered::default();
        noisy.rows.extend(make(0.0, [1.0, -1.0, 0.0, 2.0], 0.4));
        noisy.rows.extend(make(0.0, [0.0, 1.0, -2.0, 1.0], 0.0));
        noisy.gates = 2;
        let (_, with_temperature, _) = noisy.fits().expect("a fit");
        assert!(with_temperature > 0.01, "{with_temperature}");
    }

    #[test]
    fn no_fit_without_temperature_spread_or_degrees_of_freedom() {
        let mut flat = Centered::default();
        flat.rows.extend(gate(&[[0.1, 1.0, 0.0], [0.2, -1.0, 0.0], [0.0, 1.0, 0.0], [0.3, -1.0, 0.0]]));
        flat.gates = 1;
        assert!(flat.fits().is_none(), "no temperature spread");
        let mut short = Centered::default();
        short.rows.extend(gate(&[[0.1, 1.0, 1.0], [0.2, -1.0, 0.0]]));
        short.gates = 1;
        assert!(short.fits().is_none(), "one degree of freedom");
    }
}
