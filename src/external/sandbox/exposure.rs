//! What a box shows of the machine: the system folders and the interpreter's install prefix,
//! bound read-only where they are; and the implementation's own files (the folder of each
//! argument that names a path, the folder of a program outside any `bin`), copied into a folder
//! of dlqspec's and shown read-only at their own paths, so the box reads a snapshot that only
//! it sees, whatever the mode bits of the original and whatever lies beside it.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// What one box shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Exposure {
    /// Host paths shown read-only where they are.
    pub(crate) bound: Vec<PathBuf>,
    /// Host folders (or files) copied, and shown read-only at their own path.
    pub(crate) copied: Vec<PathBuf>,
}

/// System folders and files interpreters read (measured with strace for Python, Node and
/// tsx). Not all of `/etc`: `/etc/shadow` stays out of reach even of a uid 0.
pub(crate) const SYSTEM_PATHS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/alternatives",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/certs",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/mime.types",
    "/etc/os-release",
    "/sys/devices/system/cpu",
    "/sys/kernel/mm/transparent_hugepage",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The variable `grade` sets for each of its runs: the submission (a file or a folder,
/// absolute) the box shows of the class. A lone file in a class folder is shown alone, never
/// with its classmates beside it.
pub(crate) const SUBMISSION_VARIABLE: &str = "DLQSPEC_SUBMISSION";

/// What the box of `program` run with `args` (each that names a path already absolute) shows.
pub(crate) fn exposure(program: &Path, args: &[PathBuf]) -> Exposure {
    let submission = std::env::var_os(SUBMISSION_VARIABLE)
        .map(PathBuf::from)
        .filter(|path| path.is_absolute());
    exposure_of(program, args, submission.as_deref())
}

/// `exposure`, with the submission `grade` named, if any.
fn exposure_of(program: &Path, args: &[PathBuf], submission: Option<&Path>) -> Exposure {
    let mut exposure = Exposure {
        bound: SYSTEM_PATHS.iter().map(PathBuf::from).collect(),
        copied: Vec::new(),
    };
    // A TypeScript solution's `package.json` and `node_modules` folders.
    let mut project = Vec::new();
    for (prefix, in_bin) in install_prefixes_of(program) {
        if in_bin {
            exposure.bound.push(prefix);
        } else {
            exposure.copied.push(prefix);
        }
    }
    for arg in args {
        let folder = if let Some(submission) = submission.filter(|s| arg.starts_with(s)) {
            // The submission itself: its folder, or the lone file without what lies beside it.
            Some(submission.to_path_buf())
        } else if arg.is_dir() {
            Some(arg.clone())
        } else {
            arg.parent().map(Path::to_path_buf)
        };
        exposure
            .copied
            .extend(folder.filter(|folder| !folder.as_os_str().is_empty()));
        project.extend(crate::external::typescript::readable_paths(arg));
    }
    exposure.bound.extend(project.iter().cloned());
    // What a bound tree already shows is not copied again.
    let bound = exposure.bound.clone();
    exposure.copied.retain(|copy| {
        !bound
            .iter()
            .any(|tree| tree != Path::new("/") && copy.starts_with(tree) && tree.is_dir())
    });
    exposure.copied.sort();
    exposure.copied.dedup();
    // A copy inside another copy is in it already.
    let copies = exposure.copied.clone();
    exposure.copied.retain(|copy| {
        !copies
            .iter()
            .any(|other| other != copy && copy.starts_with(other))
    });
    // What lies in a copy is shown from the copy, never bound by its path, which a link put
    // in its place after the copy would lead elsewhere: a `package.json` is copied, and a
    // `node_modules` folder is bound from the very folder the copy opened (`HeldFolder`).
    let copies = &exposure.copied;
    exposure.bound.retain(|path| {
        !(project.contains(path) && copies.iter().any(|copy| path.starts_with(copy)))
    });
    exposure.bound.sort();
    exposure.bound.dedup();
    exposure
}

/// Every path the box reads, for the fallback's Landlock rules (where no root can be built).
pub(crate) fn readable_paths(program: &Path, args: &[PathBuf]) -> Vec<PathBuf> {
    let exposure = exposure(program, args);
    let mut paths = exposure.bound;
    paths.extend(exposure.copied);
    paths.sort();
    paths.dedup();
    paths
}

#[cfg(test)]
/// The install prefix of a program: for `P` in a `bin` (or pyenv's `shims`) folder, that
/// folder's parent, for P as found and as its links resolve (`/usr/bin/node` gives `/usr`,
/// pyenv's shim `/root/.pyenv`, a venv's python the venv and the interpreter it links to);
/// for a program elsewhere, its own folder.
pub(crate) fn install_prefixes(program: &Path) -> Vec<PathBuf> {
    install_prefixes_of(program)
        .into_iter()
        .map(|(prefix, _)| prefix)
        .collect()
}

/// Each install prefix, and whether it is the folder above a `bin` (an installation, bound)
/// rather than the program's own folder (a course's script, copied).
fn install_prefixes_of(program: &Path) -> Vec<(PathBuf, bool)> {
    let mut prefixes = Vec::new();
    let canonical = std::fs::canonicalize(program).ok();
    for path in std::iter::once(program.to_path_buf()).chain(canonical) {
        let Some(folder) = path.parent() else {
            continue;
        };
        let in_bin = folder
            .file_name()
            .is_some_and(|name| name == "bin" || name == "sbin" || name == "shims");
        match folder.parent() {
            Some(prefix) if in_bin && prefix != Path::new("/") => {
                prefixes.push((prefix.to_path_buf(), true))
            }
            // /bin/sh: /bin is a system path, bound already.
            _ if in_bin => prefixes.push((folder.to_path_buf(), true)),
            _ => prefixes.push((folder.to_path_buf(), false)),
        }
    }
    prefixes
}

/// Where `program` is: itself when it names a path (made absolute), else the first match on
/// `path` (a `PATH` value).
pub(crate) fn locate(program: &str, path: Option<&std::ffi::OsStr>, cwd: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(cwd.join(program));
    }
    let path = path?;
    std::env::split_paths(path)
        .map(|folder| cwd.join(folder).join(program))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// The first of `paths` (or of their folders) that a uid other than owner and group cannot
/// reach through the mode bits: a folder without `o+x`, a file without `o+r` or `o+x`.
pub(crate) fn blocked_for_others(paths: &[PathBuf]) -> Option<PathBuf> {
    blocked(paths, true)
}

/// The first of `paths` a uid other than owner and group cannot read or run through its own
/// mode bits, its folders aside: what a box's uid meets in the minimal root, whose folders
/// above a bound path are the root's own.
pub(crate) fn blocked_in_box(paths: &[PathBuf]) -> Option<PathBuf> {
    blocked(paths, false)
}

fn blocked(paths: &[PathBuf], ancestors: bool) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    for path in paths {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let mode = meta.permissions().mode();
        if (meta.is_dir() && mode & 0o001 == 0) || (!meta.is_dir() && mode & 0o005 == 0) {
            return Some(path.clone());
        }
        if !ancestors {
            continue;
        }
        for ancestor in path.ancestors().skip(1) {
            let mode = std::fs::metadata(ancestor).map_or(0o755, |m| m.permissions().mode());
            if mode & 0o001 == 0 {
                return Some(ancestor.to_path_buf());
            }
        }
    }
    None
}

