//! Descriptors handed to a child at fixed numbers (the protocol channel as 3, `grade`'s report
//! pipe and the zygote's socket): copied out of the way before the fork, so that the child only
//! has to `dup2` each onto its number.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// dlqspec's copies of the descriptors handed to a child: keep them until the child is spawned,
/// then drop them (the child has its own by then).
pub struct Handed {
    _copies: Vec<OwnedFd>,
}

/// Sets `command` up so that its child finds each `(descriptor, number)`'s descriptor open at
/// `number`, kept across exec; every other descriptor closes on exec as before. Each
/// `descriptor` must be open for this call only; each `number` must lie above stdin, stdout and
/// stderr, which the child has set up before this runs.
///
/// Each is first copied above every number handed, so that in the child no `dup2` lands on a
/// descriptor still to be handed, and none is a `dup2` onto itself (which would keep
/// close-on-exec).
pub fn hand(command: &mut Command, descriptors: &[(RawFd, RawFd)]) -> io::Result<Handed> {
    if let Some((_, number)) = descriptors.iter().find(|(_, number)| *number <= 2) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {number} is the child's stdin, stdout or stderr"),
        ));
    }
    let above = descriptors
        .iter()
        .map(|(_, number)| *number)
        .max()
        .unwrap_or(2)
        + 1;
    let mut copies = Vec::with_capacity(descriptors.len());
    let mut moves = Vec::with_capacity(descriptors.len());
    for &(descriptor, number) in descriptors {
        // SAFETY: fcntl only reads `descriptor`; a closed one is an error, not undefined.
        let copy = unsafe { libc::fcntl(descriptor, libc::F_DUPFD_CLOEXEC, above) };
        if copy < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fcntl just opened it, and nothing else owns it.
        copies.push(unsafe { OwnedFd::from_raw_fd(copy) });
        moves.push((copy, number));
    }
    // SAFETY: the closure runs in the child between fork and exec, makes only dup2 calls (which
    // are async-signal-safe) and allocates nothing; the copies stay open until spawn returns.
    unsafe {
        command.pre_exec(move || {
            for &(copy, number) in &moves {
                if libc::dup2(copy, number) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    Ok(Handed { _copies: copies })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;

    fn pipe() -> (std::io::PipeReader, OwnedFd) {
        let (read, write) = std::io::pipe().unwrap();
        (read, write.into())
    }

    /// A copy of `fd` at a free number of at least `from`, owned by the test.
    fn at_least(fd: &OwnedFd, from: RawFd) -> OwnedFd {
        // SAFETY: duplicating a descriptor the test owns.
        let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, from) };
        assert!(copy >= from);
        // SAFETY: fcntl just opened it.
        unsafe { OwnedFd::from_raw_fd(copy) }
    }

    fn read_all(mut file: std::io::PipeReader) -> String {
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn each_descriptor_reaches_its_number_even_where_another_lies_there_or_it_lies_itself() {
        let (first_out, first_in) = pipe();
        let (second_out, second_in) = pipe();
        let (third_out, third_in) = pipe();
        // The first lies at N, which the second is handed as: a plain dup2 in order would
        // replace the first before it reached N + 1. The third is handed as its own number.
        let first = at_least(&first_in, 600);
        let n = first.as_raw_fd();
        let third = at_least(&third_in, 700);
        let t = third.as_raw_fd();
        drop((first_in, third_in));
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "echo first >/proc/self/fd/{}; echo second >/proc/self/fd/{n}; echo third >/proc/self/fd/{t}",
            n + 1
        ));
        let handed = hand(
            &mut command,
            &[
                (second_in.as_raw_fd(), n),
                (first.as_raw_fd(), n + 1),
                (third.as_raw_fd(), t),
            ],
        )
        .unwrap();
        let mut child = command.spawn().unwrap();
        drop((handed, first, second_in, third));
        assert!(child.wait().unwrap().success());
        assert_eq!(read_all(first_out), "first\n");
        assert_eq!(read_all(second_out), "second\n");
        assert_eq!(read_all(third_out), "third\n");
    }

    #[test]
    fn stdin_stdout_and_stderr_are_not_handed_over() {
        let (_out, write) = pipe();
        let error = hand(&mut Command::new("true"), &[(write.as_raw_fd(), 1)])
            .err()
            .unwrap();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    }
}
