//! The one kernel template every instruction's PTX is generated from.
//!
//! Each file `ptx/instructions/<stem>.ptx` holds kernels with the same skeleton:
//! `<stem>_k8` … `<stem>_k128` run K = 8, 16, 32, 64 or 128 chain steps per loop
//! iteration ([`K_SWEEP`]), `<stem>_base` is the same loop without them (Arafa's
//! baseline), and for the chains that need a helper statement after each step
//! `<stem>_h8` … `<stem>_h128` run the helpers alone. The loop runs `iterations` times and
//! is kept rolled (`.pragma "nounroll"`) so the machine code of one iteration can be checked.
//!
//! Parameters: `out` (32 bytes per thread: the state `%a %b %c %d`, then the loop's
//! accumulator), `in` (16 bytes per thread: the initial state), `iterations`, `guard`
//! (non-zero: the `@%q` predicate is true), `k0`, `k1` (the chain's run-time constants).

use super::catalog::{Instruction, Width};

/// Chain lengths (steps per loop iteration) every file holds a kernel for; the suite's
/// energy per instruction is the slope of energy per iteration over them.
pub const K_SWEEP: [u32; 5] = [8, 16, 32, 64, 128];
/// The chain length of Arafa's net figure (the kernel against its baseline) and of the
/// launch the table shows.
pub const K_NET: u32 = 32;

/// The kernels of each file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Variant {
    /// K chain steps per iteration (each followed by the helper, if the chain has one).
    Chain(u32),
    /// K helper statements per iteration and no chain step: the helper's own cost, for
    /// chains with a helper.
    Helpers(u32),
    /// The loop alone: no chain step, no helper (Arafa's baseline).
    Base,
}

impl Variant {
    /// Chain steps per loop iteration.
    pub fn chain_steps(self) -> u32 {
        match self {
            Variant::Chain(k) => k,
            Variant::Helpers(_) | Variant::Base => 0,
        }
    }

    /// Helper statements per loop iteration for a chain that has a helper.
    fn helper_steps(self) -> u32 {
        match self {
            Variant::Chain(k) | Variant::Helpers(k) => k,
            Variant::Base => 0,
        }
    }

    /// Whether this is a baseline kernel (no chain step).
    pub fn is_baseline(self) -> bool {
        !matches!(self, Variant::Chain(_))
    }

    /// Suffix of the kernel's name: `k32`, `h32`, `base`.
    pub fn suffix(self) -> String {
        match self {
            Variant::Chain(k) => format!("k{k}"),
            Variant::Helpers(k) => format!("h{k}"),
            Variant::Base => "base".to_string(),
        }
    }

    /// The baseline a chain kernel of `instruction` is subtracted against in Arafa's net
    /// figure: the same number of helpers for a chain with a helper, else the loop alone.
    pub fn baseline(self, instruction: &Instruction) -> Variant {
        match self {
            Variant::Chain(k) if instruction.helper.is_some() => Variant::Helpers(k),
            _ => Variant::Base,
        }
    }

    /// The kernels of `instruction`'s file, in file order.
    pub fn all(instruction: &Instruction) -> Vec<Variant> {
        let mut all: Vec<Variant> = K_SWEEP.iter().map(|&k| Variant::Chain(k)).collect();
        if instruction.helper.is_some() {
            all.extend(K_SWEEP.iter().map(|&k| Variant::Helpers(k)));
        }
        all.push(Variant::Base);
        all
    }
}

/// Bytes of input per thread (the initial state).
pub const INPUT_BYTES_PER_THREAD: usize = 16;
/// Bytes of output per thread (the final state, then the 32-bit loop accumulator).
pub const OUTPUT_BYTES_PER_THREAD: usize = 32;

/// The kernel's entry name.
pub fn entry_name(instruction: &Instruction, variant: Variant) -> String {
    format!("{}_{}", instruction.stem, variant.suffix())
}

/// The file name under `ptx/instructions/`.
pub fn file_name(instruction: &Instruction) -> String {
    format!("{}.ptx", instruction.stem)
}

/// The statements of one loop iteration: the chain steps (each followed by the helper, if
/// any); for a baseline only the helpers.
pub fn loop_statements(instruction: &Instruction, variant: Variant) -> Vec<String> {
    let mut lines = Vec::new();
    let chain_steps = variant.chain_steps();
    let helper_steps = if instruction.helper.is_some() { variant.helper_steps() } else { chain_steps };
    for j in 0..helper_steps {
        if j < chain_steps {
            let step = &instruction.steps[j as usize % instruction.steps.len()];
            for statement in step.split('\n') {
                let statement = statement.trim();
                if instruction.guard {
                    lines.push(format!("@%q {statement}"));
                } else {
                    lines.push(statement.to_string());
                }
            }
        }
        if let Some(helper) = instruction.helper {
            lines.push(format!("@%q {helper}"));
        }
    }
    lines
}

