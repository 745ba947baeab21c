//! The box's system-call filter (seccomp BPF): the last wall, applied just before exec, denying
//! what a solution never needs and Landlock does not mediate (docs/security.md).
//!
//! Modelled on Docker's default profile, as a deny list: the kernel keyrings, tracing and
//! reading other processes' memory, BPF and perf, userfaultfd, mounting, namespaces and
//! `setns`, kernel modules and kexec, handles that bypass paths, swap, reboot, syslog,
//! accounting, io_uring (which reaches the kernel around this filter), and `socket` of every
//! family but IPv4, IPv6 and netlink (a socket file anywhere, a VM socket to the
//! hypervisor: `socketpair` stays, which runtimes use). `clone` with a namespace
//! flag is denied; `clone3`, whose flags a filter cannot read, answers `ENOSYS`, so the C
//! library falls back to `clone`, as it does under Docker. A call of another architecture's
//! table (x32, i386 through `int 0x80`) kills the process: its numbers mean other calls.
//! The page cache is a channel no other wall mediates (every box reads the same `/usr`), so
//! the calls that probe or steer it without timing are denied: `fadvise64`, `readahead`,
//! `mincore`, `cachestat`, and `preadv2`/`pwritev2` with `RWF_NOWAIT` (which fails on a page
//! not cached; answered `EOPNOTSUPP`, as a file that cannot wait is, so a runtime that tries
//! it reads as always).
//!
//! The filter is plain data, built before fork and installed with one `prctl` in the child;
//! the warm start's Python child installs the same bytes (`bytes`).

/// One BPF instruction, as the kernel reads it (`struct sock_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Instruction {
    code: u16,
    jump_true: u8,
    jump_false: u8,
    value: u32,
}

/// The box's filter: its instructions, ready to install.
#[derive(Debug, Clone)]
pub(crate) struct SyscallFilter {
    instructions: Vec<Instruction>,
}

// The classic BPF opcodes a seccomp filter uses.
// BPF_LD (0x00) | BPF_W (0x00) | BPF_ABS (0x20).
const LOAD_WORD: u16 = 0x20;
const JUMP_EQUAL: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_AT_LEAST: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const JUMP_ANY_BIT: u16 = 0x05 | 0x40; // BPF_JMP | BPF_JSET | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K

// Offsets in `struct seccomp_data`: the call's number, the architecture, then the arguments
// (the low 32 bits of argument 0 on a little-endian machine).
const NUMBER_AT: u32 = 0;
const ARCHITECTURE_AT: u32 = 4;
const FIRST_ARGUMENT_AT: u32 = 16;
/// The low 32 bits of argument 5: `preadv2`'s and `pwritev2`'s flags.
const SIXTH_ARGUMENT_AT: u32 = FIRST_ARGUMENT_AT + 5 * 8;

/// `cachestat` (Linux 6.5), one number on every architecture; the libc crate names it on
/// some only.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SYS_CACHESTAT: libc::c_long = 451;

const ALLOW: u32 = 0x7fff_0000;
const KILL_PROCESS: u32 = 0x8000_0000;
const ERRNO: u32 = 0x0005_0000;

/// The architecture this filter checks every call against (`AUDIT_ARCH_*`).
#[cfg(target_arch = "x86_64")]
const ARCHITECTURE: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCHITECTURE: u32 = 0xC000_00B7;

/// The bit of x86-64's calls that selects the x32 table.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

/// The namespace flags of `clone` (`CLONE_NEW*`): a process in the box makes no namespace.
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// The only address families a box opens a socket of: those its own network namespace holds
/// (IPv4, IPv6, and netlink, which the C library asks for the interfaces). Every other one is
/// denied with `EPERM`: a Unix socket (a socket file anywhere), a VM socket (`AF_VSOCK`, which
/// no namespace holds: from a virtual machine or a CI runner it reaches the hypervisor's own
/// services), the kernel's crypto sockets (`AF_ALG`), and the rarely audited rest, as Docker's
/// default profile denies `AF_VSOCK` and `AF_ALG`.
pub(crate) const SOCKET_FAMILIES: &[libc::c_int] =
    &[libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK];

