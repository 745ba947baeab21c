//! Spec source files: their text, the path shown to the user, and positions within them.
//!
//! Every spec and known-failures file is read here, bounded and without blocking: a spec
//! folder may hold a FIFO, a device or a link to one, swapped in at any time.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A 1-based line and column in a spec file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    pub const START: Position = Position { line: 1, column: 1 };

    pub fn new(line: usize, column: usize) -> Self {
        Position { line, column }
    }
}

/// A spec file as read from disk.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// The largest spec (or known-failures file) dlqspec reads: 64 MiB. A plain spec of 10^5
/// messages is about 12 MB; YAML bombs are stopped by the parser's alias and nesting limits,
/// not by this size.
pub(crate) const MAX_SPEC_BYTES: u64 = 64 << 20;

/// Which file a path named when it was found (device and inode on Unix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            device: meta.dev(),
            inode: meta.ino(),
        }
    }

    #[cfg(not(unix))]
    pub(crate) fn of(meta: &std::fs::Metadata) -> FileId {
        let _ = meta;
        FileId {
            device: 0,
            inode: 0,
        }
    }
}

/// Opens `path` for reading without blocking (a FIFO would otherwise wait for a writer
/// forever), and only when the open file is a regular one, so that what is read is what was
/// checked. Without `follow_links`, a link at `path` is refused rather than followed.
pub fn open_regular(
    path: &Path,
    follow_links: bool,
) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if follow_links { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC | no_follow);
    }
    #[cfg(not(unix))]
    let _ = follow_links;
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    Ok((file, meta))
}

/// Reads an open file of `open_regular` whole, if it holds at most `max` bytes; a larger one
/// is an error of kind `FileTooLarge`, found before reading when its size says so.
pub fn read_bounded(
    file: std::fs::File,
    meta: &std::fs::Metadata,
    max: u64,
) -> std::io::Result<Vec<u8>> {
    let too_big = || std::io::Error::from(std::io::ErrorKind::FileTooLarge);
    if meta.len() > max {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

impl SourceFile {
    /// Reads a spec file, bounded by [`MAX_SPEC_BYTES`] and never blocking.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        Self::read_checked(path, None)
    }

    /// Reads a spec file that must still be the file `identity` names (see `discover`).
    ///
    /// It is opened non-blocking (a FIFO would otherwise wait for a writer forever) and its type
    /// is checked on the open file, so that what is read is what was checked: a regular file,
    /// no larger than [`MAX_SPEC_BYTES`], in UTF-8.
    pub fn read_checked(path: &Path, identity: Option<FileId>) -> std::io::Result<Self> {
        use std::io::{Error, ErrorKind};
        let (file, meta) = open_regular(path, true)?;
        if identity.is_some_and(|id| id != FileId::of(&meta)) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "it was replaced by another file while dlqspec was reading its folder; run again",
            ));
        }
        let too_big = || {
            Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "it is larger than {} MiB, the most a spec may be",
                    MAX_SPEC_BYTES >> 20
                ),
            )
        };
        let bytes = read_bounded(file, &meta, MAX_SPEC_BYTES).map_err(|error| {
            if error.kind() == ErrorKind::FileTooLarge {
                too_big()
            } else {
                error
            }
        })?;
        let text = String::from_utf8(bytes).map_err(|error| {
            let at = error.utf8_error().valid_up_to();
            Error::new(
                ErrorKind::InvalidData,
                format!("it is not UTF-8 text (byte {at} is not); save it as UTF-8"),
            )
        })?;
        Ok(SourceFile {
            path: path.to_path_buf(),
            text,
        })
    }

    pub fn from_text(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        SourceFile {
            path: path.into(),
            text: text.into(),
        }
    }

    /// The path as the user gave it, with `/` separators so output is the same everywhere.
    pub fn display_path(&self) -> String {
        display_path(&self.path)
    }

    /// The text of a 1-based line, without its line ending.
    pub(crate) fn line(&self, line: usize) -> Option<&str> {
        self.text
            .lines()
            .nth(line.checked_sub(1)?)
            .map(|l| l.trim_end_matches('\r'))
    }

    /// The part of `position`'s line an error message quotes: the whole line when it is short,
    /// else [`EXCERPT_CHARS`] characters around the column (a spec may hold a line of any
    /// length, and a message must not echo all of it).
    pub fn excerpt(&self, position: Position) -> Option<Excerpt> {
        let line = self.line(position.line)?;
        let length = line.chars().count();
        if length <= EXCERPT_CHARS {
            return Some(Excerpt {
                text: line.to_owned(),
                skipped: 0,
                cut: false,
            });
        }
        let before = position.column.saturating_sub(1).min(length);
        let skipped = before
            .saturating_sub(EXCERPT_CHARS / 2)
            .min(length - EXCERPT_CHARS);
        Some(Excerpt {
            text: line.chars().skip(skipped).take(EXCERPT_CHARS).collect(),
            skipped,
            cut: skipped + EXCERPT_CHARS < length,
        })
    }
}

