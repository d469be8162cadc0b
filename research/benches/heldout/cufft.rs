//! cuFFT's batched transforms: single-precision complex (C2C) and real-to-complex (R2C),
//! double-precision complex (Z2Z) and real-to-complex (D2Z).

use energy_harness::cudarc::cufft::{sys as cufft_sys, CudaFft, FftDirection};
use energy_harness::cudarc::driver::CudaSlice;
use energy_harness::prelude::*;
use energy_harness::{Error, ErrorKind};

use super::common::{doubles, floats, Data};

/// cuFFT's transform length and batch: 4096 transforms of 4096 complex floats (128 MiB).
pub(crate) const FFT_LEN: usize = 4096;
pub(crate) const FFT_BATCH: usize = 4096;

/// Batched forward C2C FFTs through cuFFT, out of place, on the harness's stream.
pub(crate) struct Fft {
    plan: CudaFft,
    input: CudaSlice<cufft_sys::float2>,
    output: CudaSlice<cufft_sys::float2>,
}

/// A cuFFT status as the harness's error.
fn cufft_error(e: energy_harness::cudarc::cufft::result::CufftError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuFFT: {e:?}"))
}

pub(crate) fn fft(gpu: &CudaGpu, data: &Data) -> Result<Fft> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let n = FFT_LEN * FFT_BATCH;
    let plan = CudaFft::plan_1d(FFT_LEN as i32, cufft_sys::cufftType::CUFFT_C2C, FFT_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let re = floats(n, data, 18, -1.0, 1.0);
    let im = floats(n, data, 19, -1.0, 1.0);
    let values: Vec<cufft_sys::float2> = re.iter().zip(&im).map(|(&x, &y)| cufft_sys::float2 { x, y }).collect();
    let input = stream.clone_htod(&values)?;
    let output = stream.alloc_zeros::<cufft_sys::float2>(n)?;
    Ok(Fft { plan, input, output })
}

pub(crate) fn forward_fft(f: &mut Fft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_c2c(&mut f.input, &mut f.output, FftDirection::Forward).map_err(cufft_error)
}

/// cuFFT R2C: 4096 transforms of 8192 reals (128 MiB in).
pub(crate) const R2C_LEN: usize = 8192;
pub(crate) const R2C_BATCH: usize = 4096;
/// cuFFT Z2Z: 2048 transforms of 4096 double complexes (128 MiB each way).
pub(crate) const Z2Z_LEN: usize = 4096;
pub(crate) const Z2Z_BATCH: usize = 2048;

/// Batched real-to-complex FFTs.
pub(crate) struct RealFft {
    plan: CudaFft,
    input: CudaSlice<f32>,
    output: CudaSlice<cufft_sys::float2>,
}

pub(crate) fn fft_r2c(gpu: &CudaGpu, data: &Data) -> Result<RealFft> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let plan = CudaFft::plan_1d(R2C_LEN as i32, cufft_sys::cufftType::CUFFT_R2C, R2C_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let input = stream.clone_htod(&floats(R2C_LEN * R2C_BATCH, data, 25, -1.0, 1.0))?;
    let output = stream.alloc_zeros::<cufft_sys::float2>((R2C_LEN / 2 + 1) * R2C_BATCH)?;
    Ok(RealFft { plan, input, output })
}

pub(crate) fn real_fft(f: &mut RealFft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_r2c(&f.input, &mut f.output).map_err(cufft_error)
}

/// Batched double-precision complex FFTs.
pub(crate) struct DoubleFft {
    plan: CudaFft,
    input: CudaSlice<cufft_sys::double2>,
    output: CudaSlice<cufft_sys::double2>,
}

pub(crate) fn fft_z2z(gpu: &CudaGpu, data: &Data) -> Result<DoubleFft> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let n = Z2Z_LEN * Z2Z_BATCH;
    let plan = CudaFft::plan_1d(Z2Z_LEN as i32, cufft_sys::cufftType::CUFFT_Z2Z, Z2Z_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let re = floats(n, data, 26, -1.0, 1.0);
    let im = floats(n, data, 27, -1.0, 1.0);
    let values: Vec<cufft_sys::double2> =
        re.iter().zip(&im).map(|(&x, &y)| cufft_sys::double2 { x: x.into(), y: y.into() }).collect();
    let input = stream.clone_htod(&values)?;
    let output = stream.alloc_zeros::<cufft_sys::double2>(n)?;
    Ok(DoubleFft { plan, input, output })
}

pub(crate) fn double_fft(f: &mut DoubleFft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_z2z(&mut f.input, &mut f.output, FftDirection::Forward).map_err(cufft_error)
}

/// cuFFT D2Z: 2048 transforms of 8192 doubles (128 MiB in).
pub(crate) const D2Z_LEN: usize = 8192;
pub(crate) const D2Z_BATCH: usize = 2048;

/// Batched double real-to-complex FFTs, out of place.
pub(crate) struct DoubleRealFft {
    plan: CudaFft,
    input: CudaSlice<f64>,
    output: CudaSlice<cufft_sys::double2>,
}

pub(crate) fn fft_d2z(gpu: &CudaGpu, data: &Data) -> Result<DoubleRealFft> {
    let data = *data;
    let stream = gpu.stream().cuda()?;
    let plan = CudaFft::plan_1d(D2Z_LEN as i32, cufft_sys::cufftType::CUFFT_D2Z, D2Z_BATCH as i32, stream.clone())
        .map_err(cufft_error)?;
    let input = stream.clone_htod(&doubles(D2Z_LEN * D2Z_BATCH, data, 57))?;
    let output = stream.alloc_zeros::<cufft_sys::double2>((D2Z_LEN / 2 + 1) * D2Z_BATCH)?;
    Ok(DoubleRealFft { plan, input, output })
}

pub(crate) fn double_real_fft(f: &mut DoubleRealFft, stream: &Stream) -> Result<()> {
    stream.cuda()?;
    f.plan.exec_d2z(&f.input, &mut f.output).map_err(cufft_error)
}
