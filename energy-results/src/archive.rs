//! Result files archived gzipped: a run kept under version control (`research/results/`) may
//! hold `<file>.gz` in place of a trace, a plot or an ncu export. The readers take either;
//! what they read is the file as written (its content hash still holds).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// `path` with `.gz` appended.
fn gzipped(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".gz");
    PathBuf::from(name)
}

/// Whether `path` or its gzipped archive `path.gz` exists.
pub fn archived_exists(path: &Path) -> bool {
    path.exists() || gzipped(path).exists()
}

/// A reader of `path`, or, where it does not exist but `path.gz` does, of that file
/// decompressed (the error is `path`'s when neither exists).
pub fn open_archived(path: &Path) -> io::Result<Box<dyn Read>> {
    match fs::File::open(path) {
        Ok(file) => Ok(Box::new(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let file = fs::File::open(gzipped(path)).map_err(|_| e)?;
            Ok(Box::new(flate2::read::GzDecoder::new(file)))
        }
        Err(e) => Err(e),
    }
}

/// The bytes of `path`, or of `path.gz` decompressed when `path` is absent (a result folder archived
/// with its traces, plots and ncu exports gzipped).
pub fn read_archived(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_archived(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_or_its_gzipped_archive_reads_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.csv");
        fs::write(&plain, "plain").unwrap();
        assert_eq!(read_archived(&plain).unwrap(), b"plain");
        let archived = dir.path().join("b.csv");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"archived").unwrap();
        fs::write(gzipped(&archived), e.finish().unwrap()).unwrap();
        assert_eq!(read_archived(&archived).unwrap(), b"archived");
        // Neither: the plain file's error. A corrupt archive: an error, never bytes.
        let none = read_archived(&dir.path().join("c.csv")).unwrap_err();
        assert_eq!(none.kind(), io::ErrorKind::NotFound);
        fs::write(gzipped(&dir.path().join("d.csv")), b"not gzip").unwrap();
        assert!(read_archived(&dir.path().join("d.csv")).is_err());
    }
}
