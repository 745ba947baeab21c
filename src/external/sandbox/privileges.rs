//! Giving up every privilege before exec: capabilities, root's special treatment, the uid and
//! groups, the session keyring; and the maps of a box's user namespace.

use std::ffi::CString;
use std::io;

use super::raw;

/// The texts of a user namespace's maps: one uid and one gid, each mapped to itself.
#[derive(Clone)]
pub(crate) struct Maps {
    pub(crate) uid_map: CString,
    pub(crate) gid_map: CString,
    /// Whether `setgroups` is denied first (a map an unprivileged writer makes must be).
    pub(crate) deny_setgroups: bool,
}

impl Maps {
    /// `uid` and `gid` mapped to themselves.
    pub(crate) fn identity(uid: u32, gid: u32, deny_setgroups: bool) -> Maps {
        let c = |text: String| CString::new(text).unwrap_or_default();
        Maps {
            uid_map: c(format!("{uid} {uid} 1")),
            gid_map: c(format!("{gid} {gid} 1")),
            deny_setgroups,
        }
    }

    /// Writes the maps of process `pid`'s user namespace through `proc` (a descriptor of a
    /// `/proc` that shows it), `setgroups` first where it is denied.
    ///
    /// # Safety
    /// Raw system calls only.
    pub(crate) unsafe fn write_for(&self, proc: libc::c_int, pid: libc::pid_t) -> bool {
        unsafe {
            let write = |name: &[u8], bytes: &[u8]| write_at(proc, pid, name, bytes);
            (!self.deny_setgroups || write(b"setgroups", b"deny"))
                && write(b"uid_map", self.uid_map.as_bytes())
                && write(b"gid_map", self.gid_map.as_bytes())
        }
    }

    /// Writes the maps of this process's own user namespace, just unshared.
    ///
    /// # Safety
    /// Raw system calls only.
    pub(crate) unsafe fn write_own(&self) -> bool {
        unsafe {
            (!self.deny_setgroups || raw::write_file(&c_path("/proc/self/setgroups"), b"deny"))
                && raw::write_file(&c_path("/proc/self/uid_map"), self.uid_map.as_bytes())
                && raw::write_file(&c_path("/proc/self/gid_map"), self.gid_map.as_bytes())
        }
    }
}

fn c_path(path: &str) -> CString {
    CString::new(path).unwrap_or_default()
}

/// Writes `bytes` to `PID/NAME` beneath the `/proc` descriptor `proc`.
///
/// # Safety
/// Raw system calls only.
#[expect(
    clippy::disallowed_methods,
    reason = "writes to a descriptor: a kernel control file under /proc (a uid map, setgroups)"
)]
unsafe fn write_at(proc: libc::c_int, pid: libc::pid_t, name: &[u8], bytes: &[u8]) -> bool {
    let mut buffer = [0u8; 64];
    let Some(path) = raw::proc_file(pid, name, &mut buffer) else {
        return false;
    };
    // `/proc/PID/NAME` relative to the descriptor: drop the leading `/proc/`.
    let relative = &path[b"/proc/".len()..];
    unsafe {
        let fd = libc::openat(
            proc,
            relative.as_ptr().cast(),
            libc::O_WRONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        written == bytes.len() as isize
    }
}

/// Drops every privilege: the bounding and ambient capability sets, root's special treatment
/// (securebits, locked), the supplementary groups when `clear_groups` (the namespace must
/// allow `setgroups`), then the uid and gid when given, then every capability left.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn drop_privileges(
    user: Option<(u32, u32)>,
    clear_groups: bool,
) -> io::Result<()> {
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
        if clear_groups && libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(raw::last_error());
        }
        if let Some((uid, gid)) = user
            && (libc::setresgid(gid, gid, gid) != 0 || libc::setresuid(uid, uid, uid) != 0)
        {
            return Err(raw::last_error());
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
            return Err(raw::last_error());
        }
        Ok(())
    }
}

/// Joins a fresh, empty session keyring: a second wall behind the filter that denies the
/// keyring calls, so nothing the grader keeps in its own session keyring is this process's.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn join_fresh_session_keyring() -> io::Result<()> {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    unsafe {
        let joined = libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        );
        // A kernel without keyrings has none to share either.
        if joined < 0 && raw::last_error().raw_os_error() != Some(libc::ENOSYS) {
            return Err(raw::last_error());
        }
        Ok(())
    }
}
