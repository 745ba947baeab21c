//! The minimal root a box sees (Linux): a fresh tmpfs holding read-only bind mounts of exactly
//! what the implementation needs, at the paths it has outside, one writable sized tmpfs (its
//! home, temporary and working folder), a `/dev` of a few devices, `/etc/passwd` and
//! `/etc/group` of its own, and `/proc`; then `pivot_root` into it (docs/security.md).
//!
//! The plan (`RootPlan`) is made before fork, from the paths the box shows; `build` carries it
//! out with raw system calls in the box's first process, in a mount namespace of its own, and
//! pivots into it. Nothing is ever created outside the new root's own tmpfs: a folder is made
//! only where no bound tree lies, and never through a link.

use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::io;
use std::path::{Path, PathBuf};

use super::exposure::FolderIdentity;
use super::raw;

/// What the box shows, besides its devices and `/proc`.
pub(crate) struct Layout<'a> {
    /// Host paths shown read-only at the same path (the system, the interpreter, packages).
    pub(crate) bound: &'a [PathBuf],
    /// Read-only copies: (the path the box sees, the copy on the host).
    pub(crate) copies: &'a [(PathBuf, PathBuf)],
    /// Folders in a copy bound over its empty folder where they are (a `node_modules`), each
    /// only if its path then leads to the folder the copy opened.
    pub(crate) held: &'a [(PathBuf, FolderIdentity)],
    /// The box's writable folder, as the box sees it.
    pub(crate) work: &'a Path,
    /// The empty host folder the new root is mounted on (in the box's mount namespace only).
    pub(crate) staging: &'a Path,
    /// The most bytes the writable folder and `/dev/shm` may each hold (`--disk`).
    pub(crate) disk: u64,
    /// The owner of the writable folder, as the mount namespace's user namespace names it.
    pub(crate) owner: (u32, u32),
    /// The box's own uid and gid, as the box sees them (its `/etc/passwd` line).
    pub(crate) user: (u32, u32),
    /// Whether the host's `/proc` is bound for the box's first process to cover with a fresh
    /// one (the kernel mounts a new `/proc` only over a fully visible one).
    pub(crate) proc: bool,
}

/// One step of building the root, its paths already under the staging folder.
#[derive(Clone)]
enum RootStep {
    /// A folder of the root's own tmpfs.
    Folder(CString),
    /// An empty file to mount a file on.
    File(CString),
    /// A read-only bind mount of `source` (recursive) on `target`, with `attributes`
    /// (`MOUNT_ATTR_*`).
    Bind {
        source: CString,
        target: CString,
        attributes: u64,
    },
    /// The same of the folder `source` leads to, only if it is `identity`: opened with no link
    /// at its last part, checked, and bound from that descriptor, never by its path again.
    BindHeld {
        source: CString,
        identity: FolderIdentity,
        target: CString,
        attributes: u64,
    },
    /// A symbolic link holding `text`.
    Link { text: CString, at: CString },
    /// A fresh tmpfs.
    Tmpfs { target: CString, options: CString },
    /// A file of the root's own with these bytes.
    Write { target: CString, bytes: Vec<u8> },
}

/// The root to build, made before fork.
#[derive(Clone)]
pub(crate) struct RootPlan {
    staging: CString,
    root_options: CString,
    steps: Vec<RootStep>,
    /// The writable folder, as the box sees it (its working folder).
    pub(super) work: CString,
}

/// How a path the box sees is shown.
#[derive(Clone, Copy)]
enum Shown<'a> {
    /// The host's own, at its own path.
    Host,
    /// The copy at this host path.
    Copy(&'a Path),
    /// The folder of a copy's walk (`Layout::held`).
    Held(FolderIdentity),
}

impl Shown<'_> {
    /// Which of two ways to show one path wins: the lower.
    fn rank(&self) -> u8 {
        match self {
            Shown::Copy(_) => 0,
            Shown::Held(_) => 1,
            Shown::Host => 2,
        }
    }
}

/// Bind attributes: read-only, no set-uid, no devices; devices keep `nodev` off.
const READ_ONLY: u64 = libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;
const DEVICE: u64 = libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID;
/// The host's `/proc`, bound only to be covered: the flags a fresh `/proc` will have.
const COVERED_PROC: u64 =
    libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV | libc::MOUNT_ATTR_NOEXEC;

