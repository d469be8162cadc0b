//! The model's terms: each one's name, kind, unit and ncu metrics ([`CLASSES`], and the
//! kinds and units of later protocols' terms), and the model's classes made of them, costs
//! not yet fitted.

use energy_harness::{Error, ErrorKind, Result};
use energy_report::ModelClass;

use crate::protocol::Protocol;

/// One term of the model: its name, kind, unit, the ncu metrics that count it (less those
/// subtracted) and the units per metric count.
#[derive(Clone, Copy, Debug)]
pub struct ClassDef {
    /// Name.
    pub name: &'static str,
    /// `compute`, `data movement` or `time`.
    pub kind: &'static str,
    /// What one unit is.
    pub unit: &'static str,
    /// Metrics summed.
    pub metrics: &'static [&'static str],
    /// Metrics subtracted.
    pub subtract: &'static [&'static str],
    /// Units per metric count.
    pub scale: f64,
}

/// The model's terms. Thread-level instruction counts are divided by 32 (one unit: a full
/// warp's worth); the L1 has a cost per request (address and tag work) and per sector
/// (data); L2 and DRAM per 32-byte sector; `kernel time` is the power a running kernel
/// draws above active idle whatever it does (measured by resident, sleeping warps).
pub const CLASSES: [ClassDef; 17] = [
    ClassDef {
        name: "fp32 (FADD, FMUL, FFMA)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "fp16 (HFMA2, HADD2, HMUL2)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__inst_executed_pipe_fma_type_fp16.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "tensor MMA (HMMA)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__inst_executed_pipe_tensor_op_hmma.sum"],
        subtract: &["smsp__inst_executed_pipe_fma_type_fp16.sum"],
        scale: 1.0,
    },
    ClassDef {
        name: "fp64",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_fp64_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "integer and logic",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_integer_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "conversion",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_conversion_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "warp shuffle and vote",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__sass_thread_inst_executed_op_inter_thread_communication_pred_on.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "special function (XU pipe)",
        kind: "compute",
        unit: "warp-instruction",
        metrics: &["smsp__inst_executed_pipe_xu.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "shared loads",
        kind: "data movement",
        unit: "wavefront",
        metrics: &["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "shared stores",
        kind: "data movement",
        unit: "wavefront",
        metrics: &["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L1 global load sectors",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L1 global load requests",
        kind: "data movement",
        unit: "request",
        metrics: &["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L2 reads",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["lts__t_sectors_srcunit_tex_op_read.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "L2 writes",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["lts__t_sectors_srcunit_tex_op_write.sum"],
        subtract: &[],
        scale: 1.0,
    },
    ClassDef {
        name: "DRAM reads",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["dram__bytes_read.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "DRAM writes",
        kind: "data movement",
        unit: "32 B sector",
        metrics: &["dram__bytes_write.sum"],
        subtract: &[],
        scale: 1.0 / 32.0,
    },
    ClassDef {
        name: "kernel time",
        kind: "time",
        unit: "second",
        metrics: &["gpu__time_duration.sum"],
        subtract: &[],
        scale: 1e-9,
    },
];

/// Kind and unit of the terms later protocols add to [`CLASSES`] (protocol v2: FP64 tensor MMA
/// and warpgroup MMA); a protocol's terms take their kind and unit from these two lists.
pub const LATER_TERMS: [(&str, &str, &str); 2] = [
    ("warpgroup MMA (HGMMA)", "compute", "4096 FP16/BF16 math ops (one m16n8k16's work)"),
    ("fp64 tensor (DMMA)", "compute", "DMMA pipe cycle (per SM sub-partition)"),
];

/// The model's classes of `protocol`, costs not yet fitted (zero): its terms in its order,
/// their metrics and scale as it states them, kind and unit from [`CLASSES`] and
/// [`LATER_TERMS`] by name (a term named in neither is refused).
pub fn classes_of(protocol: &Protocol) -> Result<Vec<ModelClass>> {
    protocol
        .terms
        .iter()
        .map(|t| {
            let known = CLASSES
                .iter()
                .map(|c| (c.name, c.kind, c.unit))
                .chain(LATER_TERMS)
                .find(|(name, _, _)| *name == t.name);
            let Some((_, kind, unit)) = known else {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("the protocol's term `{}` has no kind and unit in energy_suites::model", t.name),
                ));
            };
            Ok(unfitted(&t.name, kind, unit, t.metrics.clone(), t.subtract.clone(), t.scale))
        })
        .collect()
}

/// The model's classes, costs not yet fitted (zero).
pub fn model_classes() -> Vec<ModelClass> {
    CLASSES
        .iter()
        .map(|c| {
            let strings = |list: &[&str]| list.iter().map(|m| m.to_string()).collect();
            unfitted(c.name, c.kind, c.unit, strings(c.metrics), strings(c.subtract), c.scale)
        })
        .collect()
}

/// A class with its costs not yet fitted (zero, no interval, no constant-data cost).
fn unfitted(
    name: &str,
    kind: &str,
    unit: &str,
    ncu_metrics: Vec<String>,
    subtract_metrics: Vec<String>,
    scale: f64,
) -> ModelClass {
    ModelClass {
        name: name.into(),
        kind: kind.into(),
        unit: unit.into(),
        ncu_metrics,
        subtract_metrics,
        scale,
        j_per_unit: 0.0,
        ci_j: None,
        constant: None,
    }
}
