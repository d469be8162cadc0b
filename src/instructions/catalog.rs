//! The instructions of the suite: for each, the chain step that repeats K times per loop
//! iteration, its registers' width, the run-time constants it reads and its initial values.
//!
//! Registers a chain may use (declared by every kernel):
//! - `%a %b %c %d`: the state, loaded per thread from the input buffer and stored at the end;
//! - `%k0 %k1`: run-time constants (kernel parameters), so the compiler cannot fold them;
//! - `%q`: a predicate that is true at run time but unknown to the compiler (see `guard`);
//! - `%t16 %t32 %t64`: scratch registers of 16, 32 and 64 bits (conversions).

/// Instruction families, as in Arafa et al. (2020), Table I.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Category {
    /// Integer arithmetic (32 and 64 bit).
    Integer,
    /// Logic, shift and bit manipulation.
    Logic,
    /// Single precision.
    Fp32,
    /// Double precision.
    Fp64,
    /// Half precision, scalar and packed pairs.
    Fp16,
    /// Multi-precision integer (carry chains).
    MultiPrecision,
    /// Conversions between types.
    Conversion,
}

impl Category {
    /// Human-readable name.
    pub fn label(self) -> &'static str {
        match self {
            Category::Integer => "integer arithmetic",
            Category::Logic => "logic, shift and bit manipulation",
            Category::Fp32 => "single precision (fp32)",
            Category::Fp64 => "double precision (fp64)",
            Category::Fp16 => "half precision (fp16, f16x2)",
            Category::MultiPrecision => "multi-precision integer",
            Category::Conversion => "conversions",
        }
    }

    /// Short name, used in benchmark names (`instructions/int/add_u32/O4/k32`), so a
    /// criterion filter can select categories: `-- 'instructions/(int|logic|base)/'`.
    pub fn short(self) -> &'static str {
        match self {
            Category::Integer => "int",
            Category::Logic => "logic",
            Category::Fp32 => "fp32",
            Category::Fp64 => "fp64",
            Category::Fp16 => "fp16",
            Category::MultiPrecision => "mp",
            Category::Conversion => "cvt",
        }
    }

    /// Every category, in report order.
    pub const ALL: [Category; 7] = [
        Category::Integer,
        Category::Logic,
        Category::Fp32,
        Category::Fp64,
        Category::Fp16,
        Category::MultiPrecision,
        Category::Conversion,
    ];
}

/// Width of the state registers `%a %b %c %d` (and of the constants `%k0 %k1`), bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// `.b16`: half precision scalars.
    W16,
    /// `.b32`.
    W32,
    /// `.b64`.
    W64,
}

impl Width {
    /// Bits.
    pub fn bits(self) -> u32 {
        match self {
            Width::W16 => 16,
            Width::W32 => 32,
            Width::W64 => 64,
        }
    }
}

/// How the initial state and the constants are drawn (per thread, from a fixed seed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// Uniform over all values of the width.
    Any,
    /// Odd integers (products of odd numbers never reach zero).
    Odd,
    /// Unsigned integers in `[lo, hi)`.
    Unsigned(u64, u64),
    /// Signed integers with magnitude in `[lo, hi)` and a random sign.
    Signed(u64, u64),
    /// Floating point numbers of the width (f16, f32, f64) uniform in `[lo, hi)`.
    Float(f64, f64),
    /// Pairs of halves (f16x2), each uniform in `[lo, hi)`.
    F16x2(f64, f64),
}

/// Numerical agreement required between the GPU's stored result and the host's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Agreement {
    /// Bit for bit, after the full measured loop (integer and correctly rounded operations).
    Exact,
    /// Within this relative error after one loop iteration (approximate instructions, whose
    /// results are only specified to an error bound: `.approx` transcendental functions).
    Relative(f64),
}

