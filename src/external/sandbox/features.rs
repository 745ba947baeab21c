//! What this machine's kernel gives the box, probed once per dlqspec process: Landlock's ABI,
//! whether a box can be a container with its own `/proc`, seccomp, cgroups; and each
//! protection held or missing, as `smoke` and the first run tell it.

#[cfg(target_os = "linux")]
use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::path::Path;
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use super::{DEFAULT_UID, cgroups, privileges, raw, root, seccomp};
use super::{Sandbox, UID_VARIABLE};

/// What the kernel of this machine lets the box do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Features {
    /// The Landlock ABI version, 0 without Landlock.
    pub(crate) landlock: i32,
    /// Whether a box can be a container: user, PID, mount, network, IPC, UTS and cgroup
    /// namespaces, and the mount API that builds its minimal root (Linux 5.12).
    pub(crate) container: bool,
    /// Whether a container can mount a fresh `/proc` of its own (the kernel allows it only
    /// over a fully visible one: not inside most containers).
    pub(crate) proc: bool,
    /// Whether system calls can be filtered (seccomp).
    pub(crate) seccomp: bool,
    /// Where a box's pids and memory cgroups can be made (root only).
    #[cfg(target_os = "linux")]
    pub(crate) cgroups: cgroups::Hierarchies,
    /// Whether dlqspec runs as root (then the implementation gets another uid).
    pub(crate) root: bool,
}

/// One protection of the box, and whether this machine gives it.
#[derive(Debug, Clone)]
pub(crate) struct Protection {
    pub(crate) held: bool,
    /// What it is, when held; what a submission can do, when not.
    pub(crate) text: String,
}

