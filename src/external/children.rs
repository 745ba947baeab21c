//! Child processes that must not outlive dlqspec: each runs in its own process group, which is
//! killed as a whole, also when dlqspec itself is interrupted (SIGINT, SIGTERM, SIGHUP; the
//! signals are taken by `crate::interrupts`).
//!
//! A group, not just the child: `cmd:` may name a wrapper (`npx`, a shell script) whose own
//! child is the real implementation, and a hung one must die with its wrapper.

use std::process::{Child, Command, ExitStatus};

/// Makes `command` start its child in a new process group.
pub fn configure(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// Kills the child's whole group, then the child itself, and reaps it: its exit status.
pub fn kill_and_reap(child: &mut Child) -> Option<ExitStatus> {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // The group id is the child's pid: valid while the child is unreaped (alive or zombie).
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    child.wait().ok()
}

/// Process groups of running implementations, killed if dlqspec is interrupted.
static GROUPS: std::sync::Mutex<std::collections::BTreeSet<i32>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// While alive, the child's group is killed if dlqspec receives SIGINT, SIGTERM or SIGHUP
/// (see `crate::interrupts`).
pub struct Guard {
    group: Option<i32>,
}

impl Guard {
    pub fn new(child: &Child) -> Guard {
        let group = i32::try_from(child.id()).ok();
        if let (Some(group), Ok(mut groups)) = (group, GROUPS.lock()) {
            groups.insert(group);
        }
        Guard { group }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let (Some(group), Ok(mut groups)) = (self.group, GROUPS.lock()) {
            groups.remove(&group);
        }
    }
}

/// Kills every running implementation's process group: dlqspec is being interrupted.
pub fn kill_everything() {
    #[cfg(unix)]
    if let Ok(groups) = GROUPS.lock() {
        for group in groups.iter() {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
    }
}