/// How many files and folders each of the box's tmpfs may hold.
const INODES: u64 = 16_384;

/// The devices a box has, and the links of `/dev` to `/proc/self/fd`.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];
const DEVICE_LINKS: &[(&str, &str)] = &[
    ("/dev/fd", "/proc/self/fd"),
    ("/dev/stdin", "/proc/self/fd/0"),
    ("/dev/stdout", "/proc/self/fd/1"),
    ("/dev/stderr", "/proc/self/fd/2"),
];

/// The files of `/etc` the root writes itself rather than binding the host's: who is who.
pub(crate) const OWN_ETC_FILES: &[&str] = &["/etc/passwd", "/etc/group"];

fn c(path: &Path) -> CString {
    CString::new(path.as_os_str().as_encoded_bytes()).unwrap_or_default()
}

impl RootPlan {
    /// The plan of the root `layout` describes.
    pub(crate) fn new(layout: &Layout) -> RootPlan {
        let mut plan = Planner {
            staging: layout.staging.to_path_buf(),
            steps: Vec::new(),
            made: BTreeSet::new(),
            bound_trees: BTreeSet::new(),
            host_trees: BTreeSet::new(),
            links: BTreeSet::new(),
        };
        // In the order of the paths the box sees, so a folder comes before what lies in it
        // (a copy before the packages bound inside it); a copy wins over the host's own path.
        let mut shown: Vec<(&Path, Shown)> = layout
            .bound
            .iter()
            .filter(|path| path.is_absolute())
            .filter(|path| {
                !OWN_ETC_FILES
                    .iter()
                    .any(|own| path.as_path() == Path::new(own))
            })
            .map(|path| (path.as_path(), Shown::Host))
            .chain(
                DEVICES
                    .iter()
                    .map(|device| (Path::new(*device), Shown::Host)),
            )
            .chain(
                layout
                    .copies
                    .iter()
                    .map(|(at, copy)| (at.as_path(), Shown::Copy(copy.as_path()))),
            )
            .chain(
                layout
                    .held
                    .iter()
                    .filter(|(at, _)| at.is_absolute())
                    .map(|(at, identity)| (at.as_path(), Shown::Held(*identity))),
            )
            .collect();
        // A copy sorts before a held folder and a held folder before the host path at the
        // same place, which `dedup` then drops.
        shown.sort_by(|a, b| a.0.cmp(b.0).then_with(|| a.1.rank().cmp(&b.1.rank())));
        shown.dedup_by(|later, earlier| later.0 == earlier.0);
        for (at, how) in shown {
            match how {
                Shown::Copy(copy) => plan.bind(at, copy, READ_ONLY, true),
                Shown::Held(identity) => plan.bind_held(at, identity, READ_ONLY),
                Shown::Host => plan.show_host(at),
            }
        }
        let (uid, gid) = layout.user;
        let passwd = format!(
            "root:x:0:0:root:/root:/usr/sbin/nologin\n\
             nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n{}",
            if uid == 0 || uid == 65534 {
                String::new()
            } else {
                format!(
                    "box:x:{uid}:{gid}:dlqspec box:{}:/usr/sbin/nologin\n",
                    layout.work.display()
                )
            }
        );
        let group = format!(
            "root:x:0:\nnogroup:x:65534:\n{}",
            if gid == 0 || gid == 65534 {
                String::new()
            } else {
                format!("box:x:{gid}:\n")
            }
        );
        plan.write(Path::new("/etc/passwd"), passwd.into_bytes());
        plan.write(Path::new("/etc/group"), group.into_bytes());
        for (at, text) in DEVICE_LINKS {
            plan.link(Path::new(at), Path::new(text));
        }
        let sized = |mode: &str, owner: Option<(u32, u32)>| {
            let owner = owner.map_or(String::new(), |(u, g)| format!(",uid={u},gid={g}"));
            CString::new(format!(
                "mode={mode},size={},nr_inodes={INODES}{owner}",
                layout.disk.max(1 << 20)
            ))
            .unwrap_or_default()
        };
        plan.tmpfs(Path::new("/dev/shm"), sized("1777", None));
        if layout.proc {
            plan.bind(Path::new("/proc"), Path::new("/proc"), COVERED_PROC, false);
        } else {
            plan.folder(Path::new("/proc"));
        }
        plan.tmpfs(layout.work, sized("0700", Some(layout.owner)));
        RootPlan {
            staging: c(layout.staging),
            root_options: CString::new(format!("mode=0755,size=4m,nr_inodes={INODES}"))
                .unwrap_or_default(),
            steps: plan.steps,
            work: c(layout.work),
        }
    }

