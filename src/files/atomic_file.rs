//! Writing a file in one step: a temporary file beside it, renamed over it when complete; or,
//! for what is not a regular file, written through.
//!
//! A reader sees the old file or the new one, never half of one, and a run that stops early
//! leaves the old file. Used for `--output` reports, matrix pages and blessed specs.
//!
//! What is guarded against, since the folder may be writable by others and dlqspec may run as
//! root:
//! - Only a regular file is replaced. A FIFO, a device, `-`, `/dev/stdout` or the very file
//!   dlqspec's stdout is redirected to is opened and written through (so `>> log` appends).
//! - The temporary file is unnamed where the file system allows it (`O_TMPFILE`), linked
//!   under a temporary name only once written; elsewhere it has an unpredictable name, is
//!   created with `O_EXCL|O_NOFOLLOW` (a planted link is never followed). It gets the
//!   target's owner, group and mode before its first byte; it is flushed to disk before the
//!   rename.
//! - A name is renamed only while it leads to the file written, and the target is checked to
//!   lead to it after: a file another process swapped in under the temporary name is never
//!   put in place as ours (it is left where it is; ours is written again, a few times at most).
//! - Its name says it is dlqspec's for that target (`.NAME.dlqspec-RANDOM.tmp`) and it is
//!   locked (`flock`) while written: the next write of the same target removes the unlocked
//!   leftovers of a killed run. SIGINT and SIGTERM remove it (`interrupts`).
//! - A spec (`write_spec`) is refused when it is read-only or has other hard links, which a
//!   rename would silently split off with the old text.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::files::interrupts::{self, TempFileGuard};

/// The random part of a temporary file's name, in characters.
const RANDOM_CHARS: usize = 12;

/// Where a write goes.
enum Sink {
    /// A regular file, replaced by a temporary file beside it.
    Replace(Box<Replacement>),
    /// A FIFO, a device or a terminal: written through, never replaced.
    Through(File),
    Stdout,
    Stderr,
}

struct Replacement {
    /// The real file (links resolved), or the new file's path.
    target: PathBuf,
    /// The target's metadata when it exists: what each temporary file adopts.
    existing: Option<std::fs::Metadata>,
    /// The file being written, with no name yet or a temporary one.
    temp: Temp,
}

/// A temporary file of ours, and how it is put in place.
enum Temp {
    /// Made with `O_TMPFILE`: no name anyone could find or replace until it is linked, just
    /// before the rename.
    Unnamed(File),
    /// Named `.NAME.dlqspec-RANDOM.tmp` beside the target (where `O_TMPFILE` is not
    /// supported); removed on drop only while the name still leads to this file.
    Named {
        file: File,
        path: PathBuf,
        _interrupt: TempFileGuard,
    },
}

impl Temp {
    fn file(&self) -> &File {
        match self {
            Temp::Unnamed(file) | Temp::Named { file, .. } => file,
        }
    }
}

