//! Counter-based pseudo-random numbers: a value is a pure function of (seed, stream,
//! index), so a simulated sensor gives the same reading for the same update no matter
//! in which order or how often it is asked. SplitMix64 finalizer as the mixer.

/// Mixes (seed, stream, index) into 64 well-distributed bits.
pub fn hash(seed: u64, stream: u64, index: i64) -> u64 {
    let mut z = seed
        .wrapping_add(stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add((index as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(0x94D0_49BB_1331_11EB);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in [0, 1).
pub fn uniform(seed: u64, stream: u64, index: i64) -> f64 {
    (hash(seed, stream, index) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Standard normal (Box-Muller on two independent uniforms).
pub fn gaussian(seed: u64, stream: u64, index: i64) -> f64 {
    let u1 = uniform(seed, stream, index).max(f64::MIN_POSITIVE);
    let u2 = uniform(seed, stream ^ 0x5DEE_CE66_D1A4_F87D, index);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_has_unit_moments() {
        let n = 200_000;
        let (mut sum, mut sum_sq) = (0.0, 0.0);
        for i in 0..n {
            let g = gaussian(7, 3, i);
            sum += g;
            sum_sq += g * g;
        }
        let mean = sum / n as f64;
        let var = sum_sq / n as f64 - mean * mean;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
    }

    #[test]
    fn streams_and_seeds_differ_and_repeat() {
        assert_eq!(uniform(1, 2, 3), uniform(1, 2, 3));
        assert_ne!(uniform(1, 2, 3), uniform(1, 3, 3));
        assert_ne!(uniform(1, 2, 3), uniform(2, 2, 3));
        assert!((0..1000).all(|i| (0.0..1.0).contains(&uniform(9, 9, i))));
    }
}
