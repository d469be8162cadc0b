//! The `energy-trace v1` file format (CSV).
//!
//! ```text
//! # energy-trace v1
//! # device: NVIDIA H100 80GB HBM3
//! # any other comment lines
//! time_s,channel,value
//! 0.012345678,counter_mj,2547971
//! 0.013000000,window_start,0
//! ```
//!
//! The first line is the magic `# energy-trace v1`. Comment lines start with `#` and may
//! appear anywhere; `key: value` comments are metadata. The header `time_s,channel,value`
//! comes before the first data line. `time_s` is seconds on one monotonic clock (any
//! origin); `channel` is a sensor source's channel (`counter_mj`, `instant_mw`,
//! `average_mw`, `sample_mw`, `power_mw`: the source table names them), `window_start` or
//! `window_end` (value = 0-based window index), or any other name, which is kept and
//! ignored. Values are finite numbers.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{edge_channel_name, Channel, Reading, Trace, WindowEdge, WindowMark};
use crate::error::{echo, Error, Result};

/// The first line of every trace file.
pub const MAGIC: &str = "# energy-trace v1";
/// The column header line.
pub const HEADER: &str = "time_s,channel,value";

/// Parses a trace from text; `origin` names the file in error messages.
pub fn parse_trace(text: &str, origin: &Path) -> Result<Trace> {
    let mut trace = Trace::new();
    let mut lines = text.lines().enumerate();
    let first = lines.next().map(|(_, l)| l.trim_start_matches('\u{feff}').trim_end());
    if first != Some(MAGIC) {
        let seen = first.unwrap_or("");
        return Err(Error::format(
            origin,
            1,
            format!("not an energy trace: the first line must be `{MAGIC}`, found `{}`", echo(seen)),
        ));
    }
    let mut header_seen = false;
    for (index, raw) in lines {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            trace.add_comment(comment.trim());
            continue;
        }
        if !header_seen {
            let columns: Vec<&str> = line.split(',').map(str::trim).collect();
            if columns != ["time_s", "channel", "value"] {
                return Err(Error::format(
                    origin,
                    line_no,
                    format!("expected the header `{HEADER}`, found `{}`", echo(line)),
                ));
            }
            header_seen = true;
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 3 {
            return Err(Error::format(
                origin,
                line_no,
                format!("expected 3 comma-separated fields (time_s,channel,value), found {}", fields.len()),
            ));
        }
        let time_s = parse_finite(fields[0]).ok_or_else(|| {
            Error::format(origin, line_no, format!("time_s `{}` is not a finite number", echo(fields[0])))
        })?;
        let channel = fields[1];
        if channel.is_empty() {
            return Err(Error::format(origin, line_no, "the channel name is empty"));
        }
        let value = parse_finite(fields[2]).ok_or_else(|| {
            Error::format(
                origin,
                line_no,
                format!("value `{}` of channel {} is not a finite number", echo(fields[2]), echo(channel)),
            )
        })?;
        let edge = match channel {
            "window_start" => Some(WindowEdge::Start),
            "window_end" => Some(WindowEdge::End),
            _ => None,
        };
        if let Some(edge) = edge {
            if value < 0.0 || value.fract() != 0.0 || value > f64::from(u32::MAX) {
                return Err(Error::format(
                    origin,
                    line_no,
                    format!("{channel} value `{}` must be a 0-based window index", echo(fields[2])),
                ));
            }
            trace.push_mark(WindowMark { time_s, index: value as u32, edge });
        } else {
            let channel = Channel::from_name(channel);
            if channel.source().is_some() && value < 0.0 {
                return Err(Error::format(
                    origin,
                    line_no,
                    format!(
                        "{channel} reading {} is negative: a board cannot draw negative {}; the file is corrupt",
                        echo(fields[2]),
                        if channel.is_power() { "power" } else { "energy" }
                    ),
                ));
            }
            trace.push(channel, Reading { time_s, value });
        }
    }
    if !header_seen {
        return Err(Error::format(origin, text.lines().count().max(1), format!("the header `{HEADER}` is missing")));
    }
    Ok(trace)
}

/// Reads a trace file.
pub fn read_trace(path: &Path) -> Result<Trace> {
    let bytes = crate::archive::read_archived(path).map_err(|e| Error::io(path, "read the trace", e))?;
    let text =
        String::from_utf8(bytes).map_err(|e| Error::format(path, 1, format!("the file is not UTF-8 text ({e})")))?;
    parse_trace(&text, path)
}

