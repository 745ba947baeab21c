//! The protocol's client side of a process: greeting it (`hello`), each request sent and its
//! reply awaited while the world calls it makes are served, every line read within bounds,
//! and `bye` at the end.

use super::*;

/// The handshake dlqspec opens with: its protocol, and every contract of the run described as
/// a shim needs it (its class, given parts and errors), which a shim reads before it loads the
/// solution.
pub(super) fn hello_request() -> Request {
    Request::Hello {
        protocol: PROTOCOL_VERSION,
        exercises: crate::contracts::all()
            .into_iter()
            .map(|c| (c.name().to_owned(), c.protocol_description()))
            .collect(),
    }
}

impl Process {
    /// Sends `hello` now, its answer read by `greet`: a process started ahead of its first use
    /// (`begin_start`) then loads its solution while the run loads its specs, as it did when
    /// it loaded it before the handshake. One that cannot take it now is sent it by `greet`.
    pub(super) fn send_hello(&mut self) {
        let seq = self.seq + 1;
        let deadline = Instant::now() + Duration::from_secs(1);
        if self.send(seq, hello_request(), deadline).is_ok() {
            self.seq = seq;
            self.hello_sent = true;
        }
    }

    /// Greets a process spawned at `started`: its `hello`, within the startup time.
    pub(super) fn greet(
        mut process: Process,
        started: Instant,
        timeout: Duration,
    ) -> Result<(Process, Handshake), ImplError> {
        let timeout = timeout.max(STARTUP_TIMEOUT);
        let what = "`hello` (the handshake)";
        let reply = process.exchange(
            hello_request(),
            what,
            &mut crate::model::implementation::NoWorld,
            timeout,
            &mut Spent {
                budget: &mut WorldBudget::full(),
                // Nothing is printed before a request: a shim sends output only while serving one.
                captured: &mut Captured::default(),
            },
        );
        let reply = reply.and_then(|message| match message {
            IncomingBody::Hello {
                implementation,
                contracts,
                defines,
                naming,
                features,
                ..
            } => Ok(Handshake {
                features,
                naming: naming.unwrap_or_else(|| Language::naming_of(&implementation.language)),
                implementation,
                contracts,
                defines,
                pid: process.child.id(),
                startup: started.elapsed(),
            }),
            IncomingBody::Errored {
                message,
                file,
                line,
                details,
                ..
            } => {
                let mut headline = format!("the solution could not be loaded: {message}");
                if let Some(hint) = typescript_import_hint(&message, file.as_deref()) {
                    headline.push_str(&format!("\nhint: {hint}"));
                }
                if let Some(file) = file {
                    headline.push_str(&format!("\n  --> {file}"));
                    if let Some(line) = line {
                        headline.push_str(&format!(":{line}"));
                    }
                }
                Err(Broke::Startup(errored_text(&headline, details.as_deref())))
            }
            other => Err(Broke::Protocol(not_a_reply(&other, what))),
        });
        match reply {
            Ok(handshake) => Ok((process, handshake)),
            Err(broke) => {
                let broke = process.did_not_start(broke);
                Err(process.failure(broke, what, timeout))
            }
        }
    }

    /// Writes one line to the process's stdin by `deadline`: a process that stops reading
    /// its input fails the request as one that stops answering does.
    /// Gives the request back, for what the exchange keeps of it.
    pub(super) fn send(
        &mut self,
        seq: u64,
        body: Request,
        deadline: Instant,
    ) -> Result<Request, Broke> {
        let outgoing = Outgoing { seq, body };
        let line = protocol::encode(&outgoing);
        self.log('>', line.as_bytes());
        let stdin = self.stdin.as_mut().ok_or(Broke::Closed)?;
        channel::write_by(stdin, line.as_bytes(), deadline).map_err(
            |unwritten| match unwritten {
                Unwritten::Closed => Broke::Closed,
                Unwritten::Stalled => Broke::Stalled,
            },
        )?;
        Ok(outgoing.body)
    }

