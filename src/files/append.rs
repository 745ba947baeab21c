//! Appending to a file the environment hands dlqspec to add to (GitHub's step summary): one
//! write at the end, never replacing what is there, and never through a link.

use std::io::{self, Write};
use std::path::Path;

/// Appends `bytes` to the regular file at `path` in one write, creating it where nothing is.
/// A link at `path` is refused (`O_NOFOLLOW`), as is anything but a regular file: a FIFO would
/// block and a device is not a summary.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: appends to the file the environment names, replacing nothing"
)]
pub(crate) fn append(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let mut file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    file.write_all(bytes)?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_added_after_what_is_there_and_a_missing_file_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        append(&path, b"one\n").unwrap();
        append(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_a_folder_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "theirs").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(append(&link, b"x").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        assert!(append(dir.path(), b"x").is_err());
    }
}
