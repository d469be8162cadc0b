//! The host's evaluation of the suite's kernels: the same PTX statements the generator
//! writes, parsed and executed on the CPU with PTX semantics, so the results the GPU
//! stores can be checked (bit for bit where the instruction is exactly specified).

use half::f16;

use super::catalog::{Agreement, Init, Instruction, Width};
use super::ptx::{loop_statements, Variant, INPUT_BYTES_PER_THREAD, OUTPUT_BYTES_PER_THREAD};

/// A register of the kernel template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reg {
    A,
    B,
    C,
    D,
    K0,
    K1,
    T16,
    T32,
    T64,
}

impl Reg {
    fn parse(text: &str) -> Result<Reg, String> {
        Ok(match text.trim() {
            "%a" => Reg::A,
            "%b" => Reg::B,
            "%c" => Reg::C,
            "%d" => Reg::D,
            "%k0" => Reg::K0,
            "%k1" => Reg::K1,
            "%t16" => Reg::T16,
            "%t32" => Reg::T32,
            "%t64" => Reg::T64,
            other => return Err(format!("unknown register `{other}`")),
        })
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One parsed statement.
#[derive(Clone, Debug)]
struct Statement {
    opcode: String,
    dst: Reg,
    src: Vec<Reg>,
    /// Part of the chain (not the helper): its result's bit flips are counted.
    measured: bool,
}

fn parse_statement(line: &str, measured: bool) -> Result<Statement, String> {
    let line = line.trim();
    let line = line.strip_prefix("@%q").map(str::trim).unwrap_or(line);
    let line = line.strip_suffix(';').ok_or_else(|| format!("statement without `;`: {line}"))?;
    let (opcode, operands) = line.split_once(char::is_whitespace).ok_or_else(|| format!("no operands: {line}"))?;
    let mut regs = operands.split(',').map(Reg::parse).collect::<Result<Vec<_>, _>>()?;
    if regs.is_empty() {
        return Err(format!("no destination: {line}"));
    }
    let dst = regs.remove(0);
    Ok(Statement { opcode: opcode.to_string(), dst, src: regs, measured })
}

/// The registers and the carry flag of one thread.
#[derive(Clone, Debug, Default)]
struct Machine {
    regs: [u64; 9],
    carry: bool,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}
fn f64_of(bits: u64) -> f64 {
    f64::from_bits(bits)
}
fn h(bits: u64, lane: u32) -> f64 {
    f16::from_bits((bits >> (16 * lane)) as u16).to_f64()
}
fn h_bits(x: f64) -> u64 {
    f16::from_f64(x).to_bits() as u64
}
fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}
/// An approximate single-precision function, computed in double precision (the GPU's
/// result must agree within the instruction's tolerance, see [`Agreement`]).
fn approx32(x: u64, f: impl Fn(f64) -> f64) -> u64 {
    let input = ftz32(f32_of(x)) as f64;
    ftz32(f(input) as f32).to_bits() as u64
}
/// PTX `min.f32`/`max.f32` on bit patterns: a NaN operand yields the other operand, two
/// NaNs the canonical NaN (`0x7fffffff`); otherwise `pick` on the values.
fn min_max_f32(a: u64, b: u64, pick: fn(f64, f64) -> f64) -> u64 {
    let (x, y) = (f32_of(a), f32_of(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => 0x7fff_ffff,
        (true, false) => b & 0xffff_ffff,
        (false, true) => a & 0xffff_ffff,
        (false, false) => (pick(x as f64, y as f64) as f32).to_bits() as u64,
    }
}

/// PTX `min`/`max` order -0 below +0.
fn fmin(a: f64, b: f64) -> f64 {
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}
fn fmax(a: f64, b: f64) -> f64 {
    if a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

fn bfe(a: u64, pos: u64, len: u64, msb: u32) -> u64 {
    let pos = (pos & 0xff) as u32;
    let len = (len & 0xff) as u32;
    let mut d = 0u64;
    for i in 0..=msb {
        if i < len && pos + i <= msb {
            d |= ((a >> (pos + i)) & 1) << i;
        }
    }
    d
}

fn bfi(f: u64, b: u64, pos: u64, len: u64, msb: u32) -> u64 {
    let pos = (pos & 0xff) as u32;
    let len = (len & 0xff) as u32;
    let mut d = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        d = (d & !(1 << (pos + i))) | (((f >> i) & 1) << (pos + i));
        i += 1;
    }
    d
}

impl Machine {
    fn get(&self, r: Reg) -> u64 {
        self.regs[r.index()]
    }

    /// Executes one statement; `Err` on an operation whose result PTX leaves unspecified
    /// (division by zero, signed overflow of division) or an opcode the host does not know.
    fn exec(&mut self, s: &Statement) -> Result<u64, String> {
        let x = |i: usize| -> Result<u64, String> {
            s.src.get(i).map(|r| self.get(*r)).ok_or_else(|| format!("{}: missing operand {i}", s.opcode))
        };
        let u32_ = |i: usize| -> Result<u32, String> { x(i).map(|v| v as u32) };
        let u64_ = x;
        let div0 = || Err(format!("{}: division by zero (the chain design must avoid it)", s.opcode));
        let op = s.opcode.as_str();
        let value: u64 = match op {
            "add.u32" | "add.s32" => u32_(0)?.wrapping_add(u32_(1)?) as u64,
            "sub.u32" => u32_(0)?.wrapping_sub(u32_(1)?) as u64,
            "min.s32" => (u32_(0)? as i32).min(u32_(1)? as i32) as u32 as u64,
            "max.u32" => u32_(0)?.max(u32_(1)?) as u64,
            "mul.lo.u32" => u32_(0)?.wrapping_mul(u32_(1)?) as u64,
            "mul.hi.u32" => (u32_(0)? as u64 * u32_(1)? as u64) >> 32,
            "mad.lo.u32" => u32_(0)?.wrapping_mul(u32_(1)?).wrapping_add(u32_(2)?) as u64,
            "mul24.lo.u32" => ((u32_(0)? as u64 & 0xff_ffff) * (u32_(1)? as u64 & 0xff_ffff)) & 0xffff_ffff,
            "mad24.lo.u32" => {
                (((u32_(0)? as u64 & 0xff_ffff) * (u32_(1)? as u64 & 0xff_ffff)) as u32).wrapping_add(u32_(2)?) as u64
            }
            "div.u32" => match u32_(1)? {
                0 => return div0(),
                d => (u32_(0)? / d) as u64,
            },
            "rem.u32" => match u32_(1)? {
                0 => return div0(),
                d => (u32_(0)? % d) as u64,
            },
            "div.s32" | "rem.s32" => {
                let (n, d) = (u32_(0)? as i32, u32_(1)? as i32);
                if d == 0 || (n == i32::MIN && d == -1) {
                    return div0();
                }
                (if op == "div.s32" { n / d } else { n % d }) as u32 as u64
            }
            "div.u64" => match u64_(1)? {
                0 => return div0(),
                d => u64_(0)? / d,
            },
            "rem.u64" => match u64_(1)? {
                0 => return div0(),
                d => u64_(0)? % d,
            },
            "div.s64" | "rem.s64" => {
                let (n, d) = (u64_(0)? as i64, u64_(1)? as i64);
                if d == 0 || (n == i64::MIN && d == -1) {
                    return div0();
                }
                (if op == "div.s64" { n / d } else { n % d }) as u64
            }
            "add.u64" | "add.s64" => u64_(0)?.wrapping_add(u64_(1)?),
            "mul.lo.u64" => u64_(0)?.wrapping_mul(u64_(1)?),
            "abs.s32" => (u32_(0)? as i32).wrapping_abs() as u32 as u64,
            "neg.s32" => (u32_(0)? as i32).wrapping_neg() as u32 as u64,
            "and.b32" => (u32_(0)? & u32_(1)?) as u64,
            "or.b32" => (u32_(0)? | u32_(1)?) as u64,
            "xor.b32" => (u32_(0)? ^ u32_(1)?) as u64,
            "xor.b64" => u64_(0)? ^ u64_(1)?,
            "not.b32" => (!u32_(0)?) as u64,
            "cnot.b32" => (u32_(0)? == 0) as u64,
            "shl.b32" => u32_(0)?.checked_shl(u32_(1)?).unwrap_or(0) as u64,
            "shr.u32" => u32_(0)?.checked_shr(u32_(1)?).unwrap_or(0) as u64,
            "popc.b32" => u32_(0)?.count_ones() as u64,
            "clz.b32" => u32_(0)?.leading_zeros() as u64,
            "brev.b32" => u32_(0)?.reverse_bits() as u64,
            "bfe.u32" => bfe(u32_(0)? as u64, x(1)?, x(2)?, 31),
            "bfi.b32" => bfi(u32_(0)? as u64, u32_(1)? as u64, x(2)?, x(3)?, 31),
            // Single precision: Rust's f32 arithmetic is IEEE round-to-nearest, as `.rn` is.
            "add.rn.f32" => (f32_of(x(0)?) + f32_of(x(1)?)).to_bits() as u64,
            "sub.rn.f32" => (f32_of(x(0)?) - f32_of(x(1)?)).to_bits() as u64,
            "mul.rn.f32" => (f32_of(x(0)?) * f32_of(x(1)?)).to_bits() as u64,
            "fma.rn.f32" => f32_of(x(0)?).mul_add(f32_of(x(1)?), f32_of(x(2)?)).to_bits() as u64,
            "min.f32" => min_max_f32(x(0)?, x(1)?, fmin),
            "max.f32" => min_max_f32(x(0)?, x(1)?, fmax),
            "div.rn.f32" => (f32_of(x(0)?) / f32_of(x(1)?)).to_bits() as u64,
            "sqrt.rn.f32" => f32_of(x(0)?).sqrt().to_bits() as u64,
            "rcp.rn.f32" => (1.0 / f32_of(x(0)?)).to_bits() as u64,
            "div.approx.f32" => ((f32_of(x(0)?) as f64 / f32_of(x(1)?) as f64) as f32).to_bits() as u64,
            "sqrt.approx.ftz.f32" => approx32(x(0)?, f64::sqrt),
            "rsqrt.approx.ftz.f32" => approx32(x(0)?, |v| 1.0 / v.sqrt()),
            "rcp.approx.ftz.f32" => approx32(x(0)?, |v| 1.0 / v),
            "sin.approx.ftz.f32" => approx32(x(0)?, f64::sin),
            "cos.approx.ftz.f32" => approx32(x(0)?, f64::cos),
            "lg2.approx.ftz.f32" => approx32(x(0)?, f64::log2),
            "ex2.approx.ftz.f32" => approx32(x(0)?, f64::exp2),
            // Double precision.
            "add.rn.f64" => (f64_of(x(0)?) + f64_of(x(1)?)).to_bits(),
            "sub.rn.f64" => (f64_of(x(0)?) - f64_of(x(1)?)).to_bits(),
            "mul.rn.f64" => (f64_of(x(0)?) * f64_of(x(1)?)).to_bits(),
            "fma.rn.f64" => f64_of(x(0)?).mul_add(f64_of(x(1)?), f64_of(x(2)?)).to_bits(),
            "div.rn.f64" => (f64_of(x(0)?) / f64_of(x(1)?)).to_bits(),
            "sqrt.rn.f64" => f64_of(x(0)?).sqrt().to_bits(),
            "rcp.rn.f64" => (1.0 / f64_of(x(0)?)).to_bits(),
            // Half precision: computed exactly in f64 (sums and products of halves are
            // exact there; fma is exact for the magnitudes the chains keep), rounded once.
            "add.rn.f16" => h_bits(h(x(0)?, 0) + h(x(1)?, 0)),
            "sub.rn.f16" => h_bits(h(x(0)?, 0) - h(x(1)?, 0)),
            "mul.rn.f16" => h_bits(h(x(0)?, 0) * h(x(1)?, 0)),
            "fma.rn.f16" => h_bits(h(x(0)?, 0).mul_add(h(x(1)?, 0), h(x(2)?, 0))),
            "add.rn.f16x2" | "sub.rn.f16x2" | "mul.rn.f16x2" | "fma.rn.f16x2" => {
                let mut out = 0u64;
                for lane in 0..2 {
                    let (p, q) = (h(x(0)?, lane), h(x(1)?, lane));
                    let v = match op {
                        "add.rn.f16x2" => p + q,
                        "sub.rn.f16x2" => p - q,
                        "mul.rn.f16x2" => p * q,
                        _ => p.mul_add(q, h(x(2)?, lane)),
                    };
                    out |= h_bits(v) << (16 * lane);
                }
                out
            }
            // Multi-precision: the carry flag.
            "add.cc.u32" => {
                let (v, c) = u32_(0)?.overflowing_add(u32_(1)?);
                self.carry = c;
                v as u64
            }
            "addc.u32" => u32_(0)?.wrapping_add(u32_(1)?).wrapping_add(self.carry as u32) as u64,
            "sub.cc.u32" => {
                let (v, borrow) = u32_(0)?.overflowing_sub(u32_(1)?);
                self.carry = borrow;
                v as u64
            }
            "subc.u32" => u32_(0)?.wrapping_sub(u32_(1)?).wrapping_sub(self.carry as u32) as u64,
            "mad.lo.cc.u32" => {
                let product = u32_(0)?.wrapping_mul(u32_(1)?);
                let (v, c) = product.overflowing_add(u32_(2)?);
                self.carry = c;
                v as u64
            }
            "madc.hi.u32" => {
                let high = ((u32_(0)? as u64 * u32_(1)? as u64) >> 32) as u32;
                high.wrapping_add(u32_(2)?).wrapping_add(self.carry as u32) as u64
            }
            // Conversions (Rust's `as` rounds to nearest, and float-to-int truncation
            // saturates with NaN to 0, as PTX's cvt does).
            "cvt.rn.f32.s32" => ((u32_(0)? as i32) as f32).to_bits() as u64,
            "cvt.rzi.s32.f32" => (f32_of(x(0)?) as i32) as u32 as u64,
            "cvt.rn.f32.f64" => (f64_of(x(0)?) as f32).to_bits() as u64,
            "cvt.f64.f32" => (f32_of(x(0)?) as f64).to_bits(),
            "cvt.rn.f16.f32" => f16::from_f32(f32_of(x(0)?)).to_bits() as u64,
            "cvt.f32.f16" => f16::from_bits(x(0)? as u16).to_f32().to_bits() as u64,
            other => return Err(format!("the host does not know the PTX instruction `{other}`")),
        };
        let old = self.regs[s.dst.index()];
        self.regs[s.dst.index()] = value;
        Ok((old ^ value).count_ones() as u64)
    }
}

/// A thread's result: the state registers `%a %b %c %d` (raw bits of the width) and the
/// loop's accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadResult {
    /// `%a %b %c %d`.
    pub state: [u64; 4],
    /// `%acc`: the xor of the iteration indices.
    pub accumulator: u32,
}

/// The host's run of one kernel for one thread.
#[derive(Clone, Debug)]
pub struct HostRun {
    /// What the thread stores.
    pub result: ThreadResult,
    /// Mean number of bits that change in the destination of each measured instruction
    /// (the switching activity the chain's data cause; 0 for chains that reach a fixed point).
    pub toggles_per_instruction: f64,
}

/// Runs `variant` of `instruction` for one thread from `initial` for `iterations` loop
/// iterations, as the GPU does.
pub fn run_thread(
    instruction: &Instruction,
    variant: Variant,
    initial: [u64; 4],
    iterations: u32,
) -> Result<HostRun, String> {
    let statements: Vec<Statement> = {
        let lines = loop_statements(instruction, variant);
        let helper = instruction.helper.map(|h| h.trim());
        lines
            .iter()
            .map(|line| {
                let body = line.trim().strip_prefix("@%q").map(str::trim).unwrap_or(line.trim());
                parse_statement(line, Some(body) != helper)
            })
            .collect::<Result<_, _>>()?
    };
    let width_mask = mask(instruction.width.bits());
    let mut m = Machine::default();
    for (i, v) in initial.iter().enumerate() {
        m.regs[i] = v & width_mask;
    }
    m.regs[Reg::K0.index()] = instruction.constants[0] & width_mask;
    m.regs[Reg::K1.index()] = instruction.constants[1] & width_mask;
    let mut accumulator = 0u32;
    let (mut toggles, mut measured) = (0u64, 0u64);
    for i in 0..iterations.max(1) {
        for s in &statements {
            let flipped =
                m.exec(s).map_err(|e| format!("{} ({}), iteration {i}: {e}", instruction.label, variant.suffix()))?;
            if s.measured {
                toggles += flipped;
                measured += 1;
            }
        }
        accumulator ^= i;
    }
    let mut state = [0u64; 4];
    state.copy_from_slice(&m.regs[..4]);
    for v in &mut state {
        *v &= width_mask;
    }
    Ok(HostRun {
        result: ThreadResult { state, accumulator },
        toggles_per_instruction: if measured == 0 { 0.0 } else { toggles as f64 / measured as f64 },
    })
}

/// splitmix64: the suite's deterministic generator of initial values.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn unit(r: u64) -> f64 {
    (r >> 11) as f64 / (1u64 << 53) as f64
}

