//! `grade`'s own children (a `dlqspec run` per submission, a `dlqspec explain` per picture),
//! each run to its end within a wall-clock budget: started in a process tree of its own that
//! dies with grade, its output kept in unnamed files, its JSON-lines report read back through a
//! pipe only grade and it hold, and stopped at its deadline (asked first, then its whole tree
//! killed).
//!
//! Nothing of what a child leaves is at a path a submission could write: its output is in
//! files with no name, its report comes through a pipe (which the child seals from its
//! implementation, `seal`), and what it is given is read, never trusted here. How far its
//! result counts (a stopped run counts for nothing) is `grade`'s to decide.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::limits::Limits;
use super::zygote;

/// The descriptor a child's report comes back through, when one is asked for.
const REPORT_FD: i32 = 3;

/// Where a child writes its report: the path of its `REPORT_FD` (`--output` takes a path).
pub fn report_path() -> String {
    format!("/proc/self/fd/{REPORT_FD}")
}

/// How long a stopped child may take to end its implementation's processes before its tree is
/// killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The most of a budget kept back from a child's own (`run --budget`): the child stops itself
/// that much before it would be stopped, with the time to end its implementation and write its
/// report. A quarter of the budget when that is less.
const CHILD_MARGIN: Duration = Duration::from_secs(10);

/// How often a running child is checked on.
const POLL: Duration = Duration::from_millis(20);

/// How long a report's pipe may stay open once its child and everything it started are gone:
/// a hang-guard only, nothing is left to hold it.
const REPORT_END: Duration = Duration::from_secs(10);

/// The budget a child given `budget` is told to keep itself (`run --budget`): `budget` less the
/// margin. The child stops itself at it and reports what it finished; the supervisor's stop at
/// `budget` is the backstop.
pub fn child_budget(budget: Duration) -> Duration {
    budget - (budget / 4).min(CHILD_MARGIN)
}

/// One child to run: what to start, what it is told, and until when it may run.
#[derive(Debug)]
pub struct Request<'a> {
    /// The program (grade's own `dlqspec`) and its arguments.
    pub program: &'a Path,
    pub args: Vec<OsString>,
    /// Its environment: grade's own, each variable named here set to its value (`Some`) or
    /// removed (`None`).
    pub environment: Vec<(OsString, Option<OsString>)>,
    /// When it is stopped, if it has not ended by then.
    pub deadline: Instant,
    /// Where its stderr goes.
    pub stderr: Stderr,
    /// The most bytes of its report kept, when it is to send one: then it is handed a pipe as
    /// `REPORT_FD`, and a report larger than this is no report.
    pub report: Option<u64>,
    /// The warm start's zygote, which a run is handed as `zygote::RUN_FD`.
    pub zygote: Option<&'a zygote::Socket>,
}

/// Where a child's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stderr {
    /// Into its output, with its stdout (a run's human report is both).
    WithStdout,
    /// Nowhere: its stdout alone is its output (a picture's page).
    Dropped,
}

/// How a child ended and what it left.
#[derive(Debug)]
pub struct Ended {
    pub exit: Exit,
    /// Its stdout (and stderr, given `Stderr::WithStdout`), in an unnamed file, at its end.
    pub output: File,
    /// What came through its report pipe.
    pub report: Report,
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// By itself, before its deadline, with this status.
    Exited(ExitStatus),
    /// It went past its deadline and was stopped, whatever it did then.
    Stopped,
}

/// What a child sent through its report pipe.
#[derive(Debug)]
pub enum Report {
    /// Nothing: none was asked for, or it wrote none.
    Nothing,
    /// Its report, in an unnamed file, at its end.
    Sent(File),
    /// Why what it sent is no report (too large, unreadable, its pipe held open).
    Unusable(String),
}

/// Runs `request`'s child to its end, or to its deadline: then it is asked to stop (SIGTERM,
/// so that it ends its implementation's processes itself) and, after a grace time, its whole
/// tree is killed. Whatever it started is gone when this returns. Why it could not run, when
/// it could not start (or was lost track of).
pub fn run(request: Request) -> Result<Ended, String> {
    let output = tempfile::tempfile().map_err(|e| format!("no temporary file: {e}"))?;
    let report = match request.report {
        Some(limit) => Some(ReportPipe::open(limit)?),
        None => None,
    };
    let exit = run_to_end(&request, report.as_ref().map(|pipe| &pipe.write), &output)?;
    let report = match report {
        Some(pipe) => pipe.received(),
        None => Report::Nothing,
    };
    Ok(Ended {
        exit,
        output,
        report,
    })
}

