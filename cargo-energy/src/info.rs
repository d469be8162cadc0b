//! `cargo energy info`: device facts and which sources work.

use serde::Serialize;

use energy_harness::units::format_si;
use energy_harness::unstable::device::DeviceFacts;
use energy_harness::unstable::device::SourceError;
use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::SourceKind;
use energy_harness::{Error, ErrorKind, Result};
use energy_results::source::Delivery;
use energy_results::source::Quantity;
use energy_results::trace::Reading;

/// What one read of a source gave.
#[derive(Debug, Serialize)]
struct SourceProbe {
    source: &'static str,
    #[serde(skip)]
    kind: SourceKind,
    call: &'static str,
    supported: bool,
    /// Wall time of one read, seconds.
    read_s: Option<f64>,
    /// Readings that read returned (1 for polled values, the buffered samples for the buffer).
    readings: usize,
    /// Last value, in the channel's unit (mJ or mW).
    last_value: Option<f64>,
    problem: Option<String>,
}

#[derive(Debug, Serialize)]
struct InfoReport<'a> {
    /// Every GPU of the machine (real GPUs only).
    gpus: Vec<energy_harness::unstable::device::GpuListing>,
    device: &'a DeviceFacts,
    simulated_because: Option<&'a str>,
    sources: Vec<SourceProbe>,
}

pub(super) fn run(device: Option<u32>, json: bool) -> Result<()> {
    let request = DeviceRequest::from_env()?;
    // `info` describes the real GPU; it falls back to the simulator only when asked to.
    let effective = match request {
        DeviceRequest::Auto => DeviceRequest::Nvml,
        other => other,
    };
    let device = Device::open(&effective, device).map_err(|e| {
        if matches!(e.kind(), ErrorKind::NoDriver | ErrorKind::NoGpu) {
            Error::new(
                e.kind(),
                format!(
                    "no NVIDIA GPU can be used here: {}. Benchmarks run on the simulated H100 instead; \
                     `ENERGY_DEVICE=sim cargo energy info` describes it",
                    e.message()
                ),
            )
        } else {
            e
        }
    })?;
    let sources = SourceKind::ALL.iter().map(|&kind| probe(&device, kind)).collect();
    let gpus = if device.is_simulated() {
        Vec::new()
    } else {
        energy_harness::unstable::device::list_gpus().unwrap_or_default()
    };
    let report = InfoReport { gpus, device: device.facts(), simulated_because: device.sim_reason(), sources };
    if json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode JSON: {e}")))?;
        crate::output::emit(&format!("{text}\n"))?;
    } else {
        crate::output::emit(&render(&report))?;
    }
    Ok(())
}

fn probe(device: &Device, kind: SourceKind) -> SourceProbe {
    let mut result = SourceProbe {
        source: kind.name(),
        kind,
        call: kind.nvml_call(),
        supported: false,
        read_s: None,
        readings: 0,
        last_value: None,
        problem: None,
    };
    let mut source = match device.open_source(kind) {
        Ok(source) => source,
        Err(e) => {
            result.supported = false;
            result.problem = Some(match e {
                SourceError::NotSupported { detail, .. } => format!("not supported: {detail}"),
                SourceError::Failed { detail, .. } => format!("failed: {detail}"),
            });
            return result;
        }
    };
    result.supported = true;
    let clock = device.clock();
    if kind.delivery() == Delivery::Buffered {
        // The buffer only hands over samples newer than when it was opened.
        clock.sleep_s(0.1);
    }
    let mut out: Vec<Reading> = Vec::new();
    let before = clock.now_s();
    let read = source.read(clock.as_ref(), &mut out);
    result.read_s = Some(clock.now_s() - before);
    match read {
        Ok(()) => {
            result.readings = out.len();
            result.last_value = out.last().map(|r| r.value);
        }
        Err(e) => result.problem = Some(e.to_string()),
    }
    result
}

