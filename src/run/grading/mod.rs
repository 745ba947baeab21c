//! Grading a class (`dlqspec grade`): its members and their shares (`class.rs`), the suite as
//! the built-in reference runs it (`suite.rs`), each submission graded by a `dlqspec run` of
//! its own within its budget (`submission.rs`) and its report read back into its row
//! (`tally.rs`, `row.rs`), the class's files written (`outputs.rs`), and the `summary.json`
//! a grading leaves (`formats::grade`) read back (`summary.rs`) to merge shards
//! (`merge.rs`) or compare with an earlier grading (`regrade.rs`).
//!
//! The suite is refused when the built-in reference fails a spec of it. Each submission's
//! status is judged from how its run ended; the class's rule shares and most common causes
//! are computed once for every summary (`class_tally.rs`); its pictures go where `pictures.rs`
//! says. The class's files are written through `files/` once every run is over, and
//! `outputs.rs` also removes what an earlier grading left.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;

pub(crate) mod class;
pub(crate) mod class_tally;
pub(crate) mod merge;
pub(crate) mod outputs;
pub(crate) mod pictures;
pub(crate) mod regrade;
pub(crate) mod row;
pub(crate) mod submission;
pub(crate) mod suite;
pub(crate) mod summary;
pub(crate) mod tally;

/// The most of one submission's report (`NAME.txt` or `NAME.jsonl`) kept or copied.
pub(crate) const MAX_REPORT_BYTES: u64 = 64 << 20;

/// The most of a run's human report kept in `NAME.txt`.
pub(crate) const MAX_TEXT_REPORT_BYTES: u64 = 16 << 20;

/// Reads at most `limit` bytes of a regular file, refusing a link, a FIFO, a device or a
/// larger file with a sentence naming it: `source`'s bounded read, which checks the file it
/// opened (never blocking on a FIFO, never following a link), with errors for a person.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let (file, meta) = crate::text::source::open_regular(path, false).map_err(|e| {
        let not_regular = std::fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_file());
        if not_regular {
            format!(
                "{}: not a regular file (a link, a folder or a device is never read)",
                path.display()
            )
        } else {
            format!("{}: {e}", path.display())
        }
    })?;
    crate::text::source::read_bounded(file, &meta, limit).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            format!(
                "{}: larger than the {} MiB read back",
                path.display(),
                limit >> 20
            )
        } else {
            format!("{}: {e}", path.display())
        }
    })
}

/// The first `limit` bytes of a file grade holds, from its start.
pub(crate) fn read_held(mut file: File, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.rewind()?;
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_bounded_read_refuses_links_fifos_and_big_files_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.jsonl");
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_bounded(&file, 10).unwrap(), b"0123456789");
        let big = read_bounded(&file, 9).unwrap_err();
        assert!(big.ends_with("larger than the 0 MiB read back"), "{big}");
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for path in [&link, &fifo] {
            let why = read_bounded(path, 10).unwrap_err();
            assert!(why.contains("not a regular file"), "{why}");
        }
    }
}