/// A report's pipe while its child runs: the end the child is handed, and a thread that reads
/// the other to its end as it comes (so that the child never blocks on a full pipe).
struct ReportPipe {
    write: std::io::PipeWriter,
    drained: std::sync::mpsc::Receiver<Result<Option<File>, String>>,
}

impl ReportPipe {
    /// A pipe, both ends closed on exec (the child gets its end as `REPORT_FD` alone), and its
    /// reader, keeping at most `limit` bytes.
    fn open(limit: u64) -> Result<ReportPipe, String> {
        let (read, write) = std::io::pipe().map_err(|e| format!("no pipe for its report: {e}"))?;
        let (done, drained) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("dlqspec-grade-report".into())
            .spawn(move || {
                let _ = done.send(drain(read, limit));
            })
            .map_err(|e| format!("no thread to read its report: {e}"))?;
        Ok(ReportPipe { write, drained })
    }

    /// What came through, once the child is over: its end of the pipe is closed here, and the
    /// pipe ends when every process that held it is gone.
    fn received(self) -> Report {
        drop(self.write);
        match self.drained.recv_timeout(REPORT_END) {
            Ok(Ok(Some(report))) => Report::Sent(report),
            Ok(Ok(None)) => Report::Nothing,
            Ok(Err(why)) => Report::Unusable(why),
            Err(_) => {
                Report::Unusable("its report pipe stayed open after its run ended".to_owned())
            }
        }
    }
}

/// Reads a report to the end of its pipe into an unnamed file, keeping at most `limit` bytes
/// (the rest is read and dropped, so the child never blocks); `None` when nothing came. A
/// report larger than that is no report.
fn drain(mut pipe: impl Read, limit: u64) -> Result<Option<File>, String> {
    let mut kept = tempfile::tempfile().map_err(|e| format!("no temporary file: {e}"))?;
    let copied = std::io::copy(&mut (&mut pipe).take(limit), &mut kept)
        .map_err(|e| format!("cannot read its report: {e}"))?;
    let rest = std::io::copy(&mut pipe, &mut std::io::sink()).unwrap_or(0);
    if rest > 0 {
        return Err(format!(
            "its report is larger than the {} MiB read back",
            limit >> 20
        ));
    }
    Ok((copied > 0).then_some(kept))
}

/// The command `request` describes: no stdin, no CI context of its own beyond what it is told.
#[expect(
    clippy::disallowed_methods,
    reason = "starts a process: grade runs `dlqspec run` itself, one child per submission (and a `dlqspec explain` per picture)"
)]
fn command(request: &Request) -> Command {
    let mut command = Command::new(request.program);
    command.args(&request.args).stdin(Stdio::null());
    for (name, value) in &request.environment {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
}

/// Starts `request`'s child, in a process tree of its own, and waits for it until its
/// deadline; `report` is handed to it as `REPORT_FD`, and the zygote's socket as `RUN_FD`.
fn run_to_end(
    request: &Request,
    report: Option<&std::io::PipeWriter>,
    output: &File,
) -> Result<Exit, String> {
    use std::os::fd::AsRawFd;
    let mut command = command(request);
    let copy = || output.try_clone().map_err(|e| e.to_string());
    command.stdout(copy()?);
    match request.stderr {
        Stderr::WithStdout => command.stderr(copy()?),
        Stderr::Dropped => command.stderr(Stdio::null()),
    };
    if let Some(zygote) = request.zygote {
        command.env(zygote::ZYGOTE_VARIABLE, zygote.variable());
    }
    let handed: Vec<(i32, i32)> = report
        .map(|pipe| (pipe.as_raw_fd(), REPORT_FD))
        .into_iter()
        .chain(request.zygote.map(|zygote| (zygote.fd(), zygote::RUN_FD)))
        .collect();
    let handed = match handed.is_empty() {
        true => None,
        false => Some(
            super::descriptors::hand(&mut command, &handed)
                .map_err(|e| format!("cannot hand its report pipe over: {e}"))?,
        ),
    };
    // Started as implementations are (`children`): its own group and tree, dying with grade,
    // so that nothing a submission started outlives its grading. Its own limits are the ones
    // it hands its implementation's box.
    let spawned = super::children::spawn(&mut command, &Limits::unlimited());
    // The copies handed over go now: the pipe ends when the child's end of it does.
    drop(handed);
    let (mut child, guard) =
        spawned.map_err(|e| format!("cannot start {}: {e}", request.program.display()))?;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                super::children::end(&mut child, true, guard.tree());
                return Ok(Exit::Exited(status));
            }
            Ok(None) if Instant::now() < request.deadline => std::thread::sleep(POLL),
            Ok(None) => {
                let reaped = stop(&mut child);
                super::children::end(&mut child, reaped, guard.tree());
                return Ok(Exit::Stopped);
            }
            Err(error) => {
                super::children::end(&mut child, false, guard.tree());
                return Err(format!("lost track of its run: {error}"));
            }
        }
    }
}

