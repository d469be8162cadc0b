//! What every campaign shares: the random numbers, how many cases and from which seed
//! (`FUZZ_CASES`, `FUZZ_SEED`), and the loop that runs a campaign.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// xorshift64*: deterministic, no dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

pub(crate) fn cases() -> u64 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500)
}

pub(crate) fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_1234_abcd_ef01)
}

/// Runs `check` on `n` cases, counting what it accepts, rejects, panics on and lets through.
pub(crate) fn campaign(name: &str, n: u64, mut check: impl FnMut(&mut Rng) -> Result<bool, String>) {
    let mut rng = Rng(seed());
    let (mut accepted, mut rejected, mut panics, mut violations) = (0u64, 0u64, 0u64, Vec::new());
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..n {
        match catch_unwind(AssertUnwindSafe(|| check(&mut rng))) {
            Ok(Ok(true)) => accepted += 1,
            Ok(Ok(false)) => rejected += 1,
            Ok(Err(violation)) => violations.push(format!("case {case}: {violation}")),
            Err(_) => panics += 1,
        }
    }
    std::panic::set_hook(previous_hook);
    println!("{name}: {n} inputs (seed {:#x}): {accepted} accepted, {rejected} rejected with an error, {panics} panics, {} impossible figures accepted", seed(), violations.len());
    // Printed as well as asserted: the panic hook is process-wide, and another campaign
    // running beside this one may have silenced it.
    for violation in violations.iter().take(10) {
        println!("{name}: {violation}");
    }
    assert_eq!(panics, 0, "{name} panicked");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(accepted > n / 20, "the mutations are too destructive to test acceptance: {accepted} of {n}");
}
