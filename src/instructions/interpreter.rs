//! The host's PTX interpreter: the registers of the kernel template, its statements parsed,
//! and one thread's machine executing them with PTX semantics (carry flag, flush to zero,
//! approximate functions, bit fields). [`super::host`] runs a kernel's loop on it.

use half::f16;

/// A register of the kernel template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reg {
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

    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// One parsed statement.
#[derive(Clone, Debug)]
pub(super) struct Statement {
    opcode: String,
    dst: Reg,
    src: Vec<Reg>,
    /// Part of the chain (not the helper): its result's bit flips are counted.
    pub(super) measured: bool,
}

/// Parses one statement of a kernel's loop (a guard `@%q` is dropped: the host runs the
/// body); `measured`: part of the chain, not the helper.
pub(super) fn parse_statement(line: &str, measured: bool) -> Result<Statement, String> {
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
pub(super) struct Machine {
    pub(super) regs: [u64; 9],
    carry: bool,
}

/// The low `bits` bits set.
pub(super) fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The f32 of a register's low 32 bits.
pub(super) fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}
/// The f64 of a register's bits.
pub(super) fn f64_of(bits: u64) -> f64 {
    f64::from_bits(bits)
}
/// Half-precision lane `lane` (0 low, 1 high) of a register, as f64.
pub(super) fn h(bits: u64, lane: u32) -> f64 {
    f16::from_bits((bits >> (16 * lane)) as u16).to_f64()
}
/// The half-precision bits of `x`.
pub(super) fn h_bits(x: f64) -> u64 {
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
    pub(super) fn exec(&mut self, s: &Statement) -> Result<u64, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