/// The most entries (files, folders, links) one copy may hold.
pub(crate) const MAX_COPY_ENTRIES: usize = 10_000;

/// The most bytes one copy may hold.
pub(crate) const MAX_COPY_BYTES: u64 = 256 << 20;

/// How deep a copy may go.
const MAX_COPY_DEPTH: usize = 64;

/// The most `node_modules` folders one copy may hold open (`HeldFolder`).
const MAX_HELD_FOLDERS: usize = 256;

/// What a copy made besides its files: the `node_modules` folders it found, shown bound in
/// place of a copy (an empty folder in the copy stands for each).
#[derive(Debug, Default)]
pub(crate) struct Copied {
    pub(crate) node_modules: Vec<HeldFolder>,
}

/// Which folder a path led to: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FolderIdentity {
    pub(crate) device: u64,
    pub(crate) inode: u64,
}

/// A folder the copy found and opened rather than copied (a `node_modules`, which may be
/// large and is read-only to the box anyway), reached as the copy reaches every entry: from
/// the descriptor of the folder that holds it, never through a link. The box binds it over the
/// empty folder the copy holds in its place, from its path, and only when that path then
/// leads to this very folder (`FolderIdentity`): a folder swapped for a link after the copy,
/// or a folder above it, is never bound (`RootPlan`'s held binds). Held open for as long as
/// the copy lives, so that its inode is no other folder's meanwhile.
#[derive(Debug)]
pub(crate) struct HeldFolder {
    /// Where it lies, outside the box and in it.
    pub(crate) path: PathBuf,
    /// The folder the copy opened.
    pub(crate) identity: FolderIdentity,
    _held: std::os::fd::OwnedFd,
}