fn opt<T: std::fmt::Display>(value: Option<T>, unit: &str) -> String {
    value.map_or_else(|| "not reported".to_string(), |v| format!("{v}{unit}"))
}

fn render(report: &InfoReport<'_>) -> String {
    let f = report.device;
    let mut out = String::new();
    if report.gpus.len() > 1 {
        out.push_str(&format!(
            "{} GPUs on this machine (the one below is CUDA device {}):\n",
            report.gpus.len(),
            f.cuda_ordinal.map_or("?".into(), |o| o.to_string())
        ));
        for g in &report.gpus {
            out.push_str(&format!(
                "  NVML {}  {}  {}  CUDA {}\n",
                g.nvml_index,
                g.name,
                g.uuid,
                g.cuda_ordinal.map_or("hidden (CUDA_VISIBLE_DEVICES)".into(), |o| format!("device {o}"))
            ));
        }
    }
    let tag = if f.simulated { " [simulated]" } else { "" };
    out.push_str(&format!("GPU {}: {}{tag}\n", f.nvml_index, f.name));
    if let Some(reason) = report.simulated_because {
        out.push_str(&format!("  simulated       {reason}: every figure from it is simulated\n"));
    }
    out.push_str(&format!("  UUID            {}\n", f.uuid));
    out.push_str(&format!(
        "  CUDA ordinal    {}\n",
        f.cuda_ordinal.map_or("none found (libcuda missing, or hidden by CUDA_VISIBLE_DEVICES)".into(), |o| format!(
            "{o} (matched by UUID)"
        ))
    ));
    out.push_str(&format!(
        "  driver          {}{}\n",
        opt(f.driver_version.as_deref(), ""),
        f.nvml_version.as_deref().map(|v| format!(" (NVML {v})")).unwrap_or_default()
    ));
    out.push_str(&format!("  power limit     {}\n", opt(f.power_limit_w, " W")));
    out.push_str(&format!(
        "  SM clock        {} (max {})\n",
        opt(f.sm_clock_mhz, " MHz"),
        opt(f.max_sm_clock_mhz, " MHz")
    ));
    out.push_str(&format!(
        "  memory clock    {} (max {})\n",
        opt(f.mem_clock_mhz, " MHz"),
        opt(f.max_mem_clock_mhz, " MHz")
    ));
    out.push_str(&format!("  temperature     {}, P-state {}\n", opt(f.temperature_c, " °C"), opt(f.pstate, "")));
    let reasons = if f.throttle_reasons.is_empty() { "none".to_string() } else { f.throttle_reasons.join(", ") };
    out.push_str(&format!("  throttle        {reasons}\n"));
    let processes = if f.processes.is_empty() {
        "none".to_string()
    } else {
        f.processes
            .iter()
            .map(|p| match p.used_memory_bytes {
                Some(b) => format!("pid {} ({} MiB)", p.pid, b / (1 << 20)),
                None => format!("pid {}", p.pid),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&format!("  processes       {processes}\n"));
    out.push_str("Sources:\n");
    for s in &report.sources {
        let status = if s.problem.is_none() && s.supported { "ok" } else { "--" };
        let detail = match (&s.problem, s.last_value) {
            (Some(p), _) => p.clone(),
            (None, value) => {
                let value = match (s.kind.quantity(), value) {
                    (_, None) => "no new reading yet".to_string(),
                    (Quantity::Energy, Some(v)) => format!("{v:.0} mJ"),
                    (Quantity::Power, Some(v)) => format_si(v / 1000.0, "W", 4),
                };
                let read = s.read_s.map(|r| format!("read {}", format_si(r, "s", 3))).unwrap_or_default();
                if s.kind.delivery() == Delivery::Buffered {
                    format!("{read}, {} new samples in 0.1 s, last {value}", s.readings)
                } else {
                    format!("{read}, {value}")
                }
            }
        };
        out.push_str(&format!("  {:<8} {status}  {:<52} {detail}\n", s.source, s.call));
    }
    out
}
