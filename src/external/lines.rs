//! Protocol lines from an implementation's stdout, read on the thread that waits for them.
//!
//! Every world call is a round trip, so the path from the child's write to dlqspec's answer is
//! the cost of each one. On Unix the reading thread polls the pipe itself with the time it may
//! wait: no reader thread, no channel, no wake-up between them (that hop cost about a quarter
//! of a round trip). Elsewhere a reader thread hands lines over a small channel.

use super::limits::MAX_LINE_BYTES;

/// What reading stdout gave.
#[derive(Debug, PartialEq, Eq)]
pub enum StdoutEvent {
    /// One line, without its line ending.
    Line(Vec<u8>),
    /// A line longer than the protocol allows; nothing more is read.
    TooLong,
    /// The child closed its stdout.
    Closed,
    Failed(String),
}

/// The bytes read from the pipe in one go.
const CHUNK: usize = 64 * 1024;

/// Cuts complete lines out of what was read so far.
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    /// Where the unread part starts.
    start: usize,
    /// How far from `start` is known to hold no line ending.
    scanned: usize,
    ended: bool,
}

impl Buffer {
    /// The next event the bytes read so far hold, if they hold one.
    fn next_event(&mut self) -> Option<StdoutEvent> {
        let unread = &self.bytes[self.start..];
        if let Some(at) = unread[self.scanned..].iter().position(|b| *b == b'\n') {
            let end = self.scanned + at;
            let mut line = unread[..end].to_vec();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.start += end + 1;
            self.scanned = 0;
            if line.len() > MAX_LINE_BYTES {
                self.ended = true;
                return Some(StdoutEvent::TooLong);
            }
            return Some(StdoutEvent::Line(line));
        }
        self.scanned = unread.len();
        if unread.len() > MAX_LINE_BYTES {
            self.ended = true;
            return Some(StdoutEvent::TooLong);
        }
        None
    }

    /// Adds bytes just read, dropping what was handed out already.
    fn push(&mut self, read: &[u8]) {
        if self.start > 0 {
            self.bytes.drain(..self.start);
            self.start = 0;
        }
        self.bytes.extend_from_slice(read);
    }

    /// The end of the stream: the last line without a line ending, if there is one, else
    /// `Closed`; every later call finds the stream closed.
    fn at_end(&mut self) -> StdoutEvent {
        self.ended = true;
        let rest = self.bytes.split_off(self.start);
        self.bytes.clear();
        (self.start, self.scanned) = (0, 0);
        if rest.is_empty() {
            StdoutEvent::Closed
        } else {
            StdoutEvent::Line(rest)
        }
    }
}

#[cfg(unix)]
mod platform {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::process::ChildStdout;
    use std::time::{Duration, Instant};

    use super::{Buffer, CHUNK, StdoutEvent};

    pub struct Lines {
        stdout: ChildStdout,
        buffer: Buffer,
        /// Where each read lands before its bytes join the buffer: reused, never re-zeroed.
        scratch: Box<[u8]>,
    }

    impl Lines {
        pub fn new(stdout: ChildStdout) -> std::io::Result<Lines> {
            Ok(Lines {
                stdout,
                buffer: Buffer::default(),
                scratch: vec![0; CHUNK].into_boxed_slice(),
            })
        }

        /// The next event, waiting for it at most `wait`; `None` when none came in time.
        pub fn next(&mut self, wait: Duration) -> Option<StdoutEvent> {
            if self.buffer.ended {
                return Some(StdoutEvent::Closed);
            }
            let until = Instant::now() + wait;
            loop {
                if let Some(event) = self.buffer.next_event() {
                    return Some(event);
                }
                let left = until.saturating_duration_since(Instant::now());
                readable(&self.stdout, left)?;
                match self.stdout.read(&mut self.scratch) {
                    Ok(0) => return Some(self.buffer.at_end()),
                    Ok(read) => self.buffer.push(&self.scratch[..read]),
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        self.buffer.ended = true;
                        return Some(StdoutEvent::Failed(error.to_string()));
                    }
                }
            }
        }
    }

    /// `Some` when the pipe has something to read (or its end) within `wait`, `None` when
    /// nothing came in time.
    fn readable(stdout: &ChildStdout, wait: Duration) -> Option<()> {
        let mut poll = libc::pollfd {
            fd: stdout.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            // Rounded up, so a wait under a millisecond still waits.
            let millis = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd, for the length of the call.
            let ready = unsafe { libc::poll(&mut poll, 1, millis) };
            match ready {
                0 => return None,
                n if n > 0 => return Some(()),
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
                    if left.is_zero() {
                        return None;
                    }
                }
                // A poll that fails leaves the read to tell what is wrong.
                _ => return Some(()),
            }
        }
    }
}