    /// Builds the root and pivots into it: in a process that has a mount namespace of its own
    /// and the right to mount in it. The old root is gone from its view afterwards, and its
    /// working folder is the new root.
    ///
    /// # Safety
    /// Raw system calls only, on memory prepared before the fork.
    pub(crate) unsafe fn build(&self) -> io::Result<()> {
        unsafe {
            keep_mounts_private()?;
            mount_tmpfs(&self.staging, &self.root_options)?;
            for step in &self.steps {
                run(step)?;
            }
            // The root's own folders and files are read-only from now on.
            if libc::mount(
                std::ptr::null(),
                self.staging.as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT
                    | libc::MS_BIND
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV,
                std::ptr::null(),
            ) != 0
            {
                return Err(raw::last_error());
            }
            if libc::chdir(self.staging.as_ptr()) != 0
                || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
                || libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0
                || libc::chdir(c"/".as_ptr()) != 0
            {
                return Err(raw::last_error());
            }
            Ok(())
        }
    }
}

/// Carries out one step.
///
/// # Safety
/// Raw system calls only.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: the files and links of the box's minimal root, in the fresh tmpfs it is built on"
)]
unsafe fn run(step: &RootStep) -> io::Result<()> {
    let exists = || raw::last_error().raw_os_error() == Some(libc::EEXIST);
    unsafe {
        match step {
            RootStep::Folder(path) => {
                if libc::mkdir(path.as_ptr(), 0o755) != 0 && !exists() {
                    return Err(raw::last_error());
                }
            }
            RootStep::File(path) => {
                let fd = new_file(path);
                if fd >= 0 {
                    libc::close(fd);
                } else if !exists() {
                    return Err(raw::last_error());
                }
            }
            RootStep::Link { text, at } => {
                if libc::symlink(text.as_ptr(), at.as_ptr()) != 0 && !exists() {
                    return Err(raw::last_error());
                }
            }
            RootStep::Write { target, bytes } => {
                let fd = new_file(target);
                if fd < 0 {
                    return Err(raw::last_error());
                }
                let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
                libc::close(fd);
                if written != bytes.len() as isize {
                    return Err(raw::last_error());
                }
            }
            RootStep::Tmpfs { target, options } => mount_tmpfs(target, options)?,
            RootStep::Bind {
                source,
                target,
                attributes,
            } => bind(source, target, *attributes)?,
            RootStep::BindHeld {
                source,
                identity,
                target,
                attributes,
            } => bind_held(source, *identity, target, *attributes)?,
        }
        Ok(())
    }
}

/// A recursive bind of `source` on `target` with `attributes` set on every mount of it, by the
/// mount API (Linux 5.12): the tree is cloned, given its attributes while detached, and only
/// then attached, so it is never writable where the box can see it.
///
/// # Safety
/// Raw system calls only.
unsafe fn bind(source: &CString, target: &CString, attributes: u64) -> io::Result<()> {
    unsafe {
        let tree = libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            source.as_ptr(),
            (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint,
        ) as libc::c_int;
        if tree < 0 {
            return Err(raw::last_error());
        }
        attach(tree, target, attributes)
    }
}

