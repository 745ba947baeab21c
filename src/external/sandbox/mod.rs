//! The box around every implementation process (Linux): a container of its own, set up in the
//! child before exec (docs/security.md).
//!
//! Everything that allocates is prepared in the parent, before fork (`prepare`): the copy of
//! the implementation's own files, the plan of its minimal root, the maps of its user
//! namespace, its cgroups, the Landlock ruleset (an inherited descriptor), the system-call
//! filter. The child then makes only raw system calls (`enter`), in three processes:
//! - A, the spawned child: joins the box's cgroups, builds the minimal root in a mount
//!   namespace of its own and pivots into it (as root, in dlqspec's user namespace, so the
//!   interpreter is found wherever it lies; otherwise in a user namespace of its own), clones
//!   B into fresh user, PID, mount, network, IPC, UTS and cgroup namespaces, writes B's user
//!   namespace maps (the box's one unprivileged uid and gid, nothing else), then closes every
//!   descriptor and exits as C did (same code, same signal), which dlqspec reads;
//! - B, process 1 of the new PID namespace: mounts a fresh `/proc` over the host's, forks C,
//!   reaps every process of the namespace and leaves when C ends, which ends every process
//!   left in it;
//! - C: takes the box's uid with no group and no capability, joins a fresh session keyring,
//!   sets no_new_privs, enters the Landlock domain, installs the system-call filter last, and
//!   execs the implementation.
//!
//! Where the kernel cannot make the container (no user namespaces, no mount API), the box is
//! Landlock, the filter and the limits only; what is missing is said once, one line each.

#[cfg(target_os = "linux")]
mod cgroups;
mod cleanup;
mod exposure;
mod features;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod privileges;
#[cfg(target_os = "linux")]
mod raw;
#[cfg(target_os = "linux")]
mod root;
#[cfg(target_os = "linux")]
pub(crate) mod seccomp;
#[cfg(target_os = "linux")]
pub(crate) mod warm;

pub(crate) use cleanup::{BoxesFolder, remove_on_interrupt};
pub(crate) use exposure::{
    SUBMISSION_VARIABLE, blocked_for_others, blocked_in_box, exposure, locate, readable_paths,
};
pub(crate) use features::{Protection, features, warnings};
#[cfg(target_os = "linux")]
use features::{clone_into_box, own_namespace};

use std::ffi::{CString, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::limits::Limits;

/// Whether implementations run in the box: a limit of an implementation, kept with the
/// others (`limits`).
pub(crate) use super::limits::Sandbox;

/// The environment variable `grade` sets for each of its runs: the uid that run's
/// implementation gets when dlqspec runs as root (one per submission).
pub(crate) const UID_VARIABLE: &str = "DLQSPEC_SANDBOX_UID";

/// The uid an implementation gets under a root dlqspec that was given none (`nobody`).
const DEFAULT_UID: u32 = 65534;

/// The first uid `grade` hands its submissions, one each from here.
pub(crate) const GRADE_FIRST_UID: u32 = 61000;

/// How many uids `grade` hands out from `GRADE_FIRST_UID` (the index of a submission in its
/// class, modulo this).
pub(crate) const GRADE_UIDS: u32 = 1_000_000;

/// Every uid dlqspec gives a box as root: `grade`'s, which hold `DEFAULT_UID` too. A warm
/// child is started only as one of these.
pub(crate) const BOX_UIDS: std::ops::Range<u32> = GRADE_FIRST_UID..GRADE_FIRST_UID + GRADE_UIDS;
const _: () = assert!(DEFAULT_UID >= BOX_UIDS.start && DEFAULT_UID < BOX_UIDS.end);

/// The name a box gives its host (its own UTS namespace): nothing of the machine's.
#[cfg(target_os = "linux")]
const HOSTNAME: &[u8] = b"dlqspec-box";

/// The variables an implementation sees of dlqspec's environment (besides its own `HOME`,
/// `TMPDIR`, `TMP`, `TEMP` and the tree mark): what interpreters need to start, no more.
const PASSED_VARIABLES: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "NODE_PATH",
];

