//! An implementation under test that runs as a child process speaking the JSON-lines protocol.
//!
//! One process serves spec after spec: it is started and greeted (`hello`) on first use, asked
//! for a fresh instance per spec (`new`), called (`call`), and serves its world calls through
//! the scenario's `WorldHost` while a request is open. Everything that can go wrong with a
//! process (a hang, an exit, garbage on stdout, a wrong `seq`) becomes an `ImplError` for the
//! spec at hand; the process is then stopped and started again for the next spec.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::children::{self, Guard};
use super::limits::{self, Limits, MAX_LINE_BYTES, MAX_WORLD_BYTES_PER_SPEC};
use super::lines::{self, Lines, StdoutEvent};
use super::pipes::{self as channel, Unwritten};
use super::protocol::{
    self, DecodeError, ForeseenCall, ImplementationInfo, Incoming, IncomingBody, Outgoing,
    PROTOCOL_VERSION, Request, Returned,
};
use super::sandbox::{self, PreparedBox, Sandbox};
use crate::model::captured::{Captured, StreamName, Traceback};
use crate::model::implementation::Foreseen;
use crate::model::implementation::{
    ImplError, ImplErrorKind, ImplInfo, Implementation, Naming, Offer, Reply, WorldHost,
};
use crate::model::language::Language;

/// The least time a process gets to answer `hello`: interpreters, module loading and
/// TypeScript compilation start slowly, more so on a busy machine.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a process may take to leave after `bye` before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// How often a request that waits checks whether the process is still there: a process that
/// exited while one it started holds stdout open would otherwise look like a hang.
const EXIT_CHECK: Duration = Duration::from_millis(100);

/// The most a failure waits for the rest of stderr once the process tree is gone.
const STDERR_END: Duration = Duration::from_secs(5);

/// Lines of stdout kept for the report of a process that exited before `hello`.
const STARTUP_STDOUT_LINES: usize = 20;

/// Lines of stderr kept for error reports, and the length each is cut to.
const STDERR_TAIL_LINES: usize = 20;
const STDERR_LINE_CHARS: usize = 400;

/// How to start an implementation, and what to call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// Shown in reports, e.g. `python:examples/python/solution.py`.
    pub(crate) label: String,
    /// The language until the implementation names its own in `hello`: `None` for a program
    /// run as it is (`cmd:`).
    pub(crate) language: Option<Language>,
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    /// Said when the program cannot be started, e.g. which variable names another interpreter.
    pub(crate) hint: Option<String>,
    /// Memory and CPU time each of its processes may use.
    pub(crate) limits: Limits,
}

