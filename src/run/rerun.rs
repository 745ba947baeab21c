//! Rerunning failures: the failed specs each `run` records in a small state file, and how
//! `--last-failed` and `--failed-first` choose and order the selected specs from it.
//!
//! The state lives in a cache folder, `.dlqspec/` in the current folder (or
//! `$DLQSPEC_CACHE_DIR`), which holds a `.gitignore` of its own so it stays out of any
//! repository. The file is the run's own bookkeeping, never an input anyone vouches for: one
//! that is missing, too large, not JSON, of another version or not a regular file counts as
//! "no failures recorded", with a warning, and never stops a run. It is written atomically, and
//! never through a link, a FIFO or anything else that is not a regular file of ours.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::cache_dir::CACHE_DIR_ENV;

/// The cache folder, relative to the current folder, when `$DLQSPEC_CACHE_DIR` is not set.
pub(crate) const DEFAULT_CACHE_DIR: &str = ".dlqspec";

/// The state file inside the cache folder.
pub(crate) const STATE_FILE: &str = "failed.json";

/// The largest state file read: far more than any suite's failures take.
const MAX_STATE_BYTES: u64 = 16 << 20;

/// The most failed paths kept: a bound on what a hostile file or a huge suite can make us hold.
const MAX_PATHS: usize = 100_000;

/// The state file's format version; another version is ignored (and replaced by the next run).
const VERSION: u32 = 1;

/// How a run uses the failures the last runs recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Rerun {
    /// Every selected spec, in path order.
    #[default]
    All,
    /// Only the selected specs that failed last time; all of them when none did.
    LastFailed,
    /// Every selected spec, those that failed last time first.
    FailedFirst,
}

/// A rerun choice with the failures it is made from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RerunPlan {
    pub(crate) mode: Rerun,
    /// The spec paths recorded as failed, as reports show them.
    pub(crate) failed: BTreeSet<String>,
}

#[derive(Serialize, Deserialize)]
struct State {
    version: u32,
    failed: Vec<String>,
}

/// The cache folder: `$DLQSPEC_CACHE_DIR`, or `.dlqspec` in the current folder.
pub(crate) fn cache_dir() -> PathBuf {
    std::env::var_os(CACHE_DIR_ENV)
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_CACHE_DIR), PathBuf::from)
}

/// The failed spec paths recorded in `dir`, and a warning when the state file was there but
/// could not be used. A missing file is no failures and no warning.
pub(crate) fn load(dir: &Path) -> (BTreeSet<String>, Option<String>) {
    let path = dir.join(STATE_FILE);
    match read_state(&path) {
        Ok(None) => (BTreeSet::new(), None),
        Ok(Some(failed)) => (failed, None),
        Err(why) => (
            BTreeSet::new(),
            Some(format!(
                "{}: ignored ({why}); every selected spec counts as not failed last time",
                crate::text::source::display_path(&path)
            )),
        ),
    }
}

fn read_state(path: &Path) -> Result<Option<BTreeSet<String>>, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    let (file, meta) = crate::text::source::open_regular(path, false).map_err(|e| e.to_string())?;
    let bytes =
        crate::text::source::read_bounded(file, &meta, MAX_STATE_BYTES).map_err(|error| {
            if error.kind() == io::ErrorKind::FileTooLarge {
                format!("it is larger than {} MiB", MAX_STATE_BYTES >> 20)
            } else {
                error.to_string()
            }
        })?;
    let state: State =
        serde_json::from_slice(&bytes).map_err(|_| "it is not a state file dlqspec wrote")?;
    if state.version != VERSION {
        return Err(format!("it has version {}, not {VERSION}", state.version));
    }
    Ok(Some(state.failed.into_iter().take(MAX_PATHS).collect()))
}

/// The failures after a run: `before`, less the specs that ran and did not fail, plus those that
/// failed. Specs the run did not run (left out, skipped) keep what was recorded for them.
pub(crate) fn after_run(
    before: &BTreeSet<String>,
    ran: &[(String, RunResult)],
) -> BTreeSet<String> {
    let mut failed = before.clone();
    for (path, result) in ran {
        match result {
            RunResult::Failed => {
                failed.insert(path.clone());
            }
            RunResult::Passed => {
                failed.remove(path);
            }
            RunResult::NotRun => {}
        }
    }
    failed
}

/// What one spec's outcome means for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunResult {
    Passed,
    Failed,
    /// Skipped: nothing learnt about the spec.
    NotRun,
}

/// Writes the failures to `dir`, creating it (with a `.gitignore` that keeps it out of git).
/// Refuses a cache folder or state file that is a link or not a folder or regular file.
pub(crate) fn save(dir: &Path, failed: &BTreeSet<String>) -> io::Result<()> {
    let refuse = |what: &Path, why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {why}", crate::text::source::display_path(what)),
        )
    };
    // Only a folder this call made gets a .gitignore, created new (O_EXCL never follows a
    // link), so a folder that appeared meanwhile, or a link to one, keeps its own.
    let made = match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => std::fs::create_dir_all(parent).and_then(|()| std::fs::create_dir(dir)),
        None => std::fs::create_dir(dir),
    };
    match made {
        Ok(()) => {
            // Best effort: a missing .gitignore only means git may show the folder.
            let _ = crate::files::new_file::create(
                &dir.join(".gitignore"),
                b"# dlqspec's cache (failed specs of the last runs); safe to delete\n*\n",
            );
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    if !std::fs::symlink_metadata(dir)?.is_dir() {
        return Err(refuse(dir, "it is not a folder"));
    }
    let path = dir.join(STATE_FILE);
    // Told, not needed: the rename below replaces whatever stands at `path`, never through it.
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if !meta.is_file() => return Err(refuse(&path, "it is not a regular file")),
        _ => {}
    }
    let state = State {
        version: VERSION,
        failed: failed.iter().take(MAX_PATHS).cloned().collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&state).map_err(io::Error::other)?;
    bytes.push(b'\n');
    crate::files::atomic_file::replace_own(&path, &bytes)
}

