//! Costs per SASS instruction class fitted over instruction tables of one GPU model:
//! `cargo run --release --example fit_costs -- LEVEL TABLE.json...` prints the costs with
//! their intervals and each step, measured against predicted (in sample).

use std::path::PathBuf;

use energy_suites::costs::fit_compute;
use kernel_energy::instructions::suite::read_table;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: fit_costs LEVEL TABLE.json...");
        return std::process::ExitCode::from(2);
    }
    let mut tables = Vec::new();
    for p in &args[1..] {
        match read_table(&PathBuf::from(p)) {
            Ok(t) => tables.push(t),
            Err(e) => {
                eprintln!("error: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let refs: Vec<_> = tables.iter().collect();
    let fit = match fit_compute(&refs, &args[0]) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!("| class | pJ per warp-instruction (dynamic) [95 % CI] | steps using it |\n|---|---|---|");
    for c in &fit.classes {
        let ci = c
            .ci_j
            .map(|(lo, hi)| format!(" [{:.0}, {:.0}]", lo * 1e12, hi * 1e12))
            .unwrap_or_else(|| " (held at 0)".into());
        println!("| {} | {:.0}{ci} | {} |", c.name, c.j * 1e12, c.rows);
    }
    println!(
        "\nIn sample: {} steps, mean absolute error {:.1} %; each step left out of the fit and predicted: {:.1} %.\n",
        fit.steps.len(),
        fit.mape * 100.0,
        fit.loo_mape * 100.0
    );
    println!(
        "| step | measured, pJ per warp | predicted (in sample) | error | predicted (left out) | error |\n|---|---|---|---|---|---|"
    );
    for (s, loo) in fit.steps.iter().zip(&fit.loo_predicted_j) {
        println!(
            "| {} | {:.0} | {:.0} | {:+.1} % | {:.0} | {:+.1} % |",
            s.label,
            s.measured_j * 1e12,
            s.predicted_j * 1e12,
            (s.predicted_j - s.measured_j) / s.measured_j * 100.0,
            loo * 1e12,
            (loo - s.measured_j) / s.measured_j * 100.0
        );
    }
    if !fit.left_out.is_empty() {
        println!("\nLeft out: {}.", fit.left_out.join("; "));
    }
    std::process::ExitCode::SUCCESS
}
