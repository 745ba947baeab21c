//! The warm start of Python submissions under `grade` (Linux, as root): one zygote that has
//! started the interpreter once, forking one child per submission that joins a box made as a
//! cold start's is (docs/security.md, "The warm start").
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

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::children::{self, Guard};
use super::limits::Limits;
use super::sandbox::{self, Prepared, wait_for};

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
    /// Removed after the zygote has ended (fields drop after `drop`).
    #[cfg(target_os = "linux")]
    _box: sandbox::ZygoteBox,
}

impl Zygote {
    /// Starts the zygote for `program` (the interpreter, as `--impl python:` finds it) with
    /// the zygote script beside `shim`, at most `processes` processes besides the boxes, for
    /// runs whose boxes are made in `boxes` (`sandbox::BoxesFolder`), and waits until it is
    /// ready; why not, when it cannot.
    #[cfg(target_os = "linux")]
    pub fn start(
        program: &str,
        shim: &Path,
        processes: Option<u64>,
        boxes: &Path,
    ) -> Result<Zygote, String> {
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
        // Every box's private folder is made in `boxes`: the one place the zygote's domain
        // writes.
        let boxed = sandbox::ZygoteBox::prepare(boxes, processes, private.path())?;
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
    pub fn start(
        _program: &str,
        _shim: &Path,
        _processes: Option<u64>,
        _boxes: &Path,
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

/// The zygote that serves this process's own starts (`watch`'s), when it started one.
static SERVED_HERE: std::sync::OnceLock<(RawFd, PathBuf)> = std::sync::OnceLock::new();

impl Zygote {
    /// Serves this process's own Python starts from now on (`watch`): the zygote must then
    /// live as long as the process starts implementations.
    pub fn serve_here(&self) {
        let _ = SERVED_HERE.set((self.control.as_raw_fd(), self.program.clone()));
    }
}

/// The zygote this run was handed, or started itself, if any: its socket and its interpreter.
fn inherited() -> Option<&'static (RawFd, PathBuf)> {
    if let Some(here) = SERVED_HERE.get() {
        return Some(here);
    }
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
    namespaces: libc::c_int,
    entry: sandbox::Entry,
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
        "rlimits": rlimits,
    })
    .to_string()
    .into_bytes();
    (payload.len() <= MAX_REQUEST).then_some(Request {
        payload,
        control: *control,
        ruleset: parts.ruleset,
        cgroup_procs: parts.cgroup_procs,
        namespaces: parts.namespaces,
        entry: parts.entry,
    })
}

/// The box's namespaces a warm child joins besides its PID namespace (which B, its process 1,
/// opens), as the run's A opens them once it has unshared them.
#[cfg(target_os = "linux")]
const NAMESPACE_FILES: [&std::ffi::CStr; 3] = [
    c"/proc/self/ns/mnt",
    c"/proc/self/ns/net",
    c"/proc/self/ns/ipc",
];

/// What B tells A first: that it has asked the zygote, or that it could not.
#[cfg(target_os = "linux")]
const ASKED: u8 = b'r';
#[cfg(target_os = "linux")]
const NOT_ASKED: u8 = b'x';