fn state_access(width: Width) -> (&'static str, &'static str) {
    match width {
        Width::W16 => ("v4.b16", "{%a, %b, %c, %d}"),
        Width::W32 => ("v4.b32", "{%a, %b, %c, %d}"),
        Width::W64 => ("v2.b64", "{%a, %b}"),
    }
}

fn kernel(instruction: &Instruction, variant: Variant) -> String {
    let bits = instruction.width.bits();
    let (vector, registers) = state_access(instruction.width);
    let name = entry_name(instruction, variant);
    let mut body = String::new();
    for line in loop_statements(instruction, variant) {
        body.push('\t');
        body.push_str(&line);
        body.push('\n');
    }
    format!(
        "\
.visible .entry {name}(
	.param .u64 out,
	.param .u64 in,
	.param .u32 iterations,
	.param .u32 guard,
	.param .b{bits} k0,
	.param .b{bits} k1
)
{{
	.reg .pred %p, %q;
	.reg .b32 %i, %n, %acc, %g, %tx, %ntx, %bx, %gid;
	.reg .b64 %in, %out, %off;
	.reg .b{bits} %a, %b, %c, %d, %k0, %k1;
	.reg .b16 %t16;
	.reg .b32 %t32;
	.reg .b64 %t64;

	ld.param.u64 %out, [out];
	ld.param.u64 %in, [in];
	ld.param.u32 %n, [iterations];
	ld.param.u32 %g, [guard];
	ld.param.b{bits} %k0, [k0];
	ld.param.b{bits} %k1, [k1];
	setp.ne.u32 %q, %g, 0;
	mov.u32 %tx, %tid.x;
	mov.u32 %ntx, %ntid.x;
	mov.u32 %bx, %ctaid.x;
	mad.lo.u32 %gid, %bx, %ntx, %tx;
	cvta.to.global.u64 %in, %in;
	cvta.to.global.u64 %out, %out;
	mul.wide.u32 %off, %gid, {input};
	add.u64 %in, %in, %off;
	ld.global.{vector} {registers}, [%in];
	mov.u32 %acc, 0;
	mov.u32 %i, 0;
$L_loop:
	.pragma \"nounroll\";
{body}\txor.b32 %acc, %acc, %i;
	add.u32 %i, %i, 1;
	setp.lt.u32 %p, %i, %n;
	@%p bra $L_loop;
	mul.wide.u32 %off, %gid, {output};
	add.u64 %out, %out, %off;
	st.global.{vector} [%out], {registers};
	st.global.b32 [%out+16], %acc;
	ret;
}}
",
        input = INPUT_BYTES_PER_THREAD,
        output = OUTPUT_BYTES_PER_THREAD,
    )
}

/// The PTX file of one instruction: a header saying what it measures, then its three kernels.
pub fn generate(instruction: &Instruction) -> String {
    let mut text = format!(
        "\
// Generated by kernel-energy (src/instructions): do not edit; regenerate with
//   cargo run -p energy-suites --example generate_instruction_ptx
//
// Instruction: {label} ({category})
// Chain step ({per} measured instruction(s) per step{guard}):
{steps}// Helper after each step (its own kernels measure it alone): {helper}
// Data: {note}
// Kernels: {chains} (K = {ks} steps per iteration), {base} (the same loop without the steps){helpers}
// Run-time constants: k0 = {c0:#x}, k1 = {c1:#x}

.version 7.8
.target sm_80
.address_size 64

",
        label = instruction.label,
        category = instruction.category.label(),
        per = instruction.ops_per_step,
        guard = if instruction.guard {
            "; guarded by %q, true at run time, so the compiler cannot fold the chain"
        } else {
            ""
        },
        steps = instruction.steps.iter().map(|s| format!("//   {}\n", s.replace('\n', " "))).collect::<String>(),
        helper = instruction.helper.unwrap_or("none"),
        note = instruction.note,
        chains = K_SWEEP.iter().map(|&k| entry_name(instruction, Variant::Chain(k))).collect::<Vec<_>>().join(", "),
        ks = K_SWEEP.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", "),
        base = entry_name(instruction, Variant::Base),
        helpers = if instruction.helper.is_some() {
            format!(
                ", {} (K helpers alone)",
                K_SWEEP.iter().map(|&k| entry_name(instruction, Variant::Helpers(k))).collect::<Vec<_>>().join(", ")
            )
        } else {
            String::new()
        },
        c0 = instruction.constants[0],
        c1 = instruction.constants[1],
    );
    for (i, variant) in Variant::all(instruction).into_iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&kernel(instruction, variant));
    }
    text
}