/// The variables an implementation sees: those of `PASSED_VARIABLES` and the locale's `LC_*`
/// that `lookup` has, then the private folder as its home and temporary folder.
pub(crate) fn environment(
    all: impl IntoIterator<Item = (OsString, OsString)>,
    private: &Path,
) -> Vec<(OsString, OsString)> {
    let mut kept: Vec<(OsString, OsString)> = all
        .into_iter()
        .filter(|(name, _)| {
            name.to_str().is_some_and(|name| {
                PASSED_VARIABLES.contains(&name)
                    || (name.starts_with("LC_")
                        && name[3..]
                            .bytes()
                            .all(|b| b.is_ascii_uppercase() || b == b'_'))
            })
        })
        .collect();
    for name in ["HOME", "TMPDIR", "TMP", "TEMP"] {
        kept.push((name.into(), private.as_os_str().to_owned()));
    }
    kept
}

/// The uid the last implementation got as root, and, where it kept uid 0 (no container, and an
/// interpreter out of reach of other uids), the path that uid cannot reach. `smoke` says it.
static LAST_USER: std::sync::Mutex<Option<(u32, Option<PathBuf>)>> = std::sync::Mutex::new(None);

/// One line saying which uid the last implementation started as root ran as, and why it kept
/// uid 0 when it did.
pub(crate) fn last_user() -> Option<(bool, String)> {
    let (uid, blocked) = LAST_USER.lock().ok()?.clone()?;
    Some(match blocked {
        None => (
            true,
            format!("user: the implementation ran as uid {uid}, unprivileged"),
        ),
        Some(blocked) => (
            false,
            format!(
                "user: uid 0 without capabilities, not uid {uid}: uid {uid} cannot reach {}",
                blocked.display()
            ),
        ),
    })
}

/// What the child does before exec to enter the box: plain data, ready before fork.
#[cfg(target_os = "linux")]
#[derive(Clone)]
pub(crate) struct BoxEntry {
    /// The container's parts; `None` where the kernel cannot make one.
    container: Option<Container>,
    /// The `cgroup.procs` files A writes itself into.
    cgroup_procs: Vec<CString>,
    /// The uid and gid C takes (as the box's user namespace names them).
    user: Option<(u32, u32)>,
    /// Whether C clears its supplementary groups (as root; a namespace an unprivileged user
    /// made denies `setgroups`, and the groups it keeps reach nothing in the minimal root).
    clear_groups: bool,
    ruleset: Option<libc::c_int>,
    new_mounts: landlock::RulesForNewMounts,
    filter: seccomp::SyscallFilter,
    /// Where dlqspec's argv and environment strings are: B, a copy of dlqspec that any
    /// process of the namespace can see as `/proc/1`, blanks them.
    shown_areas: [(usize, usize); 2],
    /// `RLIMIT_NPROC` (`--processes`), which A sets once it has a user namespace of its own
    /// (`limit_processes`).
    processes: Option<libc::rlimit>,
}

/// The container's parts.
#[cfg(target_os = "linux")]
#[derive(Clone)]
struct Container {
    plan: root::RootPlan,
    /// As an unprivileged user, the user namespace A builds the root in (its own uid mapped).
    own_namespace: Option<privileges::Maps>,
    /// The maps of B's user namespace: the box's uid and gid only.
    box_maps: privileges::Maps,
    /// Whether B mounts a fresh `/proc` (A bound the host's for it to cover).
    proc: bool,
}

/// What the parent holds for one boxed implementation while it runs: the Landlock ruleset
/// (the child's copy is inherited), its private folder (with the copies it shows), its
/// cgroups (emptied and removed when the implementation has ended).
pub(crate) struct PreparedBox {
    #[cfg(target_os = "linux")]
    entry: BoxEntry,
    /// The copies of the implementation's files it shows, made once for every box of the run.
    #[cfg(target_os = "linux")]
    copies: Vec<std::sync::Arc<exposure::SharedCopy>>,
    #[cfg(target_os = "linux")]
    _ruleset: Option<std::os::fd::OwnedFd>,
    #[cfg(target_os = "linux")]
    cgroups: Option<cgroups::BoxCgroups>,
    /// Its number among the live boxes, let go when it is dropped.
    _live: cleanup::LiveBox,
    _private: tempfile::TempDir,
    /// The lock that tells other dlqspecs the private folder is in use; declared last, so it
    /// is let go only once the folder is removed.
    _claim: std::fs::File,
}

impl PreparedBox {
    #[cfg(target_os = "linux")]
    pub(crate) fn entry(&self) -> BoxEntry {
        self.entry.clone()
    }

