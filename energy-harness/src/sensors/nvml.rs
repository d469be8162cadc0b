//! NVML sensor sources (DESIGN.md §1): each source's call is data in its row of the source
//! table ([`NvmlCall`]); this file performs the calls: the energy counter,
//! `nvmlDeviceGetPowerUsage`, a power field in a power scope, and the driver's power
//! sample buffer.
//!
//! Every source is probed when it is opened, so a source the GPU lacks reports
//! [`SourceError::NotSupported`] up front instead of failing in the sampler thread.

use nvml_wrapper::enum_wrappers::device::Sampling;
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::FieldValueSample;
use nvml_wrapper::Device as NvmlDevice;
use nvml_wrapper_sys::bindings::nvmlFieldValue_t;

use super::{Delivery, NvmlCall, SensorSource, SourceError, SourceKind};
use crate::clock::Clock;
use crate::gpu::nvml_device;
use energy_results::error::Result;
use energy_results::trace::Reading;

/// A sensor source on an NVML device.
pub struct NvmlSource {
    device: NvmlDevice<'static>,
    kind: SourceKind,
    /// Newest driver timestamp seen (µs), for draining the sample buffer incrementally.
    last_sample_us: u64,
}

impl NvmlSource {
    /// Opens and probes `kind` on the GPU with NVML index `nvml_index`.
    ///
    /// Errors: the harness [`crate::Error`] when NVML or the GPU is missing; a
    /// `NotSupported` error when the GPU lacks the source.
    pub fn open(nvml_index: u32, kind: SourceKind) -> Result<Self> {
        let device = nvml_device(nvml_index)?;
        let mut source = NvmlSource { device, kind, last_sample_us: 0 };
        source.probe()?;
        Ok(source)
    }

    /// One read to learn whether the source works here.
    fn probe(&mut self) -> std::result::Result<(), SourceError> {
        match self.kind.delivery() {
            Delivery::Buffered => {
                // NOT_FOUND only means "nothing buffered yet": the call itself is supported.
                match self.device.samples(Sampling::Power, None) {
                    Ok(samples) => {
                        self.last_sample_us = samples.iter().map(|s| s.timestamp).max().unwrap_or(0);
                        Ok(())
                    }
                    Err(NvmlError::NotFound) => Ok(()),
                    Err(e) => Err(self.error(e)),
                }
            }
            Delivery::Polled => self.read_value().map(|_| ()),
        }
    }

    fn error(&self, err: NvmlError) -> SourceError {
        match err {
            NvmlError::NotSupported | NvmlError::FunctionNotFound | NvmlError::FailedToLoadSymbol(_) => {
                SourceError::NotSupported { kind: self.kind, detail: err.to_string() }
            }
            other => SourceError::Failed { kind: self.kind, detail: other.to_string() },
        }
    }

    /// Reads a polled source's current value (mJ for the counter, mW otherwise).
    fn read_value(&self) -> std::result::Result<f64, SourceError> {
        match self.kind.facts().nvml {
            NvmlCall::TotalEnergy => {
                self.device.total_energy_consumption().map(|mj| mj as f64).map_err(|e| self.error(e))
            }
            NvmlCall::PowerUsage => self.device.power_usage().map(f64::from).map_err(|e| self.error(e)),
            NvmlCall::Field { id, scope } => {
                let sample = self.field_value(id, scope)?;
                let value = sample.value.map_err(|e| self.error(e))?;
                Ok(sample_value_f64(value))
            }
            NvmlCall::PowerSamples => unreachable!("the sample buffer is drained, not polled"),
        }
    }

    /// `nvmlDeviceGetFieldValues` for one field in one scope. nvml-wrapper's
    /// `field_values_for` sets no scope (every request reads the board), so the function is
    /// called through the wrapper's loaded library with the device's handle.
    fn field_value(&self, id: u32, scope: u32) -> std::result::Result<FieldValueSample, SourceError> {
        let lib = self.device.nvml().lib();
        let get = lib
            .nvmlDeviceGetFieldValues
            .as_ref()
            .map_err(|e| self.error(NvmlError::FailedToLoadSymbol(e.to_string())))?;
        // SAFETY: a zeroed nvmlFieldValue_t is a valid request once its field and scope are
        // set; the handle belongs to a device of the NVML instance that outlives `self`
        // (`nvml_device` keeps it for the process); NVML writes one value into the one
        // element it is given.
        let raw = unsafe {
            let mut request: nvmlFieldValue_t = std::mem::zeroed();
            request.fieldId = id;
            request.scopeId = scope;
            let status = get(self.device.handle(), 1, &mut request);
            nvml_wrapper::error::nvml_try(status).map_err(|e| self.error(e))?;
            request
        };
        FieldValueSample::try_from(raw).map_err(|e| self.error(e))
    }
}

fn sample_value_f64(value: SampleValue) -> f64 {
    match value {
        SampleValue::F64(v) => v,
        SampleValue::U32(v) => f64::from(v),
        SampleValue::U64(v) => v as f64,
        SampleValue::I64(v) => v as f64,
    }
}

impl SensorSource for NvmlSource {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn read(&mut self, clock: &dyn Clock, out: &mut Vec<Reading>) -> std::result::Result<(), SourceError> {
        if self.kind.delivery() == Delivery::Buffered {
            let samples = match self.device.samples(Sampling::Power, self.last_sample_us) {
                Ok(samples) => samples,
                Err(NvmlError::NotFound) => return Ok(()), // nothing new since last_sample_us
                Err(e) => return Err(self.error(e)),
            };
            // Driver timestamps are µs on the Unix epoch; move them onto the sampler clock.
            let origin_us = clock.unix_time_of_origin_s() * 1e6;
            for sample in samples {
                if sample.timestamp <= self.last_sample_us {
                    continue;
                }
                self.last_sample_us = sample.timestamp;
                out.push(Reading {
                    time_s: (sample.timestamp as f64 - origin_us) * 1e-6,
                    value: sample_value_f64(sample.value),
                });
            }
            return Ok(());
        }
        let before = clock.now_s();
        let value = self.read_value()?;
        let after = clock.now_s();
        out.push(Reading { time_s: 0.5 * (before + after), value });
        Ok(())
    }
}
