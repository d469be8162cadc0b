//! cuRAND's generators: the default (XORWOW) filling floats and doubles, and protocol v3's
//! Philox and MRG32k3a. A generator reads no input, so each runs in one regime only.

use energy_harness::cudarc::curand::CudaRng;
use energy_harness::cudarc::driver::CudaSlice;
use energy_harness::prelude::*;
use energy_harness::{Error, ErrorKind};

/// Floats drawn by cuRAND per call (256 MiB).
pub(crate) const CURAND_N: usize = 1 << 26;

/// cuRAND's default pseudo-random generator (XORWOW) on the harness's stream, and the buffer
/// it fills. A generator reads no input: its own data is its own state, so it runs in one
/// regime only.
pub(crate) struct Generator {
    pub(crate) rng: CudaRng,
    pub(crate) out: CudaSlice<f32>,
}

pub(crate) fn curand(gpu: &CudaGpu) -> Result<Generator> {
    let stream = gpu.stream().cuda()?;
    let rng = CudaRng::new(35, stream.clone()).map_err(curand_error)?;
    let out = stream.alloc_zeros::<f32>(CURAND_N)?;
    Ok(Generator { rng, out })
}

/// A cuRAND status as the harness's error.
pub(crate) fn curand_error(e: energy_harness::cudarc::curand::result::CurandError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuRAND: {e:?}"))
}

/// Doubles drawn by cuRAND per call (512 MiB).
pub(crate) const CURAND_DOUBLES: usize = 1 << 26;

/// cuRAND's default generator filling doubles (its own state only: one regime).
pub(crate) struct DoubleGenerator {
    pub(crate) rng: CudaRng,
    pub(crate) out: CudaSlice<f64>,
}

pub(crate) fn curand_double(gpu: &CudaGpu) -> Result<DoubleGenerator> {
    let stream = gpu.stream().cuda()?;
    let rng = CudaRng::new(36, stream.clone()).map_err(curand_error)?;
    let out = stream.alloc_zeros::<f64>(CURAND_DOUBLES)?;
    Ok(DoubleGenerator { rng, out })
}

/// Floats drawn per call by protocol v3's generators (256 MiB).
pub(crate) const CURAND_V3_N: usize = 1 << 26;

/// A cuRAND generator of a chosen kind on the harness's stream, and the buffer it fills.
pub(crate) struct KindGenerator {
    pub(crate) generator: energy_harness::cudarc::curand::sys::curandGenerator_t,
    pub(crate) out: CudaSlice<f32>,
}

impl Drop for KindGenerator {
    fn drop(&mut self) {
        // SAFETY: created in `kind_generator`, destroyed once here.
        let _ = unsafe { energy_harness::cudarc::curand::result::destroy_generator(self.generator) };
    }
}

fn kind_generator(gpu: &CudaGpu, kind: energy_harness::cudarc::curand::sys::curandRngType_t) -> Result<KindGenerator> {
    use energy_harness::cudarc::curand::result;
    let stream = gpu.stream().cuda()?;
    let out = stream.alloc_zeros::<f32>(CURAND_V3_N)?;
    let generator = result::create_generator_kind(kind).map_err(curand_error)?;
    let g = KindGenerator { generator, out };
    // SAFETY: the generator was just created; the stream outlives it (the harness's).
    unsafe {
        result::set_stream(g.generator, stream.cu_stream() as _).map_err(curand_error)?;
        result::set_seed(g.generator, 37).map_err(curand_error)?;
    }
    Ok(g)
}

pub(crate) fn curand_philox(gpu: &CudaGpu) -> Result<KindGenerator> {
    kind_generator(gpu, energy_harness::cudarc::curand::sys::curandRngType_t::CURAND_RNG_PSEUDO_PHILOX4_32_10)
}

pub(crate) fn curand_mrg32k3a(gpu: &CudaGpu) -> Result<KindGenerator> {
    kind_generator(gpu, energy_harness::cudarc::curand::sys::curandRngType_t::CURAND_RNG_PSEUDO_MRG32K3A)
}
