//! Raw, async-signal-safe system calls the box's processes make between fork and exec: no
//! allocation, no lock, only memory prepared before the fork.

use std::ffi::CString;
use std::io;

/// Writes `bytes` to the file at `path` (a kernel control file: a map, `cgroup.procs`).
///
/// # Safety
/// Raw system calls only: callable between fork and exec.
#[expect(
    clippy::disallowed_methods,
    reason = "writes to a descriptor: a kernel control file (a map, `cgroup.procs`), between fork and exec"
)]
pub(crate) unsafe fn write_file(path: &CString, bytes: &[u8]) -> bool {
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

/// A path `/proc/PID/NAME` written into `buffer` without allocating, NUL-terminated; `None`
/// when it does not fit.
pub(crate) fn proc_file<'a>(
    pid: libc::pid_t,
    name: &[u8],
    buffer: &'a mut [u8; 64],
) -> Option<&'a [u8]> {
    let mut digits = [0u8; 12];
    let mut count = 0;
    let mut rest = pid.unsigned_abs();
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let length = b"/proc/".len() + count + 1 + name.len() + 1;
    if length > buffer.len() {
        return None;
    }
    let mut at = 0;
    for byte in b"/proc/"
        .iter()
        .copied()
        .chain(digits[..count].iter().rev().copied())
    {
        buffer[at] = byte;
        at += 1;
    }
    buffer[at] = b'/';
    at += 1;
    buffer[at..at + name.len()].copy_from_slice(name);
    at += name.len();
    buffer[at] = 0;
    Some(&buffer[..=at])
}

/// Closes every descriptor but `keep`.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn close_all_but(keep: libc::c_int) {
    unsafe {
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
    }
}

/// Waits for `pid`, through interruptions; whether it was reaped.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn wait_for(pid: libc::pid_t, status: &mut libc::c_int) -> bool {
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

/// Reads until `buffer` is full or the other end is gone; how many bytes came.
///
/// # Safety
/// Raw system calls only.
pub(crate) unsafe fn read_fully(fd: libc::c_int, buffer: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buffer.len() {
        // SAFETY: reading into the rest of `buffer`.
        let read = unsafe { libc::read(fd, buffer[got..].as_mut_ptr().cast(), buffer.len() - got) };
        if read > 0 {
            got += read as usize;
        } else if read < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        } else {
            break;
        }
    }
    got
}

/// How a wait status is mirrored: the same exit code, or the same signal.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Mirrored {
    Exit(i32),
    Signal(i32),
}

/// What a process that mirrors wait status `status` does.
pub(crate) fn mirrored(status: libc::c_int) -> Mirrored {
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
pub(crate) unsafe fn mirror(status: libc::c_int) -> ! {
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

/// The errno of the last failed call, as an error.
pub(crate) fn last_error() -> io::Error {
    io::Error::last_os_error()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proc_file_path_is_written_without_allocating() {
        let mut buffer = [0u8; 64];
        let path = proc_file(4321, b"uid_map", &mut buffer).unwrap();
        assert_eq!(path, b"/proc/4321/uid_map\0");
        let mut buffer = [0u8; 64];
        assert_eq!(
            proc_file(0, b"gid_map", &mut buffer).unwrap(),
            b"/proc/0/gid_map\0"
        );
        let mut buffer = [0u8; 64];
        assert!(proc_file(1, &[b'x'; 60], &mut buffer).is_none());
    }

    #[test]
    fn a_status_is_mirrored_as_the_same_code_or_signal() {
        assert_eq!(mirrored(0), Mirrored::Exit(0));
        assert_eq!(mirrored(3 << 8), Mirrored::Exit(3));
        assert_eq!(mirrored(libc::SIGKILL), Mirrored::Signal(libc::SIGKILL));
        assert_eq!(mirrored(libc::SIGXCPU), Mirrored::Signal(libc::SIGXCPU));
    }
}
