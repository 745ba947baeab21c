//! The warm start of Python submissions under `grade`, and of a Python solution's reruns under
//! `watch` (Linux, as root): one zygote that has started the interpreter once, forking one
//! child per submission (or run) that joins a box made as a cold start's is (docs/security.md,
//! "The warm start").
//!
//! `grade` starts the zygote (`shims/python/dlqspec_zygote.py`) in a box of its own
//! (`sandbox::ZygoteBox`: network and IPC namespaces, a pids cgroup, a Landlock domain that
//! writes nothing outside the boxes' temporary folder, few capabilities, no_new_privs) and
//! hands each run one end of a `SOCK_SEQPACKET` socket pair. A run prepares the box in Rust
//! exactly as for a cold start (`sandbox::prepare`: the Landlock ruleset, the pids cgroup, the
//! uid, the private folder, the environment). The process it spawns (A) makes the box as a
//! cold A does: joins the cgroup, unshares the namespaces and forks B, process 1 of the new PID
//! namespace, which mounts its fresh `/proc` (what the zygote's domain could not). A then sends
//! the zygote one request with the box's descriptors and namespaces; the zygote forks its
//! child (W) into the box's PID namespace (process 2), which joins the others and forks the
//! implementation (D, process 3), then ends: D is then B's child, as a cold C is. B reaps it
//! and tells A its status, which A mirrors as the cold A does. So the run still has a child of its own that ends as
//! the implementation ends, and the pipes, deadlines and reports are the cold start's; when A
//! is killed, B dies with it and takes the namespace with it, and the box's cgroup is emptied
//! (every member killed) before the run goes on.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::children::{self, Guard};
use super::launch::Launch;
use super::limits::Limits;
use super::sandbox;
use super::warm_request;
use crate::model::language::Language;

use super::warm_request::MAX_REQUEST;
/// The variable `grade` sets for each run (`warm_request`, which reads it).
pub(crate) use super::warm_request::ZYGOTE_VARIABLE;

/// Where a run gets its end of the zygote's socket.
pub(crate) const RUN_FD: RawFd = 4;

/// The zygote's program, beside the Python shim in the shims folder.
const ZYGOTE_SCRIPT: &str = "dlqspec_zygote.py";

/// The zygote's end of the socket, in the zygote.
const ZYGOTE_FD: RawFd = 3;

/// How long the zygote may take to import and say it is ready: a hang-guard only.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A running zygote, held by `grade` (or by `watch`'s `WarmStart`); dropping it ends the zygote
/// and every child it has.
pub(crate) struct Zygote {
    child: Child,
    guard: Guard,
    control: OwnedFd,
    program: PathBuf,
    _private: tempfile::TempDir,
    /// Removed after the zygote has ended (fields drop after `drop`).
    #[cfg(target_os = "linux")]
    _box: sandbox::ZygoteBox,
}