    /// What keeps this box's copies alive once it is gone: the next box of the same
    /// implementation (a restart) then shows the same copy, not a new one.
    pub(crate) fn copies(&self) -> CopiesKept {
        CopiesKept {
            #[cfg(target_os = "linux")]
            _copies: self.copies.clone(),
        }
    }

    /// Why the box could not be entered, when a folder it binds from a copy's walk (a
    /// `node_modules`) is no longer at its path: replaced, perhaps by a link, after the copy.
    /// The box then refused to bind it (`ESTALE`, `ENOTDIR`); this says so in words.
    pub(crate) fn changed_since_copied(&self) -> Option<String> {
        #[cfg(target_os = "linux")]
        return self
            .copies
            .iter()
            .flat_map(|copy| copy.node_modules.iter())
            .find_map(|folder| folder.still_there().err())
            .map(|error| error.to_string());
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Whether the box's memory cgroup killed one of its processes (`--memory`).
    pub(crate) fn killed_for_memory(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self
            .cgroups
            .as_ref()
            .is_some_and(cgroups::BoxCgroups::killed_for_memory);
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// What a warm child needs of this box besides what its B hands over: the uid and the
    /// system-call filter (as the kernel reads it), when the box has every part: a container,
    /// a Landlock ruleset, a pids cgroup, a root dlqspec (which gives the zygote the rights to
    /// join it) and a uid of its own. `None` otherwise: that start is cold.
    #[cfg(target_os = "linux")]
    pub(super) fn warm_parts(&self) -> Option<(u32, Vec<u8>)> {
        let entry = &self.entry;
        if !features().root
            || entry.container.is_none()
            || entry.cgroup_procs.is_empty()
            || entry.ruleset.is_none()
        {
            return None;
        }
        Some((entry.user?.0, entry.filter.bytes()))
    }
}

/// The copies a box showed, kept by its implementation across restarts.
#[derive(Default)]
pub(crate) struct CopiesKept {
    #[cfg(target_os = "linux")]
    _copies: Vec<std::sync::Arc<exposure::SharedCopy>>,
}

/// Prepares the box for an implementation's program and arguments: the command to start
/// (its standard streams still to set) with a private folder as its home, temporary folder
/// and working folder, an environment of the allowlist, and the program and arguments that
/// name paths made absolute; and what the child enters.
#[expect(
    clippy::disallowed_methods,
    reason = "starts a process: the command that starts an implementation in its box"
)]
pub(crate) fn prepare(
    program: &str,
    args: &[String],
    limits: &Limits,
) -> io::Result<(Command, PreparedBox)> {
    let cwd = std::env::current_dir()?;
    let temp = std::env::temp_dir();
    #[cfg(target_os = "linux")]
    {
        let hierarchies = &features().cgroups;
        let mut stale: Vec<&Path> = vec![&temp];
        stale.extend(hierarchies.pids.as_deref());
        stale.extend(hierarchies.memory.as_deref());
        stale.extend(hierarchies.cpu.as_deref());
        cleanup::remove_stale(&stale);
    }
    #[cfg(not(target_os = "linux"))]
    cleanup::remove_stale(&[&temp]);
    let (private, claim) = cleanup::claimed_private()?;
    let env_path = std::env::var_os("PATH");
    let located = locate(program, env_path.as_deref(), &cwd);
    // Paths are made absolute: the implementation's working folder is its private folder.
    let absolute = |word: &String| -> Option<PathBuf> {
        let path = Path::new(word);
        (!word.is_empty() && !word.starts_with('-') && cwd.join(path).exists())
            .then(|| cwd.join(path))
    };
    let named: Vec<PathBuf> = args.iter().filter_map(absolute).collect();
    // Found here, not by exec's search of PATH: in the box, a folder of PATH it may not read
    // would turn "no such program" into "permission denied".
    let Some(found) = &located else {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    };
    let mut rebuilt = Command::new(found);
    {
        use std::os::unix::process::CommandExt;
        rebuilt.arg0(program);
    }
    rebuilt.args(
        args.iter()
            .map(|arg| absolute(arg).map_or_else(|| arg.into(), PathBuf::into_os_string)),
    );
    let mut variables = environment(std::env::vars_os(), private.path());
    // pyenv finds its root from HOME, which is now the private folder.
    let pyenv = found
        .parent()
        .filter(|folder| folder.ends_with(".pyenv/shims"))
        .and_then(Path::parent);
    if let Some(pyenv) = pyenv
        && !variables.iter().any(|(name, _)| name == "PYENV_ROOT")
    {
        variables.push(("PYENV_ROOT".into(), pyenv.as_os_str().to_owned()));
    }
    rebuilt
        .env_clear()
        .envs(variables)
        .current_dir(private.path());
    let prepared = platform_prepare(private, claim, found, named, limits)?;
    Ok((rebuilt, prepared))
}

