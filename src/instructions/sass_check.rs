//! The machine-code check of the instruction suite's kernels (Arafa's SASS inspection):
//! each chain step holds the instruction, nothing else was added to the loop. Built on the
//! `sass` tools (ptxas, cuobjdump, the SASS reader).

use std::collections::BTreeMap;

use super::{entry_name, Instruction, Variant, K_NET, K_SWEEP};
use crate::sass::{describe_counts, difference, histogram, loop_body, SassInstruction};

/// Largest per-iteration difference (instructions, all classes) allowed between a measured
/// loop and its baseline beyond the chain steps: register moves and constant loads at the
/// loop's edges that ptxas adds once per iteration, not per step.
pub const MAX_RESIDUAL_PER_ITERATION: i64 = 8;

/// What the check found for one instruction at one architecture and optimization level.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainSass {
    /// SASS of one chain step: classes and mean counts, from the loops at two chain lengths (ptxas
    /// may alternate forms from step to step, as `IADD3` and `IMAD.MOV` for a negation, to
    /// use two pipes, so a class can count a fraction per step).
    pub per_step: BTreeMap<String, f64>,
    /// Per iteration, what the K kernel's loop holds beyond its baseline's and K steps
    /// (non-zero classes only; ptxas's moves and loads at the loop's edges).
    pub residual: BTreeMap<String, f64>,
    /// Instructions in the loop of the K = 32, K = 128 and baseline kernels.
    pub loop_lengths: (usize, usize, usize),
}

impl ChainSass {
    /// One step's SASS, as `2 IMAD + 0.50 MOV`.
    pub fn describe(&self) -> String {
        describe_counts(&self.per_step)
    }

    /// The per-iteration residual, as `2 MOV`, or `nothing`.
    pub fn describe_residual(&self) -> String {
        describe_counts(&self.residual)
    }

    /// SASS instructions per step, all classes.
    pub fn instructions_per_step(&self) -> f64 {
        self.per_step.values().sum()
    }
}

fn loop_histogram(
    functions: &BTreeMap<String, Vec<SassInstruction>>,
    instruction: &Instruction,
    variant: Variant,
) -> Result<(BTreeMap<String, i64>, usize), String> {
    let name = entry_name(instruction, variant);
    let function = functions.get(&name).ok_or_else(|| format!("kernel {name} is missing from the cubin"))?;
    let body = loop_body(function).ok_or_else(|| format!("kernel {name}: no loop found in its SASS"))?;
    Ok((histogram(body), body.len()))
}

/// Checks the machine code of one instruction's kernels (Arafa's SASS inspection):
/// - one chain step, `(loop at the longest K - loop at K_NET) / (difference in K)` (the
///   helpers' loops' difference taken out), holds at least `Instruction::sass_per_step`
///   instructions of the classes the catalog expects (less two over the steps, for the
///   loop's edges): the instruction is in the loop K times per iteration, not folded away;
///   no class shrinks;
/// - each chain loop differs from its baseline's (the loop alone, or the helpers alone) by
///   its K steps plus at most [`MAX_RESIDUAL_PER_ITERATION`] instructions per iteration
///   (nothing else was added), at every K of the sweep; for a chain that calls a
///   subroutine, register moves may differ by up to three per step besides.
pub fn check_chain(
    functions: &BTreeMap<String, Vec<SassInstruction>>,
    instruction: &Instruction,
) -> Result<ChainSass, String> {
    let long_k = *K_SWEEP.last().unwrap_or(&K_NET);
    let (short, short_len) = loop_histogram(functions, instruction, Variant::Chain(K_NET))?;
    let (long, long_len) = loop_histogram(functions, instruction, Variant::Chain(long_k))?;
    let (_, base_len) = loop_histogram(functions, instruction, Variant::Base)?;
    let steps = f64::from(long_k - K_NET);
    let mut added = difference(&long, &short);
    if instruction.helper.is_some() {
        // The longer chain also has more helpers: take them out with the helpers' loops.
        let (h_long, _) = loop_histogram(functions, instruction, Variant::Helpers(long_k))?;
        let (h_short, _) = loop_histogram(functions, instruction, Variant::Helpers(K_NET))?;
        added = difference(&added, &difference(&h_long, &h_short));
    }
    let shrunk: i64 = added.values().filter(|d| **d < 0).map(|d| -d).sum();
    if shrunk > MAX_RESIDUAL_PER_ITERATION {
        return Err(format!(
            "{}: the K={long_k} loop has fewer instructions of some classes than the K={K_NET} loop ({}): the chain was changed or folded",
            instruction.label,
            describe_counts(&added.iter().filter(|(_, d)| **d < 0).map(|(c, d)| (c.clone(), *d as f64)).collect())
        ));
    }
    let per_step: BTreeMap<String, f64> =
        added.iter().filter(|(_, d)| **d > 0).map(|(c, d)| (c.clone(), *d as f64 / steps)).collect();
    let expected: f64 = instruction.sass.iter().map(|class| per_step.get(*class).copied().unwrap_or(0.0)).sum();
    // Over the steps, up to two of the loop's edge instructions may move between kernels.
    if expected * steps + 2.0 + 1e-9 < instruction.sass_per_step() * steps {
        return Err(format!(
            "{}: one step's SASS is {} but it should hold {} of {:?}",
            instruction.label,
            describe_counts(&per_step),
            instruction.sass_per_step(),
            instruction.sass
        ));
    }
    let mut residual = BTreeMap::new();
    for k in K_SWEEP {
        let variant = Variant::Chain(k);
        let (main, _) = loop_histogram(functions, instruction, variant)?;
        let (baseline, _) = loop_histogram(functions, instruction, variant.baseline(instruction))?;
        let n = f64::from(k);
        let extra = difference(&main, &baseline);
        let mut rest = BTreeMap::new();
        for class in extra.keys().chain(per_step.keys()) {
            let r = extra.get(class).copied().unwrap_or(0) as f64 - per_step.get(class).copied().unwrap_or(0.0) * n;
            if r.abs() > 1e-9 {
                rest.insert(class.clone(), r);
            }
        }
        // Around a call into a subroutine (the IEEE slow paths) ptxas shuffles registers
        // differently at each chain length: moves (and their IMAD and LDC forms) may differ
        // by up to three per step (sqrt.rn.f64 at K = 8: 22 fewer); anything else is held
        // to the fixed allowance.
        let calls = per_step.contains_key("CALL");
        let shuffle = |class: &str| calls && matches!(class, "MOV" | "IMAD" | "LDC");
        let moves: f64 = rest.iter().filter(|(c, _)| shuffle(c)).map(|(_, v)| v.abs()).sum();
        let size: f64 = rest.iter().filter(|(c, _)| !shuffle(c)).map(|(_, v)| v.abs()).sum();
        if size > MAX_RESIDUAL_PER_ITERATION as f64 + 1e-9
            || moves > (3.0 * n).max(MAX_RESIDUAL_PER_ITERATION as f64) + 1e-9
        {
            return Err(format!(
                "{} ({}): beyond its {n} steps the loop differs from the baseline's by {} per iteration (more than {MAX_RESIDUAL_PER_ITERATION})",
                instruction.label,
                variant.suffix(),
                describe_counts(&rest)
            ));
        }
        if k == K_NET {
            residual = rest;
        }
    }
    Ok(ChainSass { per_step, residual, loop_lengths: (short_len, long_len, base_len) })
}