impl Launch {
    /// The command line, for messages.
    pub(crate) fn command_line(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(|word| shell_words::quote(word).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What an implementation said about itself when greeted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Handshake {
    pub(crate) implementation: ImplementationInfo,
    pub(crate) contracts: Vec<String>,
    pub(crate) defines: Option<Vec<String>>,
    pub(crate) naming: Naming,
    /// The optional protocol features it listed (`protocol::FEATURES`), known or not.
    pub(crate) features: Vec<String>,
    pub(crate) pid: u32,
    /// From starting the process to its `hello`.
    pub(crate) startup: Duration,
}

/// How a process left when asked to (`bye`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcessExit {
    /// Whether it answered `bye` before leaving.
    pub(crate) said_bye: bool,
    /// `None` when it lingered and had to be killed.
    pub(crate) status: Option<ExitStatus>,
    pub(crate) took: Duration,
}

/// An external implementation: a process started on first use and restarted after it broke.
pub(crate) struct ExternalImplementation {
    launch: Launch,
    timeout: Duration,
    process: Option<Process>,
    /// A process started ahead of its first use (`begin_start`), not yet greeted, and when
    /// it was started.
    starting: Option<(Process, Instant)>,
    handshake: Option<Handshake>,
    /// A failure starting it; starting again would fail the same way, so every later spec
    /// gets it again, in brief, once it has been told in full.
    fatal: Option<ImplError>,
    fatal_told: bool,
    /// Bytes of world-call lines the spec at hand may still send.
    world_budget: usize,
    /// What the spec at hand printed and raised, as the shim reports it.
    captured: Captured,
    /// The world calls the next `call` is foreseen to make, sent with it.
    foreseen: Vec<Foreseen>,
    /// The optional protocol features dlqspec may use, when the implementation lists them:
    /// all of `protocol::FEATURES`, or those `DLQSPEC_FEATURES` names (to compare).
    allowed: Vec<String>,
    /// Whether foresight is used: allowed, and listed in the running process's `hello`.
    foresight: bool,
}

/// The features dlqspec may use: `DLQSPEC_FEATURES` (comma-separated, empty for none), or all.
fn allowed_features() -> Vec<String> {
    match std::env::var("DLQSPEC_FEATURES") {
        Ok(listed) => listed
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect(),
        Err(_) => protocol::FEATURES.iter().map(|f| (*f).to_owned()).collect(),
    }
}

impl ExternalImplementation {
    pub(crate) fn new(launch: Launch, timeout: Duration) -> Self {
        ExternalImplementation {
            launch,
            timeout,
            process: None,
            starting: None,
            handshake: None,
            fatal: None,
            fatal_told: false,
            world_budget: MAX_WORLD_BYTES_PER_SPEC,
            captured: Captured::default(),
            foreseen: Vec::new(),
            allowed: allowed_features(),
            foresight: false,
        }
    }

    /// Starts the process and greets it, unless it is running already.
    pub(crate) fn start(&mut self) -> Result<&Handshake, ImplError> {
        if let Some(fatal) = &self.fatal {
            if !std::mem::replace(&mut self.fatal_told, true) {
                return Err(fatal.clone());
            }
            return Err(ImplError::new(
                fatal.kind,
                format!("{} (in full above)", brief(&fatal.message)),
            ));
        }
        if self.process.is_none() {
            let started = match self.starting.take() {
                Some((process, since)) => Process::greet(process, since, self.timeout),
                None => Process::start(&self.launch, self.timeout),
            };
            match started {
                Ok((process, handshake)) => {
                    self.foresight = self.allowed.iter().any(|f| f == "foresight")
                        && handshake.features.iter().any(|f| f == "foresight");
                    self.process = Some(process);
                    self.handshake = Some(handshake);
                }
                Err(error) => {
                    self.fatal = Some(error.clone());
                    self.fatal_told = true;
                    return Err(error);
                }
            }
        }
        self.handshake
            .as_ref()
            .ok_or_else(|| ImplError::new(ImplErrorKind::Startup, "no handshake"))
    }

    /// Says `bye` and waits for the process to leave (killing it if it lingers). One started
    /// ahead and never greeted is killed at once: nothing of a run reached it.
    pub(crate) fn shutdown(&mut self) -> Option<ProcessExit> {
        drop(self.starting.take());
        self.process.take().map(Process::leave)
    }

    /// Sends one request and waits for its reply, serving world calls meanwhile. Whatever
    /// breaks the exchange also ends the process: its state is unknown from then on.
    fn exchange(
        &mut self,
        request: Request,
        what: &str,
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        self.start()?;
        let Some(mut process) = self.process.take() else {
            return Err(ImplError::new(ImplErrorKind::Startup, "no process"));
        };
        let reply = match process.exchange(
            request,
            what,
            world,
            self.timeout,
            &mut Spent {
                budget: &mut self.world_budget,
                captured: &mut self.captured,
            },
        ) {
            Ok(IncomingBody::Return(Returned::Value(value))) => Ok(Reply::Returned(value)),
            Ok(IncomingBody::Return(Returned::Undefined)) => Ok(Reply::Undefined),
            // Python's MemoryError is the memory limit's doing, not an answer to judge.
            Ok(IncomingBody::Raised { error, .. }) if error.class == "MemoryError" => {
                Err(ImplError::new(
                    ImplErrorKind::Errored,
                    format!(
                        "the implementation ran out of memory serving {what} (MemoryError: {}): each of its processes may use {}; --memory SIZE allows more",
                        error.message,
                        self.launch.limits.memory_text()
                    ),
                ))
            }
            Ok(IncomingBody::Raised { error, traceback }) => {
                if let Some(frames) = traceback.filter(|frames| !frames.is_empty()) {
                    self.captured.add_traceback(Traceback {
                        error: format!("{}: {}", error.class, error.message),
                        frames,
                    });
                }
                Ok(Reply::Raised(error))
            }
            Ok(IncomingBody::Skipped { reason }) => Ok(Reply::Skipped(reason)),
            // The implementation could not do it; the process itself is fine.
            Ok(IncomingBody::Errored {
                message,
                details,
                traceback,
                ..
            }) => {
                if let Some(frames) = traceback.filter(|frames| !frames.is_empty()) {
                    self.captured.add_traceback(Traceback {
                        error: message.clone(),
                        frames,
                    });
                }
                Err(ImplError::new(
                    ImplErrorKind::Errored,
                    errored_text(
                        &format!("the implementation could not serve {what}: {message}"),
                        details.as_deref(),
                    ),
                ))
            }
            Ok(other) => {
                let broke = Broke::Protocol(not_a_reply(&other, what));
                return Err(process.failure(broke, what, self.timeout));
            }
            Err(broke) => return Err(process.failure(broke, what, self.timeout)),
        };
        self.process = Some(process);
        reply
    }
}

impl Implementation for ExternalImplementation {
    fn info(&self) -> ImplInfo {
        ImplInfo {
            label: self.launch.label.clone(),
            language: self.handshake.as_ref().map_or_else(
                || {
                    self.launch
                        .language
                        .map_or("unknown", Language::name)
                        .to_owned()
                },
                |h| h.implementation.language.clone(),
            ),
            is_reference: false,
        }
    }

    fn naming(&self) -> Naming {
        self.handshake.as_ref().map_or_else(
            || self.launch.language.map_or(Naming::Snake, Language::naming),
            |h| h.naming,
        )
    }

    fn begin_start(&mut self) {
        if self.process.is_some() || self.starting.is_some() || self.fatal.is_some() {
            return;
        }
        let since = Instant::now();
        match Process::spawn(&self.launch) {
            Ok(process) => self.starting = Some((process, since)),
            // Told in full by the first call that needs the process, as a failed start is.
            Err(error) => {
                self.fatal = Some(error);
                self.fatal_told = false;
            }
        }
    }

    fn offer(&mut self) -> Result<Option<Offer>, ImplError> {
        let offer = self.start().map(|handshake| Offer {
            contracts: handshake.contracts.clone(),
            defines: handshake.defines.clone(),
        });
        if offer.is_err() {
            // Not shown to anyone: the first spec that needs the process tells it in full.
            self.fatal_told = false;
        }
        offer.map(Some)
    }

    fn begin_spec(&mut self) -> Result<(), ImplError> {
        self.foreseen.clear();
        self.world_budget = MAX_WORLD_BYTES_PER_SPEC;
        self.captured = Captured::default();
        self.start().map(drop)
    }

    fn create(
        &mut self,
        contract: &str,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        let handshake = self.start()?;
        if !handshake.contracts.iter().any(|c| c == contract) {
            let listed = if handshake.contracts.is_empty() {
                "none".to_owned()
            } else {
                handshake.contracts.join(", ")
            };
            return Ok(Reply::Skipped(format!(
                "{} does not provide `{contract}` (its hello lists: {listed})",
                self.launch.label
            )));
        }
        // A foresight is for the `call` it was made for only.
        self.foreseen.clear();
        let request = Request::New {
            contract: contract.to_owned(),
            args: args.clone(),
        };
        match self.exchange(request, &format!("`new {contract}`"), world)? {
            // Its hello said it provides the contract: a class that vanished since is an
            // implementation that does not do what it announced, never a spec not to count.
            Reply::Skipped(reason) => Err(ImplError::new(
                ImplErrorKind::Errored,
                format!(
                    "the implementation announced `{contract}` in its hello, then answered `new {contract}` with skipped {}: a class that is there when looked up must stay there",
                    quote(brief(&reason).as_bytes())
                ),
            )),
            reply => Ok(reply),
        }
    }

    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        let what = format!("`{}`", describe_call(method, args));
        // Taken first: a foresight is for this request only, even one that cannot be sent.
        let foresee = std::mem::take(&mut self.foreseen)
            .into_iter()
            .map(ForeseenCall::from)
            .collect();
        let request = Request::Call {
            method: method.to_owned(),
            args: args.to_vec(),
            foresee,
        };
        self.exchange(request, &what, world)
    }

    fn foresees(&self) -> bool {
        self.foresight
    }

    fn foresee(&mut self, calls: Vec<Foreseen>) {
        self.foreseen = calls;
    }

    fn take_output(&mut self) -> Option<Captured> {
        std::mem::take(&mut self.captured).non_empty()
    }

    fn forget_spec(&mut self) {
        // The next spec starts a new process: nothing of this one's output, stderr tail or
        // state reaches it.
        self.foreseen.clear();
        self.shutdown();
        self.captured = Captured::default();
    }
}

impl Drop for ExternalImplementation {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Why a world call marked `foreseen` may not be: it is not the next call its request foresaw.
fn not_foreseen(
    call: &str,
    args: &[Value],
    n: u64,
    what: &str,
    expected: Option<&ForeseenCall>,
    on_foresight: bool,
) -> String {
    let made = describe_call(call, args);
    let why = match expected {
        _ if !on_foresight => {
            "an earlier world call of the request was not foreseen, so no later one is".to_owned()
        }
        None => format!("the request foresaw no call n={n}"),
        Some(expected) => format!(
            "the request foresaw `{}` there",
            describe_call(&expected.call, &expected.args)
        ),
    };
    format!(
        "world call `{made}` (n={n}) while serving {what} is marked foreseen, but {why}: only the foreseen calls, in order, may go on without waiting for an answer (docs/protocol.md, Foresight)"
    )
}

/// `replay(["a","b"])`: a call as a person would write it, cut if long.
pub(crate) fn describe_call(method: &str, args: &[Value]) -> String {
    let args: Vec<String> = args.iter().map(Value::to_string).collect();
    let args = args.join(", ");
    let args = if args.chars().count() > 60 {
        format!("{}...", args.chars().take(60).collect::<String>())
    } else {
        args
    };
    format!("{method}({args})")
}

/// What the spec at hand has used up: its world-call budget, and the output it captured.
struct Spent<'a> {
    budget: &'a mut usize,
    captured: &'a mut Captured,
}

/// How an exchange broke, before the process's exit status and stderr are added.
enum Broke {
    Timeout,
    /// Stdin took no more by the deadline: the process stopped reading its input. Names what
    /// was being written.
    WriteTimeout(String),
    /// Stdin would not take a line by the deadline, before it is said what the line was.
    Stalled,
    /// Stdout closed, or stdin would not take the request: the process is gone or going.
    Closed,
    /// The process exited, but stdout stays open: a process it started holds it.
    ExitedHeld(ExitStatus),
    /// A line that is not JSON: the message, and the line itself.
    Garbage(String, Vec<u8>),
    Protocol(String),
    Startup(String),
}

impl Broke {
    /// A failed write, told as the writing of `what`.
    fn writing(self, what: &str) -> Broke {
        match self {
            Broke::Stalled => Broke::WriteTimeout(what.to_owned()),
            other => other,
        }
    }
}

/// The last lines a process wrote to stderr.
#[derive(Default)]
struct StderrTail {
    lines: VecDeque<String>,
    dropped: usize,
    /// Whether any line, kept or not, said the process ran out of memory.
    out_of_memory: bool,
}

impl StderrTail {
    fn push(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
        self.out_of_memory |= limits::says_out_of_memory(text);
        let text = if text.chars().count() > STDERR_LINE_CHARS {
            format!(
                "{}...",
                text.chars().take(STDERR_LINE_CHARS).collect::<String>()
            )
        } else {
            text.to_owned()
        };
        if self.lines.len() == STDERR_TAIL_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(text);
    }