#[cfg(not(target_os = "linux"))]
fn platform_prepare(
    private: tempfile::TempDir,
    claim: std::fs::File,
    _program: &Path,
    _named: Vec<PathBuf>,
    _limits: &Limits,
) -> io::Result<PreparedBox> {
    Ok(PreparedBox {
        _live: cleanup::LiveBox::register(Vec::new(), private.path().to_path_buf()),
        _private: private,
        _claim: claim,
    })
}

/// The uid a root dlqspec gives this box: the one `grade` chose, else `nobody`.
#[cfg(target_os = "linux")]
fn wanted_uid() -> u32 {
    std::env::var(UID_VARIABLE)
        .ok()
        .and_then(|text| text.parse::<u32>().ok())
        .filter(|uid| *uid != 0)
        .unwrap_or(DEFAULT_UID)
}

#[cfg(target_os = "linux")]
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: the box's own private folder is handed to the box's uid"
)]
fn platform_prepare(
    private: tempfile::TempDir,
    claim: std::fs::File,
    program: &Path,
    named: Vec<PathBuf>,
    limits: &Limits,
) -> io::Result<PreparedBox> {
    let features = features();
    let mut needed: Vec<PathBuf> = vec![program.to_path_buf()];
    needed.extend(std::fs::canonicalize(program));
    let mut shared = Vec::new();
    let (container, user, clear_groups, readable, writable) = if features.container {
        let shown = exposure(program, &named);
        let bound = shown.bound;
        let mut copies = Vec::new();
        let mut held = Vec::new();
        // Made once for every box of this run (exposure::shared_copy), held while one lives.
        for original in &shown.copied {
            let copy = exposure::shared_copy(original).map_err(|error| {
                io::Error::other(format!(
                    "cannot copy {} into the box: {error}",
                    original.display()
                ))
            })?;
            held.extend(
                copy.node_modules
                    .iter()
                    .map(|folder| (folder.path.clone(), folder.identity)),
            );
            copies.push((original.clone(), copy.into.clone()));
            shared.push(copy);
        }
        let staging = private.path().join("root");
        std::fs::create_dir(&staging)?;
        // SAFETY: getuid and getgid have no preconditions.
        let (own_uid, own_gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let (uid, gid) = if features.root {
            let uid = wanted_uid();
            // In the minimal root, the folders above what is bound are the root's own: only
            // the interpreter's own mode bits can keep the box's uid out.
            if let Some(blocked) = exposure::blocked_in_box(&needed) {
                return Err(io::Error::other(format!(
                    "the box's uid {uid} cannot run {}: its mode bits let no other user read and run {}; make it so (chmod o+rx), or name another interpreter (DLQSPEC_PYTHON, DLQSPEC_NODE)",
                    program.display(),
                    blocked.display()
                )));
            }
            if let Ok(mut last) = LAST_USER.lock() {
                *last = Some((uid, None));
            }
            (uid, uid)
        } else {
            (own_uid, own_gid)
        };
        let plan = root::RootPlan::new(&root::Layout {
            bound: &bound,
            copies: &copies,
            held: &held,
            work: private.path(),
            staging: &staging,
            disk: limits.disk.unwrap_or(u64::MAX >> 1),
            owner: (uid, gid),
            user: (uid, gid),
            proc: features.proc,
        });
        let mut readable = bound.clone();
        readable.extend(copies.iter().map(|(_, copy)| copy.clone()));
        let container = Container {
            plan,
            own_namespace: (!features.root)
                .then(|| privileges::Maps::identity(own_uid, own_gid, true)),
            box_maps: privileges::Maps::identity(uid, gid, !features.root),
            proc: features.proc,
        };
        let user = features.root.then_some((uid, gid));
        (Some(container), user, features.root, readable, None)
    } else {
        let readable = readable_paths(program, &named);
        let mut user = None;
        if features.root {
            let uid = wanted_uid();
            needed.extend(named.iter().cloned());
            let blocked = blocked_for_others(&needed);
            if blocked.is_none() {
                std::os::unix::fs::chown(private.path(), Some(uid), Some(uid))?;
                user = Some((uid, uid));
            }
            if let Ok(mut last) = LAST_USER.lock() {
                *last = Some((uid, blocked));
            }
        }
        (None, user, features.root, readable, Some(private.path()))
    };
    let ruleset = if features.landlock >= 1 {
        Some(
            landlock::box_ruleset(features.landlock, &readable, writable)
                .map_err(|error| io::Error::other(format!("the box's Landlock rules: {error}")))?,
        )
    } else {
        None
    };
    let cgroups = if features.root {
        Some(cgroups::BoxCgroups::make(
            &features.cgroups,
            &cleanup::own_prefix(),
            limits.processes,
            limits.memory,
        )?)
    } else {
        None
    };
    let filter = if features.seccomp {
        seccomp::SyscallFilter::for_box(!features.memory_cgroup())
    } else {
        seccomp::SyscallFilter::for_box(false).disabled()
    };
    use std::os::fd::AsRawFd;
    let entry = BoxEntry {
        container,
        cgroup_procs: cgroups
            .as_ref()
            .map(|c| c.procs.clone())
            .unwrap_or_default(),
        user,
        clear_groups,
        ruleset: ruleset.as_ref().map(AsRawFd::as_raw_fd),
        new_mounts: landlock::RulesForNewMounts::for_abi(features.landlock.max(1)),
        filter,
        shown_areas: shown_areas(),
        processes: None,
    };
    let live_folders = cgroups
        .as_ref()
        .map(|c| c.folders().to_vec())
        .unwrap_or_default();
    Ok(PreparedBox {
        entry,
        copies: shared,
        _ruleset: ruleset,
        cgroups,
        _live: cleanup::LiveBox::register(live_folders, private.path().to_path_buf()),
        _private: private,
        _claim: claim,
    })
}

#[cfg(target_os = "linux")]
impl BoxEntry {
    /// The process count (`RLIMIT_NPROC`) A sets once the box's user namespaces are its own.
    /// The kernel counts a user's processes in every user namespace up from a process's own,
    /// each level against the limit its creator had when it made the next: set before A's own
    /// namespace (as an ordinary user), it would bound every process of the user on the
    /// machine together, each box's and dlqspec's own, so that one submission's processes
    /// were counted against a classmate's; set after, it bounds this box alone.
    pub(crate) fn limit_processes(&mut self, limit: Option<libc::rlimit>) {
        self.processes = limit;
    }

    /// A's part of a container: joins the cgroups, builds the minimal root in a mount namespace
    /// of its own (in a user namespace of its own first, when not root) and pivots into it.
    /// Returns a descriptor of the host's `/proc`, opened before, through which A writes B's
    /// maps; `None` when there is no container (then nothing was done but the cgroups).
    ///
    /// # Safety
    /// Raw, async-signal-safe system calls only, on memory prepared before the fork.
    unsafe fn build_container(&self) -> io::Result<Option<libc::c_int>> {
        unsafe {
            for procs in &self.cgroup_procs {
                if !raw::write_file(procs, b"0") {
                    return Err(raw::last_error());
                }
            }
            let Some(container) = &self.container else {
                return Ok(None);
            };
            let proc = libc::open(
                c"/proc".as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if proc < 0 {
                return Err(raw::last_error());
            }
            let unshared = match &container.own_namespace {
                Some(maps) => own_namespace(maps),
                None => libc::unshare(libc::CLONE_NEWNS) == 0,
            };
            if !unshared {
                return Err(raw::last_error());
            }
            container.plan.build()?;
            Ok(Some(proc))
        }
    }

    /// Writes B's maps (A, after cloning B), through the host `/proc` descriptor `proc`.
    ///
    /// # Safety
    /// Raw system calls only.
    unsafe fn write_box_maps(&self, proc: libc::c_int, b: libc::pid_t) -> bool {
        match &self.container {
            Some(container) => unsafe { container.box_maps.write_for(proc, b) },
            None => false,
        }
    }
}

/// How the box's A reads the status its B sent: C's wait status.
#[cfg(target_os = "linux")]
const STATUS_BYTES: usize = std::mem::size_of::<libc::c_int>();

/// Enters the box, in the child between fork and exec (see the module's comment): A builds
/// the root and clones B, B forks C (or, given `warm`, has the zygote start the
/// implementation) and reaps, C drops its privileges and restricts itself; only C returns, to
/// exec.
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory `entry` prepared before the fork.
#[cfg(target_os = "linux")]
pub(crate) unsafe fn enter(entry: &BoxEntry, warm: Option<&warm::WarmRequest>) -> io::Result<()> {
    unsafe {
        // A warm B hands the zygote's child the cgroups to join, which the minimal root no
        // longer shows: opened here, before A leaves the host's view.
        let mut procs = [-1; warm::CGROUPS];
        if warm.is_some() {
            for (fd, path) in procs.iter_mut().zip(entry.cgroup_procs.iter().cycle()) {
                *fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            }
        }
        let built = entry.build_container()?;
        if let Some(limit) = &entry.processes
            && libc::setrlimit(libc::RLIMIT_NPROC, limit) != 0
        {
            return Err(raw::last_error());
        }
        if let Some(proc) = built {
            let mut sync = [0; 2];
            let mut status_pipe = [0; 2];
            if libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) != 0
                || libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0
            {
                return Err(raw::last_error());
            }
            let [sync_read, sync_write] = sync;
            let [read_end, write_end] = status_pipe;
            let b = clone_into_box();
            if b < 0 {
                return Err(raw::last_error());
            }
            if b > 0 {
                // A: B waits for its maps; without them it is killed and the start fails.
                libc::close(sync_read);
                if !entry.write_box_maps(proc, b) {
                    let error = raw::last_error();
                    libc::kill(b, libc::SIGKILL);
                    let mut status = 0;
                    raw::wait_for(b, &mut status);
                    return Err(error);
                }
                #[expect(
                    clippy::disallowed_methods,
                    reason = "writes to a descriptor: one byte on the sync pipe, once B's maps are written"
                )]
                libc::write(sync_write, b"g".as_ptr().cast(), 1);
                // Nothing of dlqspec's stays open here (its streams, the exec-error pipe).
                raw::close_all_but(read_end);
                let mut status = 0;
                let _ = raw::wait_for(b, &mut status);
                let mut sent = [0u8; STATUS_BYTES];
                let got = libc::read(read_end, sent.as_mut_ptr().cast(), STATUS_BYTES);
                if got == STATUS_BYTES as isize {
                    status = libc::c_int::from_ne_bytes(sent);
                }
                raw::mirror(status);
            }
            // B: process 1 of the namespace, once A has mapped its uid.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::close(sync_write);
            libc::close(proc);
            libc::close(read_end);
            let mut byte = [0u8; 1];
            if raw::read_fully(sync_read, &mut byte) != 1 {
                libc::_exit(125);
            }
            libc::close(sync_read);
            // B is a copy of dlqspec, with the whole suite in its memory (hidden specs too)
            // and the pipe its status goes back on. As an ordinary user it has the box's uid
            // and A made it dumpable to write its maps: no longer, so that its /proc files are
            // not the implementation's (its memory, environment and descriptors), whatever
            // Landlock or Yama hold. The implementation's exec makes C dumpable again.
            if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
                return Err(raw::last_error());
            }
            become_process_one(entry)?;
            if let (Some(warm), Some(ruleset)) = (warm, entry.ruleset)
                && procs.iter().all(|fd| *fd >= 0)
            {
                // Returns only when the zygote could not be asked: then the start is cold.
                warm::serve(warm, ruleset, procs, write_end);
            }
            for fd in procs {
                if fd >= 0 {
                    libc::close(fd);
                }
            }
            #[expect(
                clippy::disallowed_methods,
                reason = "starts a process: the box's process 1 forks the implementation (C)"
            )]
            let c = libc::fork();
            if c < 0 {
                return Err(raw::last_error());
            }
            if c > 0 {
                raw::close_all_but(write_end);
                loop {
                    let mut status = 0;
                    let reaped = libc::waitpid(-1, &mut status, 0);
                    if reaped == c {
                        let bytes = status.to_ne_bytes();
                        #[expect(
                            clippy::disallowed_methods,
                            reason = "writes to a descriptor: the box's status, to the pipe dlqspec reads it from"
                        )]
                        libc::write(write_end, bytes.as_ptr().cast(), STATUS_BYTES);
                        // Process 1 leaving ends every process left in the namespace.
                        libc::_exit(0);
                    }
                    if reaped < 0 && raw::last_error().raw_os_error() != Some(libc::EINTR) {
                        libc::_exit(0);
                    }
                }
            }
            // C.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::close(write_end);
            if let Some(container) = &entry.container
                && libc::chdir(container.plan.work.as_ptr()) != 0
            {
                return Err(raw::last_error());
            }
        }
        restrict_self(entry)
    }
}

