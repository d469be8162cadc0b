//! `cargo energy trace`: record a live sensor trace.

use std::io::Write;
use std::path::Path;

use energy_harness::unstable::device::{Device, DeviceRequest};
use energy_harness::unstable::device::{Sampler, SamplerConfig};
use energy_harness::SourceKind;
use energy_harness::{Error, ErrorKind, Result};
use energy_results::trace::format::render_trace;
use energy_results::trace::format::write_trace;

pub(super) fn run(seconds: f64, device: Option<u32>, output: Option<&Path>) -> Result<()> {
    let request = match DeviceRequest::from_env()? {
        // A live trace of the simulator is only wanted when asked for by name.
        DeviceRequest::Auto => DeviceRequest::Nvml,
        other => other,
    };
    let mut device = Device::open(&request, device)?;
    let (sources, unavailable) = device.open_sources(&SourceKind::ALL);
    if sources.is_empty() {
        let why: Vec<String> = unavailable.iter().map(ToString::to_string).collect();
        return Err(Error::new(
            ErrorKind::NotSupported,
            format!("no power or energy source works on {}: {}", device.facts().name, why.join("; ")),
        ));
    }
    let mut stderr = std::io::stderr();
    let names: Vec<&str> = sources.iter().map(|s| s.kind().name()).collect();
    let _ = writeln!(stderr, "recording {seconds} s on {}: {}", device.facts().name, names.join(", "));
    for missing in &unavailable {
        let _ = writeln!(stderr, "  not recorded: {missing}");
    }
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut trace_header = energy_results::trace::Trace::new();
    device.facts().annotate(&mut trace_header, "start");
    let clock = device.clock().clone();
    let sampler = Sampler::start(sources, clock.clone(), SamplerConfig::default())?;
    let t_start = clock.now_s();
    loop {
        let elapsed = clock.now_s() - t_start;
        if elapsed >= seconds {
            break;
        }
        let _ = write!(stderr, "\r  {elapsed:5.1} / {seconds} s");
        let _ = stderr.flush();
        clock.sleep_s((seconds - elapsed).min(1.0));
    }
    let _ = writeln!(stderr, "\r  {seconds:5.1} / {seconds} s");
    let recorded = sampler.stop()?;
    let _ = device.refresh();
    let mut trace = trace_header;
    trace.set_metadata("recorded_at", started_at);
    trace.set_metadata("harness", format!("energy-harness {}", env!("CARGO_PKG_VERSION")));
    trace.set_metadata("clock", "host monotonic, seconds since the recording began; polled values stamped mid-call");
    device.facts().annotate(&mut trace, "end");
    for comment in recorded.comments() {
        trace.add_comment(comment.clone());
    }
    let mut merged = trace;
    for channel in recorded.channels() {
        for r in recorded.series(channel) {
            merged.push(channel.clone(), *r);
        }
    }
    let _ = writeln!(stderr, "  {} readings", merged.reading_count());
    match output {
        Some(path) => {
            write_trace(&merged, path)?;
            let _ = writeln!(stderr, "  written to {}", path.display());
        }
        None => crate::output::emit(&render_trace(&merged))?,
    }
    Ok(())
}