#[cfg(target_os = "linux")]
const HOLD_FLAGS: libc::c_int = libc::O_PATH | libc::O_DIRECTORY;
#[cfg(not(target_os = "linux"))]
const HOLD_FLAGS: libc::c_int = libc::O_DIRECTORY;

impl HeldFolder {
    /// Opens the folder `name` of `folder` (a descriptor of the copy's walk), `path` outside:
    /// never through a link, whatever took its place since it was listed (a link or a file
    /// answers `ENOTDIR`).
    pub(crate) fn hold(
        folder: &std::os::fd::OwnedFd,
        name: &std::ffi::CStr,
        path: PathBuf,
    ) -> io::Result<HeldFolder> {
        let held = open_at(folder, name, HOLD_FLAGS)?;
        let identity = identity_of(&held)?;
        Ok(HeldFolder {
            path,
            identity,
            _held: held,
        })
    }

    /// Whether its path leads to it still, as the box will look (no link at its last part):
    /// the refusal to tell, where it does not.
    pub(crate) fn still_there(&self) -> io::Result<()> {
        let now = open_path_with(&self.path, HOLD_FLAGS).and_then(|now| identity_of(&now));
        match now {
            Ok(identity) if identity == self.identity => Ok(()),
            Ok(_) => Err(changed(
                &self.path,
                &io::Error::other("another folder is there now"),
            )),
            Err(error) => Err(changed(&self.path, &error)),
        }
    }
}

/// The device and inode of what `fd` is open on.
fn identity_of(fd: &std::os::fd::OwnedFd) -> io::Result<FolderIdentity> {
    use std::os::fd::AsRawFd;
    // SAFETY: stat is plain data, filled by fstat below.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat(2) on a descriptor this process owns (an `O_PATH` one too, Linux 3.6).
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FolderIdentity {
        device: stat.st_dev as u64,
        inode: stat.st_ino as u64,
    })
}

/// One copy of an implementation's own files, made once for as long as anything that shows it
/// lives: every box of a run (each restart after a hidden spec, each worker of `--jobs`) shows
/// the same copy, so a submission is read once, and a restart is no new chance to race it.
/// Removed when the last box that shows it is gone (or when dlqspec is interrupted).
pub(crate) struct SharedCopy {
    /// The folder or file copied.
    pub(crate) original: PathBuf,
    /// Where the copy is.
    pub(crate) into: PathBuf,
    /// What the copy found to bind rather than copy, held open.
    pub(crate) node_modules: Vec<HeldFolder>,
    // Declared in the order they are let go: unlisted, removed, unclaimed.
    _live: super::cleanup::LiveBox,
    _folder: tempfile::TempDir,
    _claim: std::fs::File,
}

/// The copies alive in this process, by what they copy.
static COPIES: std::sync::Mutex<Vec<std::sync::Weak<SharedCopy>>> =
    std::sync::Mutex::new(Vec::new());

/// The copy of `original` every box of this process shows: the one alive, or a new one, made
/// in a claimed folder of its own (`copy_tree`).
pub(crate) fn shared_copy(original: &Path) -> io::Result<std::sync::Arc<SharedCopy>> {
    // Held while a copy is made: two workers starting at once make one copy.
    let mut copies = COPIES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    copies.retain(|copy| copy.strong_count() > 0);
    if let Some(alive) = copies
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .find(|copy| copy.original == original)
    {
        return Ok(alive);
    }
    let (folder, claim) = super::cleanup::claimed_private()?;
    let into = folder.path().join("copy");
    let copied = copy_tree(original, &into)?;
    let copy = std::sync::Arc::new(SharedCopy {
        original: original.to_path_buf(),
        into,
        node_modules: copied.node_modules,
        _live: super::cleanup::LiveBox::register(Vec::new(), folder.path().to_path_buf()),
        _folder: folder,
        _claim: claim,
    });
    copies.push(std::sync::Arc::downgrade(&copy));
    Ok(copy)
}