/// The initial state of thread `thread` (the same on every run: the seed is fixed).
pub fn initial_state(instruction: &Instruction, thread: u64) -> [u64; 4] {
    let mut seed = 0x5eed_0000_0000_0000 ^ thread.wrapping_mul(0x1000_0000_01b3);
    for byte in instruction.stem.bytes() {
        seed = seed.rotate_left(5) ^ byte as u64;
    }
    let width = instruction.width;
    let bits = width.bits();
    let mut state = [0u64; 4];
    for slot in &mut state {
        let r = splitmix64(&mut seed);
        *slot = match instruction.init {
            Init::Any => r & mask(bits),
            Init::Odd => (r | 1) & mask(bits),
            Init::Unsigned(lo, hi) => lo + r % (hi - lo),
            Init::Signed(lo, hi) => {
                let magnitude = lo + (r >> 1) % (hi - lo);
                let value = if r & 1 == 1 { (magnitude as i64).wrapping_neg() as u64 } else { magnitude };
                value & mask(bits)
            }
            Init::Float(lo, hi) => {
                let v = lo + unit(r) * (hi - lo);
                match width {
                    Width::W16 => h_bits(v),
                    Width::W32 => (v as f32).to_bits() as u64,
                    Width::W64 => v.to_bits(),
                }
            }
            Init::F16x2(lo, hi) => {
                let v0 = lo + unit(r) * (hi - lo);
                let v1 = lo + unit(splitmix64(&mut seed)) * (hi - lo);
                h_bits(v0) | (h_bits(v1) << 16)
            }
        };
    }
    if width == Width::W64 {
        // 64-bit chains keep two registers (`%a %b`); `%c %d` are neither loaded nor stored.
        state[2] = 0;
        state[3] = 0;
    }
    state
}

