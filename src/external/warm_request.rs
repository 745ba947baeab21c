//! How a run asks `grade`'s zygote for a warm start (`zygote`): the zygote this process was
//! handed (or serves itself, under `watch`), and the request that serves one command warm.
//! `children` asks it as it starts an implementation, and needs nothing of the zygote's own.

use std::os::fd::RawFd;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::process::Command;

#[cfg(target_os = "linux")]
use super::sandbox::{self, PreparedBox};
#[cfg(target_os = "linux")]
use crate::model::language::Language;

/// The variable `grade` sets for each run: `FD:PROGRAM`, the run's end of the zygote's socket
/// and the interpreter the zygote is (a run with another interpreter starts cold).
pub(crate) const ZYGOTE_VARIABLE: &str = "DLQSPEC_PYTHON_ZYGOTE";

/// The most bytes one request may have (the zygote's buffer).
pub(crate) const MAX_REQUEST: usize = 1 << 20;

/// The zygote that serves this process's own starts (`watch`'s), when it started one.
static SERVED_HERE: std::sync::OnceLock<(RawFd, PathBuf)> = std::sync::OnceLock::new();

/// Serves this process's own Python starts from now on from the zygote whose socket is
/// `control` and whose interpreter is `program` (`Zygote::serve_here`).
pub(crate) fn serve_here(control: RawFd, program: PathBuf) {
    let _ = SERVED_HERE.set((control, program));
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

/// The request that serves `command` warm, when this run was handed a zygote of the same
/// interpreter, the command is the Python shim on a solution, and its box has every part
/// (none when anything is missing: then it starts cold).
#[cfg(target_os = "linux")]
pub(crate) fn request_for(
    command: &Command,
    prepared: &PreparedBox,
    rlimits: &[(i64, libc::rlimit)],
) -> Option<sandbox::warm::WarmRequest> {
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
    if !shim.ends_with(Language::Python.shim()) {
        return None;
    }
    let (uid, filter) = prepared.warm_parts()?;
    // Only as a box's uid: the zygote refuses any other request.
    let uid = Some(uid).filter(|uid| sandbox::BOX_UIDS.contains(uid))?;
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
    let filter: String = filter.iter().map(|byte| format!("{byte:02x}")).collect();
    let payload = serde_json::json!({
        "argv": [shim, solution],
        "env": env,
        "cwd": cwd,
        "uid": uid,
        "rlimits": rlimits,
        "filter": filter,
    })
    .to_string()
    .into_bytes();
    (payload.len() <= MAX_REQUEST).then_some(sandbox::warm::WarmRequest {
        payload,
        control: *control,
    })
}