/// Renders a trace as text: comments, header, then every reading and mark in time order.
pub fn render_trace(trace: &Trace) -> String {
    let mut rows: Vec<(f64, &str, f64)> = Vec::with_capacity(trace.reading_count() + trace.marks().len());
    for channel in trace.channels() {
        for r in trace.series(channel) {
            rows.push((r.time_s, channel.name(), r.value));
        }
    }
    for mark in trace.marks() {
        rows.push((mark.time_s, edge_channel_name(mark.edge), f64::from(mark.index)));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = String::with_capacity(rows.len() * 32 + 256);
    out.push_str(MAGIC);
    out.push('\n');
    for comment in trace.comments() {
        for line in comment.lines() {
            let _ = writeln!(out, "# {line}");
        }
    }
    out.push_str(HEADER);
    out.push('\n');
    for (time_s, channel, value) in rows {
        let _ = writeln!(out, "{time_s:.9},{channel},{value}");
    }
    out
}

/// Writes a trace file atomically: to a temporary file beside it, then renamed, so a
/// crash never leaves a half-written trace under the final name.
pub fn write_trace(trace: &Trace, path: &Path) -> Result<()> {
    write_atomically(path, render_trace(trace).as_bytes())
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
/// The temporary is `.<file name>.tmp-<pid>-<n>` (`n` unique in this process); a process
/// killed mid-write leaves it behind; in a run directory the next run (`RunWriter::begin`)
/// removes it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, "create the directory", e))?;
    }
    // Under way until dropped, after the temporary is renamed or removed.
    let temporary = Temporary::new(path);
    let tmp = temporary.path();
    let result = (|| {
        let mut file = fs::File::create(tmp).map_err(|e| Error::io(tmp, "create", e))?;
        file.write_all(bytes).map_err(|e| Error::io(tmp, "write", e))?;
        file.sync_all().map_err(|e| Error::io(tmp, "flush", e))?;
        fs::rename(tmp, path).map_err(|e| Error::io(path, "rename the finished file to", e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(tmp);
    }
    result
}

/// This process's temporary files ([`write_atomically`]): the next counter, and the counters
/// of the writes under way. Threads of one process may write the same file: each write has
/// its own counter.
struct Temporaries {
    next: u64,
    under_way: BTreeSet<u64>,
}

static TEMPORARIES: Mutex<Temporaries> = Mutex::new(Temporaries { next: 0, under_way: BTreeSet::new() });

fn temporaries() -> MutexGuard<'static, Temporaries> {
    TEMPORARIES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The temporary file of one write of this process, `.<file name>.tmp-<pid>-<n>` beside
/// the file: under way (never removed by [`remove_stale_temporaries`]) until dropped.
pub struct Temporary {
    path: PathBuf,
    counter: u64,
}

impl Temporary {
    /// A fresh temporary name for a write of `path` (nothing is created).
    pub fn new(path: &Path) -> Temporary {
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
        let counter = {
            let mut t = temporaries();
            let counter = t.next;
            t.next += 1;
            t.under_way.insert(counter);
            counter
        };
        let path = path.with_file_name(format!(".{file_name}.tmp-{}-{counter}", std::process::id()));
        Temporary { path, counter }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        temporaries().under_way.remove(&self.counter);
    }
}

/// The writer of a temporary file named as [`write_atomically`] names them
/// (`.<file name>.tmp-<pid>-<n>`): its process id and counter; `None` for any other name.
pub fn temporary_writer(name: &str) -> Option<(u32, u64)> {
    let (file, tail) = name.strip_prefix('.')?.rsplit_once(".tmp-")?;
    let (pid, counter) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if file.is_empty() || !digits(pid) || !digits(counter) {
        return None;
    }
    Some((pid.parse().ok()?, counter.parse().ok()?))
}

/// Whether process `pid` may be running: `kill(pid, 0)` finds it (or finds it and may not
/// signal it). Anything but a clear "no such process" counts as running, so a live
/// writer's file is never taken for a dead one's; without `kill` (not unix), always.
fn process_may_be_running(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else { return true };
        if pid <= 0 {
            return true;
        }
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Removes the temporary files [`write_atomically`] left in `dir` (not below) whose writer
/// is gone: a process that no longer runs (killed mid-write), or this process's id with no
/// write of this process under way under that counter (a file of an earlier process that
/// had the same id). A temporary of a process that runs is kept, whatever it is: it may be
/// mid-write. Best effort: a file that cannot be removed stays (no reader lists it).
pub fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, counter)) = name.to_str().and_then(temporary_writer) else { continue };
        let path = entry.path();
        if pid == me {
            // Checked and removed under the registry's lock: no write of this process can
            // take this counter in between.
            let t = temporaries();
            if !t.under_way.contains(&counter) {
                let _ = fs::remove_file(&path);
            }
        } else if !process_may_be_running(pid) {
            let _ = fs::remove_file(&path);
        }
    }
}