/// The input buffer for `threads` threads (16 bytes each: `%a %b %c %d` at the width).
pub fn input_bytes(instruction: &Instruction, threads: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(threads as usize * INPUT_BYTES_PER_THREAD);
    for t in 0..threads {
        let state = initial_state(instruction, t);
        let mut slot = [0u8; INPUT_BYTES_PER_THREAD];
        write_state(instruction.width, &state, &mut slot);
        bytes.extend_from_slice(&slot);
    }
    bytes
}

fn write_state(width: Width, state: &[u64; 4], slot: &mut [u8]) {
    match width {
        Width::W16 => (0..4).for_each(|i| slot[2 * i..2 * i + 2].copy_from_slice(&(state[i] as u16).to_le_bytes())),
        Width::W32 => (0..4).for_each(|i| slot[4 * i..4 * i + 4].copy_from_slice(&(state[i] as u32).to_le_bytes())),
        Width::W64 => (0..2).for_each(|i| slot[8 * i..8 * i + 8].copy_from_slice(&state[i].to_le_bytes())),
    }
}

/// Thread `thread`'s result in the output buffer.
pub fn read_result(instruction: &Instruction, output: &[u8], thread: u64) -> Option<ThreadResult> {
    let start = thread as usize * OUTPUT_BYTES_PER_THREAD;
    let slot = output.get(start..start + OUTPUT_BYTES_PER_THREAD)?;
    let le = |range: std::ops::Range<usize>| {
        let mut b = [0u8; 8];
        b[..range.len()].copy_from_slice(&slot[range]);
        u64::from_le_bytes(b)
    };
    let mut state = [0u64; 4];
    match instruction.width {
        Width::W16 => (0..4).for_each(|i| state[i] = le(2 * i..2 * i + 2)),
        Width::W32 => (0..4).for_each(|i| state[i] = le(4 * i..4 * i + 4)),
        Width::W64 => (0..2).for_each(|i| state[i] = le(8 * i..8 * i + 8)),
    }
    Some(ThreadResult { state, accumulator: le(16..20) as u32 })
}

