//! The hardware's throughput bound: the least GPU time a chain step can take, from the SASS
//! that runs (instructions per step and the pipe each issues to) and the SM's issue and
//! pipe rates. A measured time per instruction below it is impossible; the suite flags it
//! and does not publish the figure.
//!
//! Rates are per SM and clock, in warp-instructions, for compute capability 9.0 (Hopper),
//! from the CUDA C++ Programming Guide's arithmetic-throughput table: each SM has four
//! schedulers issuing one warp-instruction per clock each; 128 FP32 lanes (two FMA pipes of
//! 16 lanes per scheduler: FFMA, FADD, FMUL, packed HFMA2/HADD2/HMUL2, and the integer
//! multiply-adds, which may use only the "heavy" one); 64 integer-ALU lanes (add, logic,
//! shift, compare, min/max, select); 64 FP64 lanes (H100 SXM and H200); 16 lanes of the
//! special-function unit (MUFU); 16 for population count, leading zeros and bit reverse;
//! 16 for conversions. Where the guide is silent for an opcode, only the issue rate binds
//! it: the bound stays a true lower bound (a rate taken too high can only weaken it).

use std::collections::BTreeMap;

use crate::sass::SassInstruction;

/// A pipe of the SM and its rate, warp-instructions per clock per SM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pipe {
    /// Its name in tables.
    pub name: &'static str,
    /// Warp-instructions per clock per SM.
    pub rate: f64,
}

/// The FP32 / FP16x2 / integer multiply-add pipes together (two per scheduler).
pub const FMA: Pipe = Pipe { name: "fma", rate: 4.0 };
/// The integer multiply-adds' share of [`FMA`] (the heavy pipe only).
pub const FMA_HEAVY: Pipe = Pipe { name: "fma-heavy", rate: 2.0 };
/// The integer ALU: add, logic, shift, compare, min/max, select.
pub const ALU: Pipe = Pipe { name: "alu", rate: 2.0 };
/// Double precision.
pub const FP64: Pipe = Pipe { name: "fp64", rate: 2.0 };
/// The special-function unit.
pub const MUFU: Pipe = Pipe { name: "mufu", rate: 0.5 };
/// Population count, leading zeros, bit reverse.
pub const BIT_COUNT: Pipe = Pipe { name: "bitcount", rate: 0.5 };
/// Conversions between types.
pub const CONVERSION: Pipe = Pipe { name: "conversion", rate: 0.5 };
/// Every pipe with a rate, in table order.
pub const PIPES: [Pipe; 7] = [FMA, FMA_HEAVY, ALU, FP64, MUFU, BIT_COUNT, CONVERSION];
/// Warp-instructions the SM issues per clock (four schedulers).
pub const ISSUE_PER_SM: f64 = 4.0;
/// Schedulers (sub-partitions) per SM.
pub const SCHEDULERS_PER_SM: f64 = 4.0;

/// The pipes an opcode occupies (an integer multiply-add counts in [`FMA`] and in
/// [`FMA_HEAVY`]); empty where only the issue rate binds it.
pub fn pipes_of(opcode: &str) -> &'static [Pipe] {
    const FMA_ONLY: &[Pipe] = &[FMA];
    const IMAD: &[Pipe] = &[FMA, FMA_HEAVY];
    let base = opcode.split('.').next().unwrap_or(opcode);
    match base {
        "FFMA" | "FADD" | "FMUL" | "FFMA32I" | "FADD32I" | "FMUL32I" | "HFMA2" | "HADD2" | "HMUL2" => FMA_ONLY,
        "IMAD" | "IMAD32I" => IMAD,
        "IADD3" | "IADD" | "IADD32I" | "LOP3" | "LOP" | "LOP32I" | "SHF" | "SHL" | "SHR" | "ISETP" | "FSETP"
        | "SEL" | "FSEL" | "IMNMX" | "VIMNMX" | "FMNMX" | "IABS" | "LEA" | "PRMT" | "PLOP3" => &[ALU],
        "DADD" | "DMUL" | "DFMA" => &[FP64],
        "MUFU" => &[MUFU],
        "POPC" | "FLO" | "BREV" => &[BIT_COUNT],
        "I2F" | "F2I" | "F2F" | "I2I" | "FRND" => &[CONVERSION],
        _ => &[],
    }
}

/// Whether a step holds control flow (a branch, a call into a subroutine, a convergence
/// barrier): which of its instructions run then depends on the data, and a bound from
/// all of them would not be a lower bound.
pub fn has_control_flow(classes_per_step: &BTreeMap<String, f64>) -> bool {
    classes_per_step.iter().any(|(class, n)| {
        *n > 0.0
            && matches!(
                class.split('.').next().unwrap_or(""),
                "BRA" | "CALL" | "BSSY" | "BSYNC" | "RET" | "JMP" | "BRX"
            )
    })
}

/// Warp-instructions per pipe (and `issue`: all of them) in `instructions`.
pub fn pipe_counts(instructions: &[SassInstruction]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for i in instructions {
        *counts.entry("issue".to_string()).or_insert(0) += 1;
        for pipe in pipes_of(&i.opcode) {
            *counts.entry(pipe.name.to_string()).or_insert(0) += 1;
        }
    }
    counts
}

