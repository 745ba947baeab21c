//! What a box leaves on the machine, and its removal: each box's private folder (claimed by a
//! lock while it lives) and cgroups are removed when the box is dropped, when dlqspec is
//! interrupted, or, after a dlqspec killed outright, by the next dlqspec that starts a box.

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use super::cgroups;

static NEXT_LIVE: AtomicU64 = AtomicU64::new(1);

/// The boxes of running implementations: their cgroups and private folder, for an interrupted
/// dlqspec to remove (it dies without dropping them).
static LIVE: std::sync::Mutex<std::collections::BTreeMap<u64, (Vec<PathBuf>, PathBuf)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// A box's place among the live ones, let go when dropped.
pub(crate) struct LiveBox {
    number: u64,
}

impl LiveBox {
    /// Counts a box among the live ones: an interrupted dlqspec removes its `cgroups` and
    /// `folder`.
    pub(crate) fn register(cgroups: Vec<PathBuf>, folder: PathBuf) -> LiveBox {
        let number = NEXT_LIVE.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut live) = LIVE.lock() {
            live.insert(number, (cgroups, folder));
        }
        LiveBox { number }
    }
}

impl Drop for LiveBox {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            live.remove(&self.number);
        }
    }
}

/// Removes what the running implementations' boxes left on disk: dlqspec is interrupted,
/// its implementations were just killed, and it dies next.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: an interrupt removes the private folders of the boxes still running"
)]
pub(crate) fn remove_on_interrupt() {
    let live: Vec<(Vec<PathBuf>, PathBuf)> = LIVE
        .lock()
        .map(|live| live.values().cloned().collect())
        .unwrap_or_default();
    for (folders, private) in live {
        for cgroup in folders {
            cgroups::remove(&cgroup);
        }
        let _ = std::fs::remove_dir_all(private);
    }
}

/// The prefix of a box's private folder and cgroups: `dlqspec-box-PID-`.
pub(crate) fn own_prefix() -> String {
    format!("dlqspec-box-{}-", std::process::id())
}

/// Removes, once per dlqspec process, the cgroups and private folders of boxes whose dlqspec
/// died without removing them (killed outright).
pub(crate) fn remove_stale(folders: &[&Path]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| remove_stale_in(folders));
}

/// Removes the boxes' leftovers in `folders`: theirs by name, their process gone, of
/// dlqspec's own user, and not claimed. The claim decides: a dlqspec in another PID namespace
/// sharing this temporary folder has a pid that looks gone from here, but it holds the lock
/// on its box's folder while the box lives.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: removes the private folders and cgroups earlier dlqspec runs left, its own uid's only"
)]
pub(crate) fn remove_stale_in(folders: &[&Path]) {
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|name| name.strip_prefix("dlqspec-box-"))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let path = entry.path();
            // Only a folder of dlqspec's own user: in a shared temporary folder, anyone can
            // make one under the box's name, and it is not ours to remove.
            use std::os::unix::fs::MetadataExt;
            // SAFETY: geteuid has no preconditions.
            let ours = std::fs::symlink_metadata(&path)
                .is_ok_and(|meta| meta.is_dir() && meta.uid() == unsafe { libc::geteuid() });
            if !ours {
                continue;
            }
            // Held until the folder is gone, so no dlqspec claims it meanwhile.
            let Some(_claim) = try_claim(&path) else {
                continue;
            };
            // A cgroup folder cannot be emptied by hand; rmdir takes an empty one.
            if std::fs::remove_dir(&path).is_err() && path.starts_with(std::env::temp_dir()) {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }
}