fn parse_finite(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn parse(text: &str) -> Result<Trace> {
        parse_trace(text, Path::new("t.csv"))
    }

    #[test]
    fn round_trips_readings_marks_and_comments() {
        let mut trace = Trace::new();
        trace.set_metadata("device", "simulated H100");
        trace.push(Channel::CounterMj, Reading { time_s: 0.1, value: 2547971.0 });
        trace.push(Channel::AverageMw, Reading { time_s: 0.05, value: 119034.5 });
        trace.push(Channel::Other("fan_pct".into()), Reading { time_s: 0.2, value: 30.0 });
        trace.push_mark(WindowMark { time_s: 0.15, index: 0, edge: WindowEdge::Start });
        trace.push_mark(WindowMark { time_s: 0.25, index: 0, edge: WindowEdge::End });
        let text = render_trace(&trace);
        assert!(text.starts_with(
            "# energy-trace v1\n# device: simulated H100\ntime_s,channel,value\n0.050000000,average_mw,119034.5\n"
        ));
        let back = parse(&text).unwrap();
        assert_eq!(back, trace);
        assert_eq!(back.windows().unwrap()[0].end_s, 0.25);
    }

    #[test]
    fn errors_name_the_line_and_problem() {
        let cases = [
            ("time_s,channel,value\n", ":1: not an energy trace"),
            ("# energy-trace v1\n0.1,counter_mj,5\n", ":2: expected the header"),
            ("# energy-trace v1\n# c\ntime_s,channel,value\n0.1,counter_mj\n", ":4: expected 3"),
            ("# energy-trace v1\ntime_s,channel,value\nx,counter_mj,5\n", ":3: time_s `x`"),
            ("# energy-trace v1\ntime_s,channel,value\n1,counter_mj,NaN\n", ":3: value `NaN`"),
            ("# energy-trace v1\ntime_s,channel,value\n1,,3\n", ":3: the channel name is empty"),
            ("# energy-trace v1\ntime_s,channel,value\n1,window_start,0.5\n", ":3: window_start value"),
            ("# energy-trace v1\ntime_s,channel,value\n1,window_end,-1\n", ":3: window_end value"),
            ("# energy-trace v1\n# only comments\n", "header `time_s,channel,value` is missing"),
            ("# energy-trace v1\ntime_s,channel,value\n1,power_mw,-60000\n", ":3: power_mw reading -60000 is negative"),
            ("# energy-trace v1\ntime_s,channel,value\n1,counter_mj,-1\n", ":3: counter_mj reading -1 is negative"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Format, "{text}");
            assert!(err.message().contains(expected), "{text:?}: {err}");
            assert!(err.message().starts_with("t.csv:"), "{err}");
        }
    }

    #[test]
    fn echoed_fields_are_cut() {
        let huge = "7".repeat(1 << 20);
        let text = format!("# energy-trace v1\ntime_s,channel,value\n{huge}x,counter_mj,1\n");
        let err = parse(&text).unwrap_err();
        assert!(err.message().len() < 300, "{} bytes", err.message().len());
        let text = format!("# energy-trace v1\ntime_s,channel,value\n1,{huge},x\n");
        assert!(parse(&text).unwrap_err().message().len() < 300);
    }

    #[test]
    fn unknown_channels_and_blank_lines_are_kept_or_skipped() {
        let trace =
            parse("# energy-trace v1\n\ntime_s,channel,value\n0.5,gpu_temp_c,40\n\n0.6,counter_mj,7\n").unwrap();
        assert_eq!(trace.series(&Channel::Other("gpu_temp_c".into())).len(), 1);
        assert_eq!(trace.series(&Channel::CounterMj)[0].value, 7.0);
    }

    #[test]
    fn atomic_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/trace.csv");
        let mut trace = Trace::new();
        trace.push(Channel::PowerMw, Reading { time_s: 1.0, value: 5.0 });
        write_trace(&trace, &path).unwrap();
        assert_eq!(read_trace(&path).unwrap(), trace);
        let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn temporary_names_give_their_writer() {
        let temporary = Temporary::new(Path::new("dir/run.json"));
        let name = temporary.path().file_name().unwrap().to_str().unwrap().to_string();
        let (pid, counter) = temporary_writer(&name).unwrap();
        assert_eq!((pid, counter), (std::process::id(), temporary.counter));
        assert!(name.starts_with(".run.json.tmp-"), "{name}");
        assert_eq!(temporary_writer(".a.b.json.tmp-12-0"), Some((12, 0)));
        for other in
            ["run.json", ".run.lock", ".run.json.tmp-", ".run.json.tmp-1", ".x.tmp-+1-2", ".x.tmp-1-2a", ".tmp-1-2"]
        {
            assert_eq!(temporary_writer(other), None, "{other}");
        }
        assert!(process_may_be_running(std::process::id()));
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let err = read_trace(Path::new("/nonexistent/trace.csv")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(err.message().contains("/nonexistent/trace.csv"));
    }
}
