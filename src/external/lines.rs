//! Protocol lines from an implementation's stdout, read on the thread that waits for them.
//!
//! On Unix an implementation is also offered fd 3 as its protocol channel (docs/protocol.md,
//! Transport): if its first protocol message comes on fd 3, protocol lines are read from there
//! and its stdout is its own output, kept (bounded) for the spec at hand.
//!
//! Every world call is a round trip, so the path from the child's write to dlqspec's answer is
//! the cost of each one. On Unix the reading thread polls the pipe itself with the time it may
//! wait: no reader thread, no channel, no wake-up between them (that hop cost about a quarter
//! of a round trip). Elsewhere a reader thread hands lines over a small channel.

use super::limits::MAX_LINE_BYTES;
use super::protocol::{self, DecodeError};
use crate::model::captured::MAX_STREAM_BYTES;

/// What reading stdout gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StdoutEvent {
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

/// Whether a line is a protocol message (of any version), rather than what may be an
/// implementation's own output.
fn is_protocol_attempt(line: &[u8]) -> bool {
    matches!(
        protocol::decode(line),
        Ok(_) | Err(DecodeError::WrongVersion(_))
    )
}

/// An implementation's own stdout, when the protocol is on another channel: the first
/// `MAX_STREAM_BYTES` since it was last taken, and how many bytes more were dropped.
#[derive(Default)]
struct Output {
    kept: Vec<u8>,
    cut: u64,
}

impl Output {
    fn push(&mut self, bytes: &[u8]) {
        let take = MAX_STREAM_BYTES
            .saturating_sub(self.kept.len())
            .min(bytes.len());
        self.kept.extend_from_slice(&bytes[..take]);
        self.cut = self.cut.saturating_add((bytes.len() - take) as u64);
    }