/// How many characters of a long line an error message quotes around the column.
pub(crate) const EXCERPT_CHARS: usize = 120;

/// A line of a spec, or the window of it around a column, as an error message quotes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The characters quoted, as written (renderers escape what a terminal must not see raw).
    pub text: String,
    /// How many characters of the line come before `text`.
    pub skipped: usize,
    /// Whether the line goes on after `text`.
    pub cut: bool,
}

pub fn display_path(path: &Path) -> String {
    let shown = path.to_string_lossy().replace('\\', "/");
    shown.strip_prefix("./").map(str::to_owned).unwrap_or(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_one_based_and_strips_carriage_returns() {
        let file = SourceFile::from_text("a.yaml", "first\r\nsecond\n");
        assert_eq!(file.line(1), Some("first"));
        assert_eq!(file.line(2), Some("second"));
        assert_eq!(file.line(0), None);
        assert_eq!(file.line(3), None);
    }

    #[test]
    fn a_long_line_is_quoted_around_the_column() {
        let line = format!("{}x{}", "a".repeat(500), "b".repeat(10_000));
        let file = SourceFile::from_text("a.yaml", format!("first\n{line}\n"));
        let excerpt = file.excerpt(Position::new(2, 501)).unwrap();
        assert_eq!(excerpt.text.chars().count(), EXCERPT_CHARS);
        assert_eq!(excerpt.skipped, 500 - EXCERPT_CHARS / 2);
        assert_eq!(excerpt.text.chars().nth(EXCERPT_CHARS / 2), Some('x'));
        assert!(excerpt.cut);
        let end = file.excerpt(Position::new(2, 10_501)).unwrap();
        assert_eq!(end.skipped, 10_501 - EXCERPT_CHARS);
        assert!(!end.cut);
        let short = file.excerpt(Position::new(1, 3)).unwrap();
        assert_eq!(
            (short.text.as_str(), short.skipped, short.cut),
            ("first", 0, false)
        );
    }

    #[test]
    fn reading_is_bounded_and_takes_only_regular_utf8_files() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.yaml");
        std::fs::write(&good, "a: 1\n").unwrap();
        assert_eq!(SourceFile::read(&good).unwrap().text, "a: 1\n");
        let binary = dir.path().join("binary.yaml");
        std::fs::write(&binary, b"a: \xff\n").unwrap();
        assert_eq!(
            SourceFile::read(&binary).unwrap_err().to_string(),
            "it is not UTF-8 text (byte 3 is not); save it as UTF-8"
        );
        let big = dir.path().join("big.yaml");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_SPEC_BYTES + 1)
            .unwrap();
        assert_eq!(
            SourceFile::read(&big).unwrap_err().to_string(),
            "it is larger than 64 MiB, the most a spec may be"
        );
        assert_eq!(
            SourceFile::read(dir.path()).unwrap_err().to_string(),
            "it is not a regular file"
        );
        let other = FileId::of(&std::fs::metadata(&binary).unwrap());
        assert!(
            SourceFile::read_checked(&good, Some(other))
                .unwrap_err()
                .to_string()
                .starts_with("it was replaced by another file")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_device_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.yaml");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            SourceFile::read(&fifo).unwrap_err().to_string(),
            "it is not a regular file"
        );
        assert_eq!(
            SourceFile::read(Path::new("/dev/zero"))
                .unwrap_err()
                .to_string(),
            "it is not a regular file"
        );
    }

    #[test]
    fn display_path_drops_a_leading_dot_slash() {
        assert_eq!(display_path(Path::new("./specs/a.yaml")), "specs/a.yaml");
    }
}
