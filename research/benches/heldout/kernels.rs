//! The project-written held-out kernels: published GPU algorithms in CUDA C
//! (`ptx/heldout/*.cu`), compiled by NVRTC at run time, each a [`Heldout`] workload of one
//! iteration's launches and its buffers.

use energy_harness::prelude::*;

use super::common::{floats, words, Data};

const REDUCE_CU: &str = include_str!("../../ptx/heldout/reduce.cu");
const SCAN_CU: &str = include_str!("../../ptx/heldout/scan.cu");
const BITONIC_CU: &str = include_str!("../../ptx/heldout/bitonic.cu");
const STENCIL5_CU: &str = include_str!("../../ptx/heldout/stencil5.cu");
const HISTOGRAM_CU: &str = include_str!("../../ptx/heldout/histogram.cu");
const TRANSPOSE_CU: &str = include_str!("../../ptx/heldout/transpose.cu");
const NBODY_CU: &str = include_str!("../../ptx/heldout/nbody.cu");
const BLACKSCHOLES_CU: &str = include_str!("../../ptx/heldout/blackscholes.cu");

/// A held-out workload: the launches of one iteration, and the buffers they use.
pub(crate) struct Heldout {
    launches: Vec<(Kernel, LaunchConfig, KernelArgs)>,
    _buffers: Vec<Box<dyn std::any::Any>>,
}

pub(crate) fn run(h: &mut Heldout, stream: &Stream) -> Result<()> {
    for (kernel, config, args) in &h.launches {
        kernel.launch(stream, *config, args)?;
    }
    Ok(())
}

/// A 2-D launch.
fn grid2(blocks: (u32, u32), threads: (u32, u32)) -> LaunchConfig {
    LaunchConfig { grid: (blocks.0, blocks.1, 1), block: (threads.0, threads.1, 1), shared_mem_bytes: 0 }
}

/// Floats reduced: 256 MiB, far beyond the L2.
const REDUCE_N: usize = 1 << 26;

pub(crate) fn reduce(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(REDUCE_CU, "reduce.cu", &[])?.kernel("hx_reduce")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let input = gpu.upload(&floats(REDUCE_N, data, 1, -1.0, 1.0))?;
    let partial = gpu.alloc_zeros::<f32>(blocks as usize)?;
    let args = KernelArgs::new().buffer(&input).buffer(&partial).u32(REDUCE_N as u32);
    let launches = vec![(kernel, LaunchConfig::linear(blocks, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(input), Box::new(partial)] })
}

/// Words scanned (64 MiB), in blocks of 512.
const SCAN_N: usize = 1 << 24;

pub(crate) fn scan(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(SCAN_CU, "scan.cu", &[])?.kernel("hx_scan")?;
    // Small values (below 2^8) as a scan's counts are; constant: all equal.
    let input: Vec<u32> = words(SCAN_N, data, 2).into_iter().map(|w| w & 0xff).collect();
    let input = gpu.upload(&input)?;
    let output = gpu.alloc_zeros::<u32>(SCAN_N)?;
    let args = KernelArgs::new().buffer(&input).buffer(&output);
    let launches = vec![(kernel, LaunchConfig::linear((SCAN_N / 512) as u32, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(input), Box::new(output)] })
}

/// log2 of the keys sorted (4 MiB of keys: an L2-resident sort of 210 steps).
const BITONIC_LOG2: u32 = 20;

pub(crate) fn bitonic(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let module = gpu.load_cuda_c(BITONIC_CU, "bitonic.cu", &[])?;
    let n = 1usize << BITONIC_LOG2;
    let original = gpu.upload(&words(n, data, 3))?;
    let keys = gpu.alloc_zeros::<u32>(n)?;
    let config = LaunchConfig::linear((n / 256) as u32, 256);
    // Each iteration sorts the original keys again: copy, then every step.
    let mut launches =
        vec![(module.kernel("hx_copy")?, config, KernelArgs::new().buffer(&keys).buffer(&original).u32(n as u32))];
    let step = module.kernel("hx_bitonic_step")?;
    let mut k = 2u32;
    while k as usize <= n {
        let mut j = k / 2;
        while j > 0 {
            launches.push((step.clone(), config, KernelArgs::new().buffer(&keys).u32(j).u32(k)));
            j /= 2;
        }
        k *= 2;
    }
    Ok(Heldout { launches, _buffers: vec![Box::new(original), Box::new(keys)] })
}

/// The stencil's grid side (64 MiB per field).
const STENCIL_SIDE: u32 = 4096;