/// Copies `from` (a folder, or a file) into `into`, which must not exist yet: regular files
/// (their bytes and whether they are executable), folders, and links as links; never a link
/// followed, never a FIFO, socket or device, never `.git`; a `node_modules` folder becomes an
/// empty folder, to be bound over, and is held open (`HeldFolder`). Everything is made
/// readable by every uid, and nothing writable by any but dlqspec's. Bounded by
/// `MAX_COPY_ENTRIES` and `MAX_COPY_BYTES`.
///
/// The walk cannot be raced: `from` is opened once without following a link, and every entry
/// is reached from the descriptor of the folder that holds it (`openat` with `O_NOFOLLOW`,
/// and `O_DIRECTORY` for a folder), never by a path. A folder swapped for a link to somewhere
/// else while it is copied (`renameat2(RENAME_EXCHANGE)` by a process of its owner) is never
/// followed: the copy is refused, saying the submission changed while it was copied.
pub(crate) fn copy_tree(from: &Path, into: &Path) -> io::Result<Copied> {
    let mut budget = Budget {
        entries: 0,
        bytes: 0,
    };
    let mut copied = Copied::default();
    let root = open_path(from)?;
    let meta = std::fs::File::from(root.try_clone()?).metadata()?;
    if meta.is_dir() {
        make_folder(into)?;
        copy_folder(&root, from, into, 0, &mut budget, &mut copied)?;
    } else if meta.is_file() {
        copy_file(std::fs::File::from(root), from, into, &mut budget)?;
    } else {
        return Err(io::Error::other(format!(
            "{} is neither a folder nor a file",
            from.display()
        )));
    }
    Ok(copied)
}

/// `from` opened to read, not through a link (a link names neither a folder nor a file of the
/// implementation's own).
fn open_path(from: &Path) -> io::Result<std::os::fd::OwnedFd> {
    open_path_with(from, libc::O_RDONLY | libc::O_NONBLOCK).map_err(|error| {
        if error.raw_os_error() == Some(libc::ELOOP) {
            io::Error::other(format!("{} is neither a folder nor a file", from.display()))
        } else {
            error
        }
    })
}

/// `from` opened with `flags`, not through a link at its last part.
fn open_path_with(from: &Path, flags: libc::c_int) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(from.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("{} holds a NUL byte", from.display())))?;
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(name.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened here and nothing else owns it.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// The entry `name` of the folder `folder` opened, with `flags` and never through a link.
fn open_at(
    folder: &std::os::fd::OwnedFd,
    name: &std::ffi::CStr,
    flags: libc::c_int,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: openat(2) on a descriptor this process owns and a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            folder.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened here and nothing else owns it.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// The names in the folder `folder` holds (not `.` and `..`), in byte order.
fn names_in(folder: &std::os::fd::OwnedFd) -> io::Result<Vec<std::ffi::CString>> {
    use std::os::fd::{AsRawFd, IntoRawFd};
    // A descriptor of its own, which `closedir` closes; read from the start.
    let own = folder.try_clone()?;
    // SAFETY: lseek on a descriptor this function owns.
    unsafe { libc::lseek(own.as_raw_fd(), 0, libc::SEEK_SET) };
    let raw = own.into_raw_fd();
    // SAFETY: fdopendir takes `raw`, a folder's descriptor, over; closed by closedir below.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let error = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `raw` is still this function's to close.
        unsafe { libc::close(raw) };
        return Err(error);
    }
    let mut names = Vec::new();
    let outcome = loop {
        // SAFETY: errno is this thread's: cleared, so that an end tells from an error.
        #[cfg(target_os = "linux")]
        unsafe {
            *libc::__errno_location() = 0
        };
        // SAFETY: readdir on the open stream; the entry is read before the next call.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            let errno = io::Error::last_os_error();
            break match errno.raw_os_error() {
                Some(0) | None => Ok(()),
                Some(_) => Err(errno),
            };
        }
        // SAFETY: d_name is NUL-terminated within the entry readdir returned.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
        if names.len() > MAX_COPY_ENTRIES {
            break Ok(());
        }
    };
    // SAFETY: the stream opened above, closed once.
    unsafe { libc::closedir(stream) };
    outcome?;
    names.sort();
    Ok(names)
}

