//! Costs per SASS instruction class, fitted by non-negative least squares over the
//! instruction suite's chains (issue 20's first step): each chain step's dynamic energy per
//! warp is the sum over its SASS instructions of their class's cost.
//!
//! The classes group opcodes by the unit that runs them (FP32, FP16, FP64, integer
//! multiply-add, the integer and logic ALU, the special-function unit, conversions, bit
//! counting). Only steps whose machine code was read and that hold no branch or call enter
//! the fit (the others run data-dependent instructions).

use energy_harness::{Error, ErrorKind, Result};
use energy_report::nnls;
use serde::Serialize;

use kernel_energy::instructions::suite::InstructionTable;

/// The classes and the SASS opcodes (as the suite's machine-code reader names them) in each.
pub const COMPUTE_CLASSES: [(&str, &[&str]); 8] = [
    ("fp32", &["FFMA", "FADD", "FMUL"]),
    ("fp16", &["HFMA2", "HADD2", "HMUL2", "HADD2.F32"]),
    ("fp64", &["DADD", "DMUL", "DFMA"]),
    ("int multiply-add", &["IMAD", "IMAD.HI", "IMAD.X", "IMAD.WIDE", "IMAD.IADD", "IMAD.MOV"]),
    (
        "int/logic ALU",
        &[
            "IADD", "IADD3", "LOP3", "ISETP", "SHF", "SEL", "IMNMX", "VIMNMX", "IABS", "PRMT", "SGXT", "BMSK", "LEA",
            "FMNMX", "FSEL", "FSETP", "MOV", "PLOP3",
        ],
    ),
    ("special function (MUFU)", &["MUFU.RCP", "MUFU.SQRT", "MUFU.RSQ", "MUFU.SIN", "MUFU.COS", "MUFU.LG2", "MUFU.EX2"]),
    ("conversion", &["I2F", "F2I", "F2F", "I2FP", "F2FP", "I2I", "FRND"]),
    ("bit count", &["POPC", "FLO", "BREV"]),
];

/// The class of a SASS opcode class name, if the model has one.
pub fn class_of(opcode: &str) -> Option<usize> {
    COMPUTE_CLASSES.iter().position(|(_, ops)| ops.contains(&opcode))
}

/// One fitted class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassCost {
    /// The class.
    pub name: String,
    /// Dynamic energy per warp-instruction, J.
    pub j: f64,
    /// Its 95 % interval (`None`: held at zero by the constraint).
    pub ci_j: Option<(f64, f64)>,
    /// Rows of the fit that use the class.
    pub rows: usize,
}

/// One chain step, measured and predicted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepFit {
    /// The instruction, its level and the board.
    pub label: String,
    /// Measured dynamic energy per warp and step, J.
    pub measured_j: f64,
    /// The fit's prediction, J.
    pub predicted_j: f64,
}

/// The fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComputeFit {
    /// The classes with their costs.
    pub classes: Vec<ClassCost>,
    /// Every step of the fit (in-sample).
    pub steps: Vec<StepFit>,
    /// Mean absolute percentage error over the steps (in sample).
    pub mape: f64,
    /// The same, each step predicted by a fit without it (leave one out): an estimate of
    /// the error on code outside the fit.
    pub loo_mape: f64,
    /// Each step's leave-one-out prediction, J (in the order of `steps`).
    pub loo_predicted_j: Vec<f64>,
    /// Steps left out and why.
    pub left_out: Vec<String>,
}

/// Fits the class costs to the rows of `tables` at `level` (several boards of one model may
/// be given: each row is one observation).
pub fn fit_compute(tables: &[&InstructionTable], level: &str) -> Result<ComputeFit> {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut labels = Vec::new();
    let mut left_out = Vec::new();
    for table in tables {
        let board = table.device.as_ref().map(|d| d.uuid.get(..12).unwrap_or(&d.uuid).to_string()).unwrap_or_default();
        for row in table.rows.iter().filter(|r| r.level == level) {
            let (Some(bound), Some(slope)) = (&row.bound, &row.slope) else {
                left_out.push(format!("{} ({board}): no machine code bound (branch or call in the step)", row.label));
                continue;
            };
            if row.withheld.is_some() {
                left_out.push(format!("{} ({board}): withheld", row.label));
                continue;
            }
            let mut counts = vec![0.0; COMPUTE_CLASSES.len()];
            let mut unknown = Vec::new();
            for (opcode, n) in &bound.per_step_classes {
                match class_of(opcode) {
                    Some(c) => counts[c] += n,
                    None => unknown.push(opcode.clone()),
                }
            }
            if !unknown.is_empty() {
                left_out.push(format!("{} ({board}): opcodes in no class: {}", row.label, unknown.join(", ")));
                continue;
            }
            a.push(counts);
            b.push(slope.dynamic_warp_j.mean * f64::from(row.ops_per_step));
            labels.push(format!("{} ({board})", row.label));
        }
    }
    if a.len() <= COMPUTE_CLASSES.len() {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("{} usable steps for {} classes: too few to fit", a.len(), COMPUTE_CLASSES.len()),
        ));
    }
    let fit = nnls(&a, &b)?;
    let classes = COMPUTE_CLASSES
        .iter()
        .enumerate()
        .map(|(j, (name, _))| ClassCost {
            name: name.to_string(),
            j: fit.x[j],
            ci_j: fit.ci[j],
            rows: a.iter().filter(|r| r[j] > 0.0).count(),
        })
        .collect();
    let steps: Vec<StepFit> = a
        .iter()
        .zip(&b)
        .zip(labels)
        .map(|((row, y), label)| StepFit {
            label,
            measured_j: *y,
            predicted_j: row.iter().zip(&fit.x).map(|(n, c)| n * c).sum(),
        })
        .collect();
    let mape =
        steps.iter().map(|s| ((s.predicted_j - s.measured_j) / s.measured_j).abs()).sum::<f64>() / steps.len() as f64;
    let mut loo_predicted_j = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        let rest_a: Vec<Vec<f64>> = a.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, r)| r.clone()).collect();
        let rest_b: Vec<f64> = b.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, y)| *y).collect();
        let x = nnls(&rest_a, &rest_b)?.x;
        loo_predicted_j.push(a[i].iter().zip(&x).map(|(n, c)| n * c).sum());
    }
    let loo_mape =
        loo_predicted_j.iter().zip(&b).map(|(p, y)| ((p - y) / y).abs()).sum::<f64>() / loo_predicted_j.len() as f64;
    Ok(ComputeFit { classes, steps, mape, loo_mape, loo_predicted_j, left_out })
}