/// What every boxed process does last before the implementation runs, cold (C) or warm (the
/// zygote's child does the same in Python): the box's uid without groups or capabilities, a
/// fresh session keyring, no_new_privs, the Landlock domain, the system-call filter last.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
unsafe fn restrict_self(entry: &BoxEntry) -> io::Result<()> {
    unsafe {
        privileges::drop_privileges(entry.user, entry.clear_groups)?;
        privileges::join_fresh_session_keyring()?;
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(raw::last_error());
        }
        if let Some(ruleset) = entry.ruleset {
            landlock::restrict_self(ruleset)?;
        }
        // No descriptor of dlqspec's reaches the implementation but those handed to it: one
        // dlqspec opened without close-on-exec (`watch` had two) is closed by the exec.
        libc::syscall(
            libc::SYS_close_range,
            (super::pipes::CHANNEL_FD + 1) as u32,
            u32::MAX,
            CLOSE_RANGE_CLOEXEC,
        );
        entry.filter.install()
    }
}

/// What process 1 of a box's PID namespace makes of it before the implementation starts, cold
/// (B) or warm (the run's B, before the zygote's child joins it): dlqspec's argv and
/// environment blanked, a fresh `/proc` over the host's, a host name of its own, and the
/// Landlock rules for what the root mounted itself (the whole root to read, the private
/// folder and `/dev/shm` to write).
///
/// # Safety
/// Raw system calls only, on memory `entry` prepared before the fork.
#[cfg(target_os = "linux")]
pub(super) unsafe fn become_process_one(entry: &BoxEntry) -> io::Result<()> {
    unsafe {
        for (start, end) in entry.shown_areas {
            if end > start {
                std::ptr::write_bytes(start as *mut u8, 0, end - start);
            }
        }
        let Some(container) = &entry.container else {
            return Ok(());
        };
        if container.proc
            && libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
        {
            // The host's /proc is never left in view: no box rather than that one.
            return Err(raw::last_error());
        }
        if libc::sethostname(HOSTNAME.as_ptr().cast(), HOSTNAME.len()) != 0 {
            return Err(raw::last_error());
        }
        if let Some(ruleset) = entry.ruleset {
            let rules = entry.new_mounts;
            landlock::allow_beneath(ruleset, c"/", rules.read)?;
            landlock::allow_beneath(ruleset, &container.plan.work, rules.all)?;
            landlock::allow_beneath(ruleset, c"/dev/shm", rules.all)?;
        }
        Ok(())
    }
}