/// What the entry `name` of `folder` is, not through a link.
fn kind_at(folder: &std::os::fd::OwnedFd, name: &std::ffi::CStr) -> io::Result<libc::mode_t> {
    use std::os::fd::AsRawFd;
    // SAFETY: stat is plain data, filled by fstatat below.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat(2) on a descriptor this process owns, a NUL-terminated name, and a
    // struct it fills.
    let done = unsafe {
        libc::fstatat(
            folder.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat.st_mode & libc::S_IFMT)
}

/// Where the link `name` of `folder` points, not followed.
fn link_at(folder: &std::os::fd::OwnedFd, name: &std::ffi::CStr) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStringExt;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: readlinkat(2) into a buffer of the length given.
    let length = unsafe {
        libc::readlinkat(
            folder.as_raw_fd(),
            name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    if length < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(length as usize);
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buffer)))
}

/// The refusal of a submission that changed while it was copied.
fn changed(path: &Path, error: &io::Error) -> io::Error {
    io::Error::other(format!(
        "{} changed while it was copied into the box ({error}): a file or folder was replaced, perhaps by a link, which is never followed; nothing of it is shown, so let nothing change the solution while it is graded, and run again",
        path.display()
    ))
}

/// The variable that pauses a copy before it opens a folder of a given name, until a line is
/// written to a FIFO (`NAME:FIFO`): for the tests only, which swap that folder for a link at
/// that moment, as a racing process would. Unset, nothing pauses.
pub(crate) const COPY_PAUSE_VARIABLE: &str = "DLQSPEC_TEST_COPY_PAUSE";

/// Waits at the pause `COPY_PAUSE_VARIABLE` names, if it names `name`.
fn pause_before(name: &std::ffi::CStr) {
    let Some(pause) = std::env::var_os(COPY_PAUSE_VARIABLE) else {
        return;
    };
    use std::os::unix::ffi::OsStrExt;
    let bytes = pause.as_bytes();
    let Some(colon) = bytes.iter().position(|&b| b == b':') else {
        return;
    };
    if &bytes[..colon] != name.to_bytes() {
        return;
    }
    let fifo = Path::new(std::ffi::OsStr::from_bytes(&bytes[colon + 1..]));
    if let Ok(fifo) = std::fs::File::open(fifo) {
        let _ = fifo.take(64).read_to_end(&mut Vec::new());
    }
}

struct Budget {
    entries: usize,
    bytes: u64,
}

impl Budget {
    fn take_entry(&mut self, from: &Path) -> io::Result<()> {
        self.entries += 1;
        if self.entries > MAX_COPY_ENTRIES {
            return Err(io::Error::other(format!(
                "{} holds more than {MAX_COPY_ENTRIES} files and folders to copy into the box: keep the solution in a folder of its own",
                from.display()
            )));
        }
        Ok(())
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: a fresh folder of the box's copy is given its mode"
)]
fn make_folder(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().mode(0o755).create(path)?;
    // The umask may have taken bits: every box's uid reads it.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: an implementation's own files are copied into a fresh folder of its box"
)]
fn copy_folder(
    folder: &std::os::fd::OwnedFd,
    from: &Path,
    into: &Path,
    depth: usize,
    budget: &mut Budget,
    copied: &mut Copied,
) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if depth > MAX_COPY_DEPTH {
        return Err(io::Error::other(format!(
            "{} is more than {MAX_COPY_DEPTH} folders deep to copy into the box",
            from.display()
        )));
    }
    for name in names_in(folder)? {
        let plain = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
        let source = from.join(plain);
        let target = into.join(plain);
        budget.take_entry(from)?;
        let kind = match kind_at(folder, &name) {
            Ok(kind) => kind,
            // Listed, then gone.
            Err(error) => return Err(changed(&source, &error)),
        };
        if kind == libc::S_IFLNK {
            let link = link_at(folder, &name).map_err(|error| changed(&source, &error))?;
            std::os::unix::fs::symlink(link, &target)?;
        } else if kind == libc::S_IFDIR {
            if name.to_bytes() == b".git" {
                continue;
            }
            make_folder(&target)?;
            pause_before(&name);
            if name.to_bytes() == b"node_modules" {
                if copied.node_modules.len() == MAX_HELD_FOLDERS {
                    return Err(io::Error::other(format!(
                        "{} holds more than {MAX_HELD_FOLDERS} node_modules folders to show in the box: keep the solution in a folder of its own",
                        from.display()
                    )));
                }
                let held = HeldFolder::hold(folder, &name, source.clone())
                    .map_err(|error| changed(&source, &error))?;
                copied.node_modules.push(held);
                continue;
            }
            // A link or a file in its place since it was listed is refused here: ELOOP or
            // ENOTDIR, never followed.
            let inner = open_at(folder, &name, libc::O_DIRECTORY)
                .map_err(|error| changed(&source, &error))?;
            copy_folder(&inner, &source, &target, depth + 1, budget, copied)?;
        } else if kind == libc::S_IFREG {
            let file = open_at(folder, &name, libc::O_NONBLOCK)
                .map_err(|error| changed(&source, &error))?;
            copy_file(std::fs::File::from(file), &source, &target, budget)?;
        }
    }
    Ok(())
}

