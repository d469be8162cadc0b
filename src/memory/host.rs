//! What each memory kernel stores, computed on the host, to check the GPU's results.

use super::ptx::{MemoryKernel, ELEMENT_BYTES, LOAD_UNROLL, STORE_THREADS, STORE_UNROLL};

/// A launch's shape as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChaseShape {
    /// Elements of each block's region.
    pub sub: u64,
    /// Elements between a thread's consecutive accesses.
    pub stride: u64,
    /// Warm-up steps (global LOAD and STORE kernels; the shared LOAD kernel fills instead).
    pub warm: u64,
    /// Measurement-loop iterations.
    pub iterations: u64,
}

/// The stride of the LOAD chains for `threads` per block: one element per thread, at least
/// one 32-byte sector (4 elements), so a step of the block reads whole sectors.
pub fn load_stride(threads: u32) -> u64 {
    u64::from(threads.max(4))
}

/// The pointer's offset from its region (bytes) after a LOAD kernel, for thread `thread`
/// of its block.
pub fn load_offset(kernel: MemoryKernel, shape: ChaseShape, thread: u64) -> u64 {
    let warm = if kernel == MemoryKernel::LoadShared { 0 } else { shape.warm };
    let steps = warm + shape.iterations * u64::from(LOAD_UNROLL);
    let local = (thread + (steps % shape.sub) * (shape.stride % shape.sub)) % shape.sub;
    local * ELEMENT_BYTES
}

/// The LOAD+DIV kernels' accumulator for thread `thread` of block `block`, with the global
/// table at device address `table`.
pub fn div_accumulator(shape: ChaseShape, table: u64, block: u64, thread: u64, divisor: u32) -> u32 {
    let region = table + block * shape.sub * ELEMENT_BYTES;
    let mut local = (thread + (shape.warm % shape.sub) * (shape.stride % shape.sub)) % shape.sub;
    let mut acc: u32 = 0;
    for _ in 0..shape.iterations * u64::from(LOAD_UNROLL) {
        local = (local + shape.stride) % shape.sub;
        let pointer = region + local * ELEMENT_BYTES;
        acc = (acc ^ pointer as u32) / divisor;
    }
    acc
}

/// The final byte offset a STORE kernel writes for thread `thread`.
pub fn store_offset(shape: ChaseShape, thread: u64) -> u64 {
    let region = shape.sub * ELEMENT_BYTES;
    let step = u64::from(STORE_THREADS) * ELEMENT_BYTES;
    let chunk = step * u64::from(STORE_UNROLL);
    (thread * ELEMENT_BYTES + (shape.warm % region) * step + (shape.iterations % region) * chunk) % region
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chase_of_one_pass_comes_back_to_its_start() {
        let shape = ChaseShape { sub: 4096, stride: 256, warm: 16, iterations: 0 };
        assert_eq!(load_offset(MemoryKernel::LoadCached, shape, 7), 7 * 8);
        // One measurement iteration is 32 more steps: twice round the 16-step pass.
        let shape = ChaseShape { iterations: 1, ..shape };
        assert_eq!(load_offset(MemoryKernel::LoadCg, shape, 7), 7 * 8);
        let shape = ChaseShape { sub: 4096, stride: 4, warm: 3, iterations: 0 };
        assert_eq!(load_offset(MemoryKernel::LoadCached, shape, 1), (1 + 12) * 8);
        // The shared kernel has no warm-up steps (it fills its region instead).
        assert_eq!(load_offset(MemoryKernel::LoadShared, shape, 1), 8);
    }

    #[test]
    fn the_accumulator_follows_the_pointers() {
        let shape = ChaseShape { sub: 64, stride: 4, warm: 0, iterations: 1 };
        let acc = div_accumulator(shape, 0x7f00_0000_0000, 1, 2, 7);
        let mut expect: u32 = 0;
        let mut local = 2u64;
        for _ in 0..32 {
            local = (local + 4) % 64;
            expect = (expect ^ (0x7f00_0000_0000u64 + 64 * 8 + local * 8) as u32) / 7;
        }
        assert_eq!(acc, expect);
    }

    #[test]
    fn stores_walk_their_region_with_wrap_around() {
        let step = 8 * u64::from(STORE_THREADS);
        let chunk = step * u64::from(STORE_UNROLL);
        let shape = ChaseShape { sub: 2 * chunk / 8, stride: u64::from(STORE_THREADS), warm: 0, iterations: 1 };
        assert_eq!(store_offset(shape, 3), 24 + chunk);
        let shape = ChaseShape { iterations: 2, ..shape };
        assert_eq!(store_offset(shape, 3), 24);
        let shape = ChaseShape { warm: 1, iterations: 0, ..shape };
        assert_eq!(store_offset(shape, 3), 24 + step);
    }
}
