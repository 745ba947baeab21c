//! Writing a file in one step: a temporary file beside it, renamed over it when complete.
//!
//! A reader sees the old file or the new one, never half of one, and a run that stops early
//! leaves the old file and no litter. Used for `--output` reports, matrix pages and blessed specs.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file being written: created early (so an unwritable target fails before any work), put
/// in place by `commit`, removed if dropped uncommitted.
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        // Through a symbolic link, the file it points at is replaced and the link stays.
        let target = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
        let Some(name) = target.file_name() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file name",
            ));
        };
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a folder",
            ));
        }
        let temp = target.with_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&temp)?;
        Ok(AtomicFile {
            target,
            temp,
            file: Some(file),
        })
    }

    /// Writes `bytes` and renames the file into place, keeping the old file's permissions.
    pub fn commit(mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Ok(metadata) = std::fs::metadata(&self.target) {
            std::fs::set_permissions(&self.temp, metadata.permissions())?;
        }
        std::fs::rename(&self.temp, &self.target)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Still here unless the rename happened.
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// Replaces `path`'s contents with `bytes` in one step.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    AtomicFile::create(path)?.commit(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_appears_only_when_committed_and_leaves_no_litter() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report.xml");
        std::fs::write(&target, "old").unwrap();
        drop(AtomicFile::create(&target).unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomically(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_stays_a_link_and_permissions_stay() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("spec.yaml");
        let link = dir.path().join("link.yaml");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[test]
    fn a_folder_is_not_a_target() {
        let dir = tempfile::tempdir().unwrap();
        let error = AtomicFile::create(dir.path()).err().unwrap();
        assert_eq!(error.to_string(), "it is a folder");
    }
}