    /// What was kept, as text, and what was cut; `None` when nothing came.
    #[cfg_attr(not(unix), allow(dead_code))]
    fn take(&mut self) -> Option<(String, u64)> {
        if self.kept.is_empty() && self.cut == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.kept)).into_owned();
        Some((text, std::mem::take(&mut self.cut)))
    }
}

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

    /// The bytes read and not yet handed out.
    #[cfg_attr(not(unix), allow(dead_code))]
    fn unread(&self) -> &[u8] {
        &self.bytes[self.start..]
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
    use std::fs::File;
    use std::io::Read;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::process::ChildStdout;
    use std::time::{Duration, Instant};

    use super::{Buffer, CHUNK, Output, StdoutEvent, is_protocol_attempt};

    /// The most reads of the implementation's own output one drain makes: a writer that never
    /// stops must not hold the reply back.
    const DRAIN_READS: usize = 16;

    pub(crate) struct Lines {
        /// Where protocol lines come from: stdout, or the channel once the implementation chose it.
        protocol: File,
        buffer: Buffer,
        /// Where each read lands before its bytes join the buffer: reused, never re-zeroed.
        scratch: Box<[u8]>,
        /// The channel offered as fd 3, until the first protocol message chooses between it
        /// and stdout.
        offered: Option<File>,
        /// The child's stdout once the channel carries the protocol (`None` at its end).
        own: Option<File>,
        /// What arrived on that stdout: the implementation's own output, bounded.
        output: Output,
        /// The stdout lines that were not protocol messages, seen while the channel was still
        /// open (the first `MAX_HELD_LINES`): garbage if stdout turns out to carry the protocol,
        /// told in order (a runtime's fatal report is several lines), output if not.
        held: std::collections::VecDeque<Vec<u8>>,
        /// The event that chose stdout, handed out next.
        pending: Option<StdoutEvent>,
    }

    /// The most stdout lines held while the channel is undecided (the rest are output only).
    const MAX_HELD_LINES: usize = 20;

    impl Lines {
        pub(crate) fn new(stdout: ChildStdout, channel: Option<File>) -> std::io::Result<Lines> {
            Ok(Lines {
                protocol: File::from(OwnedFd::from(stdout)),
                buffer: Buffer::default(),
                scratch: vec![0; CHUNK].into_boxed_slice(),
                offered: channel,
                own: None,
                output: Output::default(),
                held: std::collections::VecDeque::new(),
                pending: None,
            })
        }

        /// The next event, waiting for it at most `wait`; `None` when none came in time.
        pub(crate) fn next(&mut self, wait: Duration) -> Option<StdoutEvent> {
            let until = Instant::now() + wait;
            if self.offered.is_some() {
                self.choose(until)?;
            }
            if let Some(junk) = self.held.pop_front() {
                return Some(StdoutEvent::Line(junk));
            }
            if let Some(event) = self.pending.take() {
                return Some(event);
            }
            if self.buffer.ended {
                return Some(StdoutEvent::Closed);
            }
            loop {
                if let Some(event) = self.buffer.next_event() {
                    return Some(event);
                }
                let left = until.saturating_duration_since(Instant::now());
                let (protocol, own) = readable(&self.protocol, self.own.as_ref(), left)?;
                if own {
                    self.read_own();
                }
                if protocol && let Some(event) = self.read_protocol() {
                    return Some(event);
                }
            }
        }

        /// Reads the protocol channel once: the event its end or failure makes, if it ended.
        fn read_protocol(&mut self) -> Option<StdoutEvent> {
            match self.protocol.read(&mut self.scratch) {
                Ok(0) => Some(self.buffer.at_end()),
                Ok(read) => {
                    self.buffer.push(&self.scratch[..read]);
                    None
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => None,
                Err(error) => {
                    self.buffer.ended = true;
                    Some(StdoutEvent::Failed(error.to_string()))
                }
            }
        }

        /// Reads the implementation's own stdout once, keeping what the bound allows.
        fn read_own(&mut self) {
            let Some(own) = &mut self.own else { return };
            match own.read(&mut self.scratch) {
                Ok(0) => self.own = None,
                Ok(read) => self.output.push(&self.scratch[..read]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => self.own = None,
            }
        }

        /// Waits (until `until`) for the first protocol message to say which channel carries
        /// the protocol: a line on the channel chooses it, a protocol message on stdout (or its
        /// end) chooses stdout. A stdout line that is no protocol message chooses nothing yet:
        /// it may be the implementation's own output, written before it spoke on the channel.
        fn choose(&mut self, until: Instant) -> Option<()> {
            loop {
                let Some(offered) = self.offered.as_ref() else {
                    return Some(());
                };
                let left = until.saturating_duration_since(Instant::now());
                let (channel, stdout) = readable(offered, Some(&self.protocol), left)?;
                if channel {
                    self.take_channel();
                    continue;
                }
                if !stdout {
                    continue;
                }
                let mut chosen = self.read_protocol();
                while chosen.is_none() {
                    match self.buffer.next_event() {
                        Some(StdoutEvent::Line(line)) if !is_protocol_attempt(&line) => {
                            self.output.push(&line);
                            self.output.push(b"\n");
                            if self.held.len() < MAX_HELD_LINES {
                                self.held.push_back(line);
                            }
                        }
                        Some(event) => chosen = Some(event),
                        None => break,
                    }
                }
                if let Some(event) = chosen {
                    self.pending = Some(event);
                    // What the channel holds was written before it: it speaks first.
                    let offered = self.offered.as_ref()?;
                    if readable(offered, None, Duration::ZERO).is_some_and(|(ready, _)| ready) {
                        self.take_channel();
                    } else {
                        // Stdout is the channel: what it held was not output but garbage.
                        self.offered = None;
                        self.output = Output::default();
                    }
                }
            }
        }

        /// Reads the offered channel: data makes it the protocol channel, and stdout the
        /// implementation's own output, with what it wrote so far; its end withdraws the offer.
        fn take_channel(&mut self) {
            let Some(mut channel) = self.offered.take() else {
                return;
            };
            let read = loop {
                match channel.read(&mut self.scratch) {
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    other => break other.unwrap_or(0),
                }
            };
            if read == 0 {
                // Stdout is the channel after all: what it held was not output.
                self.output = Output::default();
                return;
            }
            // Kept as output already.
            self.held.clear();
            match self.pending.take() {
                Some(StdoutEvent::Line(line)) => {
                    self.output.push(&line);
                    self.output.push(b"\n");
                }
                // Stdout's end or failure: nothing more to read there.
                Some(_) => self.buffer.ended = true,
                None => {}
            }
            let stdout = std::mem::replace(&mut self.protocol, channel);
            let earlier = std::mem::take(&mut self.buffer);
            self.output.push(earlier.unread());
            if !earlier.ended {
                self.own = Some(stdout);
            }
            self.buffer.push(&self.scratch[..read]);
        }

        /// The stdout line held while the channel was open, once waiting for the first message
        /// is over: what to judge it as instead of a timeout.
        pub(crate) fn take_held(&mut self) -> Option<Vec<u8>> {
            self.held.pop_front()
        }

        /// The implementation's own output (stdout, when the protocol is on the channel) read
        /// so far, after reading what is there now: text, and bytes cut.
        pub(crate) fn take_output(&mut self) -> Option<(String, u64)> {
            for _ in 0..DRAIN_READS {
                let Some(own) = &self.own else { break };
                match readable(own, None, Duration::ZERO) {
                    Some((true, _)) => self.read_own(),
                    _ => break,
                }
            }
            self.output.take()
        }
    }

    /// Which of `first` and `second` have something to read (or their end) within `wait`;
    /// `None` when nothing came in time.
    fn readable(first: &File, second: Option<&File>, wait: Duration) -> Option<(bool, bool)> {
        let fd = |file: &File| libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let mut polls = [fd(first), second.map_or(fd(first), fd)];
        let count = if second.is_some() { 2 } else { 1 };
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            // Rounded up, so a wait under a millisecond still waits.
            let millis = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
            // SAFETY: `count` valid pollfds, for the length of the call.
            let ready = unsafe { libc::poll(polls.as_mut_ptr(), count, millis) };
            match ready {
                0 => return None,
                n if n > 0 => {
                    return Some((polls[0].revents != 0, count == 2 && polls[1].revents != 0));
                }
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
                    if left.is_zero() {
                        return None;
                    }
                }
                // A poll that fails leaves the read to tell what is wrong.
                _ => return Some((true, false)),
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

    pub(crate) struct Lines {
        events: Receiver<StdoutEvent>,
    }

    impl Lines {
        /// No channel is offered off Unix: `channel` is always `None` there.
        pub(crate) fn new(
            mut stdout: ChildStdout,
            _channel: Option<std::fs::File>,
        ) -> std::io::Result<Lines> {
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

        /// Stdout carries the protocol, so there is no output of the implementation's own.
        pub(crate) fn take_output(&mut self) -> Option<(String, u64)> {
            None
        }

        /// Nothing is held back without a channel.
        pub(crate) fn take_held(&mut self) -> Option<Vec<u8>> {
            None
        }

        pub(crate) fn next(&mut self, wait: Duration) -> Option<StdoutEvent> {
            match self.events.recv_timeout(wait) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Disconnected) => Some(StdoutEvent::Closed),
                Err(RecvTimeoutError::Timeout) => None,
            }
        }
    }
}

pub(crate) use platform::Lines;

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
        let mut lines = Lines::new(child.stdout.take().expect("piped"), None).expect("a reader");
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

    /// `script` run by `sh` with the channel offered as fd 3, and its lines read.
    #[cfg(unix)]
    fn offered(script: &str) -> (std::process::Child, Lines) {
        let mut command = std::process::Command::new("sh");
        command
            .args(["-c", script])
            .stdout(std::process::Stdio::piped());
        let offer = crate::external::pipes::offer(&mut command).expect("a pipe");
        let mut child = command.spawn().expect("sh runs");
        // Only once the child has its copy.
        let channel = offer.map(crate::external::pipes::Offered::reader);
        let stdout = child.stdout.take().expect("piped");
        (child, Lines::new(stdout, channel).expect("a reader"))
    }

    /// The next event, waiting as long as a loaded machine might need.
    #[cfg(unix)]
    fn next(lines: &mut Lines) -> StdoutEvent {
        lines
            .next(Duration::from_secs(60))
            .expect("an event in time")
    }

    #[test]
    #[cfg(unix)]
    fn a_message_on_the_channel_chooses_it_and_stdout_is_the_implementations_output() {
        let (mut child, mut lines) = offered(
            r#"echo 'not json'; echo more; echo '{"seq":1}' >&3; echo own; echo '{"seq":2}' >&3"#,
        );
        assert_eq!(
            next(&mut lines),
            StdoutEvent::Line(br#"{"seq":1}"#.to_vec())
        );
        assert_eq!(
            next(&mut lines),
            StdoutEvent::Line(br#"{"seq":2}"#.to_vec())
        );
        assert_eq!(next(&mut lines), StdoutEvent::Closed);
        assert_eq!(
            lines.take_output(),
            Some(("not json\nmore\nown\n".to_owned(), 0))
        );
        assert_eq!(lines.take_output(), None);
        child.wait().expect("reaped");
    }

    #[test]
    #[cfg(unix)]
    fn a_message_on_stdout_chooses_it_and_what_was_not_one_before_it_is_garbage() {
        let (mut child, mut lines) = offered(r#"echo 'DEBUG x'; echo '{"seq":1,"type":"bye"}'"#);
        assert_eq!(next(&mut lines), StdoutEvent::Line(b"DEBUG x".to_vec()));
        assert_eq!(
            next(&mut lines),
            StdoutEvent::Line(br#"{"seq":1,"type":"bye"}"#.to_vec())
        );
        assert_eq!(next(&mut lines), StdoutEvent::Closed);
        assert_eq!(lines.take_output(), None);
        child.wait().expect("reaped");
    }

    #[test]
    #[cfg(unix)]
    fn a_channel_closed_unused_leaves_stdout_the_protocol() {
        let (mut child, mut lines) = offered("exec 3>&-; sleep 0.2; echo hello");
        assert_eq!(next(&mut lines), StdoutEvent::Line(b"hello".to_vec()));
        assert_eq!(next(&mut lines), StdoutEvent::Closed);
        child.wait().expect("reaped");
    }
}
