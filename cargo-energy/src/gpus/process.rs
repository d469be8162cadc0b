//! The process handling of `cargo energy run --gpus`: the signals it catches and passes on,
//! the time limit of each executable (SIGTERM, then SIGKILL to its process group), and why
//! an executable did not succeed (its exit code or signal and the end of its stderr).

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use energy_harness::{Error, Result};
use energy_results::escape::visible;

use super::BenchExe;

/// How long a stopped executable has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);
/// How much of an executable's stderr is kept for the message when it fails.
const TAIL_BYTES: usize = 4096;
/// How many of its last stderr lines the message quotes.
const TAIL_LINES: usize = 8;

/// The signal (SIGINT, SIGTERM) `cargo energy run` received, 0 before any.
pub(crate) static INTERRUPT: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_interrupt(signal: libc::c_int) {
    INTERRUPT.store(signal, Ordering::SeqCst);
}

/// From here on SIGINT and SIGTERM are noted, not fatal: the runners pass them on to their
/// executables' process groups (which the terminal's Ctrl-C no longer reaches).
pub(crate) fn catch_interrupts() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        unsafe { libc::signal(signal, on_interrupt as *const () as libc::sighandler_t) };
    }
}

pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Why an executable did not succeed: its exit code, or the signal that ended it.
pub(crate) fn exit_reason(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!(
            "was killed by signal {signal} ({}){}",
            signal_name(signal),
            if status.core_dumped() { ", core dumped" } else { "" }
        ),
        (None, None) => format!("ended with {status}"),
    }
}

/// The last lines of what an executable wrote to stderr, each shown ([`visible`]) and cut
/// to 240 characters, indented under the failure; empty when it wrote nothing.
pub(crate) fn stderr_tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "; it wrote nothing to stderr".into();
    }
    let mut out = String::from("; the end of its stderr:");
    for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
        let shown = visible(line);
        let cut: String = shown.chars().take(240).collect();
        out.push_str("\n        ");
        out.push_str(&cut);
        if cut.len() < shown.len() {
            out.push('…');
        }
    }
    out
}

/// How a wait for an executable ended.
enum Ended {
    Exited(ExitStatus),
    TimedOut,
    Interrupted(i32),
}

/// Sends `first` to the process group `child` leads, gives it [`GRACE`] to end, then
/// SIGKILLs the group (stragglers too) and reaps the child.
fn stop_group(child: &mut Child, first: libc::c_int) {
    let group = child.id() as libc::pid_t;
    // SAFETY: kill(2) with a negative pid signals that process group and touches no memory.
    unsafe { libc::kill(-group, first) };
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above; the group's leader is not reaped yet, so its id is not reused.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
}

/// Waits for `child` at most `limit`, saying every so often that it still runs (every
/// tenth of the limit, at least each second and at most each minute).
fn wait_with_limit(child: &mut Child, limit: Option<Duration>, label: &str, name: &str) -> std::io::Result<Ended> {
    let start = Instant::now();
    let every =
        limit.map_or(Duration::from_secs(60), |l| (l / 10).clamp(Duration::from_secs(1), Duration::from_secs(60)));
    let mut next_note = start + every;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ended::Exited(status));
        }
        let signal = INTERRUPT.load(Ordering::SeqCst);
        if signal != 0 {
            stop_group(child, signal);
            return Ok(Ended::Interrupted(signal));
        }
        let now = Instant::now();
        if limit.is_some_and(|l| now.duration_since(start) >= l) {
            stop_group(child, libc::SIGTERM);
            return Ok(Ended::TimedOut);
        }
        if now >= next_note {
            let limit_text =
                limit.map_or("no time limit".to_string(), |l| format!("time limit {:.0} s", l.as_secs_f64()));
            eprintln!(
                "  {label}  {name}: still running after {:.0} s ({limit_text})",
                now.duration_since(start).as_secs_f64()
            );
            next_note += every;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One run of a bench executable: what it runs, where it writes, how long it may take.
pub(crate) struct Launch<'a> {
    /// The executable and the folder it runs in.
    pub exe: &'a BenchExe,
    /// Its arguments after `--bench` (criterion's filter).
    pub bench_args: &'a [String],
    /// Environment variables set for it.
    pub env: &'a [(&'a str, &'a str)],
    /// Its `CARGO_TARGET_DIR`: its results go to `energy/new` there.
    pub target_dir: &'a Path,
    /// Where its stdout and stderr go.
    pub log: &'a File,
    /// The log's path, for messages.
    pub log_path: &'a Path,
    /// The longest it may run.
    pub limit: Option<Duration>,
    /// The label of the "still running" notes.
    pub label: &'a str,
    /// The command that runs it, as messages name it (`cargo energy run`).
    pub command: &'a str,
}