/// The value of a state register as a number, for error messages and tolerances.
fn as_number(instruction: &Instruction, bits: u64) -> Vec<f64> {
    use super::catalog::Category;
    match (instruction.category, instruction.width, instruction.init) {
        (_, Width::W32, Init::F16x2(..)) => vec![h(bits, 0), h(bits, 1)],
        (_, Width::W16, _) => vec![h(bits, 0)],
        (Category::Fp32, Width::W32, _) | (Category::Conversion, Width::W32, Init::Float(..)) => {
            vec![f32_of(bits) as f64]
        }
        (Category::Fp64, _, _) | (Category::Conversion, Width::W64, _) => vec![f64_of(bits)],
        _ => vec![bits as f64],
    }
}

/// Checks a GPU result against the host's: `Ok` when they agree as the instruction's
/// [`Agreement`] requires, otherwise a message naming the register and both values.
pub fn check_agreement(instruction: &Instruction, gpu: &ThreadResult, host: &ThreadResult) -> Result<(), String> {
    if gpu.accumulator != host.accumulator {
        return Err(format!("loop accumulator {:#x} on the GPU, {:#x} on the host", gpu.accumulator, host.accumulator));
    }
    for (i, name) in ["%a", "%b", "%c", "%d"].iter().enumerate() {
        let (g, c) = (gpu.state[i], host.state[i]);
        let agree = match instruction.agreement {
            Agreement::Exact => g == c,
            Agreement::Relative(tolerance) => {
                g == c
                    || as_number(instruction, g).iter().zip(as_number(instruction, c)).all(|(x, y)| {
                        let scale = x.abs().max(y.abs()).max(f64::MIN_POSITIVE);
                        (x - y).abs() <= tolerance * scale
                    })
            }
        };
        if !agree {
            return Err(format!(
                "{name} = {g:#x} ({:?}) on the GPU, {c:#x} ({:?}) on the host",
                as_number(instruction, g),
                as_number(instruction, c)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instructions::catalog::catalog;

    #[test]
    fn every_statement_of_every_kernel_is_known_to_the_host() {
        for instruction in catalog() {
            for variant in Variant::all(&instruction) {
                let initial = initial_state(&instruction, 7);
                run_thread(&instruction, variant, initial, 3)
                    .unwrap_or_else(|e| panic!("{} {variant:?}: {e}", instruction.label));
            }
        }
    }

    #[test]
    fn ptx_semantics_of_the_tricky_instructions() {
        assert_eq!(bfe(0xf0, 4, 4, 31), 0xf);
        assert_eq!(bfe(0xf0, 40, 4, 31), 0, "a position beyond the register yields 0 (unsigned)");
        assert_eq!(bfe(0xffff_ffff, 28, 8, 31), 0xf, "the field is cut at the register's top");
        assert_eq!(bfi(0xab, 0xffff_0000, 8, 8, 31), 0xffff_ab00);
        assert_eq!(bfi(0xab, 0x1234, 40, 8, 31), 0x1234, "a position beyond the register inserts nothing");
        let mut m = Machine::default();
        m.regs[0] = 0xffff_ffff;
        m.regs[1] = 1;
        let add_cc = parse_statement("add.cc.u32 %a, %a, %b;", true).unwrap();
        m.exec(&add_cc).unwrap();
        assert_eq!((m.regs[0], m.carry), (0, true));
        let addc = parse_statement("addc.u32 %c, %c, %d;", true).unwrap();
        m.exec(&addc).unwrap();
        assert_eq!(m.regs[2], 1, "the carry of add.cc reaches addc");
        let sub_cc = parse_statement("sub.cc.u32 %d, %d, %b;", true).unwrap();
        m.exec(&sub_cc).unwrap();
        assert_eq!((m.regs[3], m.carry), (0xffff_ffff, true), "0 - 1 borrows");
    }

    #[test]
    fn division_by_zero_is_an_error_not_a_value() {
        let mut m = Machine::default();
        let div = parse_statement("div.u32 %a, %k0, %a;", true).unwrap();
        m.regs[Reg::K0.index()] = 7;
        assert!(m.exec(&div).is_err());
    }

    #[test]
    fn chains_never_divide_by_zero_over_a_long_run() {
        // 2000 iterations of 64 steps for a few threads: the range arguments in the
        // catalog's notes hold (a division by zero would be an error here).
        for instruction in catalog().iter().filter(|i| i.label.starts_with("div") || i.label.starts_with("rem")) {
            for thread in [0, 1, 4095, 1 << 20] {
                let initial = initial_state(instruction, thread);
                run_thread(instruction, Variant::Chain(64), initial, 2000).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    #[test]
    fn chains_keep_their_datapath_switching_and_the_quiet_variants_do_not() {
        for instruction in catalog() {
            let toggles: f64 = [1u64, 77, 4096]
                .iter()
                .map(|&t| {
                    let run = run_thread(&instruction, Variant::Chain(32), initial_state(&instruction, t), 64).unwrap();
                    run.toggles_per_instruction
                })
                .sum::<f64>()
                / 3.0;
            let least = match instruction.stem {
                s if s.ends_with("_quiet") => {
                    assert!(toggles < 0.5, "{}: a quiet variant flips {toggles:.2} bits", instruction.label);
                    continue;
                }
                // a = (a == 0) is 0 or 1 by definition.
                "cnot_b32" => 0.5,
                // Approximate functions whose helper must keep the chain contracting (errors
                // that grow would leave the GPU's result unverifiable against the host's):
                // lg2 settles near its fixed point (a = lg2(a) + 2 = 4).
                "lg2_approx_f32" => 0.5,
                _ => 2.0,
            };
            assert!(toggles >= least, "{}: {toggles:.2} bits flip per instruction, under {least}", instruction.label);
        }
    }

    #[test]
    fn input_and_output_layouts_round_trip() {
        for instruction in catalog() {
            let bytes = input_bytes(&instruction, 3);
            assert_eq!(bytes.len(), 3 * INPUT_BYTES_PER_THREAD);
            let mut output = vec![0u8; 3 * OUTPUT_BYTES_PER_THREAD];
            for t in 0..3 {
                output[t * OUTPUT_BYTES_PER_THREAD..t * OUTPUT_BYTES_PER_THREAD + 16]
                    .copy_from_slice(&bytes[t * 16..t * 16 + 16]);
            }
            let read = read_result(&instruction, &output, 2).unwrap();
            let mut expected = initial_state(&instruction, 2);
            if instruction.width == Width::W64 {
                expected[2] = 0;
                expected[3] = 0;
            }
            assert_eq!(read.state, expected, "{}", instruction.label);
        }
    }
}