#[cfg(not(unix))]
mod platform {
    use std::io::Read;
    use std::process::ChildStdout;
    use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
    use std::time::Duration;

    use super::{Buffer, CHUNK, StdoutEvent};

    pub struct Lines {
        events: Receiver<StdoutEvent>,
    }

    impl Lines {
        pub fn new(mut stdout: ChildStdout) -> std::io::Result<Lines> {
            let (sender, events) = mpsc::sync_channel(4);
            std::thread::Builder::new()
                .name("dlqspec-impl-stdout".into())
                .spawn(move || {
                    let mut buffer = Buffer::default();
                    let mut scratch = vec![0; CHUNK];
                    loop {
                        let event = match buffer.next_event() {
                            Some(event) => event,
                            None => match stdout.read(&mut scratch) {
                                Ok(0) => buffer.at_end(),
                                Ok(read) => {
                                    buffer.push(&scratch[..read]);
                                    continue;
                                }
                                Err(error) => StdoutEvent::Failed(error.to_string()),
                            },
                        };
                        let last = !matches!(event, StdoutEvent::Line(_));
                        if sender.send(event).is_err() || last {
                            return;
                        }
                    }
                })?;
            Ok(Lines { events })
        }

        pub fn next(&mut self, wait: Duration) -> Option<StdoutEvent> {
            match self.events.recv_timeout(wait) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Disconnected) => Some(StdoutEvent::Closed),
                Err(RecvTimeoutError::Timeout) => None,
            }
        }
    }
}

pub use platform::Lines;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn fed(chunks: &[&[u8]]) -> Vec<StdoutEvent> {
        let mut buffer = Buffer::default();
        let mut events = Vec::new();
        for chunk in chunks {
            buffer.push(chunk);
            while let Some(event) = buffer.next_event() {
                events.push(event);
            }
        }
        events.push(buffer.at_end());
        events
    }

    #[test]
    fn lines_are_cut_across_reads_without_their_endings() {
        assert_eq!(
            fed(&[b"{\"a\":1}\r\n{\"b\"", b":2}\n", b"last"]),
            [
                StdoutEvent::Line(b"{\"a\":1}".to_vec()),
                StdoutEvent::Line(b"{\"b\":2}".to_vec()),
                StdoutEvent::Line(b"last".to_vec()),
            ]
        );
        assert_eq!(fed(&[b"x\n"]).last(), Some(&StdoutEvent::Closed));
    }

    #[test]
    fn a_line_past_the_limit_ends_the_stream() {
        let long = vec![b'x'; MAX_LINE_BYTES + 1];
        let mut buffer = Buffer::default();
        let mut offered = 0;
        let mut event = None;
        while event.is_none() && offered < long.len() {
            let n = CHUNK.min(long.len() - offered);
            buffer.push(&long[offered..offered + n]);
            offered += n;
            event = buffer.next_event();
        }
        assert_eq!(event, Some(StdoutEvent::TooLong));
    }

    #[test]
    fn waiting_without_a_line_gives_nothing_then_the_line() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 0.3; echo hello"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        let mut lines = Lines::new(child.stdout.take().expect("piped")).expect("a reader");
        assert_eq!(lines.next(Duration::ZERO), None);
        let mut got = None;
        for _ in 0..100 {
            if let Some(event) = lines.next(Duration::from_millis(100)) {
                got = Some(event);
                break;
            }
        }
        assert_eq!(got, Some(StdoutEvent::Line(b"hello".to_vec())));
        let mut end = None;
        for _ in 0..100 {
            if let Some(event) = lines.next(Duration::from_millis(100)) {
                end = Some(event);
                break;
            }
        }
        assert_eq!(end, Some(StdoutEvent::Closed));
        child.wait().expect("reaped");
    }
}