/// Asks a child to stop, so that it ends its implementation's processes itself; whether it did
/// within the grace time (and was reaped). What is left is for `children::end`.
fn stop(child: &mut Child) -> bool {
    #[cfg(unix)]
    {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) with the pid of a child this process has not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let until = Instant::now() + STOP_GRACE;
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return true;
            }
            std::thread::sleep(POLL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{Read, Seek};

    use super::*;

    /// A request to run `script` in `sh`, with no deadline it could reach.
    fn sh(script: &str) -> Request<'static> {
        Request {
            program: Path::new("sh"),
            args: vec!["-c".into(), script.into()],
            environment: Vec::new(),
            deadline: Instant::now() + Duration::from_secs(24 * 3600),
            stderr: Stderr::WithStdout,
            report: None,
            zygote: None,
        }
    }

    fn text(mut file: File) -> String {
        let mut text = String::new();
        file.rewind().unwrap();
        file.read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn a_childs_budget_keeps_back_a_quarter_of_its_own_or_ten_seconds_at_most() {
        assert_eq!(child_budget(Duration::ZERO), Duration::ZERO);
        assert_eq!(child_budget(Duration::from_secs(8)), Duration::from_secs(6));
        assert_eq!(
            child_budget(Duration::from_secs(40)),
            Duration::from_secs(30)
        );
        assert_eq!(
            child_budget(Duration::from_secs(600)),
            Duration::from_secs(590)
        );
    }

    #[test]
    fn a_child_that_ends_leaves_its_status_its_output_and_its_report() {
        let ended = run(Request {
            report: Some(1 << 20),
            ..sh("printf '{}' >&3; echo out; echo err >&2; exit 2")
        })
        .unwrap();
        assert!(matches!(ended.exit, Exit::Exited(status) if status.code() == Some(2)));
        assert_eq!(text(ended.output), "out\nerr\n");
        let Report::Sent(report) = ended.report else {
            panic!("{:?}", ended.report);
        };
        assert_eq!(text(report), "{}");
    }

    #[test]
    fn a_child_told_nothing_of_a_report_sends_none_and_its_stderr_can_be_dropped() {
        let ended = run(Request {
            stderr: Stderr::Dropped,
            environment: vec![
                ("DLQSPEC_SUPERVISED_SAYS".into(), Some("page".into())),
                ("HOME".into(), None),
            ],
            ..sh("echo \"$DLQSPEC_SUPERVISED_SAYS${HOME-}\"; echo noise >&2")
        })
        .unwrap();
        assert!(matches!(ended.exit, Exit::Exited(status) if status.success()));
        assert_eq!(text(ended.output), "page\n");
        assert!(matches!(ended.report, Report::Nothing));
    }

    #[test]
    fn a_report_larger_than_its_limit_is_no_report() {
        let ended = run(Request {
            report: Some(4),
            ..sh("printf 0123456789 >&3")
        })
        .unwrap();
        let Report::Unusable(why) = ended.report else {
            panic!("{:?}", ended.report);
        };
        assert!(why.contains("larger than"), "{why}");
    }

    /// Whether a process of this machine runs `sleep SECONDS` (each test sleeps its own).
    fn sleeping(seconds: &str) -> bool {
        let wanted = format!("sleep\0{seconds}\0");
        std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|cmdline| cmdline.ends_with(wanted.as_bytes()))
        })
    }

    #[test]
    fn what_a_child_started_is_gone_once_it_has_ended() {
        let ended = run(sh("sleep 100101 & echo started")).unwrap();
        assert!(matches!(ended.exit, Exit::Exited(status) if status.success()));
        assert_eq!(text(ended.output), "started\n");
        assert!(!sleeping("100101"), "what it started is left behind");
    }

    #[test]
    fn a_child_past_its_deadline_is_stopped_with_everything_it_started() {
        // Its deadline is over before it starts, and it would wait forever, as would what it
        // started (if it started it before it was stopped).
        let ended = run(Request {
            deadline: Instant::now(),
            ..sh("sleep 100102 & exec sleep 100102")
        })
        .unwrap();
        assert_eq!(ended.exit, Exit::Stopped);
        assert!(
            !sleeping("100102"),
            "it, or what it started, is left behind"
        );
    }

    #[test]
    fn a_child_that_cannot_start_says_so() {
        let error = run(Request {
            program: Path::new("/nonexistent/dlqspec-supervised"),
            ..sh("")
        })
        .unwrap_err();
        assert!(
            error.starts_with("cannot start /nonexistent/dlqspec-supervised"),
            "{error}"
        );
    }
}
