//! An implementation under test that runs as a child process speaking the JSON-lines protocol.
//!
//! One process serves spec after spec: it is started and greeted (`hello`) on first use, asked
//! for a fresh instance per spec (`new`), called (`call`), and serves its world calls through
//! the scenario's `WorldHost` while a request is open. Everything that can go wrong with a
//! process (a hang, an exit, garbage on stdout, a wrong `seq`) becomes an `ImplError` for the
//! spec at hand; the process is then stopped and started again for the next spec.
//!
//! This file holds the implementation's side and what both halves of a process share; the
//! process's lifecycle (`process/lifecycle.rs`: spawned in its box, watched, ended) and its
//! protocol client (`process/client.rs`: greeted, asked, answered) are its children.

mod client;
mod lifecycle;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::children::{self, Guard};
use super::limits::{
    self, Limits, MAX_LINE_BYTES, MAX_WORLD_BYTES_PER_SPEC, MAX_WORLD_VALUES_PER_SPEC,
};
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

pub(crate) use lifecycle::describe_exit;

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
    world_budget: WorldBudget,
    /// What the spec at hand printed and raised, as the shim reports it.
    captured: Captured,
    /// The world calls the next `call` is foreseen to make, sent with it.
    foreseen: Vec<Foreseen>,
    /// The optional protocol features dlqspec may use, when the implementation lists them:
    /// all of `protocol::FEATURES`, or those `DLQSPEC_FEATURES` names (to compare).
    allowed: Vec<String>,
    /// Whether foresight is used: allowed, and listed in the running process's `hello`.
    foresight: bool,
    /// The copies of its files its last box showed, kept so that the next box (a restart
    /// after a hidden spec or a crash) shows them again rather than copying anew.
    copies: sandbox::CopiesKept,
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
            world_budget: WorldBudget::full(),
            captured: Captured::default(),
            foreseen: Vec::new(),
            allowed: allowed_features(),
            foresight: false,
            copies: sandbox::CopiesKept::default(),
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
                    self.copies = process.copies();
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
                        "the implementation ran out of memory serving {what} (MemoryError: {}): each of its processes may use {}",
                        error.message,
                        self.launch.limits.memory_text()
                    ),
                )
                .with_hint("--memory SIZE allows more"))
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
            Ok(mut process) => {
                process.send_hello();
                self.starting = Some((process, since));
            }
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
        self.world_budget = WorldBudget::full();
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
            class: crate::contracts::find(contract).map(|c| c.subject().to_owned()),
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

/// What docs/students.md tells a TypeScript student whose import failed as Node runs
/// TypeScript (types stripped, files named as written): a type imported without `import type`
/// is an export the module does not have at run time, and an import without its `.ts` names no
/// file. `None` for any other error, or one of a solution that is not TypeScript.
fn typescript_import_hint(message: &str, file: Option<&str>) -> Option<&'static str> {
    let typescript = |text: &str| {
        [".ts", ".mts", ".cts"]
            .iter()
            .any(|ext| text.contains(&format!("{ext}'")) || text.ends_with(ext))
    };
    if !typescript(message) && !file.is_some_and(typescript) {
        return None;
    }
    let missing_export = message.contains("does not provide an export named");
    let unnamed_file =
        message.contains("Cannot find module") || message.contains("ERR_MODULE_NOT_FOUND");
    (missing_export || unnamed_file).then_some(
        "TypeScript runs as Node.js runs it: a type that is only a type is imported with `import type { Name } from \"./file.ts\"` (a plain import of it is an export the module does not have at run time), and an import of your own file names the file with its extension (`./queue.ts`); docs/students.md",
    )
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

/// What the world calls of the spec at hand may still send: bytes of their lines, and JSON
/// values of their arguments (which the world keeps: a value costs about 32 bytes whatever its
/// text, so bytes alone would let 64 MiB of zeros hold a gigabyte).
struct WorldBudget {
    bytes: usize,
    values: usize,
}

impl WorldBudget {
    fn full() -> WorldBudget {
        WorldBudget {
            bytes: MAX_WORLD_BYTES_PER_SPEC,
            values: MAX_WORLD_VALUES_PER_SPEC,
        }
    }
}

/// How many JSON values `args` holds, each list and mapping counted with what it holds.
fn values_in(args: &[Value]) -> usize {
    let mut count = 0;
    let mut left: Vec<&Value> = args.iter().collect();
    while let Some(value) = left.pop() {
        count += 1;
        match value {
            Value::Array(items) => left.extend(items),
            Value::Object(map) => left.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// What the spec at hand has used up: its world-call budget, and the output it captured.
struct Spent<'a> {
    budget: &'a mut WorldBudget,
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
    /// Whether `hello` was sent ahead of `greet` (`send_hello`), which then only reads its answer.
    hello_sent: bool,
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::lifecycle::seconds;
    use super::*;

    #[test]
    fn a_typescript_import_that_fails_gets_the_students_hint() {
        let missing = "SyntaxError: The requested module './types.ts' does not provide an export named 'Message'";
        assert!(typescript_import_hint(missing, Some("/s/solution.ts")).is_some());
        assert!(typescript_import_hint(missing, None).is_some());
        let unnamed = "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/s/queue' imported from /s/solution.ts";
        assert!(typescript_import_hint(unnamed, Some("/s/solution.ts")).is_some());
        // JavaScript's own missing export is not TypeScript's to explain.
        let javascript =
            "SyntaxError: The requested module './types.mjs' does not provide an export named 'x'";
        assert_eq!(
            typescript_import_hint(javascript, Some("/s/solution.mjs")),
            None
        );
        assert_eq!(
            typescript_import_hint("ReferenceError: x is not defined", Some("/s/solution.ts")),
            None
        );
    }

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