    fn render(&self) -> Option<String> {
        if self.lines.is_empty() {
            return None;
        }
        let mut out = if self.dropped > 0 {
            format!("last {} lines of stderr:\n", self.lines.len())
        } else {
            "stderr:\n".to_owned()
        };
        for line in &self.lines {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        Some(out.trim_end().to_owned())
    }
}

/// A running child process and the threads draining its output.
struct Process {
    child: Child,
    reaped: Option<ExitStatus>,
    /// Whether its tree has been ended (killed and reaped, orphans included).
    ended: bool,
    guard: Guard,
    limits: Limits,
    /// Non-blocking on Unix, so that a write waits no longer than the request's deadline.
    stdin: Option<ChildStdin>,
    stdout: Lines,
    stderr: Arc<Mutex<StderrTail>>,
    stderr_done: Receiver<()>,
    seq: u64,
    lines_read: u64,
    /// Whether it exited before answering `hello`, and whether what it printed on stdout then
    /// said it ran out of memory; lines of that stdout beyond those kept for the report.
    exited_at_start: bool,
    stdout_out_of_memory: bool,
    startup_lines_dropped: usize,
    /// `DLQSPEC_PROTOCOL_LOG`: a file every line sent (`>`) and received (`<`) is appended to.
    log: Option<std::fs::File>,
    /// Its box's parts held by dlqspec (its private folder, its cgroup), removed when it has
    /// ended: declared last, so dropped after the process is.
    _boxed: Option<PreparedBox>,
}

impl Process {
    fn start(launch: &Launch, timeout: Duration) -> Result<(Process, Handshake), ImplError> {
        let started = Instant::now();
        let process = Process::spawn(launch)?;
        Process::greet(process, started, timeout)
    }