impl Drop for Temp {
    #[expect(
        clippy::disallowed_methods,
        reason = "writes a file: removes the temporary file this guard made, left unplaced"
    )]
    fn drop(&mut self) {
        if let Temp::Named { file, path, .. } = self
            && still_named(path, file)
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// How many times a commit makes a new temporary file after finding the name it was about
/// to rename (or the target it renamed to) leading to another file, before it gives up.
const MAX_PLACEMENTS: usize = 4;

/// A file being written: created early (so an unwritable target fails before any work), put
/// in place by `commit`, removed if dropped uncommitted.
pub(crate) struct AtomicFile {
    sink: Sink,
}

fn refuse(kind: io::ErrorKind, message: String) -> io::Error {
    io::Error::new(kind, message)
}

impl AtomicFile {
    pub(crate) fn create(target: &Path) -> io::Result<AtomicFile> {
        if target.as_os_str() == "-" {
            return Ok(AtomicFile { sink: Sink::Stdout });
        }
        let meta = match std::fs::metadata(target) {
            Ok(meta) => Some(meta),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(target).is_ok() {
                    return Err(refuse(
                        io::ErrorKind::NotFound,
                        "it is a symbolic link to a file that does not exist".into(),
                    ));
                }
                None
            }
            Err(error) => return Err(error),
        };
        let Some(meta) = meta else {
            return Ok(AtomicFile {
                sink: Sink::Replace(Box::new(Replacement::new(target.to_path_buf(), None)?)),
            });
        };
        if meta.is_dir() {
            return Err(refuse(io::ErrorKind::IsADirectory, "it is a folder".into()));
        }
        if let Some(stream) = own_stream(&meta) {
            return Ok(AtomicFile { sink: stream });
        }
        if !meta.is_file() {
            return Ok(AtomicFile {
                sink: Sink::Through(open_through(target)?),
            });
        }
        // Through a symbolic link, the file it points at is replaced and the link stays.
        let real = std::fs::canonicalize(target)?;
        Ok(AtomicFile {
            sink: Sink::Replace(Box::new(Replacement::new(real, Some(&meta))?)),
        })
    }

    /// Writes `bytes` and puts them in place: renamed over the target, or written through.
    #[expect(
        clippy::disallowed_methods,
        reason = "prints: `--output -` (or /dev/stdout) writes the report to that stream through the same commit"
    )]
    pub(crate) fn commit(self, bytes: &[u8]) -> io::Result<()> {
        match self.sink {
            Sink::Replace(replacement) => replacement.commit(bytes),
            Sink::Through(mut file) => file.write_all(bytes).and_then(|()| file.flush()),
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Sink::Stderr => {
                let mut out = io::stderr().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
        }
    }
}

impl Replacement {
    /// Creates the temporary file beside `target`, owned and moded like `existing` (the
    /// target's metadata), after removing the leftovers of killed runs.
    fn new(target: PathBuf, existing: Option<&std::fs::Metadata>) -> io::Result<Replacement> {
        Replacement::new_as(target, existing, true)
    }

    /// `new`, with an unnamed file only where `unnamed` allows it (tests take both roads).
    fn new_as(
        target: PathBuf,
        existing: Option<&std::fs::Metadata>,
        unnamed: bool,
    ) -> io::Result<Replacement> {
        let (folder, prefix) = folder_and_prefix(&target)?;
        remove_leftovers(&folder, &prefix);
        let temp = make_temp(&folder, &prefix, existing, unnamed)?;
        Ok(Replacement {
            target,
            existing: existing.cloned(),
            temp,
        })
    }

    /// Writes `bytes` and renames the file over the target, checking that the name renamed
    /// leads to the file written, before the rename and after it: a process that swapped its
    /// own file in under the temporary name (or over the target at the last moment) gets its
    /// file replaced by a new one of ours, written again; never the verdict.
    fn commit(self, bytes: &[u8]) -> io::Result<()> {
        let Replacement {
            target,
            existing,
            temp,
        } = self;
        let (folder, prefix) = folder_and_prefix(&target)?;
        let mut temp = temp;
        for attempt in 0..MAX_PLACEMENTS {
            if attempt > 0 {
                temp = make_temp(&folder, &prefix, existing.as_ref(), true)?;
            }
            let mut file = temp.file();
            file.write_all(bytes)?;
            file.sync_all()?;
            if place(&temp, &folder, &prefix, &target)? {
                // The rename is durable once the folder is flushed too.
                if let Ok(folder) = File::open(&folder) {
                    let _ = folder.sync_all();
                }
                return Ok(());
            }
        }
        Err(refuse(
            io::ErrorKind::Other,
            format!(
                "another process swapped its own file in for dlqspec's temporary file {MAX_PLACEMENTS} times while it was put in place; nothing of it can be trusted: stop whatever writes into {}",
                folder.display()
            ),
        ))
    }
}

/// The folder a target is in (`.` for a bare name) and its temporary files' prefix.
fn folder_and_prefix(target: &Path) -> io::Result<(PathBuf, String)> {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Err(refuse(
            io::ErrorKind::InvalidInput,
            "not a file name".into(),
        ));
    };
    let folder = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((folder, temp_prefix(&name)))
}

