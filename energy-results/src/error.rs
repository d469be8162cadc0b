//! The one error type of the harness: a kind to match on and a message for people.
//!
//! Every message names what went wrong and, where there is one, what to do about it.

use std::fmt;
use std::path::Path;

/// What went wrong, for callers that react differently to different failures
/// (a budget test skips on [`ErrorKind::NoDriver`] and [`ErrorKind::NoGpu`], for instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A library or driver the request needs is not installed or not loaded
    /// (libnvidia-ml, libcuda, the NVIDIA kernel driver).
    NoDriver,
    /// No NVIDIA GPU was found, or the requested one does not exist.
    NoGpu,
    /// The GPU or driver does not support this query or sensor source.
    NotSupported,
    /// An NVML call failed.
    Nvml,
    /// A CUDA driver call failed.
    Cuda,
    /// A trace or result file is malformed.
    Format,
    /// Reading or writing a file failed.
    Io,
    /// An argument is invalid.
    InvalidInput,
    /// The sampler thread failed or was misused.
    Sampler,
    /// The data cannot support the requested estimate (too few readings, no windows, ...).
    Analysis,
    /// A kernel stored a result that disagrees with the host's reference computation.
    WrongResult,
    /// The code needs a real GPU and was asked to run on the checked device (no GPU): raw
    /// cudarc objects (`energy_harness::Stream::cuda`, `energy_harness::CudaGpu::cuda_context`) exist only on
    /// a GPU. A benchmark or budget stopped by this is *not run* without a GPU, not failed.
    NeedsGpu,
    /// A batch of launches left GPU work running after its wait returned (work enqueued on
    /// a stream the harness does not wait for): its windows would be charged wrongly, so
    /// the measurement is refused.
    UnawaitedWork,
    /// Strict mode (`ENERGY_STRICT=1`) without a GPU: a kernel's code could not be checked
    /// in full (no NVRTC to compile CUDA C, no ptxas to assemble PTX, raw cudarc that exists
    /// only on a GPU).
    NotChecked,
    /// A library's call failed (candle, burn, cubecl, wgpu: work the harness does not
    /// launch): [`Error::library`].
    Library,
}

/// An error from the harness. The underlying error (an I/O error, say) stays reachable
/// through [`std::error::Error::source`].
///
/// Its message says what went wrong and, where there is one, what to do; [`Error::kind`] is
/// for code that reacts differently to different failures. cudarc's errors convert with `?`
/// (`From<cudarc::driver::DriverError>`, `From<cudarc::nvrtc::CompileError>`); a library's
/// errors go through [`Error::library`].
///
/// # Examples
///
/// ```
/// use energy_results::{Error, ErrorKind, Result};
///
/// // A library call inside a setup, launch or wait function:
/// fn matmul() -> std::result::Result<(), String> {
///     Err("out of memory".into())
/// }
/// fn launch() -> Result<()> {
///     matmul().map_err(|e| Error::library("mylib matmul", e))
/// }
///
/// let err = launch().unwrap_err().context("benchmark gemm");
/// assert_eq!(err.kind(), ErrorKind::Library);
/// assert_eq!(err.to_string(), "benchmark gemm: mylib matmul failed: out of memory");
/// ```
#[derive(Clone, Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

/// Result with the harness [`Error`]: what setup, launch and wait functions return, and
/// what reading a result file returns.
///
/// # Examples
///
/// ```
/// use energy_results::{Error, ErrorKind, Result};
///
/// fn windows(n: usize) -> Result<usize> {
///     if n < 3 {
///         return Err(Error::new(ErrorKind::InvalidInput, format!("{n} windows: give 3 or more")));
///     }
///     Ok(n)
/// }
/// assert_eq!(windows(10)?, 10);
/// assert_eq!(windows(1).unwrap_err().kind(), ErrorKind::InvalidInput);
/// # Ok::<(), Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with a message that says what happened and what to do.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), source: None }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// A file could not be read or written.
    pub fn io(path: &Path, action: &str, err: std::io::Error) -> Self {
        let message = format!("could not {action} `{}`: {err}", path.display());
        Error { kind: ErrorKind::Io, message, source: Some(std::sync::Arc::new(err)) }
    }

    /// A file is malformed at `line` (1-based).
    pub fn format(path: &Path, line: usize, problem: impl fmt::Display) -> Self {
        Error::new(ErrorKind::Format, format!("{}:{line}: {problem}", path.display()))
    }

    /// A library's call failed: `call` names it (`"candle matmul"`), `err` is the library's
    /// error. For library work's setup, launch and wait functions:
    /// `a.matmul(&b).map_err(|e| Error::library("candle matmul", e))?`.
    pub fn library(call: &str, err: impl fmt::Display) -> Self {
        Error::new(ErrorKind::Library, format!("{call} failed: {err}"))
    }

    /// Prefixes the message with context, keeping the kind.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error { kind: self.kind, message: format!("{context}: {}", self.message), source: self.source }
    }
}

/// At most this many characters of an input are echoed in an error message.
pub const ECHO_CHARS: usize = 60;

/// `text` as an error message may quote it: cut to `ECHO_CHARS` (60) characters with `…`, so a
/// gigabyte field never ends up in a message.
pub fn echo(text: &str) -> String {
    if text.chars().count() <= ECHO_CHARS {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(ECHO_CHARS).collect();
        cut.push('…');
        cut
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

// cudarc's errors, where the harness compiles cudarc (feature `cudarc`).

/// NVRTC's error, with its log (the compiler's messages with line numbers).
#[cfg(feature = "cudarc")]
pub fn nvrtc_compile_error(name: &str, e: cudarc::nvrtc::CompileError) -> Error {
    match e {
        cudarc::nvrtc::CompileError::CompileError { nvrtc, options, log } => Error::new(
            ErrorKind::InvalidInput,
            format!(
                "NVRTC could not compile CUDA C `{name}` ({:?}, options {}):\n{}",
                nvrtc.0,
                options.join(" "),
                log.to_string_lossy().trim_end()
            ),
        ),
        other => Error::new(ErrorKind::Cuda, format!("NVRTC failed on CUDA C `{name}`: {other}")),
    }
}

#[cfg(feature = "cudarc")]
impl From<cudarc::nvrtc::CompileError> for Error {
    fn from(e: cudarc::nvrtc::CompileError) -> Self {
        nvrtc_compile_error("(a cudarc::nvrtc compilation)", e)
    }
}

#[cfg(feature = "cudarc")]
impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Self {
        Error::new(ErrorKind::Cuda, format!("a CUDA driver call failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn an_io_error_keeps_its_source_through_context() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let err = Error::io(Path::new("/x/run.json"), "write", io).context("saving the run");
        assert_eq!(err.kind(), ErrorKind::Io);
        assert_eq!(err.to_string(), "saving the run: could not write `/x/run.json`: denied");
        let source = err.source().and_then(|s| s.downcast_ref::<std::io::Error>()).unwrap();
        assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(Error::new(ErrorKind::Format, "bad").source().is_none());
    }
}