/// One instruction of the suite.
#[derive(Clone, Debug)]
pub struct Instruction {
    /// The PTX instruction(s) measured, as reported (`add.u32`, `add.cc.u32 + addc.u32`).
    pub label: &'static str,
    /// File stem and kernel-name prefix (`add_u32`).
    pub stem: &'static str,
    /// Family.
    pub category: Category,
    /// Width of the state registers.
    pub width: Width,
    /// The chain: step `j` of K is `steps[j % steps.len()]` (one PTX statement or more;
    /// `ops_per_step` of them are the instructions measured).
    pub steps: Vec<String>,
    /// PTX instructions under test in one step (2 for carry pairs and conversion round trips).
    pub ops_per_step: u32,
    /// A statement after each step that keeps the chain's values in range (it stays in the
    /// baseline, which therefore is this instruction's own); always guarded by `%q`.
    pub helper: Option<&'static str>,
    /// Guard each step with `@%q`: the compiler then cannot fold chains of idempotent or
    /// involutive operations (abs(abs x), not(not x), and-chains); the SASS check shows it.
    pub guard: bool,
    /// Initial values of `%a %b %c %d`.
    pub init: Init,
    /// `%k0`, `%k1` (raw bits of the width).
    pub constants: [u64; 2],
    /// Agreement with the host's result.
    pub agreement: Agreement,
    /// SASS opcode classes (see `sass::opcode_class`) of which one step must hold at least
    /// [`Instruction::sass_per_step`] in total: the instruction really is in the machine code.
    pub sass: &'static [&'static str],
    /// Where ptxas implements the step's PTX instructions with fewer SASS instructions
    /// (a fused pair), how many; otherwise `ops_per_step`.
    pub fused_sass: Option<u32>,
    /// One line on the chain and the data it sees.
    pub note: &'static str,
}

const fn f32_bits(x: f32) -> u64 {
    x.to_bits() as u64
}
const fn f64_bits(x: f64) -> u64 {
    x.to_bits()
}
/// f16 bits of a few exactly representable constants (checked by a unit test).
const F16_HALF: u64 = 0x3800; // 0.5
const F16_MINUS_HALF: u64 = 0xb800; // -0.5
const F16_UP: u64 = 0x3c01; // 1 + 2^-10
const F16_DOWN: u64 = 0x3bff; // 1 - 2^-11
const fn pair16(x: u64) -> u64 {
    x | (x << 16)
}

/// `a = op(a, b); b = op(b, a)`: each step needs the one before, and both operands change.
fn fib(op: &str) -> Vec<String> {
    vec![format!("{op} %a, %a, %b;"), format!("{op} %b, %b, %a;")]
}

fn one(step: &str) -> Vec<String> {
    vec![step.to_string()]
}

fn two(first: &str, second: &str) -> Vec<String> {
    vec![first.to_string(), second.to_string()]
}

#[allow(clippy::too_many_arguments)]
fn entry(
    label: &'static str,
    stem: &'static str,
    category: Category,
    width: Width,
    steps: Vec<String>,
    init: Init,
    constants: [u64; 2],
    sass: &'static [&'static str],
    note: &'static str,
) -> Instruction {
    Instruction {
        label,
        stem,
        category,
        width,
        steps,
        ops_per_step: 1,
        helper: None,
        guard: false,
        init,
        constants,
        agreement: Agreement::Exact,
        sass,
        fused_sass: None,
        note,
    }
}

impl Instruction {
    /// Instructions of the expected classes one step must hold.
    pub fn sass_per_step(&self) -> f64 {
        self.fused_sass.unwrap_or(self.ops_per_step) as f64
    }

    fn fused(mut self, sass: u32) -> Self {
        self.fused_sass = Some(sass);
        self
    }
    fn guarded(mut self) -> Self {
        self.guard = true;
        self
    }
    fn helper(mut self, helper: &'static str) -> Self {
        self.helper = Some(helper);
        self
    }
    fn ops(mut self, ops: u32) -> Self {
        self.ops_per_step = ops;
        self
    }
    fn approx(mut self, relative: f64) -> Self {
        self.agreement = Agreement::Relative(relative);
        self
    }
}

/// Helper of chains that would settle to constant operands: `a += d`, a Weyl step with
/// `d` drawn per thread, so the next step sees new operands.
const WEYL32: &str = "add.u32 %a, %a, %d;";
/// Helper of floating-point chains that would settle: flip `a`'s mantissa bits (`k1`),
/// which changes the operand and keeps it finite.
const FLIP32: &str = "xor.b32 %a, %a, %k1;";
/// The 64-bit [`FLIP32`].
const FLIP64: &str = "xor.b64 %a, %a, %k1;";
/// The mantissa bits of an f32.
const MANTISSA32: u64 = 0x007f_ffff;
/// The mantissa bits of an f64.
const MANTISSA64: u64 = 0x000f_ffff_ffff_ffff;

