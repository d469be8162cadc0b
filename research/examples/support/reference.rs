//! What the validation programs share: FMA-loop workloads of a given launch length on the
//! real or the simulated GPU, and the steady-counter reference.

use std::sync::Arc;

use energy_harness::unstable::cuda::FmaLoop;
use energy_harness::unstable::device::{Device, SimKernel};
use energy_harness::unstable::device::{Sampler, SamplerConfig, WindowMarker, STATE_TEMPERATURE};
use energy_harness::unstable::engine::{counter_curve, record, sorted_finite};
use energy_harness::unstable::engine::{SimWorkload, Workload};
use energy_harness::CudaGpu;
use energy_harness::{Error, ErrorKind, Result, SourceKind};
use energy_results::trace::Channel;

/// What makes workloads of a given launch length.
pub enum Kernels {
    Real(FmaLoop),
    Sim(energy_harness::unstable::device::SimGpu),
}

impl Kernels {
    /// The FMA loop on the device's GPU, or the simulated GPU's kernel.
    pub fn open(device: &Device) -> Result<Kernels> {
        match device.sim() {
            Some(gpu) => Ok(Kernels::Sim(gpu.clone())),
            None => {
                let ordinal = device
                    .facts()
                    .cuda_ordinal
                    .ok_or_else(|| Error::new(ErrorKind::NoGpu, "no CUDA device matches the NVML device's UUID"))?;
                Ok(Kernels::Real(FmaLoop::load(Arc::new(CudaGpu::open(ordinal)?))?))
            }
        }
    }

    /// A workload of about `seconds` per launch, and its exact scale factor for doubling.
    pub fn sized(&self, seconds: f64, scale: u32) -> Result<Box<dyn Workload>> {
        match self {
            Kernels::Real(fma) => {
                let iterations = fma.iterations_for(seconds)?;
                Ok(Box::new(fma.workload(iterations.saturating_mul(scale))?))
            }
            Kernels::Sim(gpu) => Ok(Box::new(
                SimWorkload::new(gpu.clone(), SimKernel::new(seconds * f64::from(scale), 336.0))
                    .with_time_jitter(0.001, 5),
            )),
        }
    }
}

/// The reference's figures.
#[allow(dead_code)] // each program reads the fields it reports
pub struct Reference {
    /// Energy per launch, J.
    pub energy_j: f64,
    /// Steady power, W.
    pub power_w: f64,
    /// Wall time, s.
    pub wall_s: f64,
    /// Mean die temperature over the steady part, °C (read under load, as the harness
    /// reads it in its windows; `None` on the simulated GPU).
    pub temperature_c: Option<f64>,
}

/// (e) Steady counter power over `seconds` of back-to-back launches × event time per launch.
pub fn reference(device: &Device, workload: &mut dyn Workload, launch_s: f64, seconds: f64) -> Result<Reference> {
    let clock = device.clock().clone();
    let t0 = clock.now_s();
    let launches = (seconds / launch_s).ceil().max(1.0) as u64;
    let mut body = |marker: &WindowMarker| -> Result<f64> {
        clock.sleep_s(0.3);
        marker.start(0);
        let gpu = workload.run_batch(launches)?;
        marker.end(0);
        clock.sleep_s(0.3);
        Ok(gpu)
    };
    let (gpu_s, trace) = if clock.is_virtual() {
        record(device, &[SourceKind::Counter], body)?
    } else {
        // On a GPU the sampler also reads the temperature, under load.
        let (sources, _) = device.open_sources(&[SourceKind::Counter]);
        let sampler =
            Sampler::start_with_state(sources, device.state_probe(), clock.clone(), SamplerConfig::default())?;
        let gpu = body(&sampler.marker());
        let trace = sampler.stop()?;
        (gpu?, trace)
    };
    let window = trace.windows()?[0];
    let (curve, _) = counter_curve(&sorted_finite(trace.series(&Channel::CounterMj)))?;
    // Steady power: the ticks at least 1 s inside the busy stretch.
    let (from, to) = (window.start_s + 1.0, window.end_s - 1.0);
    let inner: Vec<&(f64, f64)> = curve.points().iter().filter(|p| p.0 >= from && p.0 <= to).collect();
    let (first, last) = match (inner.first(), inner.last()) {
        (Some(f), Some(l)) if l.0 > f.0 => (**f, **l),
        _ => return Err(Error::new(ErrorKind::Analysis, "the reference run spans too few ticks")),
    };
    let power = (last.1 - first.1) / (last.0 - first.0);
    let temperatures: Vec<f64> = trace
        .series(&Channel::Other(STATE_TEMPERATURE.into()))
        .iter()
        .filter(|r| r.time_s >= from && r.time_s <= to)
        .map(|r| r.value)
        .collect();
    let temperature_c =
        (!temperatures.is_empty()).then(|| temperatures.iter().sum::<f64>() / temperatures.len() as f64);
    Ok(Reference {
        energy_j: power * gpu_s / launches as f64,
        power_w: power,
        wall_s: clock.now_s() - t0,
        temperature_c,
    })
}