/// `bind`, of the folder `source` leads to only if it is `identity`: opened with no link at its
/// last part (`ENOTDIR`: a link is no folder), its device and inode checked (`ESTALE` for another folder), and cloned
/// from that descriptor, so that nothing changed between the check and the bind reaches it.
/// The descriptor the copy held cannot serve itself: it belongs to dlqspec's mount namespace,
/// and the kernel clones a tree only from the caller's own (`EINVAL` in A's, measured).
///
/// # Safety
/// Raw system calls only.
unsafe fn bind_held(
    source: &CString,
    identity: FolderIdentity,
    target: &CString,
    attributes: u64,
) -> io::Result<()> {
    unsafe {
        let folder = libc::open(
            source.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if folder < 0 {
            return Err(raw::last_error());
        }
        if !is_folder(folder, identity) {
            libc::close(folder);
            return Err(io::Error::from_raw_os_error(libc::ESTALE));
        }
        let tree = libc::syscall(
            libc::SYS_open_tree,
            folder,
            c"".as_ptr(),
            (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_uint
                | (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
        ) as libc::c_int;
        let error = raw::last_error();
        libc::close(folder);
        if tree < 0 {
            return Err(error);
        }
        attach(tree, target, attributes)
    }
}

/// Whether the descriptor `fd` is open on the folder `identity`.
///
/// # Safety
/// Raw system calls only.
unsafe fn is_folder(fd: libc::c_int, identity: FolderIdentity) -> bool {
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut stat) == 0
            && stat.st_dev as u64 == identity.device
            && stat.st_ino as u64 == identity.inode
    }
}

/// Gives the detached tree `tree` its `attributes` and attaches it on `target`; closes `tree`.
///
/// # Safety
/// Raw system calls only.
unsafe fn attach(tree: libc::c_int, target: &CString, attributes: u64) -> io::Result<()> {
    unsafe {
        let attr = libc::mount_attr {
            attr_set: attributes,
            attr_clr: 0,
            propagation: libc::MS_PRIVATE,
            userns_fd: 0,
        };
        let set = libc::syscall(
            libc::SYS_mount_setattr,
            tree,
            c"".as_ptr(),
            (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        );
        let moved = set == 0
            && libc::syscall(
                libc::SYS_move_mount,
                tree,
                c"".as_ptr(),
                libc::AT_FDCWD,
                target.as_ptr(),
                libc::MOVE_MOUNT_F_EMPTY_PATH,
            ) == 0;
        let error = raw::last_error();
        libc::close(tree);
        if moved { Ok(()) } else { Err(error) }
    }
}

/// Opens, to write, a new file of the root's own at `path`: never one already there, nor one
/// through a link. The descriptor, or -1.
///
/// # Safety
/// Raw system calls only.
unsafe fn new_file(path: &CStr) -> libc::c_int {
    unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644,
        )
    }
}

/// Makes every mount of this process's mount namespace private, so that nothing mounted in it
/// reaches the host's namespace, nor the host's this one: before anything is mounted in it.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn keep_mounts_private() -> io::Result<()> {
    let private = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if private != 0 {
        return Err(raw::last_error());
    }
    Ok(())
}

/// Mounts a fresh tmpfs on `target` with `options` (`mode=...,size=...`), its files never
/// set-uid nor devices.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn mount_tmpfs(target: &CStr, options: &CStr) -> io::Result<()> {
    let mounted = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(raw::last_error());
    }
    Ok(())
}

/// For the kernel probe: binds `/dev/null` on a new file `null` and makes an empty folder
/// `proc`, in a tmpfs already mounted; whether the mount API did it.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn probe_bind(null: &CString, proc: &CString) -> bool {
    unsafe {
        run(&RootStep::File(null.clone())).is_ok()
            && bind(&CString::from(c"/dev/null"), null, DEVICE).is_ok()
            && libc::mkdir(proc.as_ptr(), 0o755) == 0
    }
}

/// Makes every mount of this process's mount namespace read-only (one just unshared, kept
/// private first so nothing of it reaches the host's): the zygote's view of the machine.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn read_only_everywhere() -> bool {
    unsafe {
        let attr = libc::mount_attr {
            attr_set: libc::MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: libc::MS_PRIVATE,
            userns_fd: 0,
        };
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        ) == 0
    }
}

/// Turns what the box shows into steps.
struct Planner {
    staging: PathBuf,
    steps: Vec<RootStep>,
    /// The folders already made (or bound), as the box sees them.
    made: BTreeSet<PathBuf>,
    /// The folders bound (from the host or from a copy): what lies in them exists already, and
    /// nothing may be made there.
    bound_trees: BTreeSet<PathBuf>,
    /// The host folders bound at their own path: a host path in one is shown already, as it
    /// is (one in a copy is not: a copy holds an empty folder where a package is bound).
    host_trees: BTreeSet<PathBuf>,
    /// The links made: nothing is made through one.
    links: BTreeSet<PathBuf>,
}

impl Planner {
    fn under_staging(&self, at: &Path) -> CString {
        let relative = at.strip_prefix("/").unwrap_or(at);
        c(&self.staging.join(relative))
    }

    /// Whether `at` lies in a bound tree (so it exists, and nothing may be made there).
    fn in_bound_tree(&self, at: &Path) -> bool {
        at.ancestors()
            .skip(1)
            .any(|ancestor| self.bound_trees.contains(ancestor))
    }