/// A new temporary file in `folder`, with the target's owner, group and mode before its
/// first byte: unnamed where the file system can (`O_TMPFILE`), else named and locked.
fn make_temp(
    folder: &Path,
    prefix: &str,
    existing: Option<&std::fs::Metadata>,
    unnamed: bool,
) -> io::Result<Temp> {
    if unnamed && let Some(file) = create_unnamed(folder, existing)? {
        // Locked like a named one, so that a cleaner never takes its name for a leftover
        // in the moment it has one.
        lock(&file, true);
        adopt(&file, existing)?;
        return Ok(Temp::Unnamed(file));
    }
    // A cleaner running beside us may remove our file before we hold its lock: then the
    // name no longer leads to it, and we make another.
    for _ in 0..8 {
        let temp = tempfile::Builder::new()
            .prefix(prefix)
            .suffix(".tmp")
            .rand_bytes(RANDOM_CHARS)
            .make_in(folder, |path| create_exclusive(path, existing))?;
        // From here on the name is ours to remove, and only while it leads to our file.
        let (file, path) = temp.keep().map_err(|error| error.error)?;
        let interrupt = interrupts::remove_on_interrupt(&path);
        let temp = Temp::Named {
            file,
            path,
            _interrupt: interrupt,
        };
        let Temp::Named { file, path, .. } = &temp else {
            unreachable!("made named just above");
        };
        if !lock(file, true) || !still_named(path, file) {
            continue;
        }
        adopt(file, existing)?;
        return Ok(temp);
    }
    Err(io::Error::other(
        "could not create a temporary file beside it",
    ))
}

/// An unnamed file in `folder` (`O_TMPFILE`), or `None` where the file system or the kernel
/// has none (then a named one is made). Other errors (no permission) are the folder's.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: creates the unnamed temporary file of a replacement"
)]
fn create_unnamed(folder: &Path, existing: Option<&std::fs::Metadata>) -> io::Result<Option<File>> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mode = existing.map_or(0o666, |meta| meta.permissions().mode() & 0o777);
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(mode)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(folder);
        match opened {
            Ok(file) => Ok(Some(file)),
            Err(error)
                if matches!(
                    error.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOSYS)
                ) =>
            {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (folder, existing);
        Ok(None)
    }
}

/// Gives an unnamed file a temporary name beside the target (through `/proc/self/fd`, which
/// needs no privilege, unlike `AT_EMPTY_PATH`); `None` when it cannot be linked.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: gives the unnamed temporary file a name beside the target"
)]
fn link_unnamed(file: &File, folder: &Path, prefix: &str) -> Option<(PathBuf, TempFileGuard)> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::io::AsRawFd;
        let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
        for _ in 0..8 {
            let path = folder.join(format!("{prefix}{}.tmp", random_chars()));
            let to = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
            // SAFETY: linkat with two NUL-terminated paths; no memory is shared.
            let linked = unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    from.as_ptr(),
                    libc::AT_FDCWD,
                    to.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            };
            if linked == 0 {
                let guard = interrupts::remove_on_interrupt(&path);
                return Some((path, guard));
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                return None;
            }
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, folder, prefix);
        None
    }
}

/// `RANDOM_CHARS` random letters and digits, for a temporary file's name.
fn random_chars() -> String {
    use std::hash::{BuildHasher, Hasher};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(RANDOM_CHARS);
    while out.len() < RANDOM_CHARS {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(out.len());
        let mut value = hasher.finish();
        for _ in 0..8 {
            if out.len() == RANDOM_CHARS {
                break;
            }
            out.push(char::from(
                ALPHABET[(value % ALPHABET.len() as u64) as usize],
            ));
            value /= ALPHABET.len() as u64;
        }
    }
    out
}

/// Renames `temp` over `target` when its name leads to it, and checks that the target then
/// leads to it: whether the target now holds the file written. An unnamed file is linked
/// first; a name found leading elsewhere is left to whoever put that file there.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: renames the finished temporary file over the target"
)]
fn place(temp: &Temp, folder: &Path, prefix: &str, target: &Path) -> io::Result<bool> {
    let Some(_placing) = interrupts::placing() else {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "dlqspec was interrupted: the old file is kept",
        ));
    };
    let file = temp.file();
    let (path, _guard) = match temp {
        Temp::Named { path, .. } => (path.clone(), None),
        Temp::Unnamed(file) => match link_unnamed(file, folder, prefix) {
            Some((path, guard)) => (path, Some(guard)),
            None => {
                return Err(io::Error::other(
                    "its temporary file cannot be given a name (is /proc mounted?)",
                ));
            }
        },
    };
    #[cfg(test)]
    tests::before_rename(&path);
    if !still_named(&path, file) {
        return Ok(false);
    }
    std::fs::rename(&path, target)?;
    Ok(still_named(target, file))
}

