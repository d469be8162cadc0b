//! The energy of two `#[cube]` kernels of my own, launched through cubecl's CUDA runtime.
use cubecl::cuda::{CudaDevice, CudaRuntime};
use cubecl::prelude::*;
use cubecl::server::Handle;
use energy_harness::prelude::*;

const N: usize = 1 << 22; // 4 Mi floats
const ITERS: u32 = 256;

/// An FMA loop: each element runs ITERS multiply-adds in registers.
#[cube(launch_unchecked)]
fn fma_loop(x: &Array<f32>, y: &mut Array<f32>, iters: u32) {
    let i = ABSOLUTE_POS;
    if i < y.len() {
        let a = x[i];
        let mut acc = y[i];
        for _ in 0..iters {
            acc = acc * a + 0.5f32;
        }
        y[i] = acc;
    }
}

/// Elementwise saxpy.
#[cube(launch_unchecked)]
fn saxpy(a: f32, x: &Array<f32>, y: &mut Array<f32>) {
    let i = ABSOLUTE_POS;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

struct Cube {
    client: ComputeClient<CudaRuntime>,
    x: Handle,
    y: Handle,
}

fn setup(gpu: &CudaGpu) -> Result<Cube> {
    // The GPU the harness measures: open cubecl on the same CUDA ordinal.
    let device = CudaDevice::new(gpu.ordinal() as usize);
    let client = CudaRuntime::client(&device);
    let x = client.create_from_slice(f32::as_bytes(&vec![0.999f32; N]));
    let y = client.create_from_slice(f32::as_bytes(&vec![1.0f32; N]));
    Ok(Cube { client, x, y })
}

/// cubecl's wait: `client.sync()` is a future.
fn sync(s: &mut Cube) -> Result<()> {
    cubecl::future::block_on(s.client.sync()).map_err(|e| Error::library("cubecl sync", format!("{e:?}")))
}

fn cubes() -> CubeCount {
    CubeCount::Static(N.div_ceil(256) as u32, 1, 1)
}

#[energy_bench(setup = setup, wait = sync, ops = 2 * N * ITERS as usize, bytes = 8 * N)]
fn cube_fma(s: &mut Cube, _stream: &Stream) -> Result<()> {
    unsafe {
        fma_loop::launch_unchecked::<CudaRuntime>(
            &s.client,
            cubes(),
            CubeDim::new_1d(256),
            ArrayArg::from_raw_parts(s.x.clone(), N),
            ArrayArg::from_raw_parts(s.y.clone(), N),
            ITERS,
        );
    }
    Ok(())
}

#[energy_bench(setup = setup, wait = sync, ops = 2 * N, bytes = 12 * N)]
fn cube_saxpy(s: &mut Cube, _stream: &Stream) -> Result<()> {
    unsafe {
        saxpy::launch_unchecked::<CudaRuntime>(
            &s.client,
            cubes(),
            CubeDim::new_1d(256),
            1e-3f32,
            ArrayArg::from_raw_parts(s.x.clone(), N),
            ArrayArg::from_raw_parts(s.y.clone(), N),
        );
    }
    Ok(())
}

energy_main!();
