//! What `cargo energy` writes: a command's output to standard output, and the exit code of
//! an error. Every subcommand prints through here.

use std::io::Write;

use energy_results::{Error, ErrorKind};

/// Writes a command's output to standard output. A reader that went away (`| head`)
/// ends the output quietly, as `rg … | head` does: the command still finishes and keeps
/// its exit code. Any other failure (a full disk, a closed descriptor) is an error naming
/// it, so the command exits 2 and CI sees it.
pub fn emit(text: &str) -> energy_results::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::new(ErrorKind::Io, format!("could not write to standard output: {e}"))),
    }
}

/// 2 for bad input (arguments, files that cannot be read or written or are malformed),
/// 1 for everything else (no GPU, a failed measurement).
pub fn exit_code(err: &Error) -> u8 {
    match err.kind() {
        ErrorKind::InvalidInput | ErrorKind::Format | ErrorKind::Io => 2,
        _ => 1,
    }
}