pub(crate) fn stencil5(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(STENCIL5_CU, "stencil5.cu", &[])?.kernel("hx_stencil5")?;
    let cells = (STENCIL_SIDE * STENCIL_SIDE) as usize;
    let input = gpu.upload(&floats(cells, data, 4, 0.0, 100.0))?;
    let output = gpu.alloc_zeros::<f32>(cells)?;
    let args = KernelArgs::new().buffer(&input).buffer(&output).u32(STENCIL_SIDE).u32(STENCIL_SIDE);
    let config = grid2((STENCIL_SIDE / 32, STENCIL_SIDE / 8), (32, 8));
    Ok(Heldout { launches: vec![(kernel, config, args)], _buffers: vec![Box::new(input), Box::new(output)] })
}

/// Words of bytes counted (64 MiB).
const HISTOGRAM_WORDS: usize = 1 << 24;

pub(crate) fn histogram(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(HISTOGRAM_CU, "histogram.cu", &[])?.kernel("hx_histogram")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let input = gpu.upload(&words(HISTOGRAM_WORDS, data, 5))?;
    let hist = gpu.alloc_zeros::<u32>(256)?;
    let args = KernelArgs::new().buffer(&input).u32(HISTOGRAM_WORDS as u32).buffer(&hist);
    let launches = vec![(kernel, LaunchConfig::linear(blocks, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(input), Box::new(hist)] })
}

/// The transposed matrix's side (256 MiB).
const TRANSPOSE_SIDE: u32 = 8192;

pub(crate) fn transpose(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(TRANSPOSE_CU, "transpose.cu", &[])?.kernel("hx_transpose")?;
    let cells = (TRANSPOSE_SIDE * TRANSPOSE_SIDE) as usize;
    let input = gpu.upload(&floats(cells, data, 6, -1.0, 1.0))?;
    let output = gpu.alloc_zeros::<f32>(cells)?;
    let args = KernelArgs::new().buffer(&output).buffer(&input).u32(TRANSPOSE_SIDE).u32(TRANSPOSE_SIDE);
    let config = grid2((TRANSPOSE_SIDE / 32, TRANSPOSE_SIDE / 32), (32, 8));
    Ok(Heldout { launches: vec![(kernel, config, args)], _buffers: vec![Box::new(input), Box::new(output)] })
}

/// Bodies (all pairs: 2^32 interactions).
const NBODY_N: usize = 1 << 16;

pub(crate) fn nbody(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(NBODY_CU, "nbody.cu", &[])?.kernel("hx_nbody")?;
    // x, y, z in [-1, 1), mass in [0.5, 1.5): interleaved as float4s.
    let xyz = floats(NBODY_N * 3, data, 7, -1.0, 1.0);
    let mass = floats(NBODY_N, data, 8, 0.5, 1.5);
    let bodies: Vec<f32> = (0..NBODY_N).flat_map(|i| [xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], mass[i]]).collect();
    let pos = gpu.upload(&bodies)?;
    let acc = gpu.alloc_zeros::<f32>(NBODY_N * 4)?;
    let args = KernelArgs::new().buffer(&pos).buffer(&acc).u32(NBODY_N as u32).f32(1e-4);
    let launches = vec![(kernel, LaunchConfig::linear((NBODY_N / 256) as u32, 256), args)];
    Ok(Heldout { launches, _buffers: vec![Box::new(pos), Box::new(acc)] })
}

/// Options priced (64 MiB per array).
const OPTIONS: usize = 1 << 24;

pub(crate) fn blackscholes(gpu: &CudaGpu, data: &Data) -> Result<Heldout> {
    let data = *data;
    let kernel = gpu.load_cuda_c(BLACKSCHOLES_CU, "blackscholes.cu", &[])?.kernel("hx_black_scholes")?;
    let blocks = gpu.properties()?.sm_count * 8;
    let spot = gpu.upload(&floats(OPTIONS, data, 9, 5.0, 30.0))?;
    let strike = gpu.upload(&floats(OPTIONS, data, 10, 1.0, 100.0))?;
    let years = gpu.upload(&floats(OPTIONS, data, 11, 0.25, 10.0))?;
    let call = gpu.alloc_zeros::<f32>(OPTIONS)?;
    let put = gpu.alloc_zeros::<f32>(OPTIONS)?;
    let args = KernelArgs::new()
        .buffer(&call)
        .buffer(&put)
        .buffer(&spot)
        .buffer(&strike)
        .buffer(&years)
        .f32(0.02)
        .f32(0.30)
        .u32(OPTIONS as u32);
    let launches = vec![(kernel, LaunchConfig::linear(blocks, 256), args)];
    let buffers: Vec<Box<dyn std::any::Any>> =
        vec![Box::new(spot), Box::new(strike), Box::new(years), Box::new(call), Box::new(put)];
    Ok(Heldout { launches, _buffers: buffers })
}
