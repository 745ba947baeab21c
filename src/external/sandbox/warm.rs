//! A box's side of a warm start (`zygote`): its process 1 (B), once the box is made exactly as
//! for a cold start, asks the zygote for the implementation instead of forking it, handing
//! over the box's descriptors and namespaces; where the zygote cannot be asked, B goes on as a
//! cold B does, so the start is cold in the same box.

use std::os::fd::RawFd;

use super::raw;

/// What a warm start sends, made before fork: the text the zygote reads (the shim's argv,
/// environment, working folder, uid, limits, the system-call filter) and the socket to it.
pub(crate) struct WarmRequest {
    pub(in crate::external) payload: Vec<u8>,
    pub(in crate::external) control: RawFd,
}

/// What B tells its zygote besides the payload: every descriptor of the box, in this order.
pub(crate) const HANDED: usize = 16;

/// How many `cgroup.procs` files of the box are handed (pids, memory, cpu: the same file
/// again where one folder holds more than one controller, as in cgroup v2).
pub(crate) const CGROUPS: usize = 3;

/// The box's namespaces B opens for the zygote's child, in the order they are handed: the PID
/// namespace it is forked into, then the ones it joins, in the order it joins them: its user
/// namespace first, which gives it the rights to join the others.
const NAMESPACE_FILES: [&std::ffi::CStr; 7] = [
    c"/proc/self/ns/pid",
    c"/proc/self/ns/user",
    c"/proc/self/ns/mnt",
    c"/proc/self/ns/net",
    c"/proc/self/ns/ipc",
    c"/proc/self/ns/uts",
    c"/proc/self/ns/cgroup",
];

/// The implementation in a warm box: process 1 is B, process 2 the zygote's child that joins
/// the box, and 3 the one it forks.
const IMPLEMENTATION_PID: libc::pid_t = 3;

/// How long B waits, a millisecond at a time, for the implementation to become its child
/// once the zygote's child has gone: a hang-guard only (it takes a moment).
const ADOPTION_TRIES: u32 = 30_000;

/// B of a warm box: asks the zygote with the box's descriptors (`ruleset`, the `cgroup.procs`
/// files A opened before it left the host's view, and the namespaces opened here), then waits
/// for the zygote's child to say it started the implementation, reaps every process of the
/// namespace, and writes the implementation's wait status on `status`; leaving ends every
/// process left in the namespace. Returns only when the zygote could not be asked: then B
/// starts the implementation cold.
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory prepared before the fork.
#[expect(
    clippy::disallowed_methods,
    reason = "writes to a descriptor: the status pipe of a warm start"
)]
pub(crate) unsafe fn serve(
    request: &WarmRequest,
    ruleset: libc::c_int,
    cgroup_procs: [libc::c_int; CGROUPS],
    status: libc::c_int,
) {
    // The space for sixteen descriptors' control message (CMSG_SPACE(64) = 80), aligned.
    let mut space = [0u64; 10];
    unsafe {
        let mut namespaces = [-1; NAMESPACE_FILES.len()];
        for (fd, path) in namespaces.iter_mut().zip(NAMESPACE_FILES) {
            *fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        }
        let mut reply = [-1; 2];
        let opened = namespaces.iter().all(|fd| *fd >= 0)
            && libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                reply.as_mut_ptr(),
            ) == 0;
        let close_all = |fds: &[libc::c_int]| {
            for fd in fds {
                if *fd >= 0 {
                    libc::close(*fd);
                }
            }
        };
        if !opened {
            close_all(&namespaces);
            close_all(&reply);
            return;
        }
        // The namespaces go last; the length in the type keeps the whole HANDED long.
        let before_namespaces: [libc::c_int; HANDED - NAMESPACE_FILES.len()] = [
            0,
            1,
            2,
            super::super::pipes::CHANNEL_FD,
            reply[1],
            ruleset,
            cgroup_procs[0],
            cgroup_procs[1],
            cgroup_procs[2],
        ];
        let mut fds = [-1; HANDED];
        for (slot, fd) in fds
            .iter_mut()
            .zip(before_namespaces.iter().chain(&namespaces))
        {
            *slot = *fd;
        }
        if !send_with(request.control, &request.payload, &fds, &mut space) {
            close_all(&namespaces);
            close_all(&reply);
            return;
        }
        let reply_end = reply[0];
        close_all_but_two(reply_end, status);
        let report = |wait_status: libc::c_int| -> ! {
            let bytes = wait_status.to_ne_bytes();
            libc::write(status, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0)
        };
        // 'S' once the implementation is forked; the zygote's child (process 2) ends right
        // after, or without it when it refused the request or could not join the box (it
        // said why on the implementation's stderr): then as that child ended, 121.
        let mut started = [0u8; 1];
        if raw::read_fully(reply_end, &mut started) != 1 || started[0] != b'S' {
            report(121 << 8);
        }
        libc::close(reply_end);
        // The implementation becomes this process's child once the zygote's child has ended
        // (an orphan of the namespace is its process 1's); reaped with every other one.
        let mut tries = 0;
        loop {
            let mut wait_status = 0;
            let reaped = libc::waitpid(-1, &mut wait_status, 0);
            if reaped == IMPLEMENTATION_PID {
                report(wait_status);
            }
            if reaped < 0 {
                match raw::last_error().raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::ECHILD) if tries < ADOPTION_TRIES => {
                        tries += 1;
                        let pause = libc::timespec {
                            tv_sec: 0,
                            tv_nsec: 1_000_000,
                        };
                        libc::nanosleep(&pause, std::ptr::null_mut());
                    }
                    _ => report(125 << 8),
                }
            }
        }
    }
}

/// Closes every descriptor but `one` and `other`.
///
/// # Safety
/// Raw system calls only.
unsafe fn close_all_but_two(one: RawFd, other: RawFd) {
    let (low, high) = (one.min(other), one.max(other));
    unsafe {
        if low > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (low - 1) as u32, 0u32);
        }
        if high > low + 1 {
            libc::syscall(
                libc::SYS_close_range,
                (low + 1) as u32,
                (high - 1) as u32,
                0u32,
            );
        }
        libc::syscall(libc::SYS_close_range, (high + 1) as u32, u32::MAX, 0u32);
    }
}

/// Sends `payload` with the descriptors `fds` on `socket`, in one message.
///
/// # Safety
/// Raw system calls only; `space` holds the control message.
unsafe fn send_with(socket: RawFd, payload: &[u8], fds: &[libc::c_int], space: &mut [u64]) -> bool {
    unsafe {
        let mut iov = libc::iovec {
            iov_base: payload.as_ptr() as *mut libc::c_void,
            iov_len: payload.len(),
        };
        let bytes = std::mem::size_of_val(fds);
        if libc::CMSG_SPACE(bytes as u32) as usize > std::mem::size_of_val(space) {
            return false;
        }
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = space.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(bytes as u32) as usize;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(bytes as u32) as usize;
        std::ptr::copy_nonoverlapping(fds.as_ptr().cast::<u8>(), libc::CMSG_DATA(header), bytes);
        libc::sendmsg(socket, &message, libc::MSG_NOSIGNAL) == payload.len() as isize
    }
}