const IADD: &[&str] = &["IADD"];
const IMAD: &[&str] = &["IMAD"];
const MNMX: &[&str] = &["IMNMX"];
const LOP: &[&str] = &["LOP3"];
const MUFU_RCP: &[&str] = &["MUFU.RCP"];
const DIV64: &[&str] = &["CALL", "MUFU.RCP64H"];

/// Every instruction of the suite, in report order.
pub fn catalog() -> Vec<Instruction> {
    use Category::*;
    use Width::*;
    vec![
        // (1) Integer arithmetic.
        entry("add.u32", "add_u32", Integer, W32, fib("add.u32"), Init::Any, [0, 0], IADD, "a += b; b += a (Fibonacci, wrapping)"),
        entry("sub.u32", "sub_u32", Integer, W32, fib("sub.u32"), Init::Any, [0, 0], IADD, "a -= b; b -= a"),
        entry("min.s32", "min_s32", Integer, W32, one("min.s32 %a, %a, %b;"), Init::Any, [0, 0], MNMX, "a = min(a, b), then a += d (a Weyl step with d random per thread; helper, measured alone too): operands change every step").helper(WEYL32),
        entry("min.s32 (constant operands)", "min_s32_quiet", Integer, W32, fib("min.s32"), Init::Any, [0, 0], MNMX, "a = min(a, b); b = min(b, a): operands equal after the first step, the datapath quiet (the switching variant's counterpart)"),
        entry("max.u32", "max_u32", Integer, W32, one("max.u32 %a, %a, %b;"), Init::Any, [0, 0], MNMX, "a = max(a, b), then a += d (Weyl helper): operands change every step").helper(WEYL32),
        entry("mul.lo.u32", "mul_lo_u32", Integer, W32, fib("mul.lo.u32"), Init::Odd, [0, 0], IMAD, "a *= b; b *= a on odd numbers (never zero)"),
        entry("mul.hi.u32", "mul_hi_u32", Integer, W32, one("mul.hi.u32 %a, %a, %b;"), Init::Unsigned(1 << 31, 1 << 32), [0, 0], &["IMAD.HI"], "a = hi(a b), then a += d (Weyl helper): operands change every step").guarded().helper(WEYL32),
        entry("mad.lo.u32", "mad_lo_u32", Integer, W32, two("mad.lo.u32 %a, %a, %b, %k0;", "mad.lo.u32 %b, %b, %a, %k0;"), Init::Odd, [0x2468_ace0, 0], IMAD, "a = a b + k; b = b a + k (odd numbers, k even)"),
        entry("mul24.lo.u32", "mul24_lo_u32", Integer, W32, fib("mul24.lo.u32"), Init::Odd, [0, 0], &["IMAD", "IMAD.U32"], "a = a b; b = b a on the low 24 bits (odd)"),
        entry("mad24.lo.u32", "mad24_lo_u32", Integer, W32, two("mad24.lo.u32 %a, %a, %b, %k0;", "mad24.lo.u32 %b, %b, %a, %k0;"), Init::Odd, [0x0246_8ace, 0], &["IMAD", "IMAD.U32"], "a = a b + k; b = b a + k on the low 24 bits"),
        entry("div.u32", "div_u32", Integer, W32, one("div.u32 %a, %k0, %a;"), Init::Unsigned(1 << 8, 1 << 24), [0xffff_ff00, 0], MUFU_RCP, "a = k / a (k = 2^32 - 256): a and k/a alternate, never 0"),
        entry("div.s32", "div_s32", Integer, W32, one("div.s32 %a, %k0, %a;"), Init::Signed(1 << 8, 1 << 23), [(-0x7fff_ff00i32) as u32 as u64, 0], MUFU_RCP, "a = k / a (k < 0): the sign alternates"),
        entry("rem.u32", "rem_u32", Integer, W32, one("rem.u32 %a, %k0, %a;"), Init::Unsigned(1 << 20, 1 << 21), [0xffff_ff00, 1 << 20], MUFU_RCP, "a = k % a, then a += 2^20 (guarded helper, in the baseline too) so a never reaches 0").helper("add.u32 %a, %a, %k1;"),
        entry("rem.s32", "rem_s32", Integer, W32, one("rem.s32 %a, %k0, %a;"), Init::Unsigned(1 << 20, 1 << 21), [0x7fff_ff00, 1 << 20], MUFU_RCP, "a = k % a, then a += 2^20 (helper, in the baseline too)").helper("add.s32 %a, %a, %k1;"),
        entry("div.u64", "div_u64", Integer, W64, one("div.u64 %a, %k0, %a;"), Init::Unsigned(1 << 28, 1 << 36), [0xffff_ffff_ffff_ff00, 0], DIV64, "a = k / a on 64 bits (operands beyond 32 bits: the full-width path)"),
        entry("div.s64", "div_s64", Integer, W64, one("div.s64 %a, %k0, %a;"), Init::Signed(1 << 28, 1 << 34), [(-0x7fff_ffff_ffff_ff00i64) as u64, 0], DIV64, "a = k / a on 64 bits, k < 0 (sign alternates)"),
        entry("rem.u64", "rem_u64", Integer, W64, one("rem.u64 %a, %k0, %a;"), Init::Unsigned(1 << 40, 1 << 41), [0xffff_ffff_ffff_ff00, 1 << 40], DIV64, "a = k % a, then a += 2^40 (helper, in the baseline too)").helper("add.u64 %a, %a, %k1;"),
        entry("rem.s64", "rem_s64", Integer, W64, one("rem.s64 %a, %k0, %a;"), Init::Unsigned(1 << 40, 1 << 41), [0x7fff_ffff_ffff_ff00, 1 << 40], DIV64, "a = k % a, then a += 2^40 (helper, in the baseline too)").helper("add.s64 %a, %a, %k1;"),
        entry("abs.s32", "abs_s32", Integer, W32, one("abs.s32 %a, %a;"), Init::Signed(1, 1 << 31), [0, 0], &["IABS"], "a = |a|, then a += d (Weyl helper): the sign and the value change every step").guarded().helper(WEYL32),
        entry("neg.s32", "neg_s32", Integer, W32, one("neg.s32 %a, %a;"), Init::Any, [0, 0], IADD, "a = -a: alternates").guarded(),
        entry("add.u64", "add_u64", Integer, W64, fib("add.u64"), Init::Any, [0, 0], &["IADD.X", "IMAD.X"], "a += b; b += a on 64 bits (a carry pair in SASS)"),
        entry("mul.lo.u64", "mul_lo_u64", Integer, W64, fib("mul.lo.u64"), Init::Odd, [0, 0], &["IMAD.WIDE", "IMAD"], "a *= b; b *= a on 64-bit odd numbers"),
        // (2) Logic, shift and bit manipulation.
        entry("and.b32", "and_b32", Logic, W32, one("and.b32 %a, %a, %b;"), Init::Any, [0, 0], LOP, "a &= b, then a += d (Weyl helper): operands change every step").guarded().helper(WEYL32),
        entry("and.b32 (constant operands)", "and_b32_quiet", Logic, W32, fib("and.b32"), Init::Any, [0, 0], LOP, "a &= b; b &= a: constant after the first steps, the datapath quiet (the switching variant's counterpart)").guarded(),
        entry("or.b32", "or_b32", Logic, W32, one("or.b32 %a, %a, %b;"), Init::Any, [0, 0], LOP, "a |= b, then a += d (Weyl helper): operands change every step").guarded().helper(WEYL32),
        entry("xor.b32", "xor_b32", Logic, W32, fib("xor.b32"), Init::Any, [0, 0], LOP, "a ^= b; b ^= a: a cycle of three values").guarded(),
        entry("not.b32", "not_b32", Logic, W32, one("not.b32 %a, %a;"), Init::Any, [0, 0], LOP, "a = ~a: every bit toggles").guarded(),
        entry("cnot.b32", "cnot_b32", Logic, W32, one("cnot.b32 %a, %a;"), Init::Any, [0, 0], &["ISETP", "SEL"], "a = (a == 0): 0 and 1 alternate").guarded(),
        entry("shl.b32 / shr.u32", "shl_shr_b32", Logic, W32, two("shl.b32 %a, %a, %k0;", "shr.u32 %a, %a, %k0;"), Init::Any, [1, 0], &["SHF", "SHL", "LEA"], "a <<= 1; a >>= 1 alternating (the top bit clears, the rest toggles)").guarded(),
        entry("popc.b32", "popc_b32", Logic, W32, one("popc.b32 %a, %a;"), Init::Any, [0, 0], &["POPC"], "a = popc(a), then a += d (Weyl helper): a new operand every step").helper(WEYL32),
        entry("popc.b32 (constant operands)", "popc_b32_quiet", Logic, W32, one("popc.b32 %a, %a;"), Init::Any, [0, 0], &["POPC"], "a = popc(a): reaches 1 within three steps, the datapath quiet (the switching variant's counterpart)"),
        entry("clz.b32", "clz_b32", Logic, W32, one("clz.b32 %a, %a;"), Init::Any, [0, 0], &["FLO"], "a = clz(a), then a += d (Weyl helper): a new operand every step").guarded().helper(WEYL32),
        entry("brev.b32", "brev_b32", Logic, W32, one("brev.b32 %a, %a;"), Init::Any, [0, 0], &["BREV"], "a = brev(a): alternates").guarded(),
        entry("bfe.u32", "bfe_u32", Logic, W32, one("bfe.u32 %a, %b, %a, %k1;"), Init::Any, [0, 13], &["BMSK", "SHF", "LOP3"], "a = field of b at position a (low 8 bits), 13 bits long: position and value change each step").guarded(),
        entry("bfi.b32", "bfi_b32", Logic, W32, one("bfi.b32 %a, %a, %b, %k0, %k1;"), Init::Any, [8, 16], &["BMSK", "SHF", "LOP3"], "a = b with bits 8..24 taken from a, then a += d (Weyl helper): operands change every step").guarded().helper(WEYL32),
        // (3) Single precision.
        entry("add.f32", "add_f32", Fp32, W32, two("add.rn.f32 %a, %a, %b;", "sub.rn.f32 %b, %b, %a;"), Init::Float(0.5, 2.0), [0, 0], &["FADD"], "a += b; b -= a: a rotation, bounded (add and sub alternate, both FADD)"),
        entry("mul.f32", "mul_f32", Fp32, W32, two("mul.rn.f32 %a, %a, %k0;", "mul.rn.f32 %a, %a, %k1;"), Init::Float(1.0, 2.0), [f32_bits(1.0009765), f32_bits(0.9990244)], &["FMUL"], "a *= k; a *= 1/k (run-time constants)"),
        entry("fma.rn.f32", "fma_f32", Fp32, W32, two("fma.rn.f32 %a, %b, %k0, %a;", "fma.rn.f32 %b, %a, %k1, %b;"), Init::Float(0.5, 2.0), [f32_bits(0.5), f32_bits(-0.5)], &["FFMA"], "a += b/2; b -= a/2: a rotation (leapfrog), bounded"),
        entry("min.f32", "min_f32", Fp32, W32, one("min.f32 %a, %a, %b;"), Init::Float(-2.0, 2.0), [0, 0], &["FMNMX"], "a = min(a, b), then a's bits += d (Weyl helper on the bit pattern): operands change every step (NaN and infinity among them, as PTX's min handles them)").helper(WEYL32),
        entry("min.f32 (constant operands)", "min_f32_quiet", Fp32, W32, fib("min.f32"), Init::Float(-2.0, 2.0), [0, 0], &["FMNMX"], "a = min(a, b); b = min(b, a): operands equal after the first step, the datapath quiet (the switching variant's counterpart)"),
        entry("max.f32", "max_f32", Fp32, W32, one("max.f32 %a, %a, %b;"), Init::Float(-2.0, 2.0), [0, 0], &["FMNMX"], "a = max(a, b), then a's bits += d (Weyl helper on the bit pattern)").helper(WEYL32),
        entry("div.rn.f32", "div_rn_f32", Fp32, W32, one("div.rn.f32 %a, %k0, %a;"), Init::Float(1.0, 2.0), [f32_bits(3.0), 0], &["MUFU.RCP"], "a = 3 / a (IEEE division): a and 3/a alternate"),
        entry("div.approx.f32", "div_approx_f32", Fp32, W32, one("div.approx.f32 %a, %k0, %a;"), Init::Float(1.0, 2.0), [f32_bits(3.0), 0], &["MUFU.RCP"], "a = 3 / a (approximate)").approx(1e-4),
        entry("sqrt.rn.f32", "sqrt_rn_f32", Fp32, W32, one("sqrt.rn.f32 %a, %a;"), Init::Float(1.0, 1.0e6), [0, MANTISSA32], &["MUFU.RSQ"], "a = sqrt(a) (IEEE), then a's mantissa bits flip (xor helper): the value tends to [1, 2), a new operand every step").guarded().helper(FLIP32),
        entry("sqrt.rn.f32 (constant operands)", "sqrt_rn_f32_quiet", Fp32, W32, one("sqrt.rn.f32 %a, %a;"), Init::Float(1.0, 1.0e6), [0, 0], &["MUFU.RSQ"], "a = sqrt(a) (IEEE): converges to 1, the datapath quiet (the switching variant's counterpart)").guarded(),
        entry("sqrt.approx.f32", "sqrt_approx_f32", Fp32, W32, one("sqrt.approx.ftz.f32 %a, %a;"), Init::Float(1.0, 1.0e6), [0, MANTISSA32], &["MUFU.SQRT", "MUFU.RSQ"], "a = sqrt(a) (approximate, ftz), then a's mantissa bits flip (xor helper): a new operand every step").guarded().helper(FLIP32).approx(1e-4),
        entry("rsqrt.approx.f32", "rsqrt_approx_f32", Fp32, W32, one("rsqrt.approx.ftz.f32 %a, %a;"), Init::Float(1.0, 1.0e6), [0, MANTISSA32], &["MUFU.RSQ"], "a = 1/sqrt(a) (approximate, ftz), then a's mantissa bits flip (xor helper): a new operand every step").guarded().helper(FLIP32).approx(1e-4),
        entry("rcp.rn.f32", "rcp_rn_f32", Fp32, W32, one("rcp.rn.f32 %a, %a;"), Init::Float(1.0, 2.0), [0, 0], &["MUFU.RCP"], "a = 1/a (IEEE): a and 1/a alternate").guarded(),
        entry("rcp.approx.f32", "rcp_approx_f32", Fp32, W32, one("rcp.approx.ftz.f32 %a, %a;"), Init::Float(1.0, 2.0), [0, 0], &["MUFU.RCP"], "a = 1/a (approximate, ftz)").guarded().approx(1e-4),
        entry("sin.approx.f32", "sin_approx_f32", Fp32, W32, one("sin.approx.ftz.f32 %a, %a;"), Init::Float(0.5, 1.5), [0, 0], &["MUFU.SIN"], "a = sin(a) (approximate, ftz): decays slowly towards 0").guarded().approx(1e-4),
        entry("cos.approx.f32", "cos_approx_f32", Fp32, W32, one("cos.approx.ftz.f32 %a, %a;"), Init::Float(0.0, 1.5), [0, 0], &["MUFU.COS"], "a = cos(a) (approximate, ftz): converges to 0.739").guarded().approx(1e-4),
        entry("lg2.approx.f32", "lg2_approx_f32", Fp32, W32, one("lg2.approx.ftz.f32 %a, %a;"), Init::Float(1.0, 8.0), [f32_bits(2.0), 0], &["MUFU.LG2"], "a = lg2(a), then a += 2 (helper, measured alone too): settles near 4 (a helper that kept it switching would make the approximate results diverge from the host's)").guarded().helper("add.rn.f32 %a, %a, %k0;").approx(1e-4),
        entry("ex2.approx.f32", "ex2_approx_f32", Fp32, W32, one("ex2.approx.ftz.f32 %a, %a;"), Init::Float(-1.0, 0.0), [0, 0x807f_ffff], &["MUFU.EX2"], "a = 2^a, then a's sign and mantissa bits flip (xor helper, measured alone too): a stays in [-1, 0), the result's sign and mantissa change every step").guarded().helper(FLIP32).approx(1e-4),
        // (4) Double precision.
        entry("add.f64", "add_f64", Fp64, W64, two("add.rn.f64 %a, %a, %b;", "sub.rn.f64 %b, %b, %a;"), Init::Float(0.5, 2.0), [0, 0], &["DADD"], "a += b; b -= a: a rotation, bounded"),
        entry("mul.f64", "mul_f64", Fp64, W64, two("mul.rn.f64 %a, %a, %k0;", "mul.rn.f64 %a, %a, %k1;"), Init::Float(1.0, 2.0), [f64_bits(1.0009765625), f64_bits(1.0 / 1.0009765625)], &["DMUL"], "a *= k; a *= 1/k"),
        entry("fma.rn.f64", "fma_f64", Fp64, W64, two("fma.rn.f64 %a, %b, %k0, %a;", "fma.rn.f64 %b, %a, %k1, %b;"), Init::Float(0.5, 2.0), [f64_bits(0.5), f64_bits(-0.5)], &["DFMA"], "a += b/2; b -= a/2: a rotation, bounded"),
        entry("div.rn.f64", "div_rn_f64", Fp64, W64, one("div.rn.f64 %a, %k0, %a;"), Init::Float(1.0, 2.0), [f64_bits(3.0), 0], &["MUFU.RCP64H"], "a = 3 / a (IEEE)"),
        entry("sqrt.rn.f64", "sqrt_rn_f64", Fp64, W64, one("sqrt.rn.f64 %a, %a;"), Init::Float(1.0, 1.0e6), [0, MANTISSA64], &["MUFU.RSQ64H"], "a = sqrt(a) (IEEE), then a's 52 mantissa bits flip (xor helper): a new operand every step").guarded().helper(FLIP64),
        entry("rcp.rn.f64", "rcp_rn_f64", Fp64, W64, one("rcp.rn.f64 %a, %a;"), Init::Float(1.0, 2.0), [0, 0], &["MUFU.RCP64H"], "a = 1/a (IEEE)").guarded(),
        // (5) Half precision.
        entry("add.f16", "add_f16", Fp16, W16, two("add.rn.f16 %a, %a, %b;", "sub.rn.f16 %b, %b, %a;"), Init::Float(0.5, 2.0), [0, 0], &["HADD2", "HFMA2"], "a += b; b -= a: a rotation, bounded"),
        entry("mul.f16", "mul_f16", Fp16, W16, two("mul.rn.f16 %a, %a, %k0;", "mul.rn.f16 %a, %a, %k1;"), Init::Float(1.0, 2.0), [F16_UP, F16_DOWN], &["HMUL2", "HFMA2"], "a *= 1 + 2^-10; a *= 1 - 2^-11"),
        entry("fma.rn.f16", "fma_f16", Fp16, W16, two("fma.rn.f16 %a, %b, %k0, %a;", "fma.rn.f16 %b, %a, %k1, %b;"), Init::Float(0.5, 2.0), [F16_HALF, F16_MINUS_HALF], &["HFMA2"], "a += b/2; b -= a/2: a rotation"),
        entry("add.f16x2", "add_f16x2", Fp16, W32, two("add.rn.f16x2 %a, %a, %b;", "sub.rn.f16x2 %b, %b, %a;"), Init::F16x2(0.5, 2.0), [0, 0], &["HADD2", "HFMA2"], "two halves per register: a += b; b -= a"),
        entry("mul.f16x2", "mul_f16x2", Fp16, W32, two("mul.rn.f16x2 %a, %a, %k0;", "mul.rn.f16x2 %a, %a, %k1;"), Init::F16x2(1.0, 2.0), [pair16(F16_UP), pair16(F16_DOWN)], &["HMUL2", "HFMA2"], "two halves per register: a *= 1 + 2^-10; a *= 1 - 2^-11"),
        entry("fma.rn.f16x2", "fma_f16x2", Fp16, W32, two("fma.rn.f16x2 %a, %b, %k0, %a;", "fma.rn.f16x2 %b, %a, %k1, %b;"), Init::F16x2(0.5, 2.0), [pair16(F16_HALF), pair16(F16_MINUS_HALF)], &["HFMA2"], "two halves per register: a rotation"),
        // (6) Multi-precision.
        entry("add.cc.u32 + addc.u32", "addc_u32", MultiPrecision, W32, two("add.cc.u32 %a, %a, %b;\n\taddc.u32 %c, %c, %d;", "add.cc.u32 %b, %b, %a;\n\taddc.u32 %d, %d, %c;"), Init::Any, [0, 0], &["IADD", "IADD.X", "IMAD.X"], "64-bit Fibonacci from 32-bit carry pairs (a:c += b:d; b:d += a:c)").ops(2),
        entry("sub.cc.u32 + subc.u32", "subc_u32", MultiPrecision, W32, two("sub.cc.u32 %a, %a, %b;\n\tsubc.u32 %c, %c, %d;", "sub.cc.u32 %b, %b, %a;\n\tsubc.u32 %d, %d, %c;"), Init::Any, [0, 0], &["IADD", "IADD.X", "IMAD.X"], "64-bit differences from 32-bit borrow pairs").ops(2),
        entry("mad.lo.cc.u32 + madc.hi.u32", "madc_u32", MultiPrecision, W32, two("mad.lo.cc.u32 %a, %b, %k0, %a;\n\tmadc.hi.u32 %c, %b, %k0, %c;", "mad.lo.cc.u32 %b, %a, %k0, %b;\n\tmadc.hi.u32 %d, %a, %k0, %d;"), Init::Any, [0x9e37_79b9, 0], &["IMAD.WIDE", "IMAD", "IMAD.HI", "IMAD.X"], "a:c += b k; b:d += a k (a multiply-accumulate row of a big-number product; ptxas fuses the pair into one IMAD.WIDE)").ops(2).fused(1),
        // (7) Conversions.
        entry("cvt.rn.f32.s32 + cvt.rzi.s32.f32", "cvt_f32_s32", Conversion, W32, one("cvt.rn.f32.s32 %t32, %a;\n\tcvt.rzi.s32.f32 %a, %t32;"), Init::Signed(1 << 20, 1 << 30), [0, 0], &["I2F", "I2FP", "F2I"], "int -> float -> int round trip (rounds to 24 bits, saturates), then a += d (Weyl helper): a new operand every step").guarded().ops(2).helper(WEYL32),
        entry("cvt.rn.f32.f64 + cvt.f64.f32", "cvt_f32_f64", Conversion, W64, one("cvt.rn.f32.f64 %t32, %a;\n\tcvt.f64.f32 %a, %t32;"), Init::Float(1.0, 1.0e6), [0, MANTISSA64], &["F2F"], "double -> single -> double round trip, then a's mantissa bits flip (xor helper)").guarded().ops(2).helper(FLIP64),
        entry("cvt.rn.f16.f32 + cvt.f32.f16", "cvt_f16_f32", Conversion, W32, one("cvt.rn.f16.f32 %t16, %a;\n\tcvt.f32.f16 %a, %t16;"), Init::Float(1.0, 1.0e3), [0, MANTISSA32], &["F2F", "F2FP", "HADD2.F32"], "single -> half -> single round trip, then a's mantissa bits flip (xor helper)").guarded().ops(2).helper(FLIP32),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_constants_are_what_their_names_say() {
        assert_eq!(half::f16::from_bits(F16_HALF as u16).to_f64(), 0.5);
        assert_eq!(half::f16::from_bits(F16_MINUS_HALF as u16).to_f64(), -0.5);
        assert_eq!(half::f16::from_bits(F16_UP as u16).to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(half::f16::from_bits(F16_DOWN as u16).to_f64(), 1.0 - 2f64.powi(-11));
    }

    #[test]
    fn stems_are_unique_and_at_least_forty() {
        let list = catalog();
        assert!(list.len() >= 40, "the suite must cover at least 40 instructions, has {}", list.len());
        let mut stems: Vec<_> = list.iter().map(|i| i.stem).collect();
        stems.sort();
        stems.dedup();
        assert_eq!(stems.len(), list.len(), "duplicate stems");
    }
}
