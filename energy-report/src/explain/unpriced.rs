//! Work a model may have no term for (warpgroup MMA, TMA, atomics, ...): the metrics that
//! count it, and what of it a profiled kernel did.

use serde::{Deserialize, Serialize};

use super::EnergyModel;
use crate::ncu::NcuKernel;

/// Work a model may have no term for, and the Nsight Compute metrics that count it (names as
/// ncu 2025.3 offers them for GH100; other GPUs may lack them). The model suite's protocols
/// list these as candidate terms (`tests/model_protocol.rs` holds each protocol's among
/// them, and every one in some protocol). When a profiled launch carries these metrics and
/// the model has no class for the work ([`PRICED_BY`]), `explain` reports the work it
/// counts: its energy is in the unexplained part, or above the bracket.
pub const UNPRICED_WORK: [(&str, &[&str]); 5] = [
    ("wgmma", &["smsp__inst_executed_pipe_tensor_op_gmma.sum"]),
    ("tma", &["l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"]),
    (
        "atomics",
        &[
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
            "lts__t_sectors_op_atom.sum",
            "lts__t_sectors_op_red.sum",
        ],
    ),
    ("fp64 tensor (DMMA)", &["smsp__inst_executed_pipe_tensor_op_dmma.sum"]),
    ("tf32 warpgroup MMA", &["sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum"]),
];

/// The work of [`UNPRICED_WORK`] that a model prices when one of its classes counts one of
/// these metrics (protocol v2's terms: warpgroup MMA by its FP16/BF16 ops, DMMA by its pipe's
/// cycles); such work is not reported unpriced.
pub const PRICED_BY: [(&str, &[&str]); 2] = [
    ("wgmma", &["sm__ops_path_tensor_op_hgmma_src_fp16.sum"]),
    ("fp64 tensor (DMMA)", &["sm__pipe_tensor_op_dmma_cycles_active.sum"]),
];

/// Work of a kernel that the model has no term for ([`UNPRICED_WORK`]), as counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UnpricedWork {
    /// The candidate term's name.
    pub name: String,
    /// Its metrics' sum per launch (averaged over the profiled launches).
    pub count_per_launch: f64,
    /// The metrics summed.
    pub metrics: Vec<String>,
}

/// The work of [`UNPRICED_WORK`] that `launches` count (every metric of an entry present in
/// every launch and their sum above zero) and `model` has no class for ([`PRICED_BY`]);
/// entries not profiled are left out.
pub fn unpriced_work(model: &EnergyModel, launches: &[&NcuKernel]) -> Vec<UnpricedWork> {
    let priced = |name: &str| {
        PRICED_BY.iter().filter(|(n, _)| *n == name).any(|(_, metrics)| {
            model.classes.iter().any(|c| c.ncu_metrics.iter().any(|m| metrics.contains(&m.as_str())))
        })
    };
    UNPRICED_WORK
        .iter()
        .filter(|(name, _)| !priced(name))
        .filter_map(|(name, metrics)| {
            let mut sum = 0.0;
            for launch in launches {
                for metric in *metrics {
                    sum += launch.metric(metric).ok().filter(|v| v.is_finite() && *v >= 0.0)?;
                }
            }
            let count_per_launch = sum / launches.len().max(1) as f64;
            (count_per_launch > 0.0).then(|| UnpricedWork {
                name: name.to_string(),
                count_per_launch,
                metrics: metrics.iter().map(|m| m.to_string()).collect(),
            })
        })
        .collect()
}