/// Takes the lock (`flock`) that says a box's folder is in use, without waiting and without
/// following a link: `None` when another process holds it (or the folder cannot be opened).
pub(crate) fn try_claim(folder: &Path) -> Option<std::fs::File> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let name = CString::new(folder.as_os_str().as_bytes()).ok()?;
    // SAFETY: open(2) on a NUL-terminated path, read only; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just opened here and nothing else owns it.
    let opened = unsafe { std::fs::File::from_raw_fd(fd) };
    // SAFETY: flock on a descriptor this function owns.
    let locked = unsafe { libc::flock(opened.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    locked.then_some(opened)
}

/// Claims a box's new private folder for as long as the box lives (see `remove_stale_in`),
/// checking after the lock that the name still leads to the folder locked: another dlqspec's
/// clean-up may have removed it between its making and the lock.
pub(crate) fn claim_private(private: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::MetadataExt;
    let claim = try_claim(private)
        .ok_or_else(|| io::Error::other("the box's private folder was taken as it was made"))?;
    let (held, named) = (claim.metadata()?, std::fs::symlink_metadata(private)?);
    if (held.dev(), held.ino()) != (named.dev(), named.ino()) {
        return Err(io::Error::other(
            "the box's private folder was removed as it was made",
        ));
    }
    Ok(claim)
}

/// A new private folder for a box, and its claim; made again (a few times at most) when
/// another dlqspec's clean-up removed it between its making and the lock.
pub(crate) fn claimed_private() -> io::Result<(tempfile::TempDir, std::fs::File)> {
    let mut attempts = 0;
    loop {
        let private = match BOXES_HERE.get() {
            Some(folder) => tempfile::Builder::new()
                .prefix(&own_prefix())
                .tempdir_in(folder)?,
            None => tempfile::Builder::new().prefix(&own_prefix()).tempdir()?,
        };
        match claim_private(private.path()) {
            Ok(claim) => return Ok((private, claim)),
            Err(error) if attempts >= 3 => return Err(error),
            Err(_) => attempts += 1,
        }
    }
}

/// The folder the boxes of many runs (`grade`'s) are made in: each run is given it as its
/// temporary folder, so their private folders are made in it. Every box's uid passes through
/// it (`0711`). Claimed while it lives and removed when dropped, or when dlqspec is
/// interrupted.
pub(crate) struct BoxesFolder {
    /// Declared first, so that it is let go before the folder is removed, as a box's is.
    _live: LiveBox,
    folder: tempfile::TempDir,
    _claim: std::fs::File,
}

impl BoxesFolder {
    /// A new, claimed folder in the temporary folder.
    #[expect(
        clippy::disallowed_methods,
        reason = "writes a file: the fresh, claimed folder of the boxes is made passable by their uids"
    )]
    pub(crate) fn make() -> io::Result<BoxesFolder> {
        use std::os::unix::fs::PermissionsExt;
        let (folder, claim) = claimed_private()?;
        std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o711))?;
        Ok(BoxesFolder {
            _live: LiveBox::register(Vec::new(), folder.path().to_path_buf()),
            folder,
            _claim: claim,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        self.folder.path()
    }

    /// Makes the boxes of this process (`watch`'s) in this folder from now on, for as long as
    /// the process lives (the folder must then outlive every box).
    pub(crate) fn use_here(&self) {
        let _ = BOXES_HERE.set(self.folder.path().to_path_buf());
    }
}

/// Where this process makes its boxes' private folders, when not in the temporary folder
/// (`BoxesFolder::use_here`).
static BOXES_HERE: OnceLock<PathBuf> = OnceLock::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_box_folder_is_kept_though_its_pid_looks_gone_and_an_unclaimed_one_goes() {
        // A pid no process has here: as a live dlqspec in another PID namespace looks.
        let folder = tempfile::tempdir().unwrap();
        let live = folder.path().join("dlqspec-box-4294967290-live");
        let dead = folder.path().join("dlqspec-box-4294967290-dead");
        std::fs::create_dir(&live).unwrap();
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(live.join("work"), "in use").unwrap();
        std::fs::write(dead.join("left"), "left over").unwrap();
        let claim = claim_private(&live).unwrap();
        remove_stale_in(&[folder.path()]);
        assert!(
            live.join("work").exists(),
            "a claimed box folder was removed"
        );
        assert!(!dead.exists(), "an unclaimed leftover stayed");
        drop(claim);
        remove_stale_in(&[folder.path()]);
        assert!(!live.exists(), "the folder, no longer claimed, stayed");
    }

    #[test]
    fn a_folder_claimed_elsewhere_cannot_be_claimed_again() {
        let folder = tempfile::tempdir().unwrap();
        let held = claim_private(folder.path()).unwrap();
        assert!(try_claim(folder.path()).is_none());
        drop(held);
        assert!(try_claim(folder.path()).is_some());
    }
}
