//! The launch-bound probe's spin kernel: it holds the harness's stream while launches are
//! enqueued behind it, so that they then run back to back, with no wait for the host between
//! them (`Workload::back_to_back_s`).

use super::{CudaGpu, JitOptLevel, Kernel, KernelArgs, LaunchConfig, Stream};
use energy_results::error::Result;

/// The spin kernel's PTX (one thread reading `%globaltimer`).
pub const SPIN_PTX: &str = include_str!("spin.ptx");

/// The spin kernel, loaded on a GPU.
pub struct Spin {
    kernel: Kernel,
}

impl Spin {
    /// JIT-compiles the kernel.
    pub fn load(gpu: &CudaGpu) -> Result<Spin> {
        let kernel = gpu.load_ptx(SPIN_PTX, "spin.ptx", JitOptLevel::O4)?.kernel("energy_harness_spin")?;
        Ok(Spin { kernel })
    }

    /// Enqueues one spin of `seconds` on `stream`.
    pub fn hold(&self, stream: &Stream, seconds: f64) -> Result<()> {
        let ns = (seconds.max(0.0) * 1e9) as u64;
        self.kernel.launch(stream, LaunchConfig::linear(1, 1), &KernelArgs::new().u64(ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::checked::{assemble, find_ptxas, Assembly};

    #[test]
    fn the_spin_kernel_reads_and_assembles_for_hopper() {
        let interface = crate::cuda::ptx_interface::parse_interface(SPIN_PTX, "spin.ptx").unwrap();
        let entry = interface.entries.iter().find(|e| e.name == "energy_harness_spin").expect("its entry");
        assert_eq!(entry.params.len(), 1, "one u64: the nanoseconds");
        if find_ptxas().is_none() {
            assert!(std::env::var_os("CI").is_none(), "CI installs ptxas: the spin kernel must be assembled there");
            eprintln!("skipped: no ptxas (set PTXAS)");
            return;
        }
        assert_eq!(assemble(SPIN_PTX, "spin.ptx", "sm_90", JitOptLevel::O4).unwrap(), Assembly::Assembled);
    }
}
