//! The warm start of Python submissions under `grade --warm` (Linux, as root): one zygote that
//! has started the interpreter once, forking one child per submission that boxes itself as a
//! cold start is boxed (docs/security.md, "The warm start").
//!
//! `grade` starts the zygote (`shims/python/dlqspec_zygote.py`) in a PID, network and IPC
//! namespace of its own and hands each run one end of a `SOCK_SEQPACKET` socket pair. A run
//! prepares the box in Rust exactly as for a cold start (`sandbox::prepare`: the Landlock
//! ruleset, the pids cgroup, the uid, the private folder, the environment); the process it
//! spawns (A) sends the zygote one request with that box's descriptors, closes everything
//! else, and waits for the child's wait status, which it mirrors as the cold A does. So the
//! run still has a child of its own that ends as the implementation ends, and the pipes,
//! deadlines and reports are the cold start's. When A is killed the zygote kills the child,
//! and the box's cgroup is emptied (every member killed) before the run goes on.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::children::{self, Guard};
use super::limits::Limits;
use super::sandbox::{self, Prepared};

/// The variable `grade` sets for each run: `FD:PROGRAM`, the run's end of the zygote's socket
/// and the interpreter the zygote is (a run with another interpreter starts cold).
pub const ZYGOTE_VARIABLE: &str = "DLQSPEC_PYTHON_ZYGOTE";

/// Where a run gets its end of the zygote's socket.
pub const RUN_FD: RawFd = 4;

/// The zygote's program, beside the Python shim in the shims folder.
const ZYGOTE_SCRIPT: &str = "dlqspec_zygote.py";

/// The zygote's end of the socket, in the zygote.
const ZYGOTE_FD: RawFd = 3;

/// How long the zygote may take to import and say it is ready: a hang-guard only.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes one request may have (the zygote's buffer).
const MAX_REQUEST: usize = 1 << 20;

/// A running zygote, held by `grade`; dropping it ends the zygote and every child it has.
pub struct Zygote {
    child: Child,
    guard: Guard,
    control: OwnedFd,
    program: PathBuf,
    _private: tempfile::TempDir,
}