    /// Whether `at` lies beneath a link the root holds (then it is what the link leads to).
    fn through_link(&self, at: &Path) -> bool {
        at.ancestors()
            .skip(1)
            .any(|ancestor| self.links.contains(ancestor))
    }

    /// Makes the folders above `at` (not `at` itself); false when `at` cannot be shown (it
    /// lies beneath a link).
    fn parents(&mut self, at: &Path) -> bool {
        if self.through_link(at) {
            return false;
        }
        let mut missing: Vec<PathBuf> = Vec::new();
        for ancestor in at.ancestors().skip(1) {
            if ancestor == Path::new("/")
                || self.made.contains(ancestor)
                || self.in_bound_tree(ancestor)
                || self.bound_trees.contains(ancestor)
            {
                break;
            }
            missing.push(ancestor.to_path_buf());
        }
        for folder in missing.into_iter().rev() {
            self.steps
                .push(RootStep::Folder(self.under_staging(&folder)));
            self.made.insert(folder);
        }
        true
    }

    fn folder(&mut self, at: &Path) {
        if self.parents(at) && !self.made.contains(at) && !self.in_bound_tree(at) {
            self.steps.push(RootStep::Folder(self.under_staging(at)));
            self.made.insert(at.to_path_buf());
        }
    }

    /// A host path shown at the same path: a link as a link, a folder or file bound.
    fn show_host(&mut self, path: &Path) {
        if path
            .ancestors()
            .any(|ancestor| self.host_trees.contains(ancestor))
        {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if let Ok(text) = std::fs::read_link(path) {
                self.link(path, &text);
            }
            return;
        }
        use std::os::unix::fs::FileTypeExt;
        let device = meta.file_type().is_char_device();
        if meta.is_dir() || meta.is_file() || device {
            self.bind(path, path, if device { DEVICE } else { READ_ONLY }, true);
            if meta.is_dir() {
                self.host_trees.insert(path.to_path_buf());
            }
        }
    }

    /// Binds `source` (a host path) at `at`; `tree` counts it as a bound tree (what lies in it
    /// exists).
    fn bind(&mut self, at: &Path, source: &Path, attributes: u64, tree: bool) {
        let Ok(meta) = std::fs::metadata(source) else {
            return;
        };
        if !self.parents(at) {
            return;
        }
        let inside_bound = self.in_bound_tree(at);
        if meta.is_dir() {
            if !inside_bound && !self.made.contains(at) {
                self.steps.push(RootStep::Folder(self.under_staging(at)));
                self.made.insert(at.to_path_buf());
            }
            if tree {
                self.bound_trees.insert(at.to_path_buf());
            }
        } else if !inside_bound {
            self.steps.push(RootStep::File(self.under_staging(at)));
        }
        self.steps.push(RootStep::Bind {
            source: c(source),
            target: self.under_staging(at),
            attributes,
        });
    }

    /// Binds the folder the copy held (`Layout::held`) at `at`, its own path.
    fn bind_held(&mut self, at: &Path, identity: FolderIdentity, attributes: u64) {
        if !self.parents(at) {
            return;
        }
        if !self.in_bound_tree(at) && !self.made.contains(at) {
            self.steps.push(RootStep::Folder(self.under_staging(at)));
            self.made.insert(at.to_path_buf());
        }
        self.bound_trees.insert(at.to_path_buf());
        self.steps.push(RootStep::BindHeld {
            source: c(at),
            identity,
            target: self.under_staging(at),
            attributes,
        });
    }

    fn link(&mut self, at: &Path, text: &Path) {
        if self.in_bound_tree(at) || self.bound_trees.contains(at) || !self.parents(at) {
            return;
        }
        self.steps.push(RootStep::Link {
            text: c(text),
            at: self.under_staging(at),
        });
        self.links.insert(at.to_path_buf());
    }

    fn tmpfs(&mut self, at: &Path, options: CString) {
        self.folder(at);
        if self.made.contains(at) {
            self.steps.push(RootStep::Tmpfs {
                target: self.under_staging(at),
                options,
            });
        }
    }