impl Zygote {
    /// Starts the zygote for `program` (the interpreter, as `--impl python:` finds it) with
    /// the zygote script beside `shim`, at most `processes` processes besides the boxes, and
    /// waits until it is ready; why not, when it cannot.
    #[cfg(target_os = "linux")]
    #[expect(
        clippy::disallowed_methods,
        reason = "starts a process: the zygote of the warm start"
    )]
    pub(crate) fn start(
        program: &str,
        shim: &Path,
        processes: Option<u64>,
    ) -> Result<Zygote, String> {
        let features = sandbox::features();
        if !(features.root
            && features.container
            && features.landlock >= 1
            && features.pids_cgroup())
        {
            return Err(
                "a warm child is boxed as strongly as a cold one only as root, in a container, with Landlock and a pids cgroup, which this machine lacks".to_owned(),
            );
        }
        let script = shim
            .parent()
            .map(|folder| folder.join(ZYGOTE_SCRIPT))
            .filter(|script| script.is_file())
            .ok_or("the zygote script is not beside the Python shim")?;
        let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
        let located = sandbox::locate(program, std::env::var_os("PATH").as_deref(), &cwd)
            .ok_or_else(|| format!("`{program}` is not on PATH"))?;
        // A warm child runs only as a box's uid (the zygote refuses uid 0), which must read the
        // interpreter and the shims through their own mode bits, as a cold box's uid must.
        let mut needed = vec![located.clone(), script.clone()];
        needed.extend(std::fs::canonicalize(&located));
        if let Some(blocked) = sandbox::blocked_in_box(&needed) {
            return Err(format!(
                "a warm child runs only as a box's own uid, which cannot reach {} (no o+x or o+r in its mode bits): make it reachable, or name an interpreter others can run in DLQSPEC_PYTHON",
                blocked.display()
            ));
        }
        let private = tempfile::Builder::new()
            .prefix("dlqspec-zygote-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let boxed = sandbox::ZygoteBox::prepare(processes, private.path())?;
        let (mine, theirs) = socket_pair().map_err(|e| format!("no socket pair: {e}"))?;
        let mut command = Command::new(&located);
        {
            use std::os::unix::process::CommandExt;
            command.arg0(program);
        }
        let variables = sandbox::environment(std::env::vars_os(), private.path());
        // What is given, so that the zygote can tell what its interpreter's wrapper (pyenv's
        // shim) added or changed, which a cold start's wrapper does too.
        let given: serde_json::Map<String, serde_json::Value> = variables
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string_lossy().into_owned(),
                    value.to_string_lossy().into_owned().into(),
                )
            })
            .collect();
        // The environment a cold child gets, no more: every warm child's /proc/self/environ
        // shows the one the zygote was started with. What it is told besides comes on its socket.
        command
            .arg(&script)
            .env_clear()
            .envs(variables)
            .current_dir(private.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let handed = super::descriptors::hand(&mut command, &[(theirs.as_raw_fd(), ZYGOTE_FD)])
            .map_err(|e| format!("cannot hand the zygote its socket: {e}"))?;
        let (child, guard) = children::spawn_zygote(&mut command, &Limits::unlimited(), &boxed)
            .map_err(|e| format!("cannot start `{}`: {e}", located.display()))?;
        drop((handed, theirs));
        let mut zygote = Zygote {
            child,
            guard,
            control: mine,
            program: located,
            _private: private,
            _box: boxed,
        };
        let setup = serde_json::json!({
            "given": given,
            "uids": [sandbox::BOX_UIDS.start, sandbox::BOX_UIDS.end],
        })
        .to_string();
        zygote.send_setup(setup.as_bytes())?;
        zygote.await_ready()?;
        Ok(zygote)
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn start(
        _program: &str,
        _shim: &Path,
        _processes: Option<u64>,
    ) -> Result<Zygote, String> {
        Err("the warm start is for Linux only".to_owned())
    }

    /// Sends the zygote its set-up message, its first on the socket.
    fn send_setup(&self, setup: &[u8]) -> Result<(), String> {
        if setup.len() > MAX_REQUEST {
            return Err("the zygote's set-up is larger than its buffer".to_owned());
        }
        // SAFETY: send on a descriptor this value owns, from a buffer of that length.
        let sent = unsafe {
            libc::send(
                self.control.as_raw_fd(),
                setup.as_ptr().cast(),
                setup.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if sent == setup.len() as isize {
            Ok(())
        } else {
            Err(format!(
                "the zygote's set-up could not be sent: {}",
                io::Error::last_os_error()
            ))
        }
    }

    /// Waits for the zygote's one-byte message that it has imported and compiled the shim.
    fn await_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let mut poll = libc::pollfd {
                fd: self.control.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one descriptor this value owns.
            let ready = unsafe { libc::poll(&mut poll, 1, 100) };
            if ready > 0 {
                let mut byte = [0u8; 1];
                // SAFETY: reading one byte into a buffer of one.
                let got =
                    unsafe { libc::read(self.control.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
                return if got == 1 && byte[0] == b'R' {
                    Ok(())
                } else {
                    Err("the zygote ended before it was ready".to_owned())
                };
            }
            if Instant::now() > deadline || matches!(self.child.try_wait(), Ok(Some(_))) {
                return Err("the zygote did not get ready".to_owned());
            }
        }
    }

    /// What each run is handed of the zygote: its socket and the value that names it.
    pub(crate) fn socket(&self) -> Socket {
        Socket {
            fd: self.control.as_raw_fd(),
            variable: format!("{RUN_FD}:{}", self.program.display()),
        }
    }
}

/// The zygote as each run is handed it: the descriptor its run gets as `RUN_FD`, and the value
/// of `ZYGOTE_VARIABLE` that tells it so. Valid while the `Zygote` it came from lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Socket {
    fd: RawFd,
    variable: String,
}

impl Socket {
    /// grade's end of the socket, which a run is handed a copy of as `RUN_FD`.
    pub(crate) fn fd(&self) -> RawFd {
        self.fd
    }

    /// The value of `ZYGOTE_VARIABLE` in a run's environment.
    pub(crate) fn variable(&self) -> &str {
        &self.variable
    }
}

/// The zygote that starts a class's Python submissions warm: started for the interpreter the
/// first Python submission among `submissions` launches with (`python`, grade's
/// `DLQSPEC_PYTHON`, before the environment's), with at most `processes` processes besides
/// the boxes, when `boxes` (the runs' boxes have their folder). `Ok(None)` when no submission
/// is Python's; why not, when it cannot start (then every submission starts cold).
pub(crate) fn for_class<'a>(
    submissions: impl IntoIterator<Item = &'a Path>,
    python: Option<&Path>,
    boxes: bool,
    processes: Option<u64>,
) -> Result<Option<Zygote>, String> {
    let python = python.map(|path| path.display().to_string());
    let env = |name: &str| match (name, &python) {
        ("DLQSPEC_PYTHON", Some(python)) => Some(python.clone()),
        _ => std::env::var(name).ok(),
    };
    let launch = submissions.into_iter().find_map(|submission| {
        let entry = super::entry::entry_file(submission).ok()?;
        let value = super::entry::implementation(&entry);
        match super::launch::parse_with(&value, &env) {
            Ok(super::launch::Target::External(launch))
                if launch.language.is_some_and(Language::starts_warm) =>
            {
                Some(launch)
            }
            _ => None,
        }
    });
    let Some(launch) = launch else {
        return Ok(None);
    };
    let Some(shim) = warm_shim(&launch)? else {
        return Ok(None);
    };
    // The runs' boxes, which the zygote makes its children's in, need their folder.
    if !boxes {
        return Err("no folder could be made for the boxes".to_owned());
    }
    Zygote::start(&launch.program, shim, processes).map(Some)
}

/// A warm start kept for the runs of this process (`watch`'s): the zygote every Python start
/// is forked from, and the folder its boxes are made in. It must live as long as the process
/// starts implementations.
pub(crate) struct WarmStart {
    /// Declared first, so that the zygote and its children end before the folder is removed.
    _zygote: Zygote,
    _boxes: sandbox::BoxesFolder,
}

/// Starts a Python solution warm for every run of this process from now on: its zygote, with
/// at most `processes` processes besides the boxes, serving this process's starts, in boxes
/// made in a folder of their own. `Ok(None)` when `launch` is no Python solution's; why not,
/// when it cannot start (then every run starts cold).
pub(crate) fn for_solution(
    launch: &Launch,
    processes: Option<u64>,
) -> Result<Option<WarmStart>, String> {
    let Some(shim) = warm_shim(launch)? else {
        return Ok(None);
    };
    let boxes = sandbox::BoxesFolder::make()
        .map_err(|error| format!("no folder for the boxes: {error}"))?;
    let zygote = Zygote::start(&launch.program, shim, processes)?;
    boxes.use_here();
    zygote.serve_here();
    Ok(Some(WarmStart {
        _zygote: zygote,
        _boxes: boxes,
    }))
}

/// The Python shim a warm start of `launch` runs, beside which the zygote's script is: `None`
/// when `launch` is no Python solution's; why not, when its interpreter comes with words of
/// `DLQSPEC_PYTHON` after it, which the zygote, starting the interpreter alone, would lose.
fn warm_shim(launch: &Launch) -> Result<Option<&Path>, String> {
    if !launch.language.is_some_and(Language::starts_warm) {
        return Ok(None);
    }
    match launch.args.as_slice() {
        [shim, _] => Ok(Some(Path::new(shim))),
        _ => Err("DLQSPEC_PYTHON has words after the interpreter".to_owned()),
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        // The zygote ends itself and its children when no one holds the other end; the
        // tree is ended here in any case.
        let _ = self.child.try_wait();
        children::end(&mut self.child, false, self.guard.tree());
    }
}

/// A `SOCK_SEQPACKET` pair, both ends close-on-exec.
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills the two descriptors of the array it is given.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just opened and are owned here only.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Zygote {
    /// Serves this process's own Python starts from now on (`watch`): the zygote must then
    /// live as long as the process starts implementations.
    fn serve_here(&self) {
        warm_request::serve_here(self.control.as_raw_fd(), self.program.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(language: &str, args: &[&str]) -> Launch {
        Launch {
            label: format!("{language}:solution"),
            language: Language::of_name(language),
            program: "interpreter".to_owned(),
            args: args.iter().map(|&arg| arg.to_owned()).collect(),
            hint: None,
            limits: Limits::default(),
        }
    }

    #[test]
    fn only_a_python_solution_under_its_interpreter_alone_starts_warm() {
        let python = launch("python", &["/shims/python/dlqspec_shim.py", "solution.py"]);
        assert_eq!(
            warm_shim(&python),
            Ok(Some(Path::new("/shims/python/dlqspec_shim.py")))
        );
        // `DLQSPEC_PYTHON="python3 -X dev"`: the zygote would start `python3` without `-X dev`.
        let worded = launch(
            "python",
            &["-X", "dev", "/shims/python/dlqspec_shim.py", "solution.py"],
        );
        assert_eq!(
            warm_shim(&worded),
            Err("DLQSPEC_PYTHON has words after the interpreter".to_owned())
        );
        for other in [
            launch(
                "javascript",
                &["/shims/node/dlqspec-shim.mjs", "solution.mjs"],
            ),
            launch("unknown", &["shim.py", "solution.py"]),
        ] {
            assert_eq!(warm_shim(&other), Ok(None), "{:?}", other.language);
        }
    }
}