/// The capabilities the zygote keeps (`CAP_SETGID`, `CAP_SETUID`, `CAP_SETPCAP`,
/// `CAP_SYS_CHROOT`, `CAP_SYS_ADMIN`): what its child needs to join a box's namespaces
/// (`setns`). Every other one leaves its bounding set before it starts.
#[cfg(target_os = "linux")]
pub(crate) const ZYGOTE_CAPABILITIES: u64 = 1 << 6 | 1 << 7 | 1 << 8 | 1 << 18 | 1 << 21;

/// The zygote's own box (`zygote`): network and IPC namespaces of its own, a mount namespace
/// in which every file is read-only, a Landlock domain that uses no TCP and signals or
/// reaches no abstract socket outside it, a pids cgroup of its own. Removed (its members
/// killed) when dropped, after the zygote has ended.
#[cfg(target_os = "linux")]
pub(crate) struct ZygoteBox {
    entry: ZygoteEntry,
    _ruleset: Option<std::os::fd::OwnedFd>,
    _cgroups: Option<cgroups::BoxCgroups>,
    _live: cleanup::LiveBox,
}

/// What the zygote's spawned child does before exec (`enter_zygote`): plain data.
#[cfg(target_os = "linux")]
#[derive(Clone)]
pub(crate) struct ZygoteEntry {
    ruleset: Option<libc::c_int>,
    cgroup_procs: Vec<CString>,
}

