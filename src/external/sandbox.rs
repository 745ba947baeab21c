//! The box around every implementation process (Linux): what a submission may read, write,
//! signal, reach and start, set up in the child before exec (docs/security.md).
//!
//! Everything that allocates is prepared in the parent, before fork (`prepare`): the Landlock
//! ruleset and its rules (an inherited descriptor), the paths and map texts as C strings, the
//! pids cgroup, the private temporary folder. The child then makes only raw system calls
//! (`enter`), in three processes:
//! - A, the spawned child, in dlqspec's process space: joins the pids cgroup, unshares the PID,
//!   mount, network and IPC namespaces (and the user namespace when not root), forks B, closes
//!   every descriptor and exits as C did (same code, same signal), which dlqspec reads;
//! - B, process 1 of the new PID namespace: mounts a fresh `/proc`, forks C, reaps every
//!   process of the namespace and leaves when C ends, which ends every process left in it;
//! - C: drops every privilege (an unprivileged uid when root and that uid reaches what the
//!   implementation needs, else uid 0 with no capability), sets no_new_privs, enters the
//!   Landlock domain, and execs the implementation.
//!
//! What the kernel lacks is said once, in one line each, and the rest still holds.

use std::ffi::{CString, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether implementations run in the box (`--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sandbox {
    /// Every implementation process runs in the box.
    On,
    /// No box: the implementation runs with dlqspec's rights (for debugging only; unsafe for
    /// grading).
    Off,
}

/// The most processes and threads one implementation may have at once, by default: Node runs
/// about 11 threads, tsx with esbuild some 30, Python one per thread it starts.
pub const DEFAULT_PROCESSES: u64 = 256;

/// The environment variable `grade` sets for each of its runs: the uid that run's
/// implementation gets when dlqspec runs as root (one per submission).
pub const UID_VARIABLE: &str = "DLQSPEC_SANDBOX_UID";

/// The uid an implementation gets under a root dlqspec that was given none (`nobody`).
const DEFAULT_UID: u32 = 65534;

/// The first uid `grade` hands its submissions, one each from here.
pub const GRADE_FIRST_UID: u32 = 61000;

/// How many uids `grade` hands out from `GRADE_FIRST_UID` (the index of a submission in its
/// class, modulo this).
pub const GRADE_UIDS: u32 = 1_000_000;

/// Every uid dlqspec gives a box as root: `grade`'s, which hold `DEFAULT_UID` too. A warm
/// child is started only as one of these.
pub const BOX_UIDS: std::ops::Range<u32> = GRADE_FIRST_UID..GRADE_FIRST_UID + GRADE_UIDS;
const _: () = assert!(DEFAULT_UID >= BOX_UIDS.start && DEFAULT_UID < BOX_UIDS.end);

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
pub fn environment(
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

/// What the kernel of this machine lets the box do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    /// The Landlock ABI version, 0 without Landlock.
    pub landlock: i32,
    /// Whether the PID, mount, network and IPC namespaces can be made.
    pub namespaces: bool,
    /// Where a pids cgroup can be made for each implementation (root only).
    pub pids_cgroup: Option<PathBuf>,
    /// Whether dlqspec runs as root (then the implementation gets another uid).
    pub root: bool,
}

/// One protection of the box, and whether this machine gives it.
#[derive(Debug, Clone)]
pub struct Protection {
    pub held: bool,
    /// What it is, when held; what a submission can do, when not.
    pub text: String,
}

impl Features {
    /// Each protection: held or, when missing, what a submission can do for lack of it.
    pub fn protections(&self) -> Vec<Protection> {
        let landlock = self.landlock;
        let mut list = vec![
            if landlock >= 1 {
                held(format!(
                    "files: reads only the interpreter, system libraries, its own folder and the shims; writes only a private temporary folder (Landlock ABI {landlock})"
                ))
            } else {
                missing(
                    "the box lacks Landlock (Linux 5.13): a submission can read and write whatever its uid can",
                )
            },
            if self.namespaces {
                held(
                    "processes: its own PID namespace and /proc (dlqspec's argv, environment and descriptors out of view; nothing it starts outlives it)",
                )
            } else {
                missing(
                    "the box lacks PID namespaces: a submission can read dlqspec's argv, cwd and environment in /proc, and a daemon it starts lives until dlqspec's sweep finds it",
                )
            },
        ];
        list.push(if self.namespaces || landlock >= 4 {
            held(if self.namespaces {
                "network: none (its own network namespace)".to_owned()
            } else {
                "network: no TCP (Landlock)".to_owned()
            })
        } else {
            missing("the box lacks network namespaces and Landlock TCP rules: a submission can use the network")
        });
        list.push(if self.namespaces || landlock >= 6 {
            held(if landlock >= 6 {
                "signals: none to processes outside the box (Landlock scope and PID namespace)"
                    .to_owned()
            } else {
                "signals: none to processes outside the box (PID namespace)".to_owned()
            })
        } else {
            missing(
                "the box lacks signal scoping (Landlock ABI 6) and PID namespaces: a submission can signal dlqspec",
            )
        });
        list.push(if !self.root || self.pids_cgroup.is_some() {
            held(if self.root {
                "process count: a pids cgroup per implementation (--processes)".to_owned()
            } else {
                "process count: RLIMIT_NPROC (--processes)".to_owned()
            })
        } else {
            missing(
                "the box lacks a writable pids cgroup: as root, a submission that keeps uid 0 can start processes without limit",
            )
        });
        list.push(if self.root {
            held(format!(
                "user: an unprivileged uid ({UID_VARIABLE}, one per submission under grade) where it reaches the interpreter, else uid 0 without capabilities"
            ))
        } else {
            held("user: dlqspec's own uid, without capabilities".to_owned())
        });
        list.push(held(
            "environment: an allowlist (PATH, locale, TZ, interpreter roots) and a private HOME and TMPDIR",
        ));
        list
    }
}

fn held(text: impl Into<String>) -> Protection {
    Protection {
        held: true,
        text: text.into(),
    }
}

fn missing(text: impl Into<String>) -> Protection {
    Protection {
        held: false,
        text: text.into(),
    }
}

/// What this machine's kernel gives the box, found out once per dlqspec process.
pub fn features() -> &'static Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    FEATURES.get_or_init(probe)
}

#[cfg(target_os = "linux")]
fn probe() -> Features {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // SAFETY: the version query of landlock_create_ruleset reads no memory.
    let landlock = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let landlock = i32::try_from(landlock).unwrap_or(0).max(0);
    let maps = maps();
    let namespaces = probe_namespaces(root, &maps);
    let pids_cgroup = if root { probe_pids_cgroup() } else { None };
    Features {
        landlock,
        namespaces,
        pids_cgroup,
        root,
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Features {
    Features {
        landlock: 0,
        namespaces: false,
        pids_cgroup: None,
        root: false,
    }
}

/// The namespaces the box makes; the user namespace too when not root.
#[cfg(target_os = "linux")]
fn namespace_flags(root: bool) -> libc::c_int {
    let flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWIPC;
    if root {
        flags
    } else {
        flags | libc::CLONE_NEWUSER
    }
}

/// The texts that map dlqspec's own uid and gid into a user namespace, and their files.
#[cfg(target_os = "linux")]
#[derive(Clone)]
struct Maps {
    uid_map: CString,
    gid_map: CString,
    setgroups: CString,
    uid_file: CString,
    gid_file: CString,
}

#[cfg(target_os = "linux")]
fn maps() -> Maps {
    // SAFETY: getuid and getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let c = |text: String| CString::new(text).unwrap_or_default();
    Maps {
        uid_map: c(format!("{uid} {uid} 1")),
        gid_map: c(format!("{gid} {gid} 1")),
        setgroups: c("/proc/self/setgroups".into()),
        uid_file: c("/proc/self/uid_map".into()),
        gid_file: c("/proc/self/gid_map".into()),
    }
}

/// Whether a child can make the box's namespaces: a forked child tries and says by its status.
#[cfg(target_os = "linux")]
fn probe_namespaces(root: bool, maps: &Maps) -> bool {
    let flags = namespace_flags(root);
    // SAFETY: the forked child makes only raw system calls on memory prepared before the fork,
    // then `_exit`s; the parent waits for it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let ok = libc::unshare(flags) == 0 && (root || write_maps(maps));
            libc::_exit(if ok { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}

/// Writes the user namespace's maps (setgroups denied first, as an unprivileged map needs).
///
/// # Safety
/// Raw system calls only: callable between fork and exec.
#[cfg(target_os = "linux")]
unsafe fn write_maps(maps: &Maps) -> bool {
    unsafe {
        write_file(&maps.setgroups, b"deny")
            && write_file(&maps.uid_file, maps.uid_map.as_bytes())
            && write_file(&maps.gid_file, maps.gid_map.as_bytes())
    }
}

/// # Safety
/// Raw system calls only: callable between fork and exec.
#[cfg(target_os = "linux")]
pub(super) unsafe fn write_file(path: &CString, bytes: &[u8]) -> bool {
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        written == bytes.len() as isize
    }
}

/// The pids cgroup folder dlqspec is in, where it may make one cgroup per implementation:
/// cgroup v1's `pids` hierarchy, else v2 where `pids` is enabled for children.
#[cfg(target_os = "linux")]
fn probe_pids_cgroup() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut candidates = Vec::new();
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            candidates.push(Path::new("/sys/fs/cgroup/pids").join(path));
        } else if controllers.is_empty() {
            for root in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
                let dir = Path::new(root).join(path);
                let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                    .is_ok_and(|text| text.split_whitespace().any(|c| c == "pids"));
                if enabled {
                    candidates.push(dir);
                }
            }
        }
    }
    candidates.into_iter().find(|dir| {
        let trial = dir.join(format!("dlqspec-probe-{}", std::process::id()));
        let made = std::fs::create_dir(&trial).is_ok();
        let usable = made && trial.join("pids.max").exists();
        if made {
            let _ = std::fs::remove_dir(&trial);
        }
        usable
    })
}

/// What to tell before the first implementation starts: that the box is off, or each
/// protection it lacks on this machine. The command prints it (nothing here prints).
pub fn warnings(sandbox: Sandbox) -> Vec<String> {
    if sandbox == Sandbox::Off {
        return vec![
            "--sandbox off: implementations run outside the box, with dlqspec's rights and view; never grade untrusted submissions so".to_owned(),
        ];
    }
    features()
        .protections()
        .into_iter()
        .filter(|protection| !protection.held)
        .map(|protection| protection.text)
        .collect()
}

/// Why the last implementation started as root kept uid 0: the uid it would have had, and
/// the path that uid cannot reach. `smoke` says it.
static KEPT_ROOT: std::sync::Mutex<Option<(u32, PathBuf)>> = std::sync::Mutex::new(None);

/// One line saying that an implementation kept uid 0 (without capabilities), and why.
pub fn kept_root() -> Option<String> {
    let kept = KEPT_ROOT.lock().ok()?.clone()?;
    let (uid, blocked) = kept;
    Some(format!(
        "user: uid 0 without capabilities, not uid {uid}: uid {uid} cannot reach {}",
        blocked.display()
    ))
}

/// The folders and files an implementation may read and execute: the system's, the
/// interpreter's install prefix, and the folder of each argument that names an existing path.
pub fn readable_paths(program: &Path, args: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SYSTEM_PATHS.iter().map(PathBuf::from).collect();
    paths.extend(install_prefixes(program));
    for arg in args {
        let folder = if arg.is_dir() {
            Some(arg.clone())
        } else {
            arg.parent().map(Path::to_path_buf)
        };
        paths.extend(folder.filter(|folder| !folder.as_os_str().is_empty()));
        paths.extend(typescript_packages(arg));
    }
    paths.sort();
    paths.dedup();
    paths
}

/// For a TypeScript solution, the `node_modules` folder holding the tsx the Node shim will
/// load, found as the shim finds it: the solution's own project (a `node_modules/tsx` in its
/// folder or one above), else a `tsx` on `PATH`. Its dependencies (esbuild and its binary)
/// lie beside it, so the whole folder is readable.
fn typescript_packages(arg: &Path) -> Option<PathBuf> {
    let typescript = arg
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "ts" | "mts" | "cts"));
    if !typescript || !arg.is_file() {
        return None;
    }
    let start = std::path::absolute(arg).ok()?;
    let in_project = start.ancestors().skip(1).find_map(|dir| {
        let modules = dir.join("node_modules");
        modules
            .join("tsx")
            .join("package.json")
            .is_file()
            .then_some(modules)
    });
    in_project.or_else(tsx_on_path)
}

/// The folder that holds the tsx package behind a `tsx` command on `PATH`: its
/// `node_modules` when it lies in one, else the package itself.
fn tsx_on_path() -> Option<PathBuf> {
    // Looked up once: every spec's box of a TypeScript solution asks again.
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND.get_or_init(find_tsx_on_path).clone()
}

fn find_tsx_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let real = std::fs::canonicalize(dir.join("tsx")).ok()?;
        let package = real.ancestors().skip(1).take(4).find(|up| {
            std::fs::read_to_string(up.join("package.json")).is_ok_and(|text| {
                serde_json::from_str::<serde_json::Value>(&text)
                    .is_ok_and(|manifest| manifest["name"] == "tsx")
            })
        })?;
        Some(match package.parent() {
            Some(parent) if parent.ends_with("node_modules") => parent.to_path_buf(),
            _ => package.to_path_buf(),
        })
    })
}

/// System folders and files interpreters read (measured with strace for Python, Node and
/// tsx). Not all of `/etc`: `/etc/shadow` stays out of reach even of a uid 0.
const SYSTEM_PATHS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/opt",
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

/// The install prefix of a program: for `P` in a `bin` (or pyenv's `shims`) folder, that
/// folder's parent, for P as found and as its links resolve (`/usr/bin/node` gives `/usr`,
/// pyenv's shim `/root/.pyenv`, a venv's python the venv and the interpreter it links to);
/// for a program elsewhere, its own folder.
pub fn install_prefixes(program: &Path) -> Vec<PathBuf> {
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
                prefixes.push(prefix.to_path_buf())
            }
            _ => prefixes.push(folder.to_path_buf()),
        }
    }
    prefixes
}

/// Where `program` is: itself when it names a path (made absolute), else the first match on
/// `path` (a `PATH` value).
pub fn locate(program: &str, path: Option<&std::ffi::OsStr>, cwd: &Path) -> Option<PathBuf> {
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
pub fn blocked_for_others(paths: &[PathBuf]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    for path in paths {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let mode = meta.permissions().mode();
        if (meta.is_dir() && mode & 0o001 == 0) || (!meta.is_dir() && mode & 0o005 == 0) {
            return Some(path.clone());
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

/// How the box's A reads the status its B sent: C's wait status.
#[cfg(target_os = "linux")]
const STATUS_BYTES: usize = std::mem::size_of::<libc::c_int>();

/// What the child does before exec to enter the box: plain data, ready before fork.
#[cfg(target_os = "linux")]
#[derive(Clone)]
pub struct Entry {
    namespaces: Option<libc::c_int>,
    maps: Option<Maps>,
    cgroup_procs: Option<CString>,
    uid: Option<u32>,
    ruleset: Option<libc::c_int>,
    proc_access: u64,
    proc_path: CString,
    root_path: CString,
    proc_type: CString,
    /// Where dlqspec's argv and environment strings are: B, a copy of dlqspec that any
    /// process of the namespace can see as `/proc/1`, blanks them.
    shown_areas: [(usize, usize); 2],
}

/// What the parent holds for one boxed implementation while it runs: the Landlock ruleset
/// (the child's copy is inherited), its private folder, its pids cgroup (removed when the
/// implementation has ended).
pub struct Prepared {
    #[cfg(target_os = "linux")]
    entry: Entry,
    #[cfg(target_os = "linux")]
    _ruleset: Option<std::os::fd::OwnedFd>,
    /// Its pids cgroup and its number among the live boxes, let go when it is dropped.
    _live: LiveBox,
    _private: tempfile::TempDir,
    /// The lock that tells other dlqspecs the private folder is in use; declared last, so it
    /// is let go only once the folder is removed.
    _claim: std::fs::File,
}

impl Prepared {
    #[cfg(target_os = "linux")]
    pub fn entry(&self) -> Entry {
        self.entry.clone()
    }

    /// What a warm child needs of this box to enter it as a cold start does, when the box has
    /// every part: namespaces, a Landlock ruleset, a pids cgroup, and a root dlqspec (which
    /// gives the zygote the rights to make them). `None` otherwise: that start is cold.
    #[cfg(target_os = "linux")]
    pub(super) fn warm_parts(&self) -> Option<WarmParts> {
        let entry = &self.entry;
        if !features().root {
            return None;
        }
        Some(WarmParts {
            namespaces: entry.namespaces?,
            ruleset: entry.ruleset?,
            cgroup_procs: entry.cgroup_procs.clone()?,
            uid: entry.uid,
            entry: entry.clone(),
        })
    }
}

/// The parts of a box a warm child enters (`zygote`): the same namespaces, ruleset (with the
/// same rights on its fresh `/proc`), cgroup and uid as a cold start's, and what its process
/// 1 does (`become_process_one`).
#[cfg(target_os = "linux")]
pub(super) struct WarmParts {
    pub namespaces: libc::c_int,
    pub ruleset: libc::c_int,
    pub cgroup_procs: CString,
    pub uid: Option<u32>,
    pub entry: Entry,
}

/// A box's pids cgroup (when it has one) and its number among the live boxes (`LIVE`): the
/// cgroup is emptied and removed, and the number let go, when the box is dropped.
struct LiveBox {
    cgroup: Option<PathBuf>,
    number: u64,
}

impl LiveBox {
    /// Counts a box among the live ones: an interrupted dlqspec removes its cgroup and `folder`.
    fn register(cgroup: Option<PathBuf>, folder: PathBuf) -> LiveBox {
        let number = NEXT_CGROUP.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut live) = LIVE.lock() {
            live.insert(number, (cgroup.clone(), folder));
        }
        LiveBox { cgroup, number }
    }
}

impl Drop for LiveBox {
    fn drop(&mut self) {
        if let Some(cgroup) = &self.cgroup {
            remove_cgroup(cgroup);
        }
        if let Ok(mut live) = LIVE.lock() {
            live.remove(&self.number);
        }
    }
}

/// Removes a cgroup, which empties once its last process is reaped: that may take a moment.
/// Whatever is still in it is killed first (a warm child's processes are no descendants of
/// dlqspec's: the cgroup is how every one of them is found).
fn remove_cgroup(cgroup: &Path) {
    kill_members(cgroup);
    for _ in 0..200 {
        match std::fs::remove_dir(cgroup) {
            Err(error) if error.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            _ => break,
        }
    }
}

/// Kills every process of a cgroup until none is left (bounded: a process that cannot be
/// killed is left to the removal's own wait).
fn kill_members(cgroup: &Path) {
    let procs = cgroup.join("cgroup.procs");
    for _ in 0..200 {
        let Ok(text) = std::fs::read_to_string(&procs) else {
            return;
        };
        let members: Vec<libc::pid_t> =
            text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if members.is_empty() {
            return;
        }
        for pid in members {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

static NEXT_CGROUP: AtomicU64 = AtomicU64::new(1);

/// The boxes of running implementations: their cgroup and private folder, for an interrupted
/// dlqspec to remove (it dies without dropping them).
static LIVE: std::sync::Mutex<std::collections::BTreeMap<u64, (Option<PathBuf>, PathBuf)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Removes what the running implementations' boxes left on disk: dlqspec is interrupted,
/// its implementations were just killed, and it dies next.
pub fn remove_on_interrupt() {
    let live: Vec<(Option<PathBuf>, PathBuf)> = LIVE
        .lock()
        .map(|live| live.values().cloned().collect())
        .unwrap_or_default();
    for (cgroup, private) in live {
        if let Some(cgroup) = cgroup {
            remove_cgroup(&cgroup);
        }
        let _ = std::fs::remove_dir_all(private);
    }
}

/// The prefix of a box's private folder and cgroup: `dlqspec-box-PID-`.
fn own_prefix() -> String {
    format!("dlqspec-box-{}-", std::process::id())
}

/// Removes, once per dlqspec process, the cgroups and private folders of boxes whose dlqspec
/// died without removing them (killed outright).
fn remove_stale(folders: &[&Path]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| remove_stale_in(folders));
}

/// Removes the boxes' leftovers in `folders`: theirs by name, their process gone, of
/// dlqspec's own user, and not claimed. The claim decides: a dlqspec in another PID namespace
/// sharing this temporary folder has a pid that looks gone from here, but it holds the lock
/// on its box's folder while the box lives.
fn remove_stale_in(folders: &[&Path]) {
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|name| name.strip_prefix("dlqspec-box-"))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let path = entry.path();
            // Only a folder of dlqspec's own user: in a shared temporary folder, anyone can
            // make one under the box's name, and it is not ours to remove.
            use std::os::unix::fs::MetadataExt;
            // SAFETY: geteuid has no preconditions.
            let ours = std::fs::symlink_metadata(&path)
                .is_ok_and(|meta| meta.is_dir() && meta.uid() == unsafe { libc::geteuid() });
            if !ours {
                continue;
            }
            // Held until the folder is gone, so no dlqspec claims it meanwhile.
            let Some(_claim) = try_claim(&path) else {
                continue;
            };
            // A cgroup folder cannot be emptied by hand; rmdir takes an empty one.
            if std::fs::remove_dir(&path).is_err() && path.starts_with(std::env::temp_dir()) {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }
}

/// Takes the lock (`flock`) that says a box's folder is in use, without waiting and without
/// following a link: `None` when another process holds it (or the folder cannot be opened).
fn try_claim(folder: &Path) -> Option<std::fs::File> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let name = CString::new(folder.as_os_str().as_bytes()).ok()?;
    // SAFETY: open(2) on a NUL-terminated path, read only; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just opened here and nothing else owns it.
    let opened = unsafe { std::fs::File::from_raw_fd(fd) };
    // SAFETY: flock on a descriptor this function owns.
    let locked = unsafe { libc::flock(opened.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    locked.then_some(opened)
}

/// Claims a box's new private folder for as long as the box lives (see `remove_stale_in`),
/// checking after the lock that the name still leads to the folder locked: another dlqspec's
/// clean-up may have removed it between its making and the lock.
fn claim_private(private: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::MetadataExt;
    let claim = try_claim(private)
        .ok_or_else(|| io::Error::other("the box's private folder was taken as it was made"))?;
    let (held, named) = (claim.metadata()?, std::fs::symlink_metadata(private)?);
    if (held.dev(), held.ino()) != (named.dev(), named.ino()) {
        return Err(io::Error::other(
            "the box's private folder was removed as it was made",
        ));
    }
    Ok(claim)
}

/// A new private folder for a box, and its claim; made again (a few times at most) when
/// another dlqspec's clean-up removed it between its making and the lock.
fn claimed_private() -> io::Result<(tempfile::TempDir, std::fs::File)> {
    let mut attempts = 0;
    loop {
        let private = match BOXES_HERE.get() {
            Some(folder) => tempfile::Builder::new()
                .prefix(&own_prefix())
                .tempdir_in(folder)?,
            None => tempfile::Builder::new().prefix(&own_prefix()).tempdir()?,
        };
        match claim_private(private.path()) {
            Ok(claim) => return Ok((private, claim)),
            Err(error) if attempts >= 3 => return Err(error),
            Err(_) => attempts += 1,
        }
    }
}

/// The folder the boxes of many runs (`grade`'s) are made in: each run is given it as its
/// temporary folder, so their private folders are made in it, and the zygote's domain writes
/// there and nowhere else. Every box's uid passes through it (`0711`). Claimed while it lives
/// and removed when dropped, or when dlqspec is interrupted.
pub struct BoxesFolder {
    /// Declared first, so that it is let go before the folder is removed, as a box's is.
    _live: LiveBox,
    folder: tempfile::TempDir,
    _claim: std::fs::File,
}

impl BoxesFolder {
    /// A new, claimed folder in the temporary folder.
    pub fn make() -> io::Result<BoxesFolder> {
        use std::os::unix::fs::PermissionsExt;
        let (folder, claim) = claimed_private()?;
        std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o711))?;
        Ok(BoxesFolder {
            _live: LiveBox::register(None, folder.path().to_path_buf()),
            folder,
            _claim: claim,
        })
    }

    pub fn path(&self) -> &Path {
        self.folder.path()
    }

    /// Makes the boxes of this process (`watch`'s) in this folder from now on, for as long as
    /// the process lives (the folder must then outlive every box).
    pub fn use_here(&self) {
        let _ = BOXES_HERE.set(self.folder.path().to_path_buf());
    }
}

/// Where this process makes its boxes' private folders, when not in the temporary folder
/// (`BoxesFolder::use_here`).
static BOXES_HERE: OnceLock<PathBuf> = OnceLock::new();

/// Prepares the box for an implementation's program and arguments: the command to start
/// (its standard streams still to set) with a private folder as its home, temporary folder
/// and working folder, an environment of the allowlist, and the program and arguments that
/// name paths made absolute; and what the child enters: the Landlock ruleset, the cgroup,
/// the uid.
pub fn prepare(
    program: &str,
    args: &[String],
    processes: Option<u64>,
) -> io::Result<(Command, Prepared)> {
    let cwd = std::env::current_dir()?;
    let temp = std::env::temp_dir();
    let cgroups = features().pids_cgroup.clone();
    let mut stale: Vec<&Path> = vec![&temp];
    stale.extend(cgroups.as_deref());
    remove_stale(&stale);
    let (private, claim) = claimed_private()?;
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
    if let Some(located) = &located {
        // pyenv finds its root from HOME, which is now the private folder.
        let pyenv = located
            .parent()
            .filter(|folder| folder.ends_with(".pyenv/shims"))
            .and_then(Path::parent);
        if let Some(pyenv) = pyenv
            && !variables.iter().any(|(name, _)| name == "PYENV_ROOT")
        {
            variables.push(("PYENV_ROOT".into(), pyenv.as_os_str().to_owned()));
        }
    }
    rebuilt
        .env_clear()
        .envs(variables)
        .current_dir(private.path());
    let readable = readable_paths(located.as_deref().unwrap_or(Path::new(program)), &named);
    let prepared = platform_prepare(private, claim, readable, located, named, processes)?;
    Ok((rebuilt, prepared))
}

#[cfg(not(target_os = "linux"))]
fn platform_prepare(
    private: tempfile::TempDir,
    claim: std::fs::File,
    _readable: Vec<PathBuf>,
    _located: Option<PathBuf>,
    _named: Vec<PathBuf>,
    _processes: Option<u64>,
) -> io::Result<Prepared> {
    Ok(Prepared {
        _live: LiveBox::register(None, private.path().to_path_buf()),
        _private: private,
        _claim: claim,
    })
}

#[cfg(target_os = "linux")]
fn platform_prepare(
    private: tempfile::TempDir,
    claim: std::fs::File,
    readable: Vec<PathBuf>,
    located: Option<PathBuf>,
    named: Vec<PathBuf>,
    processes: Option<u64>,
) -> io::Result<Prepared> {
    let features = features();
    let (ruleset, proc_access) = if features.landlock >= 1 {
        let (fd, proc_access) = ruleset(features.landlock, &readable, private.path())
            .map_err(|error| io::Error::other(format!("the box's Landlock rules: {error}")))?;
        (Some(fd), proc_access)
    } else {
        (None, 0)
    };
    let mut uid = None;
    if features.root {
        let wanted = std::env::var(UID_VARIABLE)
            .ok()
            .and_then(|text| text.parse::<u32>().ok())
            .filter(|uid| *uid != 0)
            .unwrap_or(DEFAULT_UID);
        let mut needed: Vec<PathBuf> = located.into_iter().collect();
        if let Some(program) = needed.first().cloned()
            && let Ok(canonical) = std::fs::canonicalize(&program)
        {
            needed.push(canonical);
        }
        needed.extend(named);
        match blocked_for_others(&needed) {
            None => {
                std::os::unix::fs::chown(private.path(), Some(wanted), Some(wanted))?;
                uid = Some(wanted);
            }
            Some(blocked) => {
                if let Ok(mut kept) = KEPT_ROOT.lock() {
                    *kept = Some((wanted, blocked));
                }
            }
        }
    }
    let mut cgroup = None;
    if let (Some(limit), Some(parent)) = (processes, &features.pids_cgroup) {
        let dir = parent.join(format!(
            "{}{}",
            own_prefix(),
            NEXT_CGROUP.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir(&dir)?;
        let made = std::fs::write(dir.join("pids.max"), limit.to_string());
        if let Err(error) = made {
            let _ = std::fs::remove_dir(&dir);
            return Err(error);
        }
        cgroup = Some(dir);
    }
    let c = |path: &Path| CString::new(path.as_os_str().as_encoded_bytes()).unwrap_or_default();
    use std::os::fd::AsRawFd;
    let entry = Entry {
        namespaces: features.namespaces.then(|| namespace_flags(features.root)),
        maps: (features.namespaces && !features.root).then(maps),
        cgroup_procs: cgroup.as_ref().map(|dir| c(&dir.join("cgroup.procs"))),
        uid,
        ruleset: ruleset.as_ref().map(AsRawFd::as_raw_fd),
        proc_access,
        proc_path: c(Path::new("/proc")),
        root_path: c(Path::new("/")),
        proc_type: c(Path::new("proc")),
        shown_areas: shown_areas(),
    };
    Ok(Prepared {
        entry,
        _ruleset: ruleset,
        _live: LiveBox::register(cgroup, private.path().to_path_buf()),
        _private: private,
        _claim: claim,
    })
}

/// The Landlock ruleset: every file access of the best ABI handled, read and execute on
/// `readable`, everything on `private`; TCP handled with no rule (no TCP at all); signals and
/// abstract sockets scoped to the box. Its descriptor, and the rights the child grants on
/// the fresh `/proc` it mounts.
#[cfg(target_os = "linux")]
fn ruleset(
    abi: i32,
    readable: &[PathBuf],
    private: &Path,
) -> Result<(std::os::fd::OwnedFd, u64), String> {
    use landlock::{
        ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, path_beneath_rules,
    };
    let abi = ABI::from(abi);
    let read = AccessFs::from_read(abi);
    let text = |error: landlock::RulesetError| error.to_string();
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(text)?;
    ruleset = no_network_nor_signals(ruleset, abi).map_err(text)?;
    let existing: Vec<&PathBuf> = readable.iter().filter(|path| path.exists()).collect();
    let created = ruleset
        .create()
        .map_err(text)?
        .add_rules(path_beneath_rules(&existing, read))
        .map_err(text)?
        .add_rules(path_beneath_rules(writable_devices(), AccessFs::WriteFile))
        .map_err(text)?
        .add_rules(path_beneath_rules([private], AccessFs::from_all(abi)))
        .map_err(text)?;
    let fd: Option<std::os::fd::OwnedFd> = created.into();
    let fd = fd.ok_or("this kernel does not enforce Landlock")?;
    let fd = above_handed_descriptors(fd).map_err(|error| error.to_string())?;
    // Read only: /proc holds no program to run.
    let proc_access = (AccessFs::ReadFile | AccessFs::ReadDir).bits();
    Ok((fd, proc_access))
}

/// Enters the box, in the child between fork and exec (see the module's comment): A forks B
/// and waits, B forks C and reaps, C drops its privileges and restricts itself; only C
/// returns, to exec.
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory `entry` prepared before the fork.
#[cfg(target_os = "linux")]
pub unsafe fn enter(entry: &Entry) -> io::Result<()> {
    unsafe {
        if let Some(procs) = &entry.cgroup_procs
            && !write_file(procs, b"0")
        {
            return Err(io::Error::last_os_error());
        }
        if let Some(flags) = entry.namespaces {
            if libc::unshare(flags) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(maps) = &entry.maps
                && !write_maps(maps)
            {
                return Err(io::Error::last_os_error());
            }
            let mut status_pipe = [0; 2];
            if libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(io::Error::last_os_error());
            }
            let [read_end, write_end] = status_pipe;
            let b = libc::fork();
            if b < 0 {
                return Err(io::Error::last_os_error());
            }
            if b > 0 {
                // A: nothing of dlqspec's stays open here (its streams, the exec-error pipe).
                close_all_but(read_end);
                let mut status = 0;
                let _ = wait_for(b, &mut status);
                let mut sent = [0u8; STATUS_BYTES];
                let got = libc::read(read_end, sent.as_mut_ptr().cast(), STATUS_BYTES);
                if got == STATUS_BYTES as isize {
                    status = libc::c_int::from_ne_bytes(sent);
                }
                mirror(status);
            }
            // B: process 1 of the namespace.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::close(read_end);
            become_process_one(entry)?;
            let c = libc::fork();
            if c < 0 {
                return Err(io::Error::last_os_error());
            }
            if c > 0 {
                close_all_but(write_end);
                loop {
                    let mut status = 0;
                    let reaped = libc::waitpid(-1, &mut status, 0);
                    if reaped == c {
                        let bytes = status.to_ne_bytes();
                        libc::write(write_end, bytes.as_ptr().cast(), STATUS_BYTES);
                        // Process 1 leaving ends every process left in the namespace.
                        libc::_exit(0);
                    }
                    if reaped < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
                    {
                        libc::_exit(0);
                    }
                }
            }
            // C.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::close(write_end);
        }
        drop_privileges(entry.uid)?;
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(ruleset) = entry.ruleset {
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
                return Err(io::Error::last_os_error());
            }
            libc::close(ruleset);
        }
        // No descriptor of dlqspec's reaches the implementation but those handed to it: one
        // dlqspec opened without close-on-exec (`watch` had two) is closed by the exec.
        libc::syscall(
            libc::SYS_close_range,
            (super::pipes::CHANNEL_FD + 1) as u32,
            u32::MAX,
            CLOSE_RANGE_CLOEXEC,
        );
        Ok(())
    }
}

/// What process 1 of a box's PID namespace makes of it before the implementation starts, cold
/// (B) or warm (the run's B, before the zygote's child joins it): dlqspec's argv and
/// environment blanked, mounts private, a fresh `/proc` (the namespace's only) mounted and
/// granted in the ruleset.
///
/// # Safety
/// Raw system calls only, on memory `entry` prepared before the fork.
#[cfg(target_os = "linux")]
pub(super) unsafe fn become_process_one(entry: &Entry) -> io::Result<()> {
    unsafe {
        for (start, end) in entry.shown_areas {
            if end > start {
                std::ptr::write_bytes(start as *mut u8, 0, end - start);
            }
        }
        if libc::mount(
            std::ptr::null(),
            entry.root_path.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
            || libc::mount(
                entry.proc_type.as_ptr(),
                entry.proc_path.as_ptr(),
                entry.proc_type.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if let Some(ruleset) = entry.ruleset {
            allow_fresh_proc(ruleset, entry)?;
        }
        Ok(())
    }
}

/// The capabilities the zygote keeps (`CAP_SETGID`, `CAP_SETUID`, `CAP_SETPCAP`,
/// `CAP_SYS_CHROOT`, `CAP_SYS_ADMIN`): what its child needs to join a box's namespaces
/// (`setns`), give up root's special treatment and take the box's uid. Every other one leaves
/// its bounding set before it starts.
#[cfg(target_os = "linux")]
pub const ZYGOTE_CAPABILITIES: u64 = 1 << 6 | 1 << 7 | 1 << 8 | 1 << 18 | 1 << 21;

/// The zygote's own box (`zygote`): a Landlock ruleset that lets it (and so every process it
/// forks) write only beneath the folder the boxes' private folders are made in, use no TCP
/// and signal or reach no abstract socket outside its domain; a pids cgroup of its own.
/// Removed (its members killed) when dropped, after the zygote has ended.
#[cfg(target_os = "linux")]
pub struct ZygoteBox {
    entry: ZygoteEntry,
    _ruleset: std::os::fd::OwnedFd,
    _live: LiveBox,
}

/// What the zygote's spawned child does before exec (`enter_zygote`): plain data.
#[cfg(target_os = "linux")]
#[derive(Clone)]
pub struct ZygoteEntry {
    ruleset: libc::c_int,
    cgroup_procs: Option<CString>,
}

#[cfg(target_os = "linux")]
impl ZygoteBox {
    /// The zygote's box: writes beneath `writable` only, at most `processes` processes (none
    /// without a pids cgroup, which the warm start requires anyway); `private` is the
    /// zygote's own folder, removed with the cgroup if dlqspec is interrupted.
    pub fn prepare(
        writable: &Path,
        processes: Option<u64>,
        private: &Path,
    ) -> Result<ZygoteBox, String> {
        let features = features();
        let ruleset = zygote_ruleset(features.landlock, writable)?;
        let cgroup = match (&features.pids_cgroup, processes) {
            (Some(parent), Some(limit)) => {
                let dir = parent.join(format!(
                    "{}zygote-{}",
                    own_prefix(),
                    NEXT_CGROUP.fetch_add(1, Ordering::SeqCst)
                ));
                std::fs::create_dir(&dir).map_err(|e| format!("the zygote's cgroup: {e}"))?;
                if let Err(error) = std::fs::write(dir.join("pids.max"), limit.to_string()) {
                    let _ = std::fs::remove_dir(&dir);
                    return Err(format!("the zygote's cgroup: {error}"));
                }
                Some(dir)
            }
            _ => None,
        };
        use std::os::fd::AsRawFd;
        Ok(ZygoteBox {
            entry: ZygoteEntry {
                ruleset: ruleset.as_raw_fd(),
                cgroup_procs: cgroup.as_ref().map(|dir| {
                    CString::new(dir.join("cgroup.procs").as_os_str().as_encoded_bytes())
                        .unwrap_or_default()
                }),
            },
            _ruleset: ruleset,
            _live: LiveBox::register(cgroup, private.to_path_buf()),
        })
    }

    pub fn entry(&self) -> ZygoteEntry {
        self.entry.clone()
    }
}

/// The zygote's Landlock ruleset: every write access of the best ABI handled and granted only
/// beneath `writable` (and writing to `/dev/null`, `/dev/zero`, `/dev/full`); TCP handled with
/// no rule; signals and abstract sockets scoped. Reading and executing are left to each
/// child's own ruleset: a child reads the fresh `/proc` of its box, which does not exist when
/// the zygote's domain is made, and Landlock rules name existing files only.
/// The devices every box may write to (what a runtime opens to discard or to fill), where the
/// machine has them.
#[cfg(target_os = "linux")]
fn writable_devices() -> impl Iterator<Item = &'static str> {
    ["/dev/null", "/dev/zero", "/dev/full"]
        .into_iter()
        .filter(|device| Path::new(device).exists())
}

#[cfg(target_os = "linux")]
fn zygote_ruleset(abi: i32, writable: &Path) -> Result<std::os::fd::OwnedFd, String> {
    use landlock::{ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, path_beneath_rules};
    let abi = ABI::from(abi);
    let text = |error: landlock::RulesetError| error.to_string();
    let write = AccessFs::from_write(abi);
    let mut ruleset = Ruleset::default().handle_access(write).map_err(text)?;
    ruleset = no_network_nor_signals(ruleset, abi).map_err(text)?;
    let created = ruleset
        .create()
        .map_err(text)?
        .add_rules(path_beneath_rules([writable], write))
        .map_err(text)?
        .add_rules(path_beneath_rules(writable_devices(), AccessFs::WriteFile))
        .map_err(text)?;
    let fd: Option<std::os::fd::OwnedFd> = created.into();
    let fd = fd.ok_or("this kernel does not enforce Landlock")?;
    above_handed_descriptors(fd).map_err(|error| error.to_string())
}

/// Adds to `ruleset` what the kernel `abi` can deny beyond files: every TCP bind and connect
/// (ABI 4), and signals and abstract sockets leaving the domain (ABI 6).
#[cfg(target_os = "linux")]
fn no_network_nor_signals(
    mut ruleset: landlock::Ruleset,
    abi: landlock::ABI,
) -> Result<landlock::Ruleset, landlock::RulesetError> {
    use landlock::{ABI, Access, AccessNet, RulesetAttr, Scope};
    if abi >= ABI::V4 {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    Ok(ruleset)
}

/// Boxes the zygote (`zygote`), in its spawned child between fork and exec: its own network
/// and IPC namespaces, its own pids cgroup, every capability but `ZYGOTE_CAPABILITIES` out of
/// its bounding set, no_new_privs, and its Landlock domain. Its PID namespace stays dlqspec's:
/// a warm child joins the PID namespace of its run's box, which only a process of an ancestor
/// namespace may enter. It never runs student code.
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory `entry` prepared before the fork.
#[cfg(target_os = "linux")]
pub unsafe fn enter_zygote(entry: &ZygoteEntry) -> io::Result<()> {
    unsafe {
        if libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC) != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(procs) = &entry.cgroup_procs
            && !write_file(procs, b"0")
        {
            return Err(io::Error::last_os_error());
        }
        for capability in 0..64 {
            if ZYGOTE_CAPABILITIES & (1 << capability) == 0 {
                libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
            }
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, entry.ruleset, 0u32) != 0 {
            return Err(io::Error::last_os_error());
        }
        libc::close(entry.ruleset);
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

/// The lowest descriptor the box's own may have in the child: those below are the ones
/// handed to the implementation (stdin, stdout, stderr and the protocol channel, `pipes`),
/// which are set up in the child before the box and would replace a box descriptor of the
/// same number.
const FIRST_BOX_DESCRIPTOR: libc::c_int = 10;
const _: () = assert!(FIRST_BOX_DESCRIPTOR > super::pipes::CHANNEL_FD);

/// `fd`, moved above the descriptors handed to the implementation (close-on-exec kept).
fn above_handed_descriptors(fd: std::os::fd::OwnedFd) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    if fd.as_raw_fd() >= FIRST_BOX_DESCRIPTOR {
        return Ok(fd);
    }
    // SAFETY: duplicating a descriptor this function owns; the original is closed on return.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_BOX_DESCRIPTOR) };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl just opened it, and nothing else owns it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(moved) })
}

/// Grants read on the fresh `/proc` (which only shows the namespace) in the ruleset.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
unsafe fn allow_fresh_proc(ruleset: libc::c_int, entry: &Entry) -> io::Result<()> {
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    unsafe {
        let fd = libc::open(
            entry.proc_path.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let rule = PathBeneath {
            allowed_access: entry.proc_access,
            parent_fd: fd,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1u32, // LANDLOCK_RULE_PATH_BENEATH
            &rule as *const PathBeneath,
            0u32,
        );
        libc::close(fd);
        if added != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Closes every descriptor but `keep`.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
pub(super) unsafe fn close_all_but(keep: libc::c_int) {
    unsafe {
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
    }
}

/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
pub(super) unsafe fn wait_for(pid: libc::pid_t, status: &mut libc::c_int) -> bool {
    unsafe {
        loop {
            if libc::waitpid(pid, status, 0) == pid {
                return true;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
    }
}

/// How a wait status is mirrored: the same exit code, or the same signal.
#[derive(Debug, PartialEq, Eq)]
pub enum Mirrored {
    Exit(i32),
    Signal(i32),
}

/// What a process that mirrors wait status `status` does.
#[cfg(unix)]
pub fn mirrored(status: libc::c_int) -> Mirrored {
    if libc::WIFSIGNALED(status) {
        Mirrored::Signal(libc::WTERMSIG(status))
    } else if libc::WIFEXITED(status) {
        Mirrored::Exit(libc::WEXITSTATUS(status))
    } else {
        Mirrored::Exit(1)
    }
}

/// Ends this process as `status` says another ended: the same code, or the same signal
/// (default action restored, unblocked, raised).
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
pub(super) unsafe fn mirror(status: libc::c_int) -> ! {
    unsafe {
        match mirrored(status) {
            Mirrored::Exit(code) => libc::_exit(code),
            Mirrored::Signal(signal) => {
                libc::signal(signal, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, signal);
                libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::kill(libc::getpid(), signal);
                libc::_exit(128 + signal)
            }
        }
    }
}

/// Drops every privilege: the bounding and ambient capability sets, root's special treatment
/// (securebits, locked), then the uid when one is given, then every capability left.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
unsafe fn drop_privileges(uid: Option<u32>) -> io::Result<()> {
    // SECBIT_NOROOT, its lock, NO_SETUID_FIXUP's lock (left off, so a uid change clears the
    // capabilities), KEEP_CAPS's lock, NO_CAP_AMBIENT_RAISE and its lock.
    const SECUREBITS: libc::c_ulong = 0x01 | 0x02 | 0x08 | 0x20 | 0x40 | 0x80;
    #[repr(C)]
    struct CapHeader {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct CapData {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    unsafe {
        libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0);
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        if let Some(uid) = uid
            && (libc::setgroups(0, std::ptr::null()) != 0
                || libc::setresgid(uid, uid, uid) != 0
                || libc::setresuid(uid, uid, uid) != 0)
        {
            return Err(io::Error::last_os_error());
        }
        let header = CapHeader {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let none = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const CapHeader, none.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_descriptors_lie_above_those_handed_to_the_implementation() {
        use std::os::fd::AsRawFd;
        let low = std::os::fd::OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        let moved = above_handed_descriptors(low).unwrap();
        assert!(moved.as_raw_fd() >= FIRST_BOX_DESCRIPTOR);
    }

    #[test]
    fn a_claimed_box_folder_is_kept_though_its_pid_looks_gone_and_an_unclaimed_one_goes() {
        // A pid no process has here: as a live dlqspec in another PID namespace looks.
        let folder = tempfile::tempdir().unwrap();
        let live = folder.path().join("dlqspec-box-4294967290-live");
        let dead = folder.path().join("dlqspec-box-4294967290-dead");
        std::fs::create_dir(&live).unwrap();
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(live.join("work"), "in use").unwrap();
        std::fs::write(dead.join("left"), "left over").unwrap();
        let claim = claim_private(&live).unwrap();
        remove_stale_in(&[folder.path()]);
        assert!(
            live.join("work").exists(),
            "a claimed box folder was removed"
        );
        assert!(!dead.exists(), "an unclaimed leftover stayed");
        drop(claim);
        remove_stale_in(&[folder.path()]);
        assert!(!live.exists(), "the folder, no longer claimed, stayed");
    }

    #[test]
    fn a_folder_claimed_elsewhere_cannot_be_claimed_again() {
        let folder = tempfile::tempdir().unwrap();
        let held = claim_private(folder.path()).unwrap();
        assert!(try_claim(folder.path()).is_none());
        drop(held);
        assert!(try_claim(folder.path()).is_some());
    }

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
    fn readable_paths_are_the_system_the_interpreter_and_the_arguments_folders() {
        let dir = tempfile::tempdir().unwrap();
        let solution = dir.path().join("alice").join("solution.py");
        std::fs::create_dir_all(solution.parent().unwrap()).unwrap();
        std::fs::write(&solution, "").unwrap();
        let paths = readable_paths(
            Path::new("/opt/py/bin/python3"),
            std::slice::from_ref(&solution),
        );
        assert!(paths.contains(&dir.path().join("alice")));
        assert!(!paths.contains(&dir.path().to_path_buf()));
        assert!(paths.contains(&PathBuf::from("/opt/py")));
        assert!(paths.contains(&PathBuf::from("/etc/ld.so.cache")));
        assert!(!paths.iter().any(|p| p == Path::new("/etc")));
        assert!(!paths.iter().any(|p| p == Path::new("/")));
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
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let blocked = blocked_for_others(std::slice::from_ref(&file));
        // Above the temporary folder, /tmp and / let everyone through.
        assert!(
            blocked.as_ref().is_none_or(|p| !p.starts_with(dir.path())),
            "{blocked:?}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(blocked_for_others(std::slice::from_ref(&file)), Some(file));
    }

    #[test]
    fn a_status_is_mirrored_as_the_same_code_or_signal() {
        assert_eq!(mirrored(0), Mirrored::Exit(0));
        assert_eq!(mirrored(3 << 8), Mirrored::Exit(3));
        assert_eq!(mirrored(libc::SIGKILL), Mirrored::Signal(libc::SIGKILL));
        assert_eq!(mirrored(libc::SIGXCPU), Mirrored::Signal(libc::SIGXCPU));
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