    /// Greets a process spawned at `started`: its `hello`, within the startup time.
    fn greet(
        mut process: Process,
        started: Instant,
        timeout: Duration,
    ) -> Result<(Process, Handshake), ImplError> {
        let timeout = timeout.max(STARTUP_TIMEOUT);
        let what = "`hello` (the handshake)";
        let reply = process.exchange(
            Request::Hello {
                protocol: PROTOCOL_VERSION,
            },
            what,
            &mut crate::model::implementation::NoWorld,
            timeout,
            &mut Spent {
                budget: &mut { MAX_WORLD_BYTES_PER_SPEC },
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
                naming: naming.unwrap_or_else(|| Naming::of_language(&implementation.language)),
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

    /// A process that exits before it answers `hello`, having printed what is not the protocol
    /// (a runtime's fatal report, a usage text) or nothing, did not start: that is what it is
    /// told as, with all it printed, not as garbage. A JVM that cannot reserve its memory under
    /// `--memory` says so on stdout and exits 1. One that goes on running after garbage is
    /// garbage as before.
    fn did_not_start(&mut self, broke: Broke) -> Broke {
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
    fn spawn(launch: &Launch) -> Result<Process, ImplError> {
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
        let (mut child, guard) = spawned.map_err(|error| cannot(error.to_string()))?;
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
            exited_at_start: false,
            stdout_out_of_memory: false,
            startup_lines_dropped: 0,
            log: protocol_log(),
            _boxed: boxed,
        })
    }

    fn log(&mut self, direction: char, line: &[u8]) {
        if let Some(log) = &mut self.log {
            let mut entry = format!("{} {direction} ", self.child.id()).into_bytes();
            entry.extend_from_slice(line);
            if entry.last() != Some(&b'\n') {
                entry.push(b'\n');
            }
            // One write per line, so that processes logging to the same file do not interleave.
            if log.write_all(&entry).is_err() {
                self.log = None;
            }
        }
    }

    /// Writes one line to the process's stdin by `deadline`: a process that stops reading
    /// its input fails the request as one that stops answering does.
    /// Gives the request back, for what the exchange keeps of it.
    fn send(&mut self, seq: u64, body: Request, deadline: Instant) -> Result<Request, Broke> {
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
    /// meanwhile. `spent.budget` is what the spec's world calls may still send, in bytes.
    fn exchange(
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
        self.seq += 1;
        let seq = self.seq;
        let sent = self
            .send(seq, request, deadline)
            .map_err(|broke| broke.writing(&format!("the request {what}")))?;
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
            if line.len() > *budget {
                return Err(Broke::Protocol(format!(
                    "the world calls of this spec sent more than {} MiB (at `{call}` while serving {what}), the most one spec may send (docs/protocol.md): the implementation is likely looping, or putting far more in the queue or DLQ than the spec has",
                    MAX_WORLD_BYTES_PER_SPEC >> 20
                )));
            }
            *budget -= line.len();
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
    fn next_line(&mut self, deadline: Instant) -> Result<StdoutEvent, Broke> {
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

    fn decode(&self, line: &[u8]) -> Result<Incoming, Broke> {
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

    /// Turns a broken exchange into the error to report, stopping the process on the way.
    fn failure(&mut self, broke: Broke, what: &str, timeout: Duration) -> ImplError {
        let (kind, mut message) = match broke {
            Broke::Timeout => (
                ImplErrorKind::Timeout,
                format!(
                    "no reply to {what} within {}; the process was killed (--timeout SECS allows more)",
                    seconds(timeout)
                ),
            ),
            Broke::WriteTimeout(written) => (
                ImplErrorKind::Timeout,
                format!(
                    "the implementation stopped reading its input: {written} could not be written within {}; the process was killed (--timeout SECS allows more)",
                    seconds(timeout)
                ),
            ),
            Broke::Stalled => (
                ImplErrorKind::Timeout,
                format!(
                    "the implementation stopped reading its input while serving {what}; the process was killed (--timeout SECS allows more)"
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
        if let Some(limit) = self.limit_reached() {
            message.push('\n');
            message.push_str(&limit);
        }
        if let Some(tail) = self.stderr.lock().ok().and_then(|t| t.render()) {
            message.push('\n');
            message.push_str(&tail);
        }
        ImplError::new(kind, message)
    }

    /// Which of its limits the process reached, said for a person, if it reached one.
    fn limit_reached(&self) -> Option<String> {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if self.reaped.and_then(|s| s.signal()) == Some(libc::SIGXCPU) {
                return Some(format!(
                    "it used up its CPU time: each implementation process may use {}; --cpu SECS allows more",
                    self.limits.cpu_text()
                ));
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if self.reaped.and_then(|s| s.signal()) == Some(libc::SIGXFSZ) {
                return Some(format!(
                    "it wrote a file larger than a box may hold: each implementation may write {}; --disk SIZE allows more",
                    self.limits.disk_text()
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
            return Some(format!(
                "it ran out of memory: each implementation's box may hold {held} in all, its processes, shared memory and files included (--memory); --memory SIZE allows more"
            ));
        }
        let out_of_memory =
            self.stdout_out_of_memory || self.stderr.lock().is_ok_and(|tail| tail.out_of_memory);
        if out_of_memory {
            return Some(format!(
                "it ran out of memory: each implementation process may use {}; --memory SIZE allows more",
                self.limits.memory_text()
            ));
        }
        // Nothing said why, but a runtime that cannot get the memory it reserves at start
        // (a JVM's heap) dies before `hello`: under a lowered limit, that is the likely cause.
        let lowered = self
            .limits
            .memory
            .is_some_and(|bytes| bytes < limits::DEFAULT_MEMORY_BYTES);
        (self.exited_at_start && lowered).then(|| {
            format!(
                "a process that exits before `hello` under a lowered memory limit most likely could not get the memory its runtime needs to start: each implementation process may use {}; --memory SIZE allows more",
                self.limits.memory_text()
            )
        })
    }

    /// Ends the process's whole tree: kills and reaps the process unless it was reaped, and
    /// whatever it started, even what left its group or was reparented to dlqspec.
    fn kill(&mut self) {
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
    fn await_exit(&mut self, grace: Duration) -> Option<ExitStatus> {
        let status = self.exit_within(grace);
        if status.is_none() {
            self.kill();
        }
        status
    }

    /// Waits up to `grace` for the process to exit by itself: its exit status, or `None` if it
    /// is still running (or cannot be waited for).
    fn exit_within(&mut self, grace: Duration) -> Option<ExitStatus> {
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

    /// `bye`, then closed stdin, then a grace period, then a kill.
    fn leave(mut self) -> ProcessExit {
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

/// The file named by `DLQSPEC_PROTOCOL_LOG`, opened for appending, if set.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: the debugging log the user names in DLQSPEC_PROTOCOL_LOG, appended to, never replaced"
)]
fn protocol_log() -> Option<std::fs::File> {
    let path = std::env::var_os("DLQSPEC_PROTOCOL_LOG").filter(|p| !p.is_empty())?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .ok()
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

/// The headline of an error message and its `-->` line, without details or stderr.
fn brief(message: &str) -> String {
    let mut lines = message.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    if let Some(at) = lines.next().filter(|l| l.trim_start().starts_with("-->")) {
        out.push(' ');
        out.push_str(at.trim_start());
    }
    out
}

fn not_a_reply(message: &IncomingBody, what: &str) -> String {
    format!(
        "a `{}` message is not a reply to {what}",
        message.type_name()
    )
}

/// A line of output, quoted and escaped so that it reads unambiguously; cut if long.
fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    if text.chars().count() > 200 {
        format!("{:?}...", text.chars().take(200).collect::<String>())
    } else {
        format!("{text:?}")
    }
}

fn errored_text(headline: &str, details: Option<&str>) -> String {
    let mut out = headline.to_owned();
    if let Some(details) = details.map(str::trim_end).filter(|d| !d.is_empty()) {
        let lines: Vec<&str> = details.lines().collect();
        let shown = &lines[lines.len().saturating_sub(15)..];
        out.push_str("\ndetails:");
        if shown.len() < lines.len() {
            out.push_str(&format!(" (last {} lines)", shown.len()));
        }
        for line in shown {
            out.push_str("\n  ");
            out.push_str(line);
        }
    }
    out
}

fn seconds(duration: Duration) -> String {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn calls_are_described_as_written() {
        assert_eq!(describe_call("process_one", &[]), "process_one()");
        assert_eq!(
            describe_call("replay", &[json!(["a", "b"])]),
            "replay([\"a\",\"b\"])"
        );
        assert_eq!(
            describe_call("submit", &[json!("j1"), json!("x")]),
            "submit(\"j1\", \"x\")"
        );
        let long = describe_call("submit", &[json!("x".repeat(100))]);
        assert!(long.ends_with("...)"), "{long}");
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_lines() {
        let mut tail = StderrTail::default();
        assert_eq!(tail.render(), None);
        for i in 0..25 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        let shown = tail.render().unwrap();
        assert!(
            shown.starts_with("last 20 lines of stderr:\n  line 5\n"),
            "{shown}"
        );
        assert!(shown.ends_with("  line 24"), "{shown}");
    }

    #[test]
    fn garbage_is_quoted_and_cut() {
        assert_eq!(quote(b"DEBUG: x"), "\"DEBUG: x\"");
        assert_eq!(quote(b"tab\there"), "\"tab\\there\"");
        assert!(quote("y".repeat(300).as_bytes()).ends_with("\"..."));
    }

    #[test]
    fn details_keep_their_last_lines() {
        let details: String = (1..=20).map(|i| format!("frame {i}\n")).collect();
        let text = errored_text("could not load", Some(&details));
        assert!(
            text.starts_with("could not load\ndetails: (last 15 lines)\n  frame 6\n"),
            "{text}"
        );
        assert_eq!(errored_text("x", Some("  \n")), "x");
    }

    #[test]
    fn a_repeated_startup_failure_is_brief() {
        assert_eq!(
            brief("the solution could not be loaded: SyntaxError\n  --> /s.py:6\ndetails:\n  x"),
            "the solution could not be loaded: SyntaxError --> /s.py:6"
        );
        assert_eq!(
            brief("exited with status 2\nstderr:\n  boom"),
            "exited with status 2"
        );
    }

    #[test]
    fn timeouts_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(5)), "5s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25s");
    }
}
