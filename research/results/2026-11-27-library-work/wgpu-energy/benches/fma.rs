use energy_harness::prelude::*;
use energy_harness::same_pci_bus_id;
use wgpu_energy::{Fma, ITERATIONS};

fn setup(gpu: &CudaGpu) -> Result<Fma> {
    // The adapter of the GPU the harness measures, by its PCI bus id.
    let bus = gpu.pci_bus_id()?;
    Fma::open(|info| same_pci_bus_id(&info.device_pci_bus_id, &bus), ITERATIONS)
        .map_err(|e| Error::library(&format!("wgpu on the adapter at PCI bus id {bus}"), e))
}

fn sync(s: &mut Fma) -> Result<()> {
    s.wait().map_err(|e| Error::library("wgpu device.poll", e))
}

/// wgpu's work is outside CUDA: its own wait.
#[energy_bench(setup = setup, wait = sync)]
fn wgpu_fma(s: &mut Fma, _stream: &Stream) -> Result<()> {
    s.dispatch();
    Ok(())
}

/// The same without the wait: nothing the harness does waits for it (refused when it
/// outlives the windows far enough to show in the power after them).
#[energy_bench(setup = setup, gpu_only)]
fn wgpu_fma_unwaited(s: &mut Fma, _stream: &Stream) -> Result<()> {
    s.dispatch();
    Ok(())
}

energy_main!();