/// The least time one chain step takes, and what binds it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepBound {
    /// Clocks per step of one SM running its warps.
    pub cycles_per_step: f64,
    /// The binding limit: `issue` or a pipe's name.
    pub binding: String,
}

/// The least clocks one step takes on an SM holding `warps_per_sm` warps, each executing
/// the step's `per_step` warp-instructions by pipe (`issue`: all of them): spread over the
/// schedulers, each issues one warp-instruction per clock and each pipe takes its share of
/// the SM's rate.
pub fn step_bound(per_step: &BTreeMap<String, f64>, warps_per_sm: f64) -> StepBound {
    let schedulers = warps_per_sm.clamp(1.0, SCHEDULERS_PER_SM);
    let warps_per_scheduler = warps_per_sm / schedulers;
    let mut binding = "issue".to_string();
    let mut per_scheduler = per_step.get("issue").copied().unwrap_or(0.0) * SCHEDULERS_PER_SM / ISSUE_PER_SM;
    for pipe in PIPES {
        let n = per_step.get(pipe.name).copied().unwrap_or(0.0);
        let clocks = n * SCHEDULERS_PER_SM / pipe.rate;
        // A pipe that binds as hard as issue is named: it says more.
        if clocks > 0.0 && clocks + 1e-12 >= per_scheduler {
            per_scheduler = clocks;
            binding = pipe.name.to_string();
        }
    }
    StepBound { cycles_per_step: warps_per_scheduler * per_scheduler, binding }
}

/// `(a - b) / steps` for each key of either count.
pub fn per_step(a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>, steps: f64) -> BTreeMap<String, f64> {
    crate::sass::difference(a, b).into_iter().map(|(key, d)| (key, d as f64 / steps)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn fp32_at_full_occupancy_is_four_per_clock() {
        // 64 warps per SM, one FFMA per step: 16 warps per scheduler, one clock each.
        let b = step_bound(&counts(&[("issue", 1.0), ("fma", 1.0)]), 64.0);
        assert_eq!(b.cycles_per_step, 16.0);
        // The H100 figure of the issue: 2048 threads x 132 SMs at 1980 MHz, one fp32
        // instruction per thread: 16 clocks / 1.98 GHz = 8.08 ns of grid time.
        assert!((b.cycles_per_step / 1.98e9 * 1e9 - 8.08).abs() < 0.01);
    }

    #[test]
    fn mufu_binds_the_special_functions() {
        let b = step_bound(&counts(&[("issue", 1.0), ("mufu", 1.0)]), 64.0);
        assert_eq!(b.binding, "mufu");
        // 128 clocks per step: 64.6 ns at 1980 MHz (the issue's lg2/ex2 figure).
        assert!((b.cycles_per_step / 1.98e9 * 1e9 - 64.6).abs() < 0.1, "{}", b.cycles_per_step);
    }

    #[test]
    fn integer_adds_split_over_two_pipes_are_bound_by_issue() {
        // ptxas alternates IADD3 (alu) and IMAD.IADD (fma-heavy): one of each per two steps.
        let b = step_bound(&counts(&[("issue", 1.0), ("alu", 0.5), ("fma", 0.5), ("fma-heavy", 0.5)]), 64.0);
        assert_eq!(b.cycles_per_step, 16.0, "no pipe slower than issue: {b:?}");
        let alu_only = step_bound(&counts(&[("issue", 1.0), ("alu", 1.0)]), 64.0);
        assert_eq!((alu_only.cycles_per_step, alu_only.binding.as_str()), (32.0, "alu"));
    }

    #[test]
    fn one_warp_issues_one_instruction_per_clock() {
        let b = step_bound(&counts(&[("issue", 3.0), ("fma", 2.0)]), 1.0);
        // One scheduler: 3 issues, or 2 FFMA at 8 lanes... the FMA pipes take one per clock
        // per scheduler (4 per SM / 4 schedulers): 2 clocks; issue binds at 3.
        assert_eq!((b.cycles_per_step, b.binding.as_str()), (3.0, "issue"));
        let mufu = step_bound(&counts(&[("issue", 1.0), ("mufu", 1.0)]), 1.0);
        assert_eq!(mufu.cycles_per_step, 8.0);
    }

    #[test]
    fn opcodes_map_to_their_pipes() {
        assert_eq!(pipes_of("FFMA"), &[FMA]);
        assert_eq!(pipes_of("IMAD.IADD"), &[FMA, FMA_HEAVY]);
        assert_eq!(pipes_of("IADD3.X"), &[ALU]);
        assert_eq!(pipes_of("MUFU.LG2"), &[MUFU]);
        assert_eq!(pipes_of("DFMA"), &[FP64]);
        assert_eq!(pipes_of("POPC"), &[BIT_COUNT]);
        assert_eq!(pipes_of("VIMNMX.U32"), &[ALU]);
        assert!(pipes_of("BRA").is_empty() && pipes_of("I2FP.F32.S32").is_empty());
        let call: BTreeMap<String, f64> = [("CALL".to_string(), 1.0), ("MUFU.RSQ".to_string(), 1.0)].into();
        assert!(has_control_flow(&call));
        assert!(!has_control_flow(&[("FFMA".to_string(), 1.0)].into()));
    }
}
