//! A process's lifecycle: starting it (in its box), draining its stderr, telling why it ended
//! (an exit, a signal, a limit reached), and ending it with all it started.

use super::*;

impl Process {
    /// What keeps the copies its box shows alive past it.
    pub(super) fn copies(&self) -> sandbox::CopiesKept {
        self._boxed
            .as_ref()
            .map(PreparedBox::copies)
            .unwrap_or_default()
    }

    /// A process that exits before it answers `hello`, having printed what is not the protocol
    /// (a runtime's fatal report, a usage text) or nothing, did not start: that is what it is
    /// told as, with all it printed, not as garbage. A JVM that cannot reserve its memory under
    /// `--memory` says so on stdout and exits 1. One that goes on running after garbage is
    /// garbage as before.
    pub(super) fn did_not_start(&mut self, broke: Broke) -> Broke {
        let mut printed = Vec::new();
        match broke {
            Broke::Garbage(message, line) => {
                printed.push(line);
                // What else it prints until it exits, within the grace and a bound.
                let until = Instant::now() + EXIT_GRACE;
                while let Some(StdoutEvent::Line(line)) = self
                    .stdout
                    .next(until.saturating_duration_since(Instant::now()))
                {
                    self.log('<', &line);
                    if printed.len() < STARTUP_STDOUT_LINES {
                        printed.push(line);
                    } else {
                        self.startup_lines_dropped += 1;
                    }
                }
                let left = until.saturating_duration_since(Instant::now());
                if self.exit_within(left).is_none() {
                    return Broke::Garbage(message, Vec::new());
                }
            }
            Broke::Closed => {
                if self.exit_within(EXIT_GRACE).is_none() {
                    return Broke::Closed;
                }
            }
            other => return other,
        }
        let Some(status) = self.reaped else {
            return Broke::Closed;
        };
        self.exited_at_start = true;
        let mut message = format!(
            "the process {} before it answered `hello`: it did not start",
            describe_exit(status)
        );
        if !printed.is_empty() {
            message.push_str("\nits stdout, which is not the protocol:");
            for line in &printed {
                let text = String::from_utf8_lossy(line);
                self.stdout_out_of_memory |= limits::says_out_of_memory(&text);
                message.push_str("\n  ");
                message.push_str(&quote(line));
            }
            if self.startup_lines_dropped > 0 {
                message.push_str(&format!("\n  ({} more lines)", self.startup_lines_dropped));
            }
        }
        Broke::Startup(message)
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "starts a process: the one place an implementation starts"
    )]
    pub(super) fn spawn(launch: &Launch) -> Result<Process, ImplError> {
        let cannot = |why: String| {
            let mut message = format!("cannot start `{}`: {why}", launch.command_line());
            if let Some(hint) = &launch.hint {
                message.push_str("\nhint: ");
                message.push_str(hint);
            }
            ImplError::new(ImplErrorKind::Startup, message)
        };
        let (mut command, boxed) = match launch.limits.sandbox {
            Sandbox::On => {
                let (command, prepared) =
                    sandbox::prepare(&launch.program, &launch.args, &launch.limits).map_err(
                        |error| {
                            cannot(if error.kind() == std::io::ErrorKind::NotFound {
                                error.to_string()
                            } else {
                                format!("cannot set up its box: {error}")
                            })
                        },
                    )?;
                (command, Some(prepared))
            }
            Sandbox::Off => {
                let mut command = Command::new(&launch.program);
                command.args(&launch.args);
                (command, None)
            }
        };
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Offered after the box has built the command (its environment is the box's allowlist):
        // the channel's variable and descriptor are set on top, and handed down to the
        // implementation through the box's processes.
        let channel = channel::offer(&mut command)
            .map_err(|error| cannot(format!("no pipe for its protocol channel: {error}")))?;
        let spawned = children::spawn_boxed(&mut command, &launch.limits, boxed.as_ref());
        // The child has its copy of the channel's write end (or failed to start): dlqspec's goes.
        let channel = channel.map(channel::Offered::reader);
        let (mut child, guard) = spawned.map_err(|error| {
            cannot(
                boxed
                    .as_ref()
                    .and_then(PreparedBox::changed_since_copied)
                    .unwrap_or_else(|| error.to_string()),
            )
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            children::end(&mut child, false, guard.tree());
            return Err(cannot("its standard streams are not piped".into()));
        };
        if let Err(error) = channel::non_blocking(&stdin) {
            children::end(&mut child, false, guard.tree());
            return Err(cannot(format!(
                "its stdin cannot be made non-blocking: {error}"
            )));
        }
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let (done_tx, done_rx) = mpsc::channel();
        let readers = lines::Lines::new(stdout, channel).and_then(|lines| {
            let tail = Arc::clone(&tail);
            thread::Builder::new()
                .name("dlqspec-impl-stderr".into())
                .spawn(move || {
                    drain_stderr(stderr, &tail);
                    let _ = done_tx.send(());
                })
                .map(|_| lines)
        });
        let line_rx = match readers {
            Ok(lines) => lines,
            Err(error) => {
                children::end(&mut child, false, guard.tree());
                return Err(cannot(format!("no thread to read its output: {error}")));
            }
        };
        Ok(Process {
            child,
            reaped: None,
            ended: false,
            guard,
            limits: launch.limits,
            stdin: Some(stdin),
            stdout: line_rx,
            stderr: tail,
            stderr_done: done_rx,
            seq: 0,
            lines_read: 0,
            hello_sent: false,
            exited_at_start: false,
            stdout_out_of_memory: false,
            startup_lines_dropped: 0,
            log: protocol_log(),
            _boxed: boxed,
        })
    }

    /// Turns a broken exchange into the error to report, stopping the process on the way.
    pub(super) fn failure(&mut self, broke: Broke, what: &str, timeout: Duration) -> ImplError {
        let (kind, mut message) = match broke {
            // In the student's words: what hung, and the two things that make code hang. The
            // grader's option is the error's hint, told only to whoever runs dlqspec.
            Broke::Timeout => (
                ImplErrorKind::Timeout,
                format!(
                    "{what} never returned: an infinite loop, or a wait on something that never comes (no reply within {}; the process was killed)",
                    seconds(timeout)
                ),
            ),
            Broke::WriteTimeout(written) => (
                ImplErrorKind::Timeout,
                format!(
                    "the implementation stopped reading its input: {written} could not be written within {}, as if it hung in an infinite loop or a wait; the process was killed",
                    seconds(timeout)
                ),
            ),
            Broke::Stalled => (
                ImplErrorKind::Timeout,
                format!(
                    "the implementation stopped reading its input while serving {what}, as if it hung in an infinite loop or a wait; the process was killed"
                ),
            ),
            Broke::Closed => {
                let message = match self.await_exit(EXIT_GRACE) {
                    Some(status) => {
                        format!("the process {} while serving {what}", describe_exit(status))
                    }
                    None => format!(
                        "the process closed its stdout while serving {what}, and was killed"
                    ),
                };
                (ImplErrorKind::Exited, message)
            }
            Broke::ExitedHeld(status) => (
                ImplErrorKind::Exited,
                format!(
                    "the process {} while serving {what}, but a process it started still held its stdout open (that process was killed)",
                    describe_exit(status)
                ),
            ),
            Broke::Garbage(message, _) => (
                ImplErrorKind::Garbage,
                format!("{message}\n(while serving {what})"),
            ),
            Broke::Protocol(message) => (ImplErrorKind::Protocol, message),
            Broke::Startup(message) => (ImplErrorKind::Startup, message),
        };
        // A process that left by itself has been reaped; any other is killed now, with its
        // whole tree.
        self.kill();
        // The process and its tree are gone, so stderr ends soon: read it to its end (the bound
        // only guards against a writer beyond reach).
        let _ = self.stderr_done.recv_timeout(STDERR_END);
        let mut hint = (kind == ImplErrorKind::Timeout).then_some("--timeout SECS allows more");
        if let Some((limit, allows_more)) = self.limit_reached() {
            message.push('\n');
            message.push_str(&limit);
            hint = Some(allows_more);
        }
        if let Some(tail) = self.stderr.lock().ok().and_then(|t| t.render()) {
            message.push('\n');
            message.push_str(&tail);
        }
        let error = ImplError::new(kind, message);
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }

    /// Which of its limits the process reached, said for a person, if it reached one, and the
    /// grader's option that allows more.
    pub(super) fn limit_reached(&self) -> Option<(String, &'static str)> {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if self.reaped.and_then(|s| s.signal()) == Some(libc::SIGXCPU) {
                return Some((
                    format!(
                        "it used up its CPU time: each implementation process may use {}",
                        self.limits.cpu_text()
                    ),
                    "--cpu SECS allows more",
                ));
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if self.reaped.and_then(|s| s.signal()) == Some(libc::SIGXFSZ) {
                return Some((
                    format!(
                        "it wrote a file larger than a box may hold: each implementation may write {}",
                        self.limits.disk_text()
                    ),
                    "--disk SIZE allows more",
                ));
            }
        }
        // The box's memory cgroup killed a process: everything the box held counted, shared
        // memory and its folders' files too.
        if self
            ._boxed
            .as_ref()
            .is_some_and(PreparedBox::killed_for_memory)
        {
            let held = self
                .limits
                .memory
                .map_or("no limit".to_owned(), limits::size);
            return Some((
                format!(
                    "it ran out of memory: each implementation's box may hold {held} in all, its processes, shared memory and files included"
                ),
                "--memory SIZE allows more",
            ));
        }
        let out_of_memory =
            self.stdout_out_of_memory || self.stderr.lock().is_ok_and(|tail| tail.out_of_memory);
        if out_of_memory {
            return Some((
                format!(
                    "it ran out of memory: each implementation process may use {}",
                    self.limits.memory_text()
                ),
                "--memory SIZE allows more",
            ));
        }
        // Nothing said why, but a runtime that cannot get the memory it reserves at start
        // (a JVM's heap) dies before `hello`: under a lowered limit, that is the likely cause.
        let lowered = self
            .limits
            .memory
            .is_some_and(|bytes| bytes < limits::DEFAULT_MEMORY_BYTES);
        (self.exited_at_start && lowered).then(|| {
            (
                format!(
                    "a process that exits before `hello` under a lowered memory limit most likely could not get the memory its runtime needs to start: each implementation process may use {}",
                    self.limits.memory_text()
                ),
                "--memory SIZE allows more",
            )
        })
    }

    /// Ends the process's whole tree: kills and reaps the process unless it was reaped, and
    /// whatever it started, even what left its group or was reparented to dlqspec.
    pub(super) fn kill(&mut self) {
        if !self.ended {
            let status = children::end(&mut self.child, self.reaped.is_some(), self.guard.tree());
            // Even if waiting failed, there is nothing left to reap.
            self.reaped = self
                .reaped
                .or(status)
                .or_else(|| Some(ExitStatus::default()));
            self.ended = true;
        }
    }

    /// Waits up to `grace` for the process to exit by itself, else kills it. The exit status,
    /// or `None` if it had to be killed.
    pub(super) fn await_exit(&mut self, grace: Duration) -> Option<ExitStatus> {
        let status = self.exit_within(grace);
        if status.is_none() {
            self.kill();
        }
        status
    }

    /// Waits up to `grace` for the process to exit by itself: its exit status, or `None` if it
    /// is still running (or cannot be waited for).
    pub(super) fn exit_within(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.reaped {
            return Some(status);
        }
        let until = Instant::now() + grace;
        let mut pause = Duration::from_micros(200);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.reaped = Some(status);
                    return Some(status);
                }
                Ok(None) if Instant::now() < until => {
                    thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                _ => return None,
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // The last line of defence (errors, panics): no child outlives its Process.
        if self.reaped.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.reaped = Some(status);
        }
        self.kill();
    }
}

fn drain_stderr(stderr: impl Read, tail: &Mutex<StderrTail>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Cut very long lines in pieces rather than holding them whole.
        match (&mut reader).take(64 * 1024).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if let Ok(mut tail) = tail.lock() {
                    tail.push(&line);
                }
            }
        }
    }
}

pub(super) fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs}s")
    }
}

/// `exited with status 3`, `was killed by signal 9 (SIGKILL)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                1 => " (SIGHUP)",
                2 => " (SIGINT)",
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                24 => " (SIGXCPU)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    format!("ended ({status})")
}