#[cfg(target_os = "linux")]
impl ZygoteBox {
    /// The zygote's box: at most `processes` processes; `private` is the zygote's own folder,
    /// removed with the cgroup if dlqspec is interrupted.
    pub(crate) fn prepare(processes: Option<u64>, private: &Path) -> Result<ZygoteBox, String> {
        let features = features();
        let ruleset = landlock::zygote_ruleset(features.landlock)?;
        let cgroups = cgroups::BoxCgroups::make(
            &features.cgroups,
            &format!("{}zygote-", cleanup::own_prefix()),
            processes,
            None,
        )
        .map_err(|e| format!("the zygote's cgroup: {e}"))?;
        use std::os::fd::AsRawFd;
        Ok(ZygoteBox {
            entry: ZygoteEntry {
                ruleset: ruleset.as_ref().map(AsRawFd::as_raw_fd),
                cgroup_procs: cgroups.procs.clone(),
            },
            _ruleset: ruleset,
            _live: cleanup::LiveBox::register(cgroups.folders().to_vec(), private.to_path_buf()),
            _cgroups: Some(cgroups),
        })
    }

    pub(crate) fn entry(&self) -> ZygoteEntry {
        self.entry.clone()
    }
}

/// Boxes the zygote (`zygote`), in its spawned child between fork and exec: its own network,
/// IPC and mount namespaces (every mount of this one made read-only), its own pids cgroup,
/// every capability but `ZYGOTE_CAPABILITIES` out of its bounding set, no_new_privs, and its
/// Landlock domain. Its PID namespace stays dlqspec's: a warm child joins the PID namespace of
/// its run's box, which only a process of an ancestor namespace may enter. It never runs
/// student code.
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory `entry` prepared before the fork.
#[cfg(target_os = "linux")]
pub(crate) unsafe fn enter_zygote(entry: &ZygoteEntry) -> io::Result<()> {
    unsafe {
        // The cgroups first: their files are read-only too once the namespace is.
        for procs in &entry.cgroup_procs {
            if !raw::write_file(procs, b"0") {
                return Err(raw::last_error());
            }
        }
        if libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWNS) != 0
            || !root::read_only_everywhere()
        {
            return Err(raw::last_error());
        }
        for capability in 0..64 {
            if ZYGOTE_CAPABILITIES & (1 << capability) == 0 {
                libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
            }
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(raw::last_error());
        }
        if let Some(ruleset) = entry.ruleset {
            landlock::restrict_self(ruleset)?;
        }
        Ok(())
    }
}