impl Zygote {
    /// Starts the zygote for `program` (the interpreter, as `--impl python:` finds it) with
    /// the zygote script beside `shim`, and waits until it is ready; why not, when it cannot.
    #[cfg(target_os = "linux")]
    pub fn start(program: &str, shim: &Path) -> Result<Zygote, String> {
        let features = sandbox::features();
        if !(features.root
            && features.namespaces
            && features.landlock >= 1
            && features.pids_cgroup.is_some())
        {
            return Err(
                "a warm child is boxed as strongly as a cold one only as root with namespaces, Landlock and a pids cgroup, which this machine lacks".to_owned(),
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
        // A warm child runs only as a box's uid (the zygote refuses uid 0), which must reach the
        // interpreter and the shims through the mode bits, as a cold box's uid must.
        let mut needed = vec![located.clone(), script.clone()];
        needed.extend(std::fs::canonicalize(&located));
        if let Some(blocked) = sandbox::blocked_for_others(&needed) {
            return Err(format!(
                "a warm child runs only as a box's own uid, which cannot reach {} (no o+x or o+r in its mode bits): make it reachable, or name an interpreter others can run in DLQSPEC_PYTHON",
                blocked.display()
            ));
        }
        let private = tempfile::Builder::new()
            .prefix("dlqspec-zygote-")
            .tempdir()
            .map_err(|e| e.to_string())?;
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
        let handed = theirs.as_raw_fd();
        // SAFETY: the closure runs between fork and exec and makes only raw system calls.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(move || {
                if handed == ZYGOTE_FD {
                    let flags = libc::fcntl(ZYGOTE_FD, libc::F_GETFD);
                    if flags < 0
                        || libc::fcntl(ZYGOTE_FD, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                } else if libc::dup2(handed, ZYGOTE_FD) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (child, guard) = children::spawn_zygote(&mut command, &Limits::unlimited())
            .map_err(|e| format!("cannot start `{}`: {e}", located.display()))?;
        drop(theirs);
        let mut zygote = Zygote {
            child,
            guard,
            control: mine,
            program: located,
            _private: private,
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
    pub fn start(_program: &str, _shim: &Path) -> Result<Zygote, String> {
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

    /// The descriptor to hand each run as `RUN_FD`, and the value of `ZYGOTE_VARIABLE`.
    pub fn handed(&self) -> (RawFd, String) {
        (
            self.control.as_raw_fd(),
            format!("{RUN_FD}:{}", self.program.display()),
        )
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

/// The zygote this run was handed, if any: its socket and its interpreter.
fn inherited() -> Option<&'static (RawFd, PathBuf)> {
    static INHERITED: std::sync::OnceLock<Option<(RawFd, PathBuf)>> = std::sync::OnceLock::new();
    INHERITED
        .get_or_init(|| {
            let value = std::env::var(ZYGOTE_VARIABLE).ok()?;
            let (fd, program) = value.split_once(':')?;
            let fd: RawFd = fd.parse().ok()?;
            // Only a socket: a stale variable must not make dlqspec write to another file.
            // SAFETY: fstat fills the struct it is given.
            let mut stat: libc::stat = unsafe { std::mem::zeroed() };
            let is_socket = unsafe { libc::fstat(fd, &mut stat) } == 0
                && stat.st_mode & libc::S_IFMT == libc::S_IFSOCK;
            is_socket.then(|| (fd, PathBuf::from(program)))
        })
        .as_ref()
}

/// One warm start's request, made before fork: the text the zygote reads and what the
/// spawned process sends with it.
#[cfg(target_os = "linux")]
pub struct Request {
    payload: Vec<u8>,
    control: RawFd,
    ruleset: RawFd,
    cgroup_procs: CString,
}

/// The request that serves `command` warm, when this run was handed a zygote of the same
/// interpreter, the command is the Python shim on a solution, and its box has every part
/// (none when anything is missing: then it starts cold).
#[cfg(target_os = "linux")]
pub fn request_for(
    command: &Command,
    prepared: &Prepared,
    rlimits: &[(i64, libc::rlimit)],
) -> Option<Request> {
    let (control, program) = inherited()?;
    if command.get_program() != program.as_os_str() {
        return None;
    }
    let args: Vec<&str> = command
        .get_args()
        .map(|arg| arg.to_str())
        .collect::<Option<_>>()?;
    let [shim, solution] = args.as_slice() else {
        return None;
    };
    if !shim.ends_with(super::launch::PYTHON_SHIM) {
        return None;
    }
    let parts = prepared.warm_parts()?;
    // Only as a box's uid: a box that keeps uid 0 (its interpreter or files out of reach of
    // other uids) starts cold, and the zygote refuses any other request.
    let uid = parts.uid.filter(|uid| sandbox::BOX_UIDS.contains(uid))?;
    let env: Vec<(&str, &str)> = command
        .get_envs()
        .filter_map(|(name, value)| Some((name.to_str()?, value?.to_str()?)))
        .collect();
    let cwd = command.get_current_dir()?.to_str()?;
    let limit = |value: libc::rlim_t| -> i64 {
        if value == libc::RLIM_INFINITY {
            -1
        } else {
            i64::try_from(value).unwrap_or(-1)
        }
    };
    let rlimits: Vec<(i64, i64, i64)> = rlimits
        .iter()
        .map(|(resource, value)| (*resource, limit(value.rlim_cur), limit(value.rlim_max)))
        .collect();
    let payload = serde_json::json!({
        "argv": [shim, solution],
        "env": env,
        "cwd": cwd,
        "uid": uid,
        "namespaces": parts.namespaces,
        "proc_access": parts.proc_access,
        "rlimits": rlimits,
    })
    .to_string()
    .into_bytes();
    (payload.len() <= MAX_REQUEST).then_some(Request {
        payload,
        control: *control,
        ruleset: parts.ruleset,
        cgroup_procs: parts.cgroup_procs,
    })
}

/// Sends the request and becomes the relay of the warm child (A): closes every descriptor
/// but its reply socket, waits for the child's wait status and ends as the child ended.
/// Returns only when the request could not be sent (then the caller starts cold).
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory prepared before the fork.
#[cfg(target_os = "linux")]
pub unsafe fn enter_warm(request: &Request) -> io::Error {
    // The space for seven descriptors' control message (CMSG_SPACE(28) = 48), aligned.
    const FDS: usize = 7;
    let mut space = [0u64; 8];
    unsafe {
        let mut pair = [0; 2];
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        ) != 0
        {
            return io::Error::last_os_error();
        }
        let procs = libc::open(
            request.cgroup_procs.as_ptr(),
            libc::O_WRONLY | libc::O_CLOEXEC,
        );
        if procs < 0 {
            let error = io::Error::last_os_error();
            libc::close(pair[0]);
            libc::close(pair[1]);
            return error;
        }
        let fds: [libc::c_int; FDS] = [
            0,
            1,
            2,
            super::pipes::CHANNEL_FD,
            pair[1],
            request.ruleset,
            procs,
        ];
        let mut iov = libc::iovec {
            iov_base: request.payload.as_ptr() as *mut libc::c_void,
            iov_len: request.payload.len(),
        };
        let bytes = std::mem::size_of_val(&fds);
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = space.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(bytes as u32) as usize;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(bytes as u32) as usize;
        std::ptr::copy_nonoverlapping(fds.as_ptr().cast::<u8>(), libc::CMSG_DATA(header), bytes);
        let sent = libc::sendmsg(request.control, &message, libc::MSG_NOSIGNAL);
        libc::close(procs);
        libc::close(pair[1]);
        if sent != request.payload.len() as isize {
            let error = io::Error::last_os_error();
            libc::close(pair[0]);
            return error;
        }
        // Nothing of dlqspec's stays open here: the spawn sees its exec pipe close.
        sandbox::close_all_but(pair[0]);
        let mut status = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            let read = libc::read(pair[0], status[got..].as_mut_ptr().cast(), 4 - got);
            if read > 0 {
                got += read as usize;
            } else if read < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            } else {
                break;
            }
        }
        if got == 4 {
            sandbox::mirror(libc::c_int::from_ne_bytes(status));
        }
        // The zygote went away without telling: the child is gone with it.
        libc::_exit(125)
    }
}