/// Copies one regular file, opened already (without following a link and without waiting on
/// a FIFO that took its place).
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: one file of the implementation is copied where nothing is, no link followed"
)]
fn copy_file(
    mut source: std::fs::File,
    from: &Path,
    into: &Path,
    budget: &mut Budget,
) -> io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let meta = source.metadata()?;
    if !meta.is_file() {
        return Err(changed(from, &io::Error::other("no longer a regular file")));
    }
    let left = MAX_COPY_BYTES.saturating_sub(budget.bytes);
    if meta.len() > left {
        return Err(io::Error::other(format!(
            "{} is more than the {} MiB a copy into the box may hold: keep the solution in a folder of its own",
            from.display(),
            MAX_COPY_BYTES >> 20
        )));
    }
    let executable = meta.permissions().mode() & 0o111 != 0;
    let mut target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(into)?;
    let written = io::copy(&mut (&mut source).take(left), &mut target)?;
    budget.bytes += written;
    let mode = if executable { 0o755 } else { 0o644 };
    target.set_permissions(std::fs::Permissions::from_mode(mode))?;
    // The original's times, so a compiled cache beside it (Python's `__pycache__`, which
    // records its source's mtime) still serves the copy.
    let times = std::fs::FileTimes::new()
        .set_accessed(meta.accessed()?)
        .set_modified(meta.modified()?);
    target.set_times(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_prefix_is_the_folder_above_bin() {
        assert!(install_prefixes(Path::new("/usr/bin/node")).contains(&PathBuf::from("/usr")));
        assert_eq!(
            install_prefixes(Path::new("/no/such/.pyenv/shims/python3")),
            [PathBuf::from("/no/such/.pyenv")]
        );
        // A script outside any bin folder gets its own folder, not the one above.
        assert_eq!(
            install_prefixes(Path::new("/no/such/course/tests/impl.sh")),
            [PathBuf::from("/no/such/course/tests")]
        );
        // /bin/sh's prefix is /bin, never the whole file system.
        assert!(!install_prefixes(Path::new("/bin/sh")).contains(&PathBuf::from("/")));
    }

    #[test]
    fn the_system_and_the_interpreter_are_bound_and_the_solutions_folder_copied() {
        let dir = tempfile::tempdir().unwrap();
        let solution = dir.path().join("alice").join("solution.py");
        std::fs::create_dir_all(solution.parent().unwrap()).unwrap();
        std::fs::write(&solution, "").unwrap();
        let shown = exposure(
            Path::new("/opt/py/bin/python3"),
            std::slice::from_ref(&solution),
        );
        assert_eq!(shown.copied, [dir.path().join("alice")]);
        assert!(shown.bound.contains(&PathBuf::from("/opt/py")));
        assert!(shown.bound.contains(&PathBuf::from("/etc/ld.so.cache")));
        assert!(!shown.bound.iter().any(|p| p == Path::new("/etc")));
        assert!(!shown.bound.iter().any(|p| p == Path::new("/")));
        // A script outside a bin folder is the course's: copied, not bound.
        let script = dir.path().join("impl.sh");
        std::fs::write(&script, "").unwrap();
        let shown = exposure(&script, &[]);
        assert_eq!(shown.copied, [dir.path().to_path_buf()]);
    }

    #[test]
    fn a_lone_submission_of_a_class_is_shown_without_its_classmates() {
        let dir = tempfile::tempdir().unwrap();
        let class = dir.path().join("class");
        std::fs::create_dir_all(&class).unwrap();
        for name in ["alice.py", "bob.py"] {
            std::fs::write(class.join(name), "").unwrap();
        }
        let alice = class.join("alice.py");
        let shim = dir.path().join("shims/python/dlqspec_shim.py");
        std::fs::create_dir_all(shim.parent().unwrap()).unwrap();
        std::fs::write(&shim, "").unwrap();
        let args = [shim.clone(), alice.clone()];
        let python = Path::new("/usr/bin/python3");
        let graded = exposure_of(python, &args, Some(&alice));
        assert_eq!(
            graded.copied,
            [alice.clone(), dir.path().join("shims/python")]
        );
        // Run by hand, the folder of the file is its project.
        let by_hand = exposure_of(python, &args, None);
        assert_eq!(
            by_hand.copied,
            [class.clone(), dir.path().join("shims/python")]
        );
        // A folder submission is shown whole.
        let folder = class.join("carol");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("solution.py"), "").unwrap();
        let graded = exposure_of(python, &[folder.join("solution.py")], Some(&folder));
        assert_eq!(graded.copied, [folder]);
    }

    #[test]
    fn a_copy_holds_files_folders_and_links_never_what_a_link_leads_to() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("alice");
        std::fs::create_dir_all(from.join("pkg/node_modules/tsx")).unwrap();
        std::fs::create_dir_all(from.join(".git/objects")).unwrap();
        std::fs::write(from.join("solution.py"), "print(1)").unwrap();
        std::fs::write(from.join("run.sh"), "#!/bin/sh").unwrap();
        std::fs::set_permissions(from.join("run.sh"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        std::fs::write(dir.path().join("secret"), "classmate").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), from.join("link")).unwrap();
        let into = dir.path().join("copy");
        let copied = copy_tree(&from, &into).unwrap();
        assert_eq!(
            std::fs::read_to_string(into.join("solution.py")).unwrap(),
            "print(1)"
        );
        assert_eq!(
            std::fs::metadata(into.join("run.sh"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o755
        );
        assert_eq!(
            std::fs::read_link(into.join("link")).unwrap(),
            dir.path().join("secret")
        );
        assert!(!into.join(".git").exists());
        assert!(into.join("pkg/node_modules").is_dir());
        assert!(!into.join("pkg/node_modules/tsx").exists());
        let held: Vec<&PathBuf> = copied.node_modules.iter().map(|f| &f.path).collect();
        assert_eq!(held, [&from.join("pkg/node_modules")]);
        assert_eq!(
            std::fs::metadata(&into).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }

    #[test]
    fn a_held_folder_is_the_one_its_parent_holds_never_a_link_nor_a_later_one() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("node_modules");
        std::fs::create_dir_all(modules.join("tsx")).unwrap();
        let parent = open_path_with(dir.path(), libc::O_RDONLY | libc::O_DIRECTORY).unwrap();
        let held = HeldFolder::hold(&parent, c"node_modules", modules.clone()).unwrap();
        let meta = std::fs::metadata(&modules).unwrap();
        assert_eq!(
            held.identity,
            FolderIdentity {
                device: meta.dev(),
                inode: meta.ino()
            }
        );
        held.still_there().unwrap();
        // Swapped for a link to another folder (a teacher's), or to itself moved away:
        // never held, and the one held is no longer there.
        let teacher = dir.path().join("teacher");
        std::fs::create_dir_all(&teacher).unwrap();
        std::fs::rename(&modules, dir.path().join("was")).unwrap();
        std::os::unix::fs::symlink(&teacher, &modules).unwrap();
        let error = HeldFolder::hold(&parent, c"node_modules", modules.clone()).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOTDIR), "{error}");
        let said = held.still_there().unwrap_err().to_string();
        assert!(said.contains("changed while it was copied"), "{said}");
        std::fs::remove_file(&modules).unwrap();
        std::os::unix::fs::symlink(dir.path().join("was"), &modules).unwrap();
        assert!(held.still_there().is_err());
        // Another folder at its path is not it either; a file is no folder.
        std::fs::remove_file(&modules).unwrap();
        std::fs::create_dir(&modules).unwrap();
        assert!(held.still_there().is_err());
        std::fs::write(dir.path().join("file"), "").unwrap();
        assert!(HeldFolder::hold(&parent, c"file", dir.path().join("file")).is_err());
        // Back where it was, it is itself again.
        std::fs::remove_dir(&modules).unwrap();
        std::fs::rename(dir.path().join("was"), &modules).unwrap();
        held.still_there().unwrap();
    }

    #[test]
    fn a_typescript_projects_files_in_a_copy_are_shown_from_the_copy_not_bound() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("course");
        let alice = project.join("alice");
        std::fs::create_dir_all(alice.join("node_modules/tsx")).unwrap();
        std::fs::create_dir_all(project.join("node_modules")).unwrap();
        std::fs::write(alice.join("package.json"), "{}").unwrap();
        std::fs::write(alice.join("solution.ts"), "").unwrap();
        let shown = exposure_of(
            Path::new("/usr/bin/node"),
            &[alice.join("solution.ts")],
            None,
        );
        assert_eq!(shown.copied, std::slice::from_ref(&alice));
        // The course's folder above the copy is bound where it is; the copy's own package.json
        // and node_modules are not bound by their paths.
        assert!(shown.bound.contains(&project.join("node_modules")));
        assert!(
            !shown.bound.iter().any(|path| path.starts_with(&alice)),
            "{:?}",
            shown.bound
        );
    }

    #[test]
    fn a_folder_is_copied_once_for_as_long_as_a_box_shows_it() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("alice");
        std::fs::create_dir_all(&from).unwrap();
        std::fs::write(from.join("solution.py"), "print(1)").unwrap();
        let first = shared_copy(&from).unwrap();
        // A later change is not copied while the copy lives: every box of the run shows the
        // submission as it was read once.
        std::fs::write(from.join("solution.py"), "print(2)").unwrap();
        let again = shared_copy(&from).unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        assert_eq!(
            std::fs::read_to_string(again.into.join("solution.py")).unwrap(),
            "print(1)"
        );
        let place = first.into.clone();
        drop((first, again));
        assert!(!place.exists(), "the copy is removed with its last box");
        let fresh = shared_copy(&from).unwrap();
        assert_eq!(
            std::fs::read_to_string(fresh.into.join("solution.py")).unwrap(),
            "print(2)"
        );
    }

    #[test]
    fn a_link_in_place_of_the_root_or_a_lone_file_is_no_submission_to_copy() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("teacher")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("teacher"), dir.path().join("alice")).unwrap();
        let error = copy_tree(&dir.path().join("alice"), &dir.path().join("copy")).unwrap_err();
        assert!(
            error.to_string().contains("neither a folder nor a file"),
            "{error}"
        );
        std::fs::write(dir.path().join("bob.py"), "x = 1").unwrap();
        copy_tree(&dir.path().join("bob.py"), &dir.path().join("bob-copy")).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("bob-copy")).unwrap(),
            "x = 1"
        );
    }

    #[test]
    fn a_copy_past_its_bounds_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("many");
        std::fs::create_dir(&from).unwrap();
        for n in 0..=MAX_COPY_ENTRIES {
            std::fs::write(from.join(n.to_string()), "").unwrap();
        }
        let error = copy_tree(&from, &dir.path().join("copy")).unwrap_err();
        assert!(error.to_string().contains("a folder of its own"), "{error}");
    }

    #[test]
    fn a_folder_without_search_for_others_blocks_another_uid() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let file = inner.join("impl.sh");
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            blocked_for_others(std::slice::from_ref(&file)),
            Some(dir.path().to_path_buf())
        );
        // In the box, the folders above are the root's own: only the file's own bits count.
        assert_eq!(blocked_in_box(std::slice::from_ref(&file)), None);
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let blocked = blocked_for_others(std::slice::from_ref(&file));
        // Above the temporary folder, /tmp and / let everyone through.
        assert!(
            blocked.as_ref().is_none_or(|p| !p.starts_with(dir.path())),
            "{blocked:?}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            blocked_for_others(std::slice::from_ref(&file)),
            Some(file.clone())
        );
        assert_eq!(blocked_in_box(std::slice::from_ref(&file)), Some(file));
    }

    #[test]
    fn a_program_is_located_on_the_path_or_made_absolute() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            locate("./impl.sh", None, dir.path()),
            Some(dir.path().join("./impl.sh"))
        );
        assert_eq!(
            locate(
                "sh",
                Some(std::ffi::OsStr::new("/no/such:/bin:/usr/bin")),
                dir.path()
            )
            .map(|p| p.file_name().unwrap().to_owned()),
            Some("sh".into())
        );
        assert_eq!(locate("sh", None, dir.path()), None);
    }
}
