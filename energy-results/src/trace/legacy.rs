//! Conversion of the H100 probe recordings (`shared/traces/h100/`, an older layout
//! described in its README) into [`Trace`]s.
//!
//! Two layouts exist:
//! - `trace_*.csv`, host-polled rows `t,power_mw,p_call_s,energy_mj,e_call_s,field_avg_mw,
//!   field_inst_mw,f_call_s`, where `t` was taken before the first call of the row. The
//!   calls ran in column order (power usage, energy counter, fields), so each reading is
//!   timestamped at the middle of its own call: power at `t + p/2`, the counter at
//!   `t + p + e/2`, the fields at `t + p + e + f/2`. `nvmlDeviceGetPowerUsage` becomes
//!   `power_mw`, the counter `counter_mj`, field 185 `average_mw`, field 186 `instant_mw`.
//! - `samples_*.csv`, the driver sample buffer: `timestamp_us,value_mw` on the Unix
//!   epoch, optionally preceded by `# host_launch_us=… host_done_us=…`, which become the
//!   marks of window 0. Times are shifted so the first sample is at 0 s.
//!
//! The kernel windows of the polled traces are listed only in the recordings' README;
//! [`h100_recording_windows`] carries that table.

use std::path::Path;

use super::{Channel, Reading, Trace, WindowEdge, WindowMark};
use crate::error::{Error, Result};

/// A kernel window of a recording: host launch and completion times and the CUDA-event duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedWindow {
    /// Host time of the launch, seconds on the recording's clock.
    pub start_s: f64,
    /// Host time at which completion was seen.
    pub end_s: f64,
    /// The kernel's duration from CUDA events, milliseconds.
    pub event_ms: f64,
}

/// The kernel windows of the H100 recordings, from `shared/traces/h100/README.md`.
/// `trace_short.csv` has none listed precisely ("a 0.1 ms kernel launched at about 0.5 s"),
/// so it gets no marks.
pub fn h100_recording_windows(file_name: &str) -> &'static [RecordedWindow] {
    const STEP3S: [RecordedWindow; 1] = [RecordedWindow { start_s: 1.50229, end_s: 4.49608, event_ms: 2993.51 }];
    const B2B: [RecordedWindow; 3] = [
        RecordedWindow { start_s: 1.00221, end_s: 2.00033, event_ms: 998.07 },
        RecordedWindow { start_s: 2.10275, end_s: 3.10114, event_ms: 998.08 },
        RecordedWindow { start_s: 8.10284, end_s: 9.10175, event_ms: 998.00 },
    ];
    match file_name {
        "trace_step3s.csv" => &STEP3S,
        "trace_b2b.csv" => &B2B,
        _ => &[],
    }
}

const POLLED_COLUMNS: [&str; 8] =
    ["t", "power_mw", "p_call_s", "energy_mj", "e_call_s", "field_avg_mw", "field_inst_mw", "f_call_s"];

/// Converts a host-polled recording (`trace_*.csv`) with its kernel windows.
pub fn convert_polled(text: &str, origin: &Path, windows: &[RecordedWindow]) -> Result<Trace> {
    let mut trace = Trace::new();
    trace.add_comment(format!(
        "converted from {} (H100 probe recording, host-polled layout)",
        origin.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
    ));
    trace.add_comment("readings timestamped at the middle of their own NVML call; calls ran power, counter, fields");
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(Error::format(origin, 1, "empty recording"));
    };
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    if columns != POLLED_COLUMNS {
        return Err(Error::format(origin, 1, format!("expected the columns {}", POLLED_COLUMNS.join(","))));
    }
    for (index, line) in lines {
        let line_no = index + 1;
        let fields: Vec<f64> = line
            .split(',')
            .map(|f| f.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect::<Option<Vec<f64>>>()
            .filter(|v| v.len() == POLLED_COLUMNS.len())
            .ok_or_else(|| {
                Error::format(origin, line_no, format!("expected {} finite numbers", POLLED_COLUMNS.len()))
            })?;
        let [t, power_mw, p_call, energy_mj, e_call, avg_mw, inst_mw, f_call] = fields[..] else {
            unreachable!("length checked above")
        };
        trace.push(Channel::PowerMw, Reading { time_s: t + p_call / 2.0, value: power_mw });
        let counter_t = t + p_call + e_call / 2.0;
        trace.push(Channel::CounterMj, Reading { time_s: counter_t, value: energy_mj });
        let field_t = t + p_call + e_call + f_call / 2.0;
        trace.push(Channel::AverageMw, Reading { time_s: field_t, value: avg_mw });
        trace.push(Channel::InstantMw, Reading { time_s: field_t, value: inst_mw });
    }
    push_windows(&mut trace, windows);
    Ok(trace)
}

