//! Creating a file that must be new: `O_EXCL`, so nothing there is ever overwritten and a
//! planted link counts as taken (it is never followed).

use std::io::{self, Write};
use std::path::Path;

/// Creates `path` holding `bytes`; `AlreadyExists` when anything is at `path`, even a file
/// that appeared since the caller looked.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: creates a file only where nothing is"
)]
pub(crate) fn create(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_written_and_an_existing_one_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        create(&path, b"first").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let error = create(&path, b"second").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_taken_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = create(&link, b"x").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert!(!target.exists());
    }
}