/// The calls denied with `EPERM`, by name (for the documentation and the tests) and number.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const DENIED: &[(&str, libc::c_long)] = &[
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("pidfd_getfd", libc::SYS_pidfd_getfd),
    ("kcmp", libc::SYS_kcmp),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("chroot", libc::SYS_chroot),
    ("open_tree", libc::SYS_open_tree),
    ("move_mount", libc::SYS_move_mount),
    ("fsopen", libc::SYS_fsopen),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fspick", libc::SYS_fspick),
    ("mount_setattr", libc::SYS_mount_setattr),
    ("unshare", libc::SYS_unshare),
    ("setns", libc::SYS_setns),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("name_to_handle_at", libc::SYS_name_to_handle_at),
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("delete_module", libc::SYS_delete_module),
    ("syslog", libc::SYS_syslog),
    ("acct", libc::SYS_acct),
    ("swapon", libc::SYS_swapon),
    ("swapoff", libc::SYS_swapoff),
    ("reboot", libc::SYS_reboot),
    ("quotactl", libc::SYS_quotactl),
    ("lookup_dcookie", libc::SYS_lookup_dcookie),
    ("fanotify_init", libc::SYS_fanotify_init),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("memfd_secret", libc::SYS_memfd_secret),
    ("move_pages", libc::SYS_move_pages),
    ("migrate_pages", libc::SYS_migrate_pages),
    ("vhangup", libc::SYS_vhangup),
    // The page cache, which every box shares through the same system files: what a hidden
    // spec's process evicts or loads, a later process would read back (docs/security.md).
    ("fadvise64", libc::SYS_fadvise64),
    ("readahead", libc::SYS_readahead),
    ("mincore", libc::SYS_mincore),
    ("cachestat", SYS_CACHESTAT),
];

impl SyscallFilter {
    /// The box's filter. `no_shared_memory_files` also denies `memfd_create`, where no memory
    /// cgroup counts what such a file holds (then it would be memory outside every limit).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    pub(crate) fn for_box(no_shared_memory_files: bool) -> SyscallFilter {
        let mut denied: Vec<libc::c_long> = DENIED.iter().map(|(_, number)| *number).collect();
        if no_shared_memory_files {
            denied.push(libc::SYS_memfd_create);
        }
        let eperm = ERRNO | libc::EPERM as u32;
        let mut program = vec![
            load(ARCHITECTURE_AT),
            jump(JUMP_EQUAL, ARCHITECTURE, 1, 0),
            ret(KILL_PROCESS),
            load(NUMBER_AT),
        ];
        #[cfg(target_arch = "x86_64")]
        program.extend([jump(JUMP_AT_LEAST, X32_BIT, 0, 1), ret(KILL_PROCESS)]);
        for number in denied {
            program.extend([jump(JUMP_EQUAL, number as u32, 0, 1), ret(eperm)]);
        }
        program.extend([
            jump(JUMP_EQUAL, libc::SYS_clone3 as u32, 0, 1),
            ret(ERRNO | libc::ENOSYS as u32),
        ]);
        // preadv2 and pwritev2 with RWF_NOWAIT: whether a page is cached, without timing.
        program.extend([
            jump(JUMP_EQUAL, libc::SYS_preadv2 as u32, 1, 0),
            jump(JUMP_EQUAL, libc::SYS_pwritev2 as u32, 0, 4),
            load(SIXTH_ARGUMENT_AT),
            jump(JUMP_ANY_BIT, libc::RWF_NOWAIT as u32, 0, 1),
            ret(ERRNO | libc::EOPNOTSUPP as u32),
            ret(ALLOW),
        ]);
        // socket(family, ...) of a family but `SOCKET_FAMILIES`: the accumulator then holds
        // the argument, so each branch ends.
        program.extend([
            // Past the load, a test per family, the denial and the allowance.
            jump(
                JUMP_EQUAL,
                libc::SYS_socket as u32,
                0,
                SOCKET_FAMILIES.len() as u8 + 3,
            ),
            load(FIRST_ARGUMENT_AT),
        ]);
        for (at, family) in SOCKET_FAMILIES.iter().enumerate() {
            let to_allow = (SOCKET_FAMILIES.len() - at) as u8;
            program.push(jump(JUMP_EQUAL, *family as u32, to_allow, 0));
        }
        program.extend([ret(eperm), ret(ALLOW)]);
        // clone(flags, ...) with a namespace flag (argument 0 on both architectures).
        program.extend([
            jump(JUMP_EQUAL, libc::SYS_clone as u32, 0, 4),
            load(FIRST_ARGUMENT_AT),
            jump(JUMP_ANY_BIT, NAMESPACE_FLAGS, 0, 1),
            ret(eperm),
            ret(ALLOW),
        ]);
        program.push(ret(ALLOW));
        SyscallFilter {
            instructions: program,
        }
    }

    /// No filter on this architecture: `installable` says so.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(crate) fn for_box(_no_shared_memory_files: bool) -> SyscallFilter {
        SyscallFilter {
            instructions: Vec::new(),
        }
    }

    /// No filter at all: for a kernel without seccomp.
    pub(crate) fn disabled(self) -> SyscallFilter {
        SyscallFilter {
            instructions: Vec::new(),
        }
    }

    /// The instructions as the kernel reads them (8 bytes each, native byte order): what the
    /// warm start's child installs.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.instructions.len() * 8);
        for instruction in &self.instructions {
            bytes.extend(instruction.code.to_ne_bytes());
            bytes.push(instruction.jump_true);
            bytes.push(instruction.jump_false);
            bytes.extend(instruction.value.to_ne_bytes());
        }
        bytes
    }

    /// Installs the filter on the calling thread (and what it execs or forks from then on).
    /// no_new_privs must be set first.
    ///
    /// # Safety
    /// Raw system calls only, on memory prepared before the fork: callable between fork and
    /// exec.
    #[cfg(target_os = "linux")]
    pub(crate) unsafe fn install(&self) -> std::io::Result<()> {
        if self.instructions.is_empty() {
            return Ok(());
        }
        let program = libc::sock_fprog {
            len: self.instructions.len() as libc::c_ushort,
            filter: self.instructions.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: `program` points at instructions laid out as `struct sock_filter`, alive for
        // the call.
        let done = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &program as *const libc::sock_fprog as libc::c_ulong,
                0,
                0,
            )
        };
        if done == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