/// Makes the run's box as a cold A does and has the zygote start the implementation in it;
/// A then waits for the implementation's wait status and ends as it ended. Returns `Ok` only
/// when the zygote could not be asked (then the caller starts cold, in fresh namespaces: A
/// never entered a new PID namespace, only its child B was made in one), and the error of B,
/// process 1, when it could not make the namespace ready.
///
/// # Safety
/// Raw, async-signal-safe system calls only, on memory prepared before the fork.
#[cfg(target_os = "linux")]
pub unsafe fn enter_warm(request: &Request) -> io::Result<()> {
    unsafe {
        // A: in the box's cgroup, as a cold A is (so a warm box counts A, B and the
        // implementation, as a cold one counts A, B and C), then its namespaces but the PID
        // one, which B is made in.
        if !sandbox::write_file(&request.cgroup_procs, b"0")
            || libc::unshare(request.namespaces & !libc::CLONE_NEWPID) != 0
        {
            return Ok(());
        }
        let mut namespaces = [-1; 3];
        for (fd, path) in namespaces.iter_mut().zip(NAMESPACE_FILES) {
            *fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        }
        let procs = libc::open(
            request.cgroup_procs.as_ptr(),
            libc::O_WRONLY | libc::O_CLOEXEC,
        );
        let mut reply = [-1; 2];
        let mut status_pipe = [-1; 2];
        let opened = namespaces.iter().all(|fd| *fd >= 0)
            && procs >= 0
            && libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                reply.as_mut_ptr(),
            ) == 0
            && libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC) == 0;
        let close_all = |fds: &[libc::c_int]| {
            for fd in fds {
                if *fd >= 0 {
                    libc::close(*fd);
                }
            }
        };
        let [read_end, write_end] = status_pipe;
        let own = [
            namespaces[0],
            namespaces[1],
            namespaces[2],
            procs,
            reply[0],
            reply[1],
        ];
        if !opened {
            close_all(&own);
            close_all(&status_pipe);
            return Ok(());
        }
        // A fork whose child is process 1 of a new PID namespace.
        let b = libc::syscall(
            libc::SYS_clone,
            (libc::CLONE_NEWPID | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        ) as libc::pid_t;
        if b < 0 {
            close_all(&own);
            close_all(&status_pipe);
            return Ok(());
        }
        if b == 0 {
            let fds = [
                0,
                1,
                2,
                super::pipes::CHANNEL_FD,
                reply[1],
                request.ruleset,
                procs,
                -1, // the PID namespace, B's own
                namespaces[0],
                namespaces[1],
                namespaces[2],
            ];
            process_one(request, fds, reply[0], write_end)?;
        }
        close_all(&own);
        libc::close(write_end);
        let mut said = [0u8; 1];
        let got = read_fully(read_end, &mut said);
        if got == 1 && said[0] == NOT_ASKED {
            // The zygote is gone: B ended, and the caller starts cold.
            let mut status = 0;
            let _ = wait_for(b, &mut status);
            libc::close(read_end);
            return Ok(());
        }
        // Asked, or B could not make the namespace ready (its error is the spawn's, through
        // the exec-error pipe). Nothing of dlqspec's stays open here: the spawn sees that
        // pipe close.
        sandbox::close_all_but(read_end);
        let mut status = 0;
        let _ = wait_for(b, &mut status);
        let mut sent_status = [0u8; 4];
        if got == 1 && read_fully(read_end, &mut sent_status) == 4 {
            status = libc::c_int::from_ne_bytes(sent_status);
        }
        sandbox::mirror(status)
    }
}

