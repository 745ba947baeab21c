//! The pipes between dlqspec and an implementation process beyond the standard three: the
//! protocol channel offered as fd 3, and writes to stdin that wait no longer than a deadline.
//!
//! A Node program cannot move its own fd 1 away (no `dup2` without a native addon), so a
//! student's `fs.writeSync(1, ...)`, or a child started with `stdio: 'inherit'`, would land
//! in the protocol stream. dlqspec therefore offers every implementation a pipe as fd 3, named
//! by `DLQSPEC_PROTOCOL_FD`; an implementation that answers `hello` there speaks the protocol
//! on it, and its stdout is its own output (docs/protocol.md, Transport).

use std::io::{self, Write};
use std::process::{ChildStdin, Command};
use std::time::Instant;

/// The descriptor the protocol channel is offered as, and the variable that names it.
pub const CHANNEL_FD: i32 = 3;
pub const CHANNEL_VARIABLE: &str = "DLQSPEC_PROTOCOL_FD";

/// Why a line did not reach the process.
#[derive(Debug, PartialEq, Eq)]
pub enum Unwritten {
    /// Its stdin is closed: the process is gone or going.
    Closed,
    /// Its stdin took no more by the deadline: it stopped reading.
    Stalled,
}

/// The channel's pipe while the process starts: the end dlqspec reads, and the end the child
/// gets as fd 3 (dlqspec's copy of it is closed once the child has its own).
#[cfg(unix)]
pub struct Offered {
    read: std::os::fd::OwnedFd,
    write: super::descriptors::Handed,
}

#[cfg(not(unix))]
pub struct Offered;

impl Offered {
    /// The end to read, closing dlqspec's copy of the write end: the channel ends when the
    /// implementation's processes have all closed theirs.
    pub fn reader(self) -> std::fs::File {
        #[cfg(unix)]
        {
            drop(self.write);
            std::fs::File::from(self.read)
        }
        #[cfg(not(unix))]
        unreachable!("no channel is offered off Unix")
    }
}

/// Sets `command` up to give its child the channel as fd 3, and names it in its environment.
/// `None` where no channel is offered (off Unix): stdout carries the protocol there.
#[cfg(unix)]
pub fn offer(command: &mut Command) -> io::Result<Option<Offered>> {
    use std::os::fd::AsRawFd;

    // Both ends close on exec: the child gets its end as fd 3 alone.
    let (read, write) = io::pipe()?;
    let write = super::descriptors::hand(command, &[(write.as_raw_fd(), CHANNEL_FD)])?;
    command.env(CHANNEL_VARIABLE, CHANNEL_FD.to_string());
    Ok(Some(Offered {
        read: read.into(),
        write,
    }))
}

#[cfg(not(unix))]
pub fn offer(_command: &mut Command) -> io::Result<Option<Offered>> {
    Ok(None)
}

/// Makes dlqspec's end of the child's stdin non-blocking (the child's end is its own).
pub fn non_blocking(stdin: &ChildStdin) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let fd = stdin.as_raw_fd();
        // SAFETY: reading and setting the flags of a descriptor dlqspec owns.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(unix))]
    let _ = stdin;
    Ok(())
}

/// Writes all of `bytes` to a non-blocking stdin, waiting for room until `deadline` at most.
/// A line that fits the pipe is one write, with no wait.
#[cfg(unix)]
pub fn write_by(stdin: &mut ChildStdin, bytes: &[u8], deadline: Instant) -> Result<(), Unwritten> {
    let mut rest = bytes;
    while !rest.is_empty() {
        match stdin.write(rest) {
            Ok(0) => return Err(Unwritten::Closed),
            Ok(written) => rest = &rest[written..],
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                if !writable(stdin, deadline) {
                    return Err(Unwritten::Stalled);
                }
            }
            Err(_) => return Err(Unwritten::Closed),
        }
    }
    Ok(())
}

/// Off Unix stdin blocks: a process that stops reading holds the write (see the Unix version).
#[cfg(not(unix))]
pub fn write_by(stdin: &mut ChildStdin, bytes: &[u8], _deadline: Instant) -> Result<(), Unwritten> {
    stdin
        .write_all(bytes)
        .and_then(|()| stdin.flush())
        .map_err(|_| Unwritten::Closed)
}

/// Whether the pipe has room (or an error to tell) before `deadline`.
#[cfg(unix)]
fn writable(stdin: &ChildStdin, deadline: Instant) -> bool {
    use std::os::fd::AsRawFd;
    let mut poll = libc::pollfd {
        fd: stdin.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let millis = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, for the length of the call.
        match unsafe { libc::poll(&mut poll, 1, millis) } {
            0 => return false,
            n if n > 0 => return true,
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {
                if left.is_zero() {
                    return false;
                }
            }
            // A poll that fails leaves the write to tell what is wrong.
            _ => return true,
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_write_to_a_reader_that_stops_reading_ends_at_the_deadline() {
        let mut child = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::piped())
            .spawn()
            .expect("sleep runs");
        let mut stdin = child.stdin.take().expect("piped");
        non_blocking(&stdin).expect("non-blocking");
        // Far more than any pipe holds.
        let line = vec![b'x'; 8 << 20];
        let written = write_by(
            &mut stdin,
            &line,
            Instant::now() + Duration::from_millis(200),
        );
        assert_eq!(written, Err(Unwritten::Stalled));
        child.kill().expect("killed");
        child.wait().expect("reaped");
        // Its stdin is gone now.
        assert_eq!(
            write_by(&mut stdin, &line, Instant::now() + Duration::from_secs(30)),
            Err(Unwritten::Closed)
        );
    }

    #[test]
    fn the_child_finds_the_channel_as_fd_3_and_named() {
        let mut command = Command::new("sh");
        command
            .args(["-c", "echo \"$DLQSPEC_PROTOCOL_FD\" >&3; echo own"])
            .stdout(Stdio::null());
        let offered = offer(&mut command)
            .expect("a pipe")
            .expect("offered on Unix");
        let mut child = command.spawn().expect("sh runs");
        let mut reader = offered.reader();
        let mut said = String::new();
        reader.read_to_string(&mut said).expect("read to its end");
        child.wait().expect("reaped");
        assert_eq!(said, "3\n");
    }
}