/// `.NAME.dlqspec-`: what the temporary files of target NAME start with.
fn temp_prefix(name: &str) -> String {
    format!(".{name}.dlqspec-")
}

/// Creates `path` exclusively, not through a link, with the target's mode (the umask applies
/// to a new file's default mode, as for any new file).
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: creates a temporary file where nothing is"
)]
fn create_exclusive(path: &Path, existing: Option<&std::fs::Metadata>) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mode = existing.map_or(0o666, |meta| meta.permissions().mode() & 0o777);
        options
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    #[cfg(not(unix))]
    let _ = existing;
    options.open(path)
}

/// Gives the temporary file the target's owner, group and mode, before any byte is written.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: gives the replacement the mode of the file it replaces"
)]
fn adopt(file: &File, existing: Option<&std::fs::Metadata>) -> io::Result<()> {
    let Some(meta) = existing else {
        return Ok(());
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        use std::os::unix::io::AsRawFd;
        let mine = file.metadata()?;
        if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid()) {
            // SAFETY: fchown on an open descriptor; no memory is shared.
            let changed = unsafe { libc::fchown(file.as_raw_fd(), meta.uid(), meta.gid()) };
            if changed != 0 {
                let error = io::Error::last_os_error();
                return Err(refuse(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "it belongs to user {} and group {}, which a replacement written by you cannot keep ({error}); write it as its owner",
                        meta.uid(),
                        meta.gid()
                    ),
                ));
            }
        }
        // After the owner: changing it may clear set-id bits.
        file.set_permissions(std::fs::Permissions::from_mode(
            meta.permissions().mode() & 0o7777,
        ))?;
    }
    #[cfg(not(unix))]
    let _ = (file, meta);
    Ok(())
}

/// Takes the file's exclusive lock, waiting or not.
fn lock(file: &File, wait: bool) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let mode = if wait {
            libc::LOCK_EX
        } else {
            libc::LOCK_EX | libc::LOCK_NB
        };
        // SAFETY: flock on an open descriptor.
        unsafe { libc::flock(file.as_raw_fd(), mode) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, wait);
        true
    }
}

/// Whether `path` still names `file`.
fn still_named(path: &Path, file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::symlink_metadata(path), file.metadata()) {
            (Ok(named), Ok(open)) => (named.dev(), named.ino()) == (open.dev(), open.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (path, file);
        true
    }
}

/// Removes the temporary files of `prefix` in `folder` that no running dlqspec holds: the
/// leftovers of a killed run. Only regular files of ours, unlocked, are removed.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: removes this program's own leftover temporary files"
)]
fn remove_leftovers(folder: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(random) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
        else {
            continue;
        };
        if random.chars().count() != RANDOM_CHARS {
            continue;
        }
        let path = entry.path();
        let Ok(file) = open_leftover(&path) else {
            continue;
        };
        if lock(&file, false) && still_named(&path, &file) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Opens a leftover to lock it: never through a link, never blocking, regular files only,
/// and (unless dlqspec runs as root) only files of the user running dlqspec.
fn open_leftover(path: &Path) -> io::Result<File> {
    let (file, meta) = crate::text::source::open_regular(path, false)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 && meta.uid() != me {
            return Err(io::Error::other("not ours"));
        }
    }
    Ok(file)
}

/// Opens what is not a regular file for writing, as it is: no creating, no truncating.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: writes through a special file (a FIFO, a device) that cannot be replaced"
)]
fn open_through(target: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC);
    }
    options.open(target)
}