const _: () = assert!(std::mem::size_of::<Instruction>() == 8);

fn load(offset: u32) -> Instruction {
    Instruction {
        code: LOAD_WORD,
        jump_true: 0,
        jump_false: 0,
        value: offset,
    }
}

fn jump(code: u16, value: u32, jump_true: u8, jump_false: u8) -> Instruction {
    Instruction {
        code,
        jump_true,
        jump_false,
        value,
    }
}

fn ret(value: u32) -> Instruction {
    Instruction {
        code: RETURN,
        jump_true: 0,
        jump_false: 0,
        value,
    }
}

/// Whether this kernel filters system calls (`CONFIG_SECCOMP_FILTER`).
#[cfg(target_os = "linux")]
pub(crate) fn available() -> bool {
    // SAFETY: PR_GET_SECCOMP reads nothing of ours.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

#[cfg(all(
    test,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod tests {
    use super::*;

    /// Runs `probe` in a forked child under the filter; its exit code.
    fn under_filter(filter: &SyscallFilter, probe: fn() -> i32) -> i32 {
        // SAFETY: the child makes raw system calls and exits; the parent waits for it.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || filter.install().is_err()
                {
                    libc::_exit(100);
                }
                libc::_exit(probe());
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -libc::WTERMSIG(status)
            }
        }
    }

    fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    #[test]
    fn the_keyrings_are_denied_with_eperm() {
        let got = under_filter(&SyscallFilter::for_box(true), || unsafe {
            let r = libc::syscall(libc::SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0);
            if r < 0 && errno() == libc::EPERM {
                0
            } else {
                1
            }
        });
        assert_eq!(got, 0);
    }

    #[test]
    fn a_unix_socket_is_denied_but_a_socket_pair_and_an_inet_socket_are_not() {
        let got = under_filter(&SyscallFilter::for_box(true), || unsafe {
            let unix = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            if !(unix < 0 && errno() == libc::EPERM) {
                return 1;
            }
            let mut pair = [0; 2];
            if libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr()) != 0 {
                return 2;
            }
            if libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) < 0 {
                return 3;
            }
            0
        });
        assert_eq!(got, 0);
    }

    #[test]
    fn a_socket_of_a_family_no_network_namespace_holds_is_denied() {
        let got = under_filter(&SyscallFilter::for_box(true), || unsafe {
            for family in [
                libc::AF_VSOCK,
                libc::AF_ALG,
                libc::AF_PACKET,
                libc::AF_BLUETOOTH,
            ] {
                let fd = libc::socket(family, libc::SOCK_STREAM, 0);
                if !(fd < 0 && errno() == libc::EPERM) {
                    return family;
                }
            }
            for family in SOCKET_FAMILIES {
                let kind = if *family == libc::AF_NETLINK {
                    libc::SOCK_RAW
                } else {
                    libc::SOCK_STREAM
                };
                if libc::socket(*family, kind, 0) < 0 {
                    return 100 + family;
                }
            }
            0
        });
        assert_eq!(got, 0);
    }

    #[test]
    fn a_namespace_is_denied_and_clone3_falls_back() {
        let got = under_filter(&SyscallFilter::for_box(true), || unsafe {
            if !(libc::unshare(libc::CLONE_NEWUSER) != 0 && errno() == libc::EPERM) {
                return 1;
            }
            let r = libc::syscall(
                libc::SYS_clone,
                (libc::CLONE_NEWUSER | libc::SIGCHLD) as libc::c_ulong,
                0usize,
                0usize,
                0usize,
                0usize,
            );
            if r == 0 {
                libc::_exit(9);
            }
            if !(r < 0 && errno() == libc::EPERM) {
                return 2;
            }
            let r = libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0usize);
            if !(r < 0 && errno() == libc::ENOSYS) {
                return 3;
            }
            // A plain fork still works.
            let child = libc::fork();
            if child == 0 {
                libc::_exit(0);
            }
            let mut status = 0;
            if child < 0 || libc::waitpid(child, &mut status, 0) != child {
                return 4;
            }
            0
        });
        assert_eq!(got, 0);
    }

    #[test]
    fn the_page_cache_is_neither_probed_nor_steered_and_a_plain_read_works() {
        let got = under_filter(&SyscallFilter::for_box(false), || unsafe {
            let fd = libc::open(c"/proc/self/exe".as_ptr(), libc::O_RDONLY);
            if fd < 0 {
                return 1;
            }
            let advice = libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
            if advice != libc::EPERM {
                return 2;
            }
            if !(libc::readahead(fd, 0, 4096) < 0 && errno() == libc::EPERM) {
                return 3;
            }
            let mut byte = [0u8; 8];
            let mut iov = libc::iovec {
                iov_base: byte.as_mut_ptr().cast(),
                iov_len: byte.len(),
            };
            let r = libc::syscall(libc::SYS_preadv2, fd, &mut iov, 1, 0, 0, libc::RWF_NOWAIT);
            if !(r < 0 && errno() == libc::EOPNOTSUPP) {
                return 4;
            }
            // The same call without the flag reads.
            if libc::syscall(libc::SYS_preadv2, fd, &mut iov, 1, 0, 0, 0) != 8 {
                return 5;
            }
            let page = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                fd,
                0,
            );
            let mut resident = [0u8; 1];
            if page == libc::MAP_FAILED
                || !(libc::mincore(page, 4096, resident.as_mut_ptr()) < 0 && errno() == libc::EPERM)
            {
                return 7;
            }
            let r = libc::syscall(SYS_CACHESTAT, fd, 0usize, 0usize, 0usize);
            if !(r < 0 && errno() == libc::EPERM) {
                return 8;
            }
            let mut out = [0u8; 1];
            let mut iov = libc::iovec {
                iov_base: out.as_mut_ptr().cast(),
                iov_len: 1,
            };
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            let r = libc::syscall(
                libc::SYS_pwritev2,
                null,
                &mut iov,
                1,
                -1,
                -1,
                libc::RWF_NOWAIT,
            );
            if !(r < 0 && errno() == libc::EOPNOTSUPP) {
                return 9;
            }
            0
        });
        assert_eq!(got, 0);
    }

    #[test]
    fn memfd_create_is_denied_only_when_asked() {
        fn memfd() -> i32 {
            let fd = unsafe { libc::memfd_create(c"x".as_ptr(), 0) };
            if fd >= 0 {
                0
            } else if errno() == libc::EPERM {
                7
            } else {
                1
            }
        }
        assert_eq!(under_filter(&SyscallFilter::for_box(true), memfd), 7);
        assert_eq!(under_filter(&SyscallFilter::for_box(false), memfd), 0);
    }

    #[test]
    fn every_denied_call_answers_eperm_and_the_bytes_are_the_instructions() {
        let filter = SyscallFilter::for_box(true);
        assert_eq!(filter.bytes().len(), filter.instructions.len() * 8);
        let got = under_filter(&filter, || unsafe {
            // Calls whose arguments would do something are made with invalid ones: the filter
            // answers before the kernel reads them.
            for (at, (_, number)) in DENIED.iter().enumerate() {
                if *number == libc::SYS_vhangup {
                    continue;
                }
                let r = libc::syscall(*number, -1isize, 0usize, 0usize, 0usize, 0usize, 0usize);
                if !(r < 0 && errno() == libc::EPERM) {
                    return 10 + at as i32;
                }
            }
            0
        });
        assert_eq!(got, 0);
    }
}
