//! What every held-out setup shares: the two data regimes ([`Data`], the argument of each
//! held-out pair: `args = REGIMES`) and the inputs drawn in each (words, floats, and
//! protocol v3's full-entropy floats and doubles).

/// The data a held-out kernel runs on.
#[derive(Clone, Copy)]
pub(crate) enum Data {
    /// Its own data: random, of full entropy.
    Own,
    /// One value repeated.
    Constant,
}

/// Both regimes, in the suite's order: each held-out pair's arguments.
pub(crate) const REGIMES: [Data; 2] = [Data::Own, Data::Constant];

/// As a benchmark's id ends: `heldout_reduce_own`, `heldout_reduce_constant`.
impl std::fmt::Display for Data {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Data::Own => "own",
            Data::Constant => "constant",
        })
    }
}

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` words: random, or one word repeated.
pub(crate) fn words(n: usize, data: Data, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    match data {
        Data::Own => (0..n).map(|_| rng.next() as u32).collect(),
        Data::Constant => vec![0x3f9e_3779; n],
    }
}

/// `n` floats uniform in [lo, hi), or all at the range's middle.
pub(crate) fn floats(n: usize, data: Data, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = Rng(seed);
    match data {
        Data::Own => (0..n).map(|_| lo + (hi - lo) * ((rng.next() >> 40) as f32 / 16_777_216.0)).collect(),
        Data::Constant => vec![0.5 * (lo + hi); n],
    }
}

/// The constant-data value of protocol v3's kernels (nonzero: a zero may take a shortcut).
const V3_CONSTANT: f32 = 0.7;

/// `n` doubles uniform in [-1, 1) with 53 random mantissa bits, or [`V3_CONSTANT`] repeated.
pub(crate) fn doubles(n: usize, data: Data, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    match data {
        Data::Own => (0..n).map(|_| -1.0 + 2.0 * ((rng.next() >> 11) as f64 / 9_007_199_254_740_992.0)).collect(),
        Data::Constant => vec![f64::from(V3_CONSTANT); n],
    }
}

/// `n` floats uniform in [-1, 1), or [`V3_CONSTANT`] repeated.
pub(crate) fn floats_v3(n: usize, data: Data, seed: u64) -> Vec<f32> {
    match data {
        Data::Own => floats(n, data, seed, -1.0, 1.0),
        Data::Constant => vec![V3_CONSTANT; n],
    }
}
