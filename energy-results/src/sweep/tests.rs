//! Unit tests of `sweep`.

use super::*;

/// An estimate of `mean` with a 95 % interval of ± `pct` %.
fn est(mean: f64, pct: f64) -> Estimate {
    let half = mean * pct / 100.0;
    Estimate { mean, ci_low: mean - half, ci_high: mean + half, n: 10, std_dev: half / 2.26 }
}

fn row(arg: &str, energy_j: f64, energy_pct: f64, time_s: f64, time_pct: f64) -> SweepRow {
    SweepRow {
        arg: arg.into(),
        energy_j: est(energy_j, energy_pct),
        dynamic_j: est(energy_j * 0.6, energy_pct),
        time_s: est(time_s, time_pct),
    }
}

#[test]
fn a_relative_change_combines_the_two_relative_half_widths() {
    let c = RelativeChange::of(&est(0.9, 0.3), &est(1.0, 0.4));
    assert!((c.pct + 10.0).abs() < 1e-9, "{c:?}");
    // ±0.5 % of the ratio 0.9: ±0.45 points.
    assert!((c.low_pct + 10.45).abs() < 1e-9 && (c.high_pct + 9.55).abs() < 1e-9, "{c:?}");
    assert!(c.beyond_intervals());
    assert!(!RelativeChange::of(&est(0.998, 0.3), &est(1.0, 0.4)).beyond_intervals());
}

#[test]
fn the_least_energy_apart_from_the_fastest_is_said_with_its_interval() {
    // block 128 draws 7.9 % less energy than block 256, which is 3.1 % faster.
    let rows = [
        row("64", 30.0e-3, 0.5, 80e-6, 0.2),
        row("128", 25.0e-3 * 0.921, 0.5, 70e-6 * 1.031, 0.2),
        row("256", 25.0e-3, 0.5, 70e-6, 0.2),
    ];
    let v = sweep_verdict(&rows).unwrap();
    assert_eq!((v.least_energy, v.least_time), (1, 2));
    let line = verdict_line("block", &rows, &v);
    assert!(line.starts_with("block 256 is fastest; block 128 costs 7.9 % ["), "{line}");
    assert!(line.ends_with("less energy, 3.1 % slower"), "{line}");
}

#[test]
fn a_difference_inside_the_intervals_is_not_called_a_saving() {
    // 0.4 % less energy with ±1 % intervals: not told apart.
    let rows = [row("128", 25.0e-3 * 0.996, 1.0, 72e-6, 0.2), row("256", 25.0e-3, 1.0, 70e-6, 0.2)];
    let v = sweep_verdict(&rows).unwrap();
    assert!(!v.energy_vs_fastest.beyond_intervals());
    let line = verdict_line("block", &rows, &v);
    assert!(line.contains("not beyond the intervals") && line.contains("the fastest costs as little"), "{line}");
}

#[test]
fn one_argument_both_fastest_and_cheapest_names_the_runner_up() {
    let rows = [row("128", 30e-3, 0.5, 80e-6, 0.2), row("256", 25e-3, 0.5, 70e-6, 0.2)];
    let v = sweep_verdict(&rows).unwrap();
    let line = verdict_line("block", &rows, &v);
    assert!(
        line.starts_with("block 256 is the fastest and costs the least energy; the next, block 128, costs 20.0 %"),
        "{line}"
    );
    let close = [row("128", 25.05e-3, 0.5, 80e-6, 0.2), row("256", 25e-3, 0.5, 70e-6, 0.2)];
    let line = verdict_line("block", &close, &sweep_verdict(&close).unwrap());
    assert!(line.ends_with("more energy, not beyond the intervals"), "{line}");
}

#[test]
fn no_verdict_from_figures_that_are_not_finite_and_positive() {
    assert!(sweep_verdict(&[]).is_none());
    assert!(sweep_verdict(&[row("1", f64::NAN, 1.0, 1e-3, 1.0)]).is_none());
    assert!(sweep_verdict(&[row("1", 1e-3, 1.0, 0.0, 1.0)]).is_none());
    let table = render_sweep("reduce", "block", &[row("1", f64::INFINITY, 1.0, 1e-3, 1.0)], true);
    assert!(table.contains("verdict: none"), "{table}");
}

#[test]
fn the_table_marks_the_optima_and_says_simulated() {
    let rows = [row("64", 30.0e-3, 0.5, 60e-6, 0.2), row("1024", 25.0e-3, 0.5, 70e-6, 0.2)];
    let table = render_sweep("reduce", "block", &rows, true);
    assert!(table.starts_with("reduce over block (2 arguments, simulated"), "{table}");
    assert!(table.contains("← least time") && table.contains("← least energy"), "{table}");
    assert!(table.contains("verdict: block 64 is fastest; block 1024 costs"), "{table}");
}

#[test]
fn a_zero_figure_shows_its_interval_in_its_unit_never_inf_percent() {
    // A sweep point whose dynamic energy is 0 J (issue 60: `0.000 J ±inf %`).
    let mut zero = row("1", 0.5, 1.0, 1e-3, 0.5);
    zero.dynamic_j = Estimate { mean: 0.0, ci_low: -1e-3, ci_high: 1e-3, n: 10, std_dev: 1.4e-3 };
    let rows = [zero, row("2", 0.6, 1.0, 2e-3, 0.5)];
    let text = render_sweep("s", "n", &rows, false);
    assert!(!text.contains("inf"), "{text}");
    let (cells, _) = sweep_cells("n", &rows);
    assert_eq!(cells[0][2], "0.000 J ±1.00 mJ", "{text}");
    assert!(cells[0][1].ends_with("±1.00 %"), "{:?}", cells[0]);
}
