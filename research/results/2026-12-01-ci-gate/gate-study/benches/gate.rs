//! Nine benchmarks of three kinds, each launch `CALLS` calls: compute-bound FMA loops,
//! memory-bound saxpy (L2-resident and DRAM), cuBLAS SGEMM and DGEMM.

use energy_harness::cudarc::cublas::sys::cublasOperation_t;
use energy_harness::cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use energy_harness::cudarc::driver::CudaSlice;
use energy_harness::prelude::*;
use energy_harness::unstable::cuda::FMA_LOOP_PTX;
use energy_harness::{Error, ErrorKind};
use gate_study::CALLS;

const SAXPY_PTX: &str = include_str!("../ptx/saxpy.ptx");

/// One kernel with its arguments and buffers.
struct Launches {
    kernel: Kernel,
    config: LaunchConfig,
    args: KernelArgs,
    _buffers: Vec<DeviceBuffer<f32>>,
}

impl Launches {
    fn run(&self, stream: &Stream) -> Result<()> {
        for _ in 0..CALLS {
            self.kernel.launch(stream, self.config, &self.args)?;
        }
        Ok(())
    }
}

/// The FMA loop over `blocks` blocks of 256 threads, `iters` iterations of 16 FMAs each.
fn fma(gpu: &CudaGpu, blocks: u32, iters: u32) -> Result<Launches> {
    let kernel = gpu.load_ptx(FMA_LOOP_PTX, "fma_loop.ptx", JitOptLevel::O4)?.kernel("fma_loop")?;
    let out = gpu.alloc_zeros::<f32>((blocks * 256) as usize)?;
    let args = KernelArgs::new().buffer(&out).u32(iters);
    Ok(Launches { kernel, config: LaunchConfig::linear(blocks, 256), args, _buffers: vec![out] })
}

/// saxpy over `n` floats: 12 bytes of traffic per element.
fn saxpy(gpu: &CudaGpu, n: usize) -> Result<Launches> {
    let kernel = gpu.load_ptx(SAXPY_PTX, "saxpy.ptx", JitOptLevel::O4)?.kernel("saxpy")?;
    let x = gpu.upload(&vec![1.0f32; n])?;
    let y = gpu.upload(&vec![2.0f32; n])?;
    let args = KernelArgs::new().u32(n as u32).f32(1e-3).buffer(&x).buffer(&y);
    Ok(Launches { kernel, config: LaunchConfig::linear(n.div_ceil(256) as u32, 256), args, _buffers: vec![x, y] })
}

fn fma_one_block_per_sm(gpu: &CudaGpu) -> Result<Launches> {
    fma(gpu, 132, 1024)
}
fn fma_eight_blocks_per_sm(gpu: &CudaGpu) -> Result<Launches> {
    fma(gpu, 132 * 8, 1024)
}
fn fma_long(gpu: &CudaGpu) -> Result<Launches> {
    fma(gpu, 132 * 8, 4096)
}
fn saxpy_4m(gpu: &CudaGpu) -> Result<Launches> {
    saxpy(gpu, 1 << 22)
}
fn saxpy_16m(gpu: &CudaGpu) -> Result<Launches> {
    saxpy(gpu, 1 << 24)
}
fn saxpy_64m(gpu: &CudaGpu) -> Result<Launches> {
    saxpy(gpu, 1 << 26)
}

#[energy_bench(setup = fma_one_block_per_sm, gpu_only)]
fn compute_fma_1_block_per_sm(s: &mut Launches, stream: &Stream) -> Result<()> {
    s.run(stream)
}

#[energy_bench(setup = fma_eight_blocks_per_sm, gpu_only)]
fn compute_fma_8_blocks_per_sm(s: &mut Launches, stream: &Stream) -> Result<()> {
    s.run(stream)
}

#[energy_bench(setup = fma_long, gpu_only)]
fn compute_fma_long(s: &mut Launches, stream: &Stream) -> Result<()> {
    s.run(stream)
}

#[energy_bench(setup = saxpy_4m, gpu_only)]
fn memory_saxpy_4m_l2(s: &mut Launches, stream: &Stream) -> Result<()> {
    s.run(stream)
}

#[energy_bench(setup = saxpy_16m, gpu_only)]
fn memory_saxpy_16m_dram(s: &mut Launches, stream: &Stream) -> Result<()> {
    s.run(stream)
}

#[energy_bench(setup = saxpy_64m, gpu_only)]
fn memory_saxpy_64m_dram(s: &mut Launches, stream: &Stream) -> Result<()> {
    s.run(stream)
}

/// A square GEMM through cuBLAS on the harness's stream, `c = a · b`.
struct Matmul<T> {
    blas: CudaBlas,
    config: GemmConfig<T>,
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
}

fn cublas(e: energy_harness::cudarc::cublas::result::CublasError) -> Error {
    Error::new(ErrorKind::Cuda, format!("cuBLAS: {e}"))
}

fn matmul<T>(gpu: &CudaGpu, n: usize, of: fn(f32) -> T) -> Result<Matmul<T>>
where
    T: energy_harness::cudarc::driver::DeviceRepr + energy_harness::cudarc::driver::ValidAsZeroBits + Copy,
{
    let stream = gpu.stream().cuda()?;
    let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
    let values: Vec<T> = (0..n * n).map(|i| of(((i * 7919) % 2000) as f32 / 1000.0 - 1.0)).collect();
    let a = stream.clone_htod(&values)?;
    let b = stream.clone_htod(&values)?;
    let c = stream.alloc_zeros::<T>(n * n)?;
    let side = n as i32;
    let config = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: side,
        n: side,
        k: side,
        alpha: of(1.0),
        lda: side,
        ldb: side,
        beta: of(0.0),
        ldc: side,
    };
    Ok(Matmul { blas, config, a, b, c })
}

fn gemm<T: Copy>(m: &mut Matmul<T>, stream: &Stream) -> Result<()>
where
    CudaBlas: Gemm<T>,
{
    stream.cuda()?;
    for _ in 0..CALLS {
        // SAFETY: a, b and c hold n·n elements each, as the config says.
        unsafe { m.blas.gemm(m.config, &m.a, &m.b, &mut m.c) }.map_err(cublas)?;
    }
    Ok(())
}

fn sgemm_1024(gpu: &CudaGpu) -> Result<Matmul<f32>> {
    matmul(gpu, 1024, |x| x)
}
fn sgemm_2048(gpu: &CudaGpu) -> Result<Matmul<f32>> {
    matmul(gpu, 2048, |x| x)
}
fn dgemm_1024(gpu: &CudaGpu) -> Result<Matmul<f64>> {
    matmul(gpu, 1024, f64::from)
}

#[energy_bench(setup = sgemm_1024, gpu_only)]
fn library_sgemm_1024(s: &mut Matmul<f32>, stream: &Stream) -> Result<()> {
    gemm(s, stream)
}

#[energy_bench(setup = sgemm_2048, gpu_only)]
fn library_sgemm_2048(s: &mut Matmul<f32>, stream: &Stream) -> Result<()> {
    gemm(s, stream)
}

#[energy_bench(setup = dgemm_1024, gpu_only)]
fn library_dgemm_1024(s: &mut Matmul<f64>, stream: &Stream) -> Result<()> {
    gemm(s, stream)
}

energy_main!();