    /// Sends a request and waits for its reply, serving world calls and keeping output
    /// meanwhile. `spent.budget` is what the spec's world calls may still send, in bytes and values.
    pub(super) fn exchange(
        &mut self,
        request: Request,
        what: &str,
        world: &mut dyn WorldHost,
        timeout: Duration,
        spent: &mut Spent,
    ) -> Result<IncomingBody, Broke> {
        let budget = &mut *spent.budget;
        let deadline = Instant::now() + timeout;
        let takes_output = !matches!(request, Request::Hello { .. });
        let sent = if !takes_output && std::mem::take(&mut self.hello_sent) {
            request
        } else {
            self.seq += 1;
            self.send(self.seq, request, deadline)
                .map_err(|broke| broke.writing(&format!("the request {what}")))?
        };
        let seq = self.seq;
        // What the request foresaw, to check the calls marked foreseen against.
        let foreseen = match sent {
            Request::Call { foresee, .. } => foresee,
            _ => Vec::new(),
        };
        let mut world_calls = 0;
        // Whether every world call of this request so far took its foreseen answer: only then
        // may the next one (docs/protocol.md, Foresight).
        let mut on_foresight = true;
        loop {
            let line = match self.next_line(deadline)? {
                StdoutEvent::Line(line) => line,
                StdoutEvent::TooLong => {
                    return Err(Broke::Protocol(format!(
                        "line {} of stdout is longer than {} MiB, the most a protocol message may be (docs/protocol.md)",
                        self.lines_read + 1,
                        MAX_LINE_BYTES >> 20
                    )));
                }
                StdoutEvent::Closed => return Err(Broke::Closed),
                StdoutEvent::Failed(error) => {
                    return Err(Broke::Protocol(format!(
                        "reading its stdout failed: {error}"
                    )));
                }
            };
            self.lines_read += 1;
            self.log('<', &line);
            let incoming = self.decode(&line)?;
            if incoming.seq != seq {
                return Err(Broke::Protocol(format!(
                    "the reply to {what} has seq {}, expected seq {seq}: every message answering or serving a request repeats its seq",
                    incoming.seq
                )));
            }
            let (n, call, args, took_foreseen) = match incoming.body {
                IncomingBody::World {
                    n,
                    call,
                    args,
                    foreseen,
                } => (n, call, args, foreseen),
                IncomingBody::Output { stream, text, cut } => {
                    // Its raw writes came before what the shim held back to send now.
                    if takes_output && let Some((raw, raw_cut)) = self.stdout.take_output() {
                        spent.captured.push(StreamName::Stdout, &raw, raw_cut);
                    }
                    spent.captured.push(stream, &text, cut);
                    continue;
                }
                other => {
                    // Its own output on stdout, once the protocol is on its channel: what it
                    // wrote before this reply is in the pipe by now. (What it wrote while it
                    // loaded waits for the first request, as the shims' captures do.)
                    if takes_output && let Some((text, cut)) = self.stdout.take_output() {
                        spent.captured.push(StreamName::Stdout, &text, cut);
                    }
                    return Ok(other);
                }
            };
            world_calls += 1;
            // What the world is handed, it keeps: a spec's world calls have a budget.
            if line.len() > budget.bytes {
                return Err(Broke::Protocol(format!(
                    "the world calls of this spec sent more than {} MiB (at `{call}` while serving {what}), the most one spec may send (docs/protocol.md): the implementation is likely looping, or putting far more in the queue or DLQ than the spec has",
                    MAX_WORLD_BYTES_PER_SPEC >> 20
                )));
            }
            budget.bytes -= line.len();
            let values = values_in(&args);
            if values > budget.values {
                return Err(Broke::Protocol(format!(
                    "the world calls of this spec sent more than {MAX_WORLD_VALUES_PER_SPEC} JSON values in their arguments (at `{call}` while serving {what}), the most one spec may send (docs/protocol.md): the implementation is likely looping, or putting far more in the queue or DLQ than the spec has"
                )));
            }
            budget.values -= values;
            if n != world_calls {
                return Err(Broke::Protocol(format!(
                    "world call `{call}` while serving {what} is numbered n={n}, expected n={world_calls}: n counts the world calls of a request from 1"
                )));
            }
            if took_foreseen {
                let at = usize::try_from(n - 1).unwrap_or(usize::MAX);
                let expected = foreseen.get(at).filter(|_| on_foresight);
                let Some(expected) = expected.filter(|e| e.call == call && e.args == args) else {
                    return Err(Broke::Protocol(not_foreseen(
                        &call,
                        &args,
                        n,
                        what,
                        expected,
                        on_foresight,
                    )));
                };
                // The world performs the call now, in order, as any other; the answer the
                // implementation went on with must be the one it gives.
                let answer = world.world_call(&call, &args);
                if !expected.answers(&answer) {
                    return Err(Broke::Protocol(format!(
                        "dlqspec foresaw the answer to world call `{call}` (n={n}) while serving {what}, but the world answered otherwise: that is a fault of dlqspec, not of the implementation; DLQSPEC_FEATURES= (empty) runs without foresight"
                    )));
                }
                continue;
            }
            on_foresight = false;
            let answer = match world.world_call(&call, &args) {
                Ok(value) => Request::Result { n, value },
                Err(error) => Request::Raise { n, error },
            };
            self.send(seq, answer, deadline).map_err(|broke| {
                broke.writing(&format!(
                    "the answer to world call `{call}` while serving {what}"
                ))
            })?;
        }
    }