/// The items a rerun plan keeps, in the order it runs them, and a note when `--last-failed`
/// found no recorded failure among them (and so keeps them all).
pub(crate) fn choose<T>(
    items: Vec<T>,
    path_of: impl Fn(&T) -> &str,
    plan: &RerunPlan,
) -> (Vec<T>, Option<String>) {
    let failed = |item: &T| plan.failed.contains(path_of(item));
    match plan.mode {
        Rerun::All => (items, None),
        Rerun::LastFailed => {
            if items.iter().any(failed) {
                (
                    items.into_iter().filter(|item| failed(item)).collect(),
                    None,
                )
            } else {
                let note = format!(
                    "--last-failed: no failure of the selected specs is recorded, so all {} run",
                    items.len()
                );
                (items, Some(note))
            }
        }
        Rerun::FailedFirst => {
            let (first, rest): (Vec<T>, Vec<T>) = items.into_iter().partition(|item| failed(item));
            (first.into_iter().chain(rest).collect(), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(mode: Rerun, failed: &[&str]) -> RerunPlan {
        RerunPlan {
            mode,
            failed: failed.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    fn chosen(mode: Rerun, failed: &[&str]) -> (Vec<&'static str>, Option<String>) {
        choose(vec!["a", "b", "c", "d"], |p| p, &plan(mode, failed))
    }

    #[test]
    fn last_failed_keeps_the_failures_and_all_when_none_is_recorded() {
        assert_eq!(chosen(Rerun::LastFailed, &["c", "a", "zz"]).0, ["a", "c"]);
        let (all, note) = chosen(Rerun::LastFailed, &["zz"]);
        assert_eq!(all, ["a", "b", "c", "d"]);
        assert!(note.unwrap().contains("so all 4 run"));
        assert_eq!(chosen(Rerun::All, &["c"]).0, ["a", "b", "c", "d"]);
    }

    #[test]
    fn failed_first_moves_the_failures_ahead_keeping_each_groups_order() {
        assert_eq!(
            chosen(Rerun::FailedFirst, &["d", "b"]),
            (vec!["b", "d", "a", "c"], None)
        );
    }

    #[test]
    fn a_run_forgets_what_passed_adds_what_failed_and_keeps_what_it_did_not_run() {
        let before: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
        let ran = [
            ("a".to_owned(), RunResult::Passed),
            ("b".to_owned(), RunResult::NotRun),
            ("d".to_owned(), RunResult::Failed),
        ];
        let after: Vec<String> = after_run(&before, &ran).into_iter().collect();
        assert_eq!(after, ["b", "c", "d"]);
    }

    #[test]
    fn the_state_round_trips_and_the_folder_keeps_itself_out_of_git() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let failed: BTreeSet<String> = ["specs/a.yaml", "x\u{1b}y"].map(String::from).into();
        save(&cache, &failed).unwrap();
        assert_eq!(load(&cache), (failed, None));
        let ignore = std::fs::read_to_string(cache.join(".gitignore")).unwrap();
        assert!(ignore.ends_with("\n*\n"), "{ignore}");
    }

    #[test]
    fn a_broken_or_hostile_state_file_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STATE_FILE);
        for text in [
            "{not json",
            "{\"version\": 9, \"failed\": []}",
            "[1, 2]",
            "",
        ] {
            std::fs::write(&path, text).unwrap();
            let (failed, warning) = load(dir.path());
            assert!(failed.is_empty(), "{text}");
            assert!(warning.unwrap().contains("ignored ("), "{text}");
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(load(dir.path()), (BTreeSet::new(), None));
        std::fs::create_dir(&path).unwrap();
        let (_, warning) = load(dir.path());
        assert!(warning.unwrap().contains("not a regular file"));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_fifo_in_place_of_the_state_file_is_never_read_or_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "{\"version\":1,\"failed\":[\"secret\"]}").unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        std::os::unix::fs::symlink(&elsewhere, cache.join(STATE_FILE)).unwrap();
        let (failed, warning) = load(&cache);
        assert!(failed.is_empty() && warning.is_some());
        assert!(save(&cache, &BTreeSet::new()).is_err());
        assert_eq!(
            std::fs::read_to_string(&elsewhere).unwrap(),
            "{\"version\":1,\"failed\":[\"secret\"]}"
        );
        std::fs::remove_file(cache.join(STATE_FILE)).unwrap();
        let fifo = std::ffi::CString::new(cache.join(STATE_FILE).to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (_, warning) = load(&cache);
        assert!(warning.unwrap().contains("not a regular file"));
        assert!(save(&cache, &BTreeSet::new()).is_err());
    }
}
