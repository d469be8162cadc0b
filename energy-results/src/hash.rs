//! A stable content hash (FNV-1a, 64 bit): the same on every machine and run. Run
//! manifests check result files by it, result file stems end in it when shortened, and the
//! CUDA layer keys its caches (ptxas checks, NVRTC builds) by it.

/// FNV-1a, 64 bit, as 16 hex digits: enough to tell a file from another version of it.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes))
}

/// FNV-1a (64 bit) of `bytes`: a stable hash, the same on every machine and run.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
