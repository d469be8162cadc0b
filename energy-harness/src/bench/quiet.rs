//! Keeping criterion's transient stderr lines off the terminal.
//!
//! The energy benchmarks hand criterion samples already measured, so its "Warming up for
//! 1.0000 ns" and "Collecting 10 samples in estimated …" lines describe nothing that
//! happens, and its gnuplot probe prints "Gnuplot not found" once per binary. Criterion has
//! no switch for either; around those calls only, stderr is pointed at `/dev/null` (Unix).
//! Its results go to stdout and stay. `--verbose` keeps everything.

use std::io::Write as _;

/// Whether criterion's `--verbose` (or `-v`) is on the command line.
pub(super) fn verbose() -> bool {
    std::env::args().skip(1).any(|a| a == "--verbose" || a == "-v")
}

/// Runs `f` with stderr silenced, unless `--verbose` (or `-v`) is on the command line.
pub(super) fn stderr_unless_verbose<R>(f: impl FnOnce() -> R) -> R {
    if verbose() {
        return f();
    }
    silenced(f)
}

#[cfg(unix)]
fn silenced<R>(f: impl FnOnce() -> R) -> R {
    let _ = std::io::stderr().flush();
    // SAFETY: plain descriptor calls on fd 2 and descriptors opened here; every one is
    // checked and the original stderr is restored before returning (or unwinding).
    let (saved, null) = unsafe {
        let saved = libc::dup(2);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        (saved, null)
    };
    if saved < 0 || null < 0 || unsafe { libc::dup2(null, 2) } < 0 {
        // Could not redirect: run with stderr as it is.
        unsafe {
            if saved >= 0 {
                libc::close(saved);
            }
            if null >= 0 {
                libc::close(null);
            }
        }
        return f();
    }
    unsafe { libc::close(null) };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let _ = std::io::stderr().flush();
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    match outcome {
        Ok(value) => value,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

#[cfg(not(unix))]
fn silenced<R>(f: impl FnOnce() -> R) -> R {
    f()
}
