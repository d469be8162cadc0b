//! The host's evaluation of the suite's kernels: the same PTX statements the generator
//! writes, parsed and executed on the CPU with PTX semantics, so the results the GPU
//! stores can be checked (bit for bit where the instruction is exactly specified). The
//! statements run on [`super::interpreter`]; this file runs a kernel's loop for one thread,
//! makes its initial values and data layout, and judges the GPU's results against it.

use super::catalog::{Agreement, Init, Instruction, Width};
use super::interpreter::{f32_of, f64_of, h, h_bits, mask, parse_statement, Machine, Reg, Statement};
use super::ptx::{loop_statements, Variant, INPUT_BYTES_PER_THREAD, OUTPUT_BYTES_PER_THREAD};

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