/// How a run of a bench executable ended, a failure described (exit code or signal and the
/// end of its stderr, or the time limit).
pub(crate) enum ExeEnd {
    Succeeded,
    Failed(String),
    /// Stopped because the command received SIGINT or SIGTERM: nothing more should run.
    Interrupted(String),
}

/// Runs `launch.exe` once, in a process group of its own (a time limit or an interrupt stops
/// whatever it started too), its stderr copied to the log as it comes and its end kept for
/// the message.
pub(crate) fn run_executable(launch: &Launch<'_>) -> Result<ExeEnd> {
    let Launch { exe, bench_args, env, target_dir, log, log_path, limit, label, command: caller } = *launch;
    let name =
        exe.path.file_name().map_or_else(|| exe.path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut command = Command::new(&exe.path);
    command
        .arg("--bench")
        .args(bench_args)
        .current_dir(&exe.package_dir)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdout(log.try_clone().map_err(|e| Error::io(log_path, "share the log", e))?)
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| Error::io(&exe.path, "run the bench executable", e))?;
    let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
    let copier = {
        let (tail, mut log) =
            (Arc::clone(&tail), log.try_clone().map_err(|e| Error::io(log_path, "share the log", e))?);
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let _ = log.write_all(&buffer[..n]);
                let mut kept = tail.lock().unwrap_or_else(|p| p.into_inner());
                kept.extend_from_slice(&buffer[..n]);
                let excess = kept.len().saturating_sub(TAIL_BYTES);
                kept.drain(..excess);
            }
            let _ = done_tx.send(());
        });
        done_rx
    };
    let ended = wait_with_limit(&mut child, limit, label, &name)
        .map_err(|e| Error::io(&exe.path, "wait for the bench executable", e))?;
    // A process it left behind may hold the pipe open: wait for the copy a little only.
    let _ = copier.recv_timeout(Duration::from_secs(2));
    let kept = tail.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(match ended {
        Ended::Exited(status) if status.success() => ExeEnd::Succeeded,
        Ended::Exited(status) => ExeEnd::Failed(format!("{name} {}{}", exit_reason(status), stderr_tail(&kept))),
        Ended::TimedOut => ExeEnd::Failed(format!(
            "{name} was still running after the time limit of {} s (--timeout): stopped (SIGTERM to its process \
             group, SIGKILL {} s later){}",
            limit.map_or(0.0, |l| l.as_secs_f64()),
            GRACE.as_secs(),
            stderr_tail(&kept)
        )),
        Ended::Interrupted(signal) => {
            ExeEnd::Interrupted(format!("{name} was stopped: {caller} received {}", signal_name(signal)))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_reasons_name_the_code_or_the_signal_and_quote_stderr() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(exit_reason(ExitStatus::from_raw(3 << 8)), "exited with code 3");
        assert_eq!(exit_reason(ExitStatus::from_raw(libc::SIGSEGV)), "was killed by signal 11 (SIGSEGV)");
        assert_eq!(stderr_tail(b""), "; it wrote nothing to stderr");
        let lines: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let tail = stderr_tail(lines.as_bytes());
        assert!(tail.contains("line 20") && tail.contains("line 13") && !tail.contains("line 12"), "{tail}");
        assert!(stderr_tail(b"\x1b[2Jbad\n").contains("\\u{1b}[2Jbad"), "shown, not sent raw");
    }
}