impl Features {
    /// Whether a box's processes are counted in a pids cgroup.
    pub(crate) fn pids_cgroup(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.cgroups.pids.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Whether a box's memory is counted in a memory cgroup.
    pub(crate) fn memory_cgroup(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.cgroups.memory.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Each protection: held or, when missing, what a submission can do for lack of it.
    pub(crate) fn protections(&self) -> Vec<Protection> {
        let landlock = self.landlock;
        let mut list = Vec::new();
        list.push(if self.container {
            held(
                "root: a minimal root of its own (read-only: the interpreter, the system libraries, a copy of its own folder; no spec, socket file, /tmp, /run or /var of the machine)",
            )
        } else {
            missing(
                "the box lacks user and mount namespaces or the mount API (Linux 5.12): a submission sees the machine's file tree, held by Landlock alone",
            )
        });
        list.push(if self.container {
            held(
                "changes: everything it sees but its private folder and /dev/shm is read-only (chmod, utime, xattr and writes fail, whatever its uid)",
            )
        } else {
            missing(
                "the box lacks read-only mounts: a submission can change the mode, times and attributes of files its uid owns",
            )
        });
        list.push(if self.container && !self.proc {
            missing(
                "the kernel mounts no fresh /proc here (the machine's /proc is not fully visible, as inside a container): the box has no /proc",
            )
        } else if self.container {
            held(
                "processes: its own PID namespace and /proc (dlqspec's argv, environment and descriptors out of view; nothing it starts outlives it)",
            )
        } else {
            missing(
                "the box lacks PID namespaces: a submission can read dlqspec's argv, cwd and environment in /proc, and a daemon it starts lives until dlqspec's sweep finds it",
            )
        });
        list.push(if landlock >= 1 {
            held(format!(
                "files, second wall: reads and runs only what it is shown; writes only its private folder, /dev/shm and /dev/null (Landlock ABI {landlock})"
            ))
        } else {
            missing(
                "the box lacks Landlock (Linux 5.13): a submission can read and write whatever its uid can, within what it is shown",
            )
        });
        list.push(if self.container || landlock >= 4 {
            held(if self.container {
                "network: none (its own network namespace)".to_owned()
            } else {
                "network: no TCP (Landlock)".to_owned()
            })
        } else {
            missing("the box lacks network namespaces and Landlock TCP rules: a submission can use the network")
        });
        list.push(if self.container || landlock >= 6 {
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
        list.push(if self.seccomp {
            held(
                "system calls: a filter denies the kernel keyrings, ptrace, bpf, perf, userfaultfd, mounts, namespaces, modules, io_uring, Unix socket files and every socket family but IPv4, IPv6 and netlink (Docker's default list); a fresh session keyring",
            )
        } else {
            missing(
                "the kernel lacks seccomp filters: a submission can use the kernel keyrings, connect to Unix socket files it can reach and reach the hypervisor through VM sockets",
            )
        });
        list.push(if self.memory_cgroup() {
            held(
                "memory: a memory cgroup counts everything the box holds, shared memory and its folders' pages included (--memory)",
            )
        } else {
            held(
                "memory: each process's data (--memory), /dev/shm and the private folder within --disk, no shared-memory files (no memory cgroup without root)",
            )
        });
        list.push(if self.container {
            held("disk: its private folder and /dev/shm are memory of --disk each, no file larger")
        } else {
            missing(
                "the box lacks a folder of its own in memory: its private folder is on the machine's disk, each file at most --disk",
            )
        });
        list.push(if !self.root || self.pids_cgroup() {
            held(if self.root {
                "process count: a pids cgroup per implementation (--processes)".to_owned()
            } else {
                "process count: RLIMIT_NPROC (--processes)".to_owned()
            })
        } else {
            missing(
                "the box lacks a writable pids cgroup: as root, a submission can start processes without limit",
            )
        });
        list.push(if self.container {
            held(if self.root {
                format!(
                    "user: an unprivileged uid ({UID_VARIABLE}, one per submission under grade), the only one its user namespace maps; no supplementary group"
                )
            } else {
                "user: dlqspec's own uid, the only one its user namespace maps, without capabilities".to_owned()
            })
        } else if self.root {
            held(format!(
                "user: an unprivileged uid ({UID_VARIABLE}) where it reaches the interpreter, else uid 0 without capabilities"
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
pub(crate) fn features() -> &'static Features {
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
    let (container, proc) = probe_container(root);
    Features {
        landlock,
        container,
        proc,
        seccomp: seccomp::available(),
        cgroups: if root {
            cgroups::probe()
        } else {
            cgroups::Hierarchies::default()
        },
        root,
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Features {
    Features {
        landlock: 0,
        container: false,
        proc: false,
        seccomp: false,
        root: false,
    }
}

/// The namespaces B is cloned into.
#[cfg(target_os = "linux")]
const BOX_NAMESPACES: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP;

/// Clones the calling process into the box's fresh namespaces (`BOX_NAMESPACES`), as `fork`
/// does: 0 in the child, its pid in the parent, negative on failure.
///
/// # Safety
/// As `fork`: the child may make only raw system calls on memory prepared before.
#[cfg(target_os = "linux")]
pub(super) unsafe fn clone_into_box() -> libc::pid_t {
    // SAFETY: a clone without a new stack or thread flags is a fork into new namespaces.
    unsafe {
        libc::syscall(
            libc::SYS_clone,
            (BOX_NAMESPACES | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        ) as libc::pid_t
    }
}

/// Whether a box can be a container here, and whether it can mount its own `/proc`: a forked
/// child makes a small one (a tmpfs with a device bound in it, by the mount API, and a clone
/// into the box's namespaces that mounts a `/proc`) and says by its status.
#[cfg(target_os = "linux")]
#[expect(
    clippy::disallowed_methods,
    reason = "starts a process: a child that tries what the machine allows a box"
)]
fn probe_container(root: bool) -> (bool, bool) {
    let Ok(staging) = tempfile::Builder::new().prefix("dlqspec-probe-").tempdir() else {
        return (false, false);
    };
    let folder = staging.path();
    let c = |path: &Path| CString::new(path.as_os_str().as_encoded_bytes()).unwrap_or_default();
    let (staging_c, null_c, proc_c) = (c(folder), c(&folder.join("null")), c(&folder.join("proc")));
    // SAFETY: geteuid and getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let own = privileges::Maps::identity(uid, gid, true);
    let boxed = if root {
        privileges::Maps::identity(DEFAULT_UID, DEFAULT_UID, false)
    } else {
        privileges::Maps::identity(uid, gid, false)
    };
    // SAFETY: the forked child makes only raw system calls on memory prepared before the fork,
    // then `_exit`s; the parent waits for it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let code = probe_child(root, &own, &boxed, &staging_c, &null_c, &proc_c);
            libc::_exit(code);
        }
        if pid < 0 {
            return (false, false);
        }
        let mut status = 0;
        if !raw::wait_for(pid, &mut status) || !libc::WIFEXITED(status) {
            return (false, false);
        }
        match libc::WEXITSTATUS(status) {
            0 => (true, true),
            1 => (true, false),
            _ => (false, false),
        }
    }
}

/// As an unprivileged user, enters a user namespace of its own (with a mount namespace owned
/// by it) mapping `maps`' ids to themselves. A sealed dlqspec is not dumpable, which makes its
/// `/proc/self` files root's and its maps unwritable: this copy of it, which holds nothing but
/// the box's plan and is seen by no box, is made dumpable again first, so that it and the B it
/// clones (whose maps it writes) own their `/proc` files.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
pub(super) unsafe fn own_namespace(maps: &privileges::Maps) -> bool {
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) == 0
            && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) == 0
            && maps.write_own()
    }
}

/// The probe's child: 0 a container with its own `/proc`, 1 without, 2 none.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
#[expect(
    clippy::disallowed_methods,
    reason = "writes to a descriptor: one byte on the probe's sync pipe"
)]
unsafe fn probe_child(
    root: bool,
    own: &privileges::Maps,
    boxed: &privileges::Maps,
    staging: &CString,
    null: &CString,
    proc: &CString,
) -> i32 {
    unsafe {
        let proc_folder = libc::open(c"/proc".as_ptr(), libc::O_PATH | libc::O_DIRECTORY);
        let unshared = if root {
            libc::unshare(libc::CLONE_NEWNS) == 0
        } else {
            own_namespace(own)
        };
        if proc_folder < 0
            || !unshared
            || root::keep_mounts_private().is_err()
            || root::mount_tmpfs(staging, c"mode=0755").is_err()
            || !root::probe_bind(null, proc)
        {
            return 2;
        }
        let mut sync = [0; 2];
        if libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return 2;
        }
        let b = clone_into_box();
        if b == 0 {
            libc::close(sync[1]);
            let mut byte = [0u8; 1];
            if raw::read_fully(sync[0], &mut byte) != 1 {
                libc::_exit(2);
            }
            let mounted = libc::mount(
                c"proc".as_ptr(),
                proc.as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) == 0;
            libc::_exit(if mounted { 0 } else { 1 });
        }
        if b < 0 {
            return 2;
        }
        libc::close(sync[0]);
        if !boxed.write_for(proc_folder, b) {
            libc::kill(b, libc::SIGKILL);
            let mut status = 0;
            raw::wait_for(b, &mut status);
            return 2;
        }
        libc::write(sync[1], b"g".as_ptr().cast(), 1);
        let mut status = 0;
        if !raw::wait_for(b, &mut status) || !libc::WIFEXITED(status) {
            return 2;
        }
        libc::WEXITSTATUS(status)
    }
}

/// What to tell before the first implementation starts: that the box is off, or each
/// protection it lacks on this machine. The command prints it (nothing here prints).
pub(crate) fn warnings(sandbox: Sandbox) -> Vec<String> {
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
