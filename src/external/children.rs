//! Child processes that must not outlive dlqspec: each runs in its own process group, which is
//! killed as a whole, also when dlqspec itself is interrupted (SIGINT, SIGTERM, SIGHUP).
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

/// While alive, the child's group is killed if dlqspec receives SIGINT, SIGTERM or SIGHUP.
pub struct Guard {
    #[cfg(unix)]
    slot: Option<usize>,
}

impl Guard {
    pub fn new(child: &Child) -> Guard {
        #[cfg(unix)]
        {
            Guard {
                slot: i32::try_from(child.id())
                    .ok()
                    .and_then(interrupts::register),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = child;
            Guard {}
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(slot) = self.slot {
            interrupts::unregister(slot);
        }
    }
}

#[cfg(unix)]
mod interrupts {
    use std::sync::Once;
    use std::sync::atomic::{AtomicI32, Ordering};

    /// Process groups to kill on a fatal signal; 0 is a free slot. A fixed array of atomics,
    /// because a signal handler may not lock or allocate.
    static GROUPS: [AtomicI32; 64] = [const { AtomicI32::new(0) }; 64];
    static INSTALL: Once = Once::new();

    pub fn register(group: i32) -> Option<usize> {
        INSTALL.call_once(install);
        GROUPS.iter().position(|slot| {
            slot.compare_exchange(0, group, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
    }

    pub fn unregister(slot: usize) {
        GROUPS[slot].store(0, Ordering::SeqCst);
    }

    extern "C" fn on_signal(signal: libc::c_int) {
        for slot in &GROUPS {
            let group = slot.load(Ordering::SeqCst);
            if group > 0 {
                // SAFETY: kill, signal and raise are async-signal-safe.
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
        }
        // Then die of the same signal, as if no handler had been installed.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }

    fn install() {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: the structs are zero-initialised C structs filled before use; the handler
            // only calls async-signal-safe functions.
            unsafe {
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
                    continue;
                }
                // A signal the parent chose to ignore (nohup, background jobs) stays ignored.
                if current.sa_sigaction != libc::SIG_DFL {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
}