/// close_range(2)'s flag that marks the descriptors close-on-exec instead of closing them.
#[cfg(target_os = "linux")]
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;

/// The address ranges of this process's argv and environment strings (fields 48 to 51 of
/// `/proc/self/stat`), or empty ranges when they cannot be read.
#[cfg(target_os = "linux")]
fn shown_areas() -> [(usize, usize); 2] {
    static AREAS: OnceLock<[(usize, usize); 2]> = OnceLock::new();
    *AREAS.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let fields: Vec<usize> = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .map(|f| f.parse().unwrap_or(0))
                    .collect()
            })
            .unwrap_or_default();
        // After the command name, field 3 (the state) is at index 0: field N at N - 3.
        let at = |field: usize| fields.get(field - 3).copied().unwrap_or(0);
        let area = |start: usize, end: usize| {
            let (start, end) = (at(start), at(end));
            if start != 0 && end > start && end - start < (1 << 24) {
                (start, end)
            } else {
                (0, 0)
            }
        };
        [area(48, 49), area(50, 51)]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_the_allowlist_and_the_private_folder() {
        let all = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("LC_lower", "x"),
            ("GITHUB_TOKEN", "secret"),
            ("CI", "true"),
            ("HOME", "/root"),
            ("DLQSPEC_CACHE_DIR", "/cache"),
            ("PYENV_ROOT", "/root/.pyenv"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let kept = environment(all, Path::new("/tmp/box"));
        let kept: Vec<(String, String)> = kept
            .into_iter()
            .map(|(n, v)| (n.into_string().unwrap(), v.into_string().unwrap()))
            .collect();
        let expected = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("PYENV_ROOT", "/root/.pyenv"),
            ("HOME", "/tmp/box"),
            ("TMPDIR", "/tmp/box"),
            ("TMP", "/tmp/box"),
            ("TEMP", "/tmp/box"),
        ]
        .map(|(n, v)| (n.to_owned(), v.to_owned()));
        assert_eq!(kept, expected);
    }
}