/// dlqspec's own stdout or stderr, when `meta` is the file one of them is (`/dev/stdout`, or
/// the file a shell redirected it to): written through it, keeping its mode (`>>` appends).
fn own_stream(meta: &std::fs::Metadata) -> Option<Sink> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        for (fd, sink) in [(1, Sink::Stdout), (2, Sink::Stderr)] {
            // SAFETY: fstat fills a zero-initialised stat struct for a descriptor number.
            let same = unsafe {
                let mut stat: libc::stat = std::mem::zeroed();
                libc::fstat(fd, &mut stat) == 0
                    && stat.st_dev as u64 == meta.dev()
                    && stat.st_ino as u64 == meta.ino()
            };
            if same {
                return Some(sink);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    None
}

/// Writes `bytes` to a new file in `dir` named `name`, or `STEM-2.EXT`, `STEM-3.EXT`... when
/// that is taken: nothing there is ever overwritten, and a planted link counts as taken
/// (`O_EXCL` never follows one). Gives the path written.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: creates a file only where nothing is"
)]
pub(crate) fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    for n in 1..=MAX_NEW_NAMES {
        let path = match (n, ext) {
            (1, _) => dir.join(name),
            (_, "") => dir.join(format!("{stem}-{n}")),
            _ => dir.join(format!("{stem}-{n}.{ext}")),
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                if let Err(error) = file.write_all(bytes).and_then(|()| file.flush()) {
                    let _ = std::fs::remove_file(&path);
                    return Err(error);
                }
                return Ok(path);
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
    Err(refuse(
        io::ErrorKind::AlreadyExists,
        format!("{name} and {MAX_NEW_NAMES} numbered names beside it are all taken"),
    ))
}

/// How many numbered names `write_new` tries before giving up.
const MAX_NEW_NAMES: usize = 1000;

/// Replaces the file at `path` by a new one holding `bytes`, whatever is there: for a file that
/// is dlqspec's own (a cache), so a link or a FIFO planted at `path` is replaced by the rename,
/// never followed or written through.
pub(crate) fn replace_own(path: &Path, bytes: &[u8]) -> io::Result<()> {
    Replacement::new(path.to_path_buf(), None)?.commit(bytes)
}

/// Removes the file or link at `path`, if there is one (never a folder): a file of dlqspec's
/// own an earlier run left (`grade`'s reports and pictures), which must not pass for this
/// run's. A link is removed, never followed.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: removes a file of dlqspec's own an earlier run left, so it cannot pass for this run's"
)]
pub(crate) fn remove_own(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_dir() => {
            std::fs::remove_file(path).or_else(|error| match error.kind() {
                io::ErrorKind::NotFound => Ok(()),
                _ => Err(error),
            })
        }
        _ => Ok(()),
    }
}

/// Replaces `path`'s contents with `bytes` in one step.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    AtomicFile::create(path)?.commit(bytes)
}

