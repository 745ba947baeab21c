//! What dlqspec undoes when it is interrupted (SIGINT, SIGTERM, SIGHUP): the implementation
//! processes it started, and their descendants, are killed, and half-written temporary files
//! are removed; then dlqspec dies of the same signal, as it would have without this.
//!
//! The signals are blocked in every thread and taken by one thread of their own (`sigwait`),
//! so the undoing runs as ordinary code: it may lock, allocate and read `/proc`, which a
//! signal handler may not. `install` must run before any other thread starts (the command
//! line does it first); without it the signals keep their default action, and the children
//! still die with dlqspec (`PR_SET_PDEATHSIG`, see `external::children`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Temporary files to remove on an interrupt, by registration number.
static TEMP_FILES: Mutex<BTreeMap<u64, PathBuf>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// While alive, its temporary file is removed if dlqspec is interrupted.
#[derive(Debug)]
pub(crate) struct TempFileGuard(u64);

/// Registers a temporary file to remove if dlqspec is interrupted before it is renamed.
pub(crate) fn remove_on_interrupt(path: &Path) -> TempFileGuard {
    let number = NEXT.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut files) = TEMP_FILES.lock() {
        files.insert(number, path.to_path_buf());
    }
    TempFileGuard(number)
}

impl Drop for TempFileGuard {
    fn drop(&mut self) {
        if let Ok(mut files) = TEMP_FILES.lock() {
            files.remove(&self.0);
        }
    }
}

/// Set when an interrupt starts being undone: from then on no file is put in place.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Held while a file is put in place (linked, renamed), and by the undoing from when it
/// starts removing files: a report is renamed whole before an interrupt, or not at all.
static PLACING: Mutex<()> = Mutex::new(());

/// Leave to put a file in place, held until it is; `None` once dlqspec is being
/// interrupted. Killing the implementation wakes the run, which would otherwise go on to
/// write a report of a run that was stopped (its specs errored by the kill) over the old one.
pub(crate) fn placing() -> Option<MutexGuard<'static, ()>> {
    let guard = PLACING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    (!INTERRUPTED.load(Ordering::SeqCst)).then_some(guard)
}

/// Everything to undo, in order: no more files put in place, processes (they may be
/// writing), then files.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: an interrupt removes the temporary files still registered"
)]
fn undo() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    crate::external::children::kill_everything();
    // A file being put in place when the interrupt came is put in place whole; none after.
    let _placing = PLACING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    crate::external::sandbox::remove_on_interrupt();
    if let Ok(files) = TEMP_FILES.lock() {
        for path in files.values() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread (and so in every thread it starts from now
/// on) and starts the thread that waits for them. A signal dlqspec's parent chose to ignore
/// (`nohup`, a background job) stays ignored. Calling it again does nothing.
pub(crate) fn install() {
    #[cfg(unix)]
    unix::install();
}

#[cfg(unix)]
mod unix {
    use std::sync::Once;

    static INSTALL: Once = Once::new();

    pub(crate) fn install() {
        INSTALL.call_once(|| {
            // SAFETY: sigset_t is a plain C struct, initialised by sigemptyset before use; the
            // calls have no other preconditions.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                let mut any = false;
                for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    let mut current: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(signal, std::ptr::null(), &mut current) == 0
                        && current.sa_sigaction == libc::SIG_DFL
                    {
                        libc::sigaddset(&mut set, signal);
                        any = true;
                    }
                }
                if !any || libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                    return;
                }
                let waiting = std::thread::Builder::new()
                    .name("dlqspec-interrupts".into())
                    .spawn(move || wait(set));
                if waiting.is_err() {
                    // No thread to take them: let the signals act as before.
                    libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                }
            }
        });
    }

    fn wait(set: libc::sigset_t) {
        let mut signal = 0;
        // SAFETY: `set` is a valid signal set and `signal` a valid out-parameter.
        while unsafe { libc::sigwait(&set, &mut signal) } != 0 {}
        super::undo();
        // Die of the same signal: its default action, unblocked in this thread only.
        // SAFETY: plain calls on a valid signal number and a zero-initialised set.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut only: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut only);
            libc::sigaddset(&mut only, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
            libc::raise(signal);
        }
        // Not reached: the default action of these signals ends the process.
        std::process::exit(128 + signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_file_is_forgotten_when_its_guard_goes() {
        let path = Path::new("/nonexistent/dlqspec-test.tmp");
        let guard = remove_on_interrupt(path);
        assert!(TEMP_FILES.lock().unwrap().values().any(|p| p == path));
        drop(guard);
        assert!(!TEMP_FILES.lock().unwrap().values().any(|p| p == path));
    }
}
