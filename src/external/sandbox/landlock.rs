//! The box's Landlock rules, a second wall inside the minimal root (and the only file wall
//! where the kernel cannot make one): what the box may read and execute, where it may write,
//! no TCP, and no signal or abstract socket leaving its domain.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::raw;

/// The lowest descriptor the box's own may have in the child: those below are the ones
/// handed to the implementation (stdin, stdout, stderr and the protocol channel, `pipes`),
/// which are set up in the child before the box and would replace a box descriptor of the
/// same number.
pub(crate) const FIRST_BOX_DESCRIPTOR: libc::c_int = 10;
const _: () = assert!(FIRST_BOX_DESCRIPTOR > super::super::pipes::CHANNEL_FD);

/// The devices every box may write to (what a runtime opens to discard or to fill), where the
/// machine has them.
pub(crate) fn writable_devices() -> impl Iterator<Item = &'static str> {
    ["/dev/null", "/dev/zero", "/dev/full"]
        .into_iter()
        .filter(|device| Path::new(device).exists())
}

/// A box's ruleset: every file access of the best ABI handled; read and execute on
/// `readable`; writing to the devices; everything on `writable` (the fallback's private
/// folder); TCP handled with no rule (no TCP at all); signals and abstract sockets scoped to
/// the box. In the minimal root, the box's first process adds the rules for what it mounted
/// itself (`RulesForNewMounts`).
pub(crate) fn box_ruleset(
    abi: i32,
    readable: &[PathBuf],
    writable: Option<&Path>,
) -> Result<OwnedFd, String> {
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
    let mut created = ruleset
        .create()
        .map_err(text)?
        .add_rules(path_beneath_rules(&existing, read))
        .map_err(text)?
        .add_rules(path_beneath_rules(writable_devices(), AccessFs::WriteFile))
        .map_err(text)?;
    if let Some(writable) = writable {
        created = created
            .add_rules(path_beneath_rules([writable], AccessFs::from_all(abi)))
            .map_err(text)?;
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or("this kernel does not enforce Landlock")?;
    above_handed_descriptors(fd).map_err(|error| error.to_string())
}

/// The rights the box's first process grants on what it mounted itself, after `pivot_root`:
/// reading the whole new root (which shows nothing but what the box may see), everything in
/// its writable folder and `/dev/shm`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RulesForNewMounts {
    pub(crate) read: u64,
    pub(crate) all: u64,
}

impl RulesForNewMounts {
    pub(crate) fn for_abi(abi: i32) -> RulesForNewMounts {
        use landlock::{ABI, Access, AccessFs};
        let abi = ABI::from(abi);
        RulesForNewMounts {
            read: (AccessFs::ReadFile | AccessFs::ReadDir).bits(),
            all: AccessFs::from_all(abi).bits(),
        }
    }
}

/// The zygote's ruleset: TCP handled with no rule, signals and abstract sockets scoped. No
/// file rights are handled: each warm child's box is mounted after the zygote's domain is made,
/// and a rule can name only what exists; the zygote's files are held by its read-only mount
/// namespace instead, and each child's by its box.
/// `None` below Landlock ABI 4, where it would handle nothing (the zygote's network namespace
/// still holds).
pub(crate) fn zygote_ruleset(abi: i32) -> Result<Option<OwnedFd>, String> {
    use landlock::{ABI, Ruleset};
    let abi = ABI::from(abi);
    let text = |error: landlock::RulesetError| error.to_string();
    if abi < ABI::V4 {
        return Ok(None);
    }
    let ruleset = no_network_nor_signals(Ruleset::default(), abi).map_err(text)?;
    let created = ruleset.create().map_err(text)?;
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or("this kernel does not enforce Landlock")?;
    above_handed_descriptors(fd)
        .map(Some)
        .map_err(|error| error.to_string())
}

/// Adds to `ruleset` what the kernel `abi` can deny beyond files: every TCP bind and connect
/// (ABI 4), and signals and abstract sockets leaving the domain (ABI 6).
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

/// `fd`, moved above the descriptors handed to the implementation (close-on-exec kept).
pub(crate) fn above_handed_descriptors(fd: OwnedFd) -> io::Result<OwnedFd> {
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
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// Grants `access` beneath `path` in `ruleset`.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn allow_beneath(
    ruleset: libc::c_int,
    path: &std::ffi::CStr,
    access: u64,
) -> io::Result<()> {
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(raw::last_error());
        }
        let rule = PathBeneath {
            allowed_access: access,
            parent_fd: fd,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1u32, // LANDLOCK_RULE_PATH_BENEATH
            &rule as *const PathBeneath,
            0u32,
        );
        let error = raw::last_error();
        libc::close(fd);
        if added != 0 {
            return Err(error);
        }
        Ok(())
    }
}

/// Enters the domain `ruleset` describes.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn restrict_self(ruleset: libc::c_int) -> io::Result<()> {
    unsafe {
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(raw::last_error());
        }
        libc::close(ruleset);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_descriptors_lie_above_those_handed_to_the_implementation() {
        use std::os::fd::AsRawFd;
        let low = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        let moved = above_handed_descriptors(low).unwrap();
        assert!(moved.as_raw_fd() >= FIRST_BOX_DESCRIPTOR);
    }
}