/// Rewrites a spec file in one step, refusing what a rename would get wrong: a file that is
/// not a regular file, is read-only, or has other hard links (which would keep the old text
/// while this name got the new one).
pub(crate) fn write_spec(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(refuse(
            io::ErrorKind::InvalidInput,
            "it is not a regular file".into(),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let mode = meta.permissions().mode();
        if mode & 0o222 == 0 {
            return Err(refuse(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it is read-only (mode {:o}); make it writable (chmod u+w) to bless it",
                    mode & 0o7777
                ),
            ));
        }
        if meta.nlink() > 1 {
            return Err(refuse(
                io::ErrorKind::InvalidInput,
                format!(
                    "it has {} hard links, which a rewrite would split (the others would keep the old text); bless a copy, or change it by hand",
                    meta.nlink()
                ),
            ));
        }
    }
    write_atomically(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    type Hook = Box<dyn FnMut(&Path)>;

    thread_local! {
        /// What a test does to the temporary name just before it is renamed: what a hostile
        /// process beside dlqspec would do.
        static BEFORE_RENAME: RefCell<Option<Hook>> = const { RefCell::new(None) };
    }

    pub(super) fn before_rename(path: &Path) {
        BEFORE_RENAME.with(|hook| {
            if let Some(hook) = hook.borrow_mut().as_mut() {
                hook(path);
            }
        });
    }

    fn on_rename(hook: impl FnMut(&Path) + 'static) {
        BEFORE_RENAME.with(|slot| *slot.borrow_mut() = Some(Box::new(hook)));
    }

    /// Swaps a file of its own in under the temporary name, the first `times` times.
    fn swapper(dir: &Path, times: usize) -> impl FnMut(&Path) + 'static {
        let dir = dir.to_path_buf();
        let mut done = 0;
        move |path: &Path| {
            if done < times {
                done += 1;
                let forged = dir.join(format!("forged-{done}"));
                std::fs::write(&forged, r#"{"score": 86.0}"#).unwrap();
                std::fs::rename(&forged, path).unwrap();
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_unnamed_file_has_no_name_to_find_until_it_is_put_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("results.json");
        std::fs::write(&target, "old").unwrap();
        let pending = Replacement::new(target.clone(), None).unwrap();
        if !matches!(pending.temp, Temp::Unnamed(_)) {
            // This file system has no O_TMPFILE: the named road is taken (tested below).
            return;
        }
        assert_eq!(names(dir.path()), ["results.json"]);
        pending.commit(b"new").unwrap();
        assert_eq!(names(dir.path()), ["results.json"]);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn without_unnamed_files_a_named_one_is_used_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("results.json");
        let pending = Replacement::new_as(target.clone(), None, false).unwrap();
        assert!(matches!(pending.temp, Temp::Named { .. }));
        assert_eq!(names(dir.path()).len(), 1);
        drop(pending);
        assert!(names(dir.path()).is_empty());
        let pending = Replacement::new_as(target.clone(), None, false).unwrap();
        pending.commit(b"ours").unwrap();
        assert_eq!(names(dir.path()), ["results.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_swapped_temporary_name_is_detected_and_the_report_written_again() {
        for unnamed in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("results.json");
            let pending = Replacement::new_as(target.clone(), None, unnamed).unwrap();
            on_rename(swapper(dir.path(), 1));
            pending.commit(br#"{"score": 0.0}"#).unwrap();
            on_rename(|_| {});
            assert_eq!(
                std::fs::read_to_string(&target).unwrap(),
                r#"{"score": 0.0}"#,
                "unnamed: {unnamed}"
            );
            // The forged file is left where its writer put it: not ours to remove.
            let left: Vec<String> = names(dir.path())
                .into_iter()
                .filter(|n| n != "results.json")
                .collect();
            assert_eq!(left.len(), 1, "{left:?}");
            assert!(left[0].starts_with(".results.json.dlqspec-"), "{left:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_writer_that_always_swaps_the_name_gets_a_refusal_and_the_old_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("results.json");
        std::fs::write(&target, "old").unwrap();
        let pending = Replacement::new(target.clone(), None).unwrap();
        on_rename(swapper(dir.path(), usize::MAX));
        let error = pending.commit(b"ours").unwrap_err();
        on_rename(|_| {});
        assert!(
            error.to_string().starts_with(
                "another process swapped its own file in for dlqspec's temporary file 4 times"
            ),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_takes_a_free_name_and_never_writes_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "someone's").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("found.yaml")).unwrap();
        std::fs::write(dir.path().join("found-2.yaml"), "an earlier finding").unwrap();
        let written = write_new(dir.path(), "found.yaml", b"new").unwrap();
        assert_eq!(written, dir.path().join("found-3.yaml"));
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "someone's");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("found-2.yaml")).unwrap(),
            "an earlier finding"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_own_file_replaces_a_planted_link_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "someone's").unwrap();
        let own = dir.path().join("failed.json");
        std::os::unix::fs::symlink(&victim, &own).unwrap();
        replace_own(&own, b"ours").unwrap();
        assert!(std::fs::symlink_metadata(&own).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&own).unwrap(), "ours");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "someone's");
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_file_appears_only_when_committed_and_leaves_no_litter() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report.xml");
        std::fs::write(&target, "old").unwrap();
        drop(AtomicFile::create(&target).unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(names(dir.path()), ["report.xml"]);
        write_atomically(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["report.xml"]);
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

    #[cfg(unix)]
    #[test]
    fn the_temporary_file_has_the_targets_mode_before_its_first_byte() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("spec.yaml");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o604)).unwrap();
        for unnamed in [true, false] {
            let meta = std::fs::metadata(&target).unwrap();
            let pending = Replacement::new_as(target.clone(), Some(&meta), unnamed).unwrap();
            let meta = pending.temp.file().metadata().unwrap();
            assert_eq!((meta.len(), meta.permissions().mode() & 0o777), (0, 0o604));
            drop(pending);
            assert_eq!(names(dir.path()), ["spec.yaml"]);
        }
    }

    #[test]
    fn a_folder_is_not_a_target() {
        let dir = tempfile::tempdir().unwrap();
        let error = AtomicFile::create(dir.path()).err().unwrap();
        assert_eq!(error.to_string(), "it is a folder");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_through_not_replaced() {
        // Checked before anything is written: were it wrong, /dev/null would be at stake.
        let pending = AtomicFile::create(Path::new("/dev/null")).unwrap();
        assert!(matches!(pending.sink, Sink::Through(_)));
        pending.commit(b"nothing").unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_owner_and_group_stay_when_root_rewrites_a_file() {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            // Only root can make a file someone else's, and only root's rewrite could take it.
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec.yaml");
        std::fs::write(&spec, "old").unwrap();
        std::os::unix::fs::chown(&spec, Some(4321), Some(8765)).unwrap();
        write_spec(&spec, b"new").unwrap();
        let meta = std::fs::metadata(&spec).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (4321, 8765));
        assert_eq!(std::fs::read_to_string(&spec).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn leftovers_of_a_killed_run_go_and_a_planted_link_is_never_followed() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("spec.yaml");
        std::fs::write(&target, "old").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        // A leftover of ours, one being written (locked), a link planted where a leftover
        // would be, and a file of another target.
        let leftover = dir.path().join(".spec.yaml.dlqspec-AAAAAAAAAAAA.tmp");
        std::fs::write(&leftover, "half").unwrap();
        let busy = dir.path().join(".spec.yaml.dlqspec-BBBBBBBBBBBB.tmp");
        std::fs::write(&busy, "being written").unwrap();
        let held = File::open(&busy).unwrap();
        assert!(lock(&held, false));
        symlink(
            &victim,
            dir.path().join(".spec.yaml.dlqspec-CCCCCCCCCCCC.tmp"),
        )
        .unwrap();
        std::fs::write(dir.path().join(".other.yaml.dlqspec-DDDDDDDDDDDD.tmp"), "x").unwrap();
        write_spec(&target, b"new").unwrap();
        assert_eq!(
            names(dir.path()),
            [
                ".other.yaml.dlqspec-DDDDDDDDDDDD.tmp",
                ".spec.yaml.dlqspec-BBBBBBBBBBBB.tmp",
                ".spec.yaml.dlqspec-CCCCCCCCCCCC.tmp",
                "spec.yaml",
                "victim"
            ]
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_or_hard_linked_spec_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec.yaml");
        std::fs::write(&spec, "old").unwrap();
        std::fs::set_permissions(&spec, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert_eq!(
            write_spec(&spec, b"new").unwrap_err().to_string(),
            "it is read-only (mode 444); make it writable (chmod u+w) to bless it"
        );
        std::fs::set_permissions(&spec, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::hard_link(&spec, dir.path().join("other-name.yaml")).unwrap();
        assert!(
            write_spec(&spec, b"new")
                .unwrap_err()
                .to_string()
                .starts_with("it has 2 hard links, which a rewrite would split")
        );
        assert_eq!(std::fs::read_to_string(&spec).unwrap(), "old");
    }

    #[cfg(unix)]
    #[test]
    fn removing_an_own_file_removes_a_link_not_what_it_leads_to_and_never_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("alice.jsonl");
        std::fs::write(&report, "old").unwrap();
        remove_own(&report).unwrap();
        assert!(!report.exists());
        // Nothing there is nothing to do.
        remove_own(&report).unwrap();
        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "not ours").unwrap();
        let link = dir.path().join("bob.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        remove_own(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "not ours");
        let folder = dir.path().join("carol.jsonl");
        std::fs::create_dir(&folder).unwrap();
        remove_own(&folder).unwrap();
        assert!(folder.is_dir());
    }
}