/// B, process 1 of a warm box's PID namespace: makes it ready (as a cold B does), asks the
/// zygote with the box's descriptors `fds` (its PID namespace added) and says so to A, then
/// waits for the zygote's child to say it started the implementation, reaps every process of
/// the namespace, and sends A the implementation's wait status; leaving ends every process
/// left in the namespace. Returns only the error of making the namespace ready.
///
/// # Safety
/// Raw, async-signal-safe system calls only.
#[cfg(target_os = "linux")]
unsafe fn process_one(
    request: &Request,
    mut fds: [libc::c_int; 11],
    reply: RawFd,
    status: RawFd,
) -> io::Result<()> {
    // The space for eleven descriptors' control message (CMSG_SPACE(44) = 64), aligned.
    let mut space = [0u64; 8];
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // Before the fresh /proc hides this process's own entry in dlqspec's.
        let pid_namespace = libc::open(
            c"/proc/self/ns/pid".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if pid_namespace < 0 {
            return Err(io::Error::last_os_error());
        }
        fds[7] = pid_namespace;
        sandbox::become_process_one(&request.entry)?;
        let report = |wait_status: libc::c_int| -> ! {
            let bytes = wait_status.to_ne_bytes();
            libc::write(status, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0)
        };
        if !send_with(request.control, &request.payload, &fds, &mut space) {
            libc::write(status, [NOT_ASKED].as_ptr().cast(), 1);
            libc::_exit(0);
        }
        if libc::write(status, [ASKED].as_ptr().cast(), 1) != 1 {
            libc::_exit(0);
        }
        close_all_but_two(reply, status);
        // 'S' once the implementation is forked; the zygote's child (process 2) ends right
        // after, or without it when it refused the request or could not join the box (it
        // said why on the implementation's stderr): then as that child ended, 121.
        let mut started = [0u8; 1];
        if read_fully(reply, &mut started) != 1 || started[0] != b'S' {
            report(121 << 8);
        }
        libc::close(reply);
        // The implementation becomes this process's child once the zygote's child has ended
        // (an orphan of the namespace is its process 1's); reaped with every other one.
        let mut tries = 0;
        loop {
            let mut wait_status = 0;
            let reaped = libc::waitpid(-1, &mut wait_status, 0);
            if reaped == IMPLEMENTATION_PID {
                report(wait_status);
            }
            if reaped < 0 {
                match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::ECHILD) if tries < ADOPTION_TRIES => {
                        tries += 1;
                        let pause = libc::timespec {
                            tv_sec: 0,
                            tv_nsec: 1_000_000,
                        };
                        libc::nanosleep(&pause, std::ptr::null_mut());
                    }
                    _ => report(125 << 8),
                }
            }
        }
    }
}

/// How long B waits, a millisecond at a time, for the implementation to become its child
/// once the zygote's child has gone: a hang-guard only (it takes a moment).
#[cfg(target_os = "linux")]
const ADOPTION_TRIES: u32 = 30_000;

/// The implementation in a warm box: process 1 is B, process 2 the zygote's child that joins
/// the box, and 3 the one it forks.
#[cfg(target_os = "linux")]
const IMPLEMENTATION_PID: libc::pid_t = 3;

/// Closes every descriptor but `one` and `other`.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
unsafe fn close_all_but_two(one: RawFd, other: RawFd) {
    let (low, high) = (one.min(other), one.max(other));
    unsafe {
        if low > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (low - 1) as u32, 0u32);
        }
        if high > low + 1 {
            libc::syscall(
                libc::SYS_close_range,
                (low + 1) as u32,
                (high - 1) as u32,
                0u32,
            );
        }
        libc::syscall(libc::SYS_close_range, (high + 1) as u32, u32::MAX, 0u32);
    }
}

/// Reads until `buffer` is full or the other end is gone; how many bytes came.
///
/// # Safety
/// Raw system calls only.
#[cfg(target_os = "linux")]
unsafe fn read_fully(fd: RawFd, buffer: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buffer.len() {
        // SAFETY: reading into the rest of `buffer`.
        let read = unsafe { libc::read(fd, buffer[got..].as_mut_ptr().cast(), buffer.len() - got) };
        if read > 0 {
            got += read as usize;
        } else if read < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        } else {
            break;
        }
    }
    got
}

/// Sends `payload` with the descriptors `fds` on `socket`, in one message.
///
/// # Safety
/// Raw system calls only; `space` holds the control message.
#[cfg(target_os = "linux")]
unsafe fn send_with(socket: RawFd, payload: &[u8], fds: &[libc::c_int], space: &mut [u64]) -> bool {
    unsafe {
        let mut iov = libc::iovec {
            iov_base: payload.as_ptr() as *mut libc::c_void,
            iov_len: payload.len(),
        };
        let bytes = std::mem::size_of_val(fds);
        if libc::CMSG_SPACE(bytes as u32) as usize > std::mem::size_of_val(space) {
            return false;
        }
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
        libc::sendmsg(socket, &message, libc::MSG_NOSIGNAL) == payload.len() as isize
    }
}
