//! Keeping what dlqspec holds out of its implementations' reach: its descriptors are not
//! inherited by the processes it starts, and no process of the same user can open them
//! through `/proc/PID/fd` or read its memory.
//!
//! A second wall behind the sandbox: `grade` hands each `dlqspec run` the pipe its report goes
//! through as descriptor 3, and a run's reports are written through descriptors too. An
//! implementation that found them (inherited, or opened through `/proc`) could write its own
//! verdict into them. A process that is not "dumpable" (`PR_SET_DUMPABLE` 0) has its `/proc`
//! entries owned by root and refuses `ptrace` to other processes of its user; root, or a
//! process with `CAP_SYS_PTRACE`, still passes (the sandbox takes that away).

/// Hardens the calling process: every descriptor above stderr is closed on `exec`, and the
/// process is no longer dumpable. Call it before starting any implementation.
pub(crate) fn harden_own_process() {
    #[cfg(target_os = "linux")]
    {
        for fd in open_descriptors() {
            if fd > 2 {
                // SAFETY: fcntl on a descriptor number; a closed one only fails.
                unsafe {
                    let flags = libc::fcntl(fd, libc::F_GETFD);
                    if flags >= 0 {
                        libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                    }
                }
            }
        }
        // SAFETY: prctl with integer arguments only.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
    }
}

/// The descriptors this process has open, from `/proc/self/fd`.
#[cfg(target_os = "linux")]
fn open_descriptors() -> Vec<i32> {
    std::fs::read_dir("/proc/self/fd")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn a_hardened_process_keeps_no_descriptor_for_its_children() {
        use std::os::unix::io::AsRawFd;
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on an open descriptor of this test.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, 0);
        }
        super::harden_own_process();
        // SAFETY: as above.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        // SAFETY: prctl with integer arguments only.
        assert_eq!(unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) }, 0);
        // Its own /proc entries stay its own: it reads its descriptors still.
        assert!(super::open_descriptors().contains(&fd));
        // SAFETY: as above; the test process goes back to normal.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
        }
    }
}