/// Converts a driver sample-buffer recording (`samples_*.csv`).
pub fn convert_samples(text: &str, origin: &Path) -> Result<Trace> {
    let mut trace = Trace::new();
    trace.add_comment(format!(
        "converted from {} (H100 probe recording, driver sample buffer)",
        origin.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
    ));
    let mut host_window_us: Option<(f64, f64)> = None;
    let mut samples: Vec<(f64, f64)> = Vec::new();
    let mut header_seen = false;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut launch = None;
            let mut done = None;
            for pair in comment.split_whitespace() {
                match pair.split_once('=') {
                    Some(("host_launch_us", v)) => launch = v.parse::<f64>().ok(),
                    Some(("host_done_us", v)) => done = v.parse::<f64>().ok(),
                    _ => {}
                }
            }
            match (launch, done) {
                (Some(l), Some(d)) => host_window_us = Some((l, d)),
                _ => trace.add_comment(comment.trim()),
            }
            continue;
        }
        if !header_seen {
            if line != "timestamp_us,value_mw" {
                return Err(Error::format(origin, line_no, "expected the header `timestamp_us,value_mw`"));
            }
            header_seen = true;
            continue;
        }
        let parsed = line
            .split_once(',')
            .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)))
            .filter(|(a, b)| a.is_finite() && b.is_finite());
        let Some(sample) = parsed else {
            return Err(Error::format(origin, line_no, "expected `timestamp_us,value_mw` numbers"));
        };
        samples.push(sample);
    }
    let Some(&(first_us, _)) = samples.first() else {
        return Err(Error::format(origin, 1, "the recording holds no samples"));
    };
    trace.set_metadata("unix_time_of_origin_s", format!("{:.6}", first_us * 1e-6));
    for (timestamp_us, value_mw) in samples {
        trace.push(Channel::SampleMw, Reading { time_s: (timestamp_us - first_us) * 1e-6, value: value_mw });
    }
    if let Some((launch_us, done_us)) = host_window_us {
        push_windows(
            &mut trace,
            &[RecordedWindow {
                start_s: (launch_us - first_us) * 1e-6,
                end_s: (done_us - first_us) * 1e-6,
                event_ms: f64::NAN,
            }],
        );
    }
    Ok(trace)
}

fn push_windows(trace: &mut Trace, windows: &[RecordedWindow]) {
    for (index, window) in windows.iter().enumerate() {
        let index = index as u32;
        trace.push_mark(WindowMark { time_s: window.start_s, index, edge: WindowEdge::Start });
        trace.push_mark(WindowMark { time_s: window.end_s, index, edge: WindowEdge::End });
        if window.event_ms.is_finite() {
            trace.set_metadata(&format!("window {index} cuda_event_ms"), window.event_ms);
        }
    }
}

/// Converts one file of the H100 recordings directory by its name: `trace_*.csv` or `samples_*.csv`.
pub fn convert_h100_file(path: &Path) -> Result<Trace> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the recording", e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut trace = if name.starts_with("samples_") {
        convert_samples(&text, path)?
    } else {
        convert_polled(&text, path, h100_recording_windows(&name))?
    };
    trace.set_metadata("device", "NVIDIA H100 80GB HBM3 (recorded)");
    trace.set_metadata("driver", "580.159.04");
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polled_rows_are_timestamped_mid_call() {
        let text = "t,power_mw,p_call_s,energy_mj,e_call_s,field_avg_mw,field_inst_mw,f_call_s\n\
                    1.0,100,0.002,5000,0.004,101,102,0.002\n";
        let trace = convert_polled(text, Path::new("x.csv"), &[]).unwrap();
        assert_eq!(trace.series(&Channel::PowerMw)[0], Reading { time_s: 1.001, value: 100.0 });
        assert!((trace.series(&Channel::CounterMj)[0].time_s - 1.004).abs() < 1e-12);
        assert!((trace.series(&Channel::InstantMw)[0].time_s - 1.007).abs() < 1e-12);
    }

    #[test]
    fn bad_rows_name_their_line() {
        let text = "t,power_mw,p_call_s,energy_mj,e_call_s,field_avg_mw,field_inst_mw,f_call_s\n1,2,3\n";
        let err = convert_polled(text, Path::new("x.csv"), &[]).unwrap_err();
        assert!(err.message().starts_with("x.csv:2:"), "{err}");
        let err = convert_samples("timestamp_us,value_mw\n5,abc\n", Path::new("s.csv")).unwrap_err();
        assert!(err.message().starts_with("s.csv:2:"), "{err}");
    }

    #[test]
    fn sample_header_becomes_window_zero() {
        let text =
            "# host_launch_us=1000500 host_done_us=1002500\ntimestamp_us,value_mw\n1000000,120000\n1020000,270000\n";
        let trace = convert_samples(text, Path::new("s.csv")).unwrap();
        let w = trace.windows().unwrap();
        assert_eq!(w.len(), 1);
        assert!((w[0].start_s - 0.5e-3).abs() < 1e-12 && (w[0].end_s - 2.5e-3).abs() < 1e-12);
        assert_eq!(trace.series(&Channel::SampleMw)[1].time_s, 0.02);
    }
}