    fn write(&mut self, at: &Path, bytes: Vec<u8>) {
        if self.parents(at) && !self.in_bound_tree(at) {
            self.steps.push(RootStep::Write {
                target: self.under_staging(at),
                bytes,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(plan: &RootPlan, staging: &Path) -> Vec<String> {
        let strip = |text: &CString| {
            let text = text.to_string_lossy().into_owned();
            text.strip_prefix(&*staging.to_string_lossy())
                .map(str::to_owned)
                .unwrap_or(text)
        };
        plan.steps
            .iter()
            .map(|step| match step {
                RootStep::Folder(p) => format!("folder {}", strip(p)),
                RootStep::File(p) => format!("file {}", strip(p)),
                RootStep::Bind { source, target, .. } => {
                    format!("bind {} {}", source.to_string_lossy(), strip(target))
                }
                RootStep::BindHeld {
                    source,
                    identity,
                    target,
                    ..
                } => format!(
                    "bind held {}:{} {} {}",
                    identity.device,
                    identity.inode,
                    source.to_string_lossy(),
                    strip(target)
                ),
                RootStep::Link { text, at } => {
                    format!("link {} -> {}", strip(at), text.to_string_lossy())
                }
                RootStep::Tmpfs { target, .. } => format!("tmpfs {}", strip(target)),
                RootStep::Write { target, .. } => format!("write {}", strip(target)),
            })
            .collect()
    }

    /// The steps, as `described`, of the plan for a box showing `bound` and `copies` with its
    /// writable folder at `work`, staged in `host`'s `root`; the host's `/proc` bound when
    /// `proc`. The owner, the user and the disk do not change the steps.
    fn planned(
        host: &Path,
        bound: &[PathBuf],
        copies: &[(PathBuf, PathBuf)],
        work: &str,
        proc: bool,
    ) -> Vec<String> {
        planned_holding(host, bound, copies, &[], work, proc)
    }

    /// `planned`, with folders of the copies held.
    fn planned_holding(
        host: &Path,
        bound: &[PathBuf],
        copies: &[(PathBuf, PathBuf)],
        held: &[(PathBuf, FolderIdentity)],
        work: &str,
        proc: bool,
    ) -> Vec<String> {
        let staging = host.join("root");
        let plan = RootPlan::new(&Layout {
            bound,
            copies,
            held,
            work: Path::new(work),
            staging: &staging,
            disk: 1 << 20,
            owner: (61000, 61000),
            user: (61000, 61000),
            proc,
        });
        described(&plan, &staging)
    }

    #[test]
    fn folders_come_before_what_they_hold_and_nothing_is_made_in_a_bound_tree() {
        let host = tempfile::tempdir().unwrap();
        let tree = host.path().join("prefix");
        std::fs::create_dir_all(tree.join("lib/python")).unwrap();
        std::fs::write(tree.join("lib/python/x.py"), "").unwrap();
        let copy = host.path().join("copy");
        std::fs::create_dir_all(&copy).unwrap();
        let bound = [tree.clone(), tree.join("lib/python")];
        let copies = [(tree.join("lib"), copy.clone())];
        let steps = planned(host.path(), &bound, &copies, "/tmp/dlqspec-box-1-x", true);
        let at = |wanted: &str| {
            steps
                .iter()
                .position(|s| s == wanted)
                .unwrap_or_else(|| panic!("no `{wanted}` in {steps:#?}"))
        };
        let prefix = tree.to_string_lossy().into_owned();
        // The bound tree's parents are made, then it is bound; the path inside it is not bound
        // again, and the copy inside it is mounted where the tree has the folder already.
        assert!(at(&format!("folder {prefix}")) < at(&format!("bind {prefix} {prefix}")));
        assert!(
            !steps
                .iter()
                .any(|s| s == &format!("bind {prefix}/lib/python {prefix}/lib/python"))
        );
        assert!(!steps.iter().any(|s| s == &format!("folder {prefix}/lib")));
        at(&format!("bind {} {prefix}/lib", copy.display()));
        at("write /etc/passwd");
        at("link /dev/fd -> /proc/self/fd");
        at("tmpfs /dev/shm");
        at("bind /proc /proc");
        at("tmpfs /tmp/dlqspec-box-1-x");
        assert!(at("folder /tmp") < at("folder /tmp/dlqspec-box-1-x"));
    }

    #[test]
    fn a_package_held_by_a_copy_is_bound_over_its_empty_folder_from_its_identity() {
        let host = tempfile::tempdir().unwrap();
        let project = host.path().join("project");
        std::fs::create_dir_all(project.join("node_modules/tsx")).unwrap();
        let copy = host.path().join("copy");
        std::fs::create_dir_all(copy.join("node_modules")).unwrap();
        let modules = project.join("node_modules");
        let identity = FolderIdentity {
            device: 7,
            inode: 42,
        };
        let copies = [(project.clone(), copy.clone())];
        // The host's path at the same place loses to the held folder.
        let steps = planned_holding(
            host.path(),
            std::slice::from_ref(&modules),
            &copies,
            &[(modules.clone(), identity)],
            "/w",
            false,
        );
        let project = project.display();
        let copy_bind = steps
            .iter()
            .position(|s| s == &format!("bind {} {project}", copy.display()))
            .unwrap_or_else(|| panic!("{steps:#?}"));
        let package = steps
            .iter()
            .position(|s| {
                s == &format!("bind held 7:42 {project}/node_modules {project}/node_modules")
            })
            .unwrap_or_else(|| panic!("{steps:#?}"));
        assert!(copy_bind < package, "{steps:#?}");
        // Never by its path alone, and nothing is made in the copy, which holds the folder to
        // mount on.
        assert!(
            !steps.iter().any(|s| s.starts_with("bind ")
                && s.ends_with("node_modules")
                && !s.contains("held")),
            "{steps:#?}"
        );
        assert!(
            !steps
                .iter()
                .any(|s| s == &format!("folder {project}/node_modules"))
        );
    }

    /// Runs `build`'s held bind of `source` on `target` in a child of its own mount
    /// namespace, which the kernel lets root make; its error number, 0 when it bound, `None`
    /// where the child cannot have a mount namespace (not root).
    fn held_bind_in_child(source: &Path, identity: FolderIdentity, target: &Path) -> Option<i32> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let (source, target) = (c(source), c(target));
        // SAFETY: the child makes raw system calls only, then leaves with _exit.
        unsafe {
            let child = libc::fork();
            assert!(child >= 0);
            if child == 0 {
                let code =
                    if libc::unshare(libc::CLONE_NEWNS) != 0 || keep_mounts_private().is_err() {
                        255
                    } else {
                        match bind_held(&source, identity, &target, READ_ONLY) {
                            Ok(()) => 0,
                            Err(error) => error.raw_os_error().unwrap_or(254),
                        }
                    };
                libc::_exit(code);
            }
            let mut status = 0;
            assert_eq!(libc::waitpid(child, &mut status, 0), child);
            assert!(libc::WIFEXITED(status));
            let code = libc::WEXITSTATUS(status);
            (code != 255).then_some(code)
        }
    }

    #[test]
    fn a_held_bind_binds_only_the_folder_it_was_given() {
        use std::os::unix::fs::MetadataExt;
        let host = tempfile::tempdir().unwrap();
        let modules = host.path().join("node_modules");
        std::fs::create_dir_all(&modules).unwrap();
        let target = host.path().join("target");
        std::fs::create_dir_all(&target).unwrap();
        let meta = std::fs::metadata(&modules).unwrap();
        let identity = FolderIdentity {
            device: meta.dev(),
            inode: meta.ino(),
        };
        let Some(code) = held_bind_in_child(&modules, identity, &target) else {
            return;
        };
        assert_eq!(code, 0, "the folder itself is bound");
        // Another folder at its path: refused before anything is bound.
        std::fs::rename(&modules, host.path().join("was")).unwrap();
        std::fs::create_dir_all(&modules).unwrap();
        assert_eq!(
            held_bind_in_child(&modules, identity, &target),
            Some(libc::ESTALE)
        );
        // A link to it at its path: never followed, even to the very folder.
        std::fs::remove_dir(&modules).unwrap();
        std::os::unix::fs::symlink(host.path().join("was"), &modules).unwrap();
        assert_eq!(
            held_bind_in_child(&modules, identity, &target),
            Some(libc::ENOTDIR)
        );
    }

    #[test]
    fn nothing_is_made_beneath_a_link() {
        let host = tempfile::tempdir().unwrap();
        let target = host.path().join("real");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        let link = host.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let bound = [link.clone(), link.join("inside")];
        let steps = planned(host.path(), &bound, &[], "/w", false);
        assert!(steps.contains(&format!("link {} -> {}", link.display(), target.display())));
        assert!(
            !steps
                .iter()
                .any(|s| s.contains(&*link.join("inside").to_string_lossy()))
        );
    }
}