    /// The next event on stdout before `deadline`. While waiting, the process is checked on:
    /// if it exited but stdout stays open (a process it started holds it), that is said, not
    /// waited out as a hang.
    pub(super) fn next_line(&mut self, deadline: Instant) -> Result<StdoutEvent, Broke> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(event) = self.stdout.next(left.min(EXIT_CHECK)) {
                return Ok(event);
            }
            if self.reaped.is_none()
                && let Ok(Some(status)) = self.child.try_wait()
            {
                self.reaped = Some(status);
                // What it wrote before it exited is read first; then, if stdout is still
                // open, someone else holds it.
                return match self.stdout.next(EXIT_GRACE) {
                    Some(event) => Ok(event),
                    None => Err(Broke::ExitedHeld(status)),
                };
            }
            if left.is_zero() {
                // A line held while the channel was undecided says more than the timeout.
                if let Some(line) = self.stdout.take_held() {
                    return Ok(StdoutEvent::Line(line));
                }
                return Err(Broke::Timeout);
            }
        }
    }

    pub(super) fn decode(&self, line: &[u8]) -> Result<Incoming, Broke> {
        protocol::decode(line).map_err(|error| match error {
            DecodeError::NotJson(_) => Broke::Garbage(
                format!(
                    "line {} of stdout is not a protocol message: {}\nhint: stdout carries only protocol messages; logs and debug prints belong on stderr",
                    self.lines_read,
                    quote(line)
                ),
                line.to_vec(),
            ),
            DecodeError::NotUtf8(at) => Broke::Protocol(format!(
                "line {} of stdout is not UTF-8 (byte {at} is not): protocol messages are JSON in UTF-8: {}",
                self.lines_read,
                quote(line)
            )),
            DecodeError::TooDeep => Broke::Protocol(format!(
                "line {} of stdout nests JSON more than 128 levels deep, the most dlqspec reads (no protocol message needs that): {}",
                self.lines_read,
                quote(line)
            )),
            DecodeError::TooLarge => Broke::Protocol(format!(
                "line {} of stdout carries more than {} JSON values (each number, string, list and mapping is one), the most one protocol message may: dlqspec keeps no more of what a reply says (no protocol message needs that): {}",
                self.lines_read,
                protocol::MAX_MESSAGE_VALUES,
                quote(line)
            )),
            DecodeError::NotAMessage(why) => Broke::Protocol(format!(
                "line {} of stdout is JSON but not a protocol message ({why}): {}",
                self.lines_read,
                quote(line)
            )),
            DecodeError::WrongVersion(version) => Broke::Protocol(format!(
                "the implementation speaks protocol version {version}; this dlqspec speaks version {PROTOCOL_VERSION}"
            )),
        })
    }

    /// `bye`, then closed stdin, then a grace period, then a kill.
    pub(super) fn leave(mut self) -> ProcessExit {
        let started = Instant::now();
        let mut said_bye = false;
        if self.reaped.is_none() {
            self.seq += 1;
            if self
                .send(self.seq, Request::Bye, started + EXIT_GRACE)
                .is_ok()
            {
                let until = started + EXIT_GRACE;
                while let Some(StdoutEvent::Line(line)) = self
                    .stdout
                    .next(until.saturating_duration_since(Instant::now()))
                {
                    self.log('<', &line);
                    if let Ok(Incoming {
                        body: IncomingBody::Bye,
                        ..
                    }) = protocol::decode(&line)
                    {
                        said_bye = true;
                        break;
                    }
                }
            }
        }
        self.stdin = None;
        let grace = EXIT_GRACE.saturating_sub(started.elapsed());
        let status = self.await_exit(grace);
        // Gone by itself or not, what it started goes too.
        self.kill();
        ProcessExit {
            said_bye,
            status,
            took: started.elapsed(),
        }
    }
}
