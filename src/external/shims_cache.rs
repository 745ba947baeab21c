//! The language shims, built into the program and written out at run time to a cache folder.
//!
//! Python and Node need the shims as files on disk, and the installed program must not need
//! the source tree it was built from (`cargo install --git` deletes it; a wheel or an npm
//! package never had it). So every shim file is embedded with `include_bytes!` and, on first
//! use, written to `shims-HASH` in the cache folder (`$DLQSPEC_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/dlqspec`, else `~/.cache/dlqspec`), HASH being the hash of the embedded
//! files, so each version of dlqspec has a folder of its own.
//!
//! The folder is checked before each use and rebuilt when anything is off, never trusted:
//! - it is written complete in a fresh temporary folder beside it, made read-only, and renamed
//!   into place in one step, so no reader ever sees half of it (a concurrent dlqspec that
//!   renamed first wins; the loser checks the winner's folder and drops its own);
//! - before each use, it must be a real folder owned by this user, holding exactly the shim
//!   files (no more, no links, nothing writable by others), each byte for byte the embedded
//!   one. A folder that fails is moved aside and replaced; one owned by someone else is
//!   refused with the fix, never touched.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::model::language::Language;

/// One file of the shims folder: its path in the folder, and what it holds.
pub(crate) struct ShimFile {
    pub(crate) path: &'static str,
    pub(crate) bytes: &'static [u8],
}

macro_rules! shim_file {
    ($path:literal) => {
        ShimFile {
            path: $path,
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/shims/", $path)),
        }
    };
}

/// Every file the shims need at run time. A unit test holds this list equal to the files of
/// `shims/` that ship (all but the READMEs, the npm manifests, node_modules and the tests).
pub(crate) static SHIM_FILES: &[ShimFile] = &[
    shim_file!("python/dlqspec_shim.py"),
    shim_file!("python/dlqspec_zygote.py"),
    shim_file!("node/dlqspec-shim.mjs"),
    shim_file!("node/given-hooks.mjs"),
    shim_file!("node/given.cjs"),
    shim_file!("node/typescript.cjs"),
    shim_file!("node/vendor/amaro.cjs.gz"),
    shim_file!("node/vendor/LICENSE-amaro.md"),
    shim_file!("node/vendor/LICENSE-swc"),
];

/// The folders of the shims folder, parents first: each language's.
fn shim_dirs() -> Vec<&'static str> {
    Language::ALL
        .iter()
        .flat_map(|language| language.shim_folders().iter().copied())
        .collect()
}

/// How many entries a shims folder may hold before it is judged wrong without reading further.
const MAX_ENTRIES: usize = 64;

/// The hash of the embedded shims (FNV-1a, 64 bits, over each path and its bytes), as 16 hex
/// digits: it names the cache folder, so another version of the shims gets another folder.
/// Not a guard (the check compares every byte): a name only.
pub(crate) fn shims_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &byte in bytes {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for file in SHIM_FILES {
            eat(&(file.path.len() as u64).to_le_bytes());
            eat(file.path.as_bytes());
            eat(&(file.bytes.len() as u64).to_le_bytes());
            eat(file.bytes);
        }
        format!("{hash:016x}")
    })
}

/// The name of this version's shims folder inside the cache folder.
pub(crate) fn folder_name() -> String {
    format!("shims-{}", shims_hash())
}

/// The cache folder the shims go in, from the environment: `$DLQSPEC_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/dlqspec`, else `$HOME/.cache/dlqspec`. Made absolute, since the shim's
/// path is handed to an interpreter.
pub(crate) fn cache_root(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let root = if let Some(dir) = set(crate::model::cache_dir::CACHE_DIR_ENV) {
        PathBuf::from(dir)
    } else if let Some(dir) = set("XDG_CACHE_HOME").filter(|dir| Path::new(dir).is_absolute()) {
        Path::new(&dir).join("dlqspec")
    } else if let Some(home) = set("HOME") {
        Path::new(&home).join(".cache").join("dlqspec")
    } else {
        return Err(
            "no folder to keep the shims in: set DLQSPEC_CACHE_DIR (or HOME) to a writable folder"
                .into(),
        );
    };
    std::path::absolute(&root)
        .map_err(|error| format!("the cache folder {}: {error}", root.display()))
}

/// The shims folder of this version under `root`: checked, and written (again) when missing
/// or wrong. Gives its path.
pub(crate) fn materialise(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join(folder_name());
    let fix = "set DLQSPEC_CACHE_DIR to a writable folder of yours";
    match check(&dir) {
        Check::Good => return Ok(dir),
        Check::NotOurs(why) => {
            return Err(format!(
                "the shims folder {} is not dlqspec's ({why}); remove it, or {fix}",
                dir.display()
            ));
        }
        Check::Missing | Check::Wrong(_) => {}
    }
    let write = || -> io::Result<()> {
        create_private_dir_all(root)?;
        let fresh = write_fresh(root)?;
        install(&fresh, &dir)
    };
    write().map_err(|error| {
        format!(
            "cannot write the shims to {}: {error}; {fix}",
            dir.display()
        )
    })?;
    match check(&dir) {
        Check::Good => Ok(dir),
        Check::Missing => Err(format!(
            "the shims folder {} went away as it was written; {fix}",
            dir.display()
        )),
        Check::Wrong(why) | Check::NotOurs(why) => Err(format!(
            "the shims folder {} is wrong right after it was written ({why}); {fix}",
            dir.display()
        )),
    }
}

/// What a shims folder on disk is worth.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Exactly the embedded shims, ours, read-only to others: use it.
    Good,
    Missing,
    /// Partial, changed, extra files, a link...: rebuild it.
    Wrong(String),
    /// Owned by another user: neither used nor touched.
    NotOurs(String),
}

/// Checks the shims folder at `dir` against the embedded files, byte for byte.
pub(crate) fn check(dir: &Path) -> Check {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Check::Missing,
        Err(error) => return Check::Wrong(error.to_string()),
    };
    if !meta.is_dir() {
        return Check::Wrong("it is not a folder".into());
    }
    if let Some(why) = foreign(&meta) {
        return Check::NotOurs(why);
    }
    let mut seen = 0usize;
    let entries = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .follow_links(false)
        .max_depth(4);
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => return Check::Wrong(error.to_string()),
        };
        seen += 1;
        if seen > MAX_ENTRIES {
            return Check::Wrong("it holds too many files".into());
        }
        let Ok(relative) = entry.path().strip_prefix(dir) else {
            return Check::Wrong("a path outside it".into());
        };
        let name = relative.to_string_lossy().replace('\\', "/");
        let meta = match entry.path().symlink_metadata() {
            Ok(meta) => meta,
            Err(error) => return Check::Wrong(format!("{name}: {error}")),
        };
        if !meta.is_file() && !meta.is_dir() {
            return Check::Wrong(format!("{name} is not a regular file"));
        }
        if let Some(why) = foreign(&meta) {
            return Check::Wrong(format!("{name}: {why}"));
        }
        if writable_by_others(&meta) {
            return Check::Wrong(format!("{name} is writable by others"));
        }
        if meta.is_dir() && shim_dirs().contains(&name.as_str()) {
            continue;
        }
        let Some(file) = SHIM_FILES.iter().find(|file| file.path == name) else {
            return Check::Wrong(format!("{name} is not a shim file"));
        };
        if !meta.is_file() {
            return Check::Wrong(format!("{name} is not a regular file"));
        }
        match same_bytes(entry.path(), file.bytes) {
            Ok(true) => {}
            Ok(false) => return Check::Wrong(format!("{name} differs from the built-in shim")),
            Err(error) => return Check::Wrong(format!("{name}: {error}")),
        }
    }
    if seen != SHIM_FILES.len() + shim_dirs().len() {
        return Check::Wrong("shim files are missing".into());
    }
    Check::Good
}

/// Whether the file at `path` holds exactly `expected` (reading at most one byte more).
fn same_bytes(path: &Path, expected: &[u8]) -> io::Result<bool> {
    let file = std::fs::File::open(path)?;
    let mut read = Vec::with_capacity(expected.len() + 1);
    file.take(expected.len() as u64 + 1)
        .read_to_end(&mut read)?;
    Ok(read == expected)
}

/// Why an entry is not this user's, if it is not.
#[cfg(unix)]
fn foreign(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    (meta.uid() != me).then(|| format!("owned by uid {}, not {me}", meta.uid()))
}

#[cfg(not(unix))]
fn foreign(_: &std::fs::Metadata) -> Option<String> {
    None
}

#[cfg(unix)]
fn writable_by_others(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o022 != 0
}

#[cfg(not(unix))]
fn writable_by_others(_: &std::fs::Metadata) -> bool {
    false
}

/// Creates `dir` and its missing parents, the new ones readable by this user only.
fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Sets `path`'s permission bits (on Unix; elsewhere only read-only or not).
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: the mode of a shim in dlqspec's own cache"
)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let mut permissions = std::fs::metadata(path)?.permissions();
        permissions.set_readonly(mode & 0o200 == 0);
        std::fs::set_permissions(path, permissions)
    }
}

/// A folder being written, removed (made writable first) when dropped: after it is renamed
/// into place, nothing is left at its name to remove.
struct Fresh {
    path: PathBuf,
}

impl Drop for Fresh {
    fn drop(&mut self) {
        let _ = remove_read_only_tree(&self.path);
    }
}

/// Writes every shim file into a new, unpredictably named folder in `root`, then makes it
/// read-only (files 0444, folders 0555).
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: the shims built into the program, written under a temporary name in dlqspec's own cache"
)]
fn write_fresh(root: &Path) -> io::Result<Fresh> {
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", folder_name()))
        .suffix(".tmp")
        .tempdir_in(root)?;
    let fresh = Fresh { path: temp.keep() };
    for dir in shim_dirs() {
        std::fs::create_dir(fresh.path.join(dir))?;
    }
    for file in SHIM_FILES {
        let path = fresh.path.join(file.path);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        io::Write::write_all(&mut out, file.bytes)?;
        out.sync_all()?;
        set_mode(&path, 0o444)?;
    }
    for dir in shim_dirs().iter().rev() {
        set_mode(&fresh.path.join(dir), 0o555)?;
    }
    set_mode(&fresh.path, 0o555)?;
    Ok(fresh)
}

/// Renames the fresh folder to `dir`. When `dir` is there already, a good one (a concurrent
/// dlqspec's) is kept and the fresh one dropped; a wrong one is moved aside and removed.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: the written shims renamed into place in dlqspec's own cache"
)]
fn install(fresh: &Fresh, dir: &Path) -> io::Result<()> {
    for _ in 0..3 {
        match std::fs::rename(&fresh.path, dir) {
            Ok(()) => return Ok(()),
            Err(error) if std::fs::symlink_metadata(dir).is_err() => return Err(error),
            Err(_) => {}
        }
        match check(dir) {
            Check::Good => return Ok(()),
            Check::Missing => continue,
            Check::NotOurs(why) => {
                return Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
            }
            Check::Wrong(_) => {
                let aside = aside_name(dir);
                std::fs::rename(dir, &aside)?;
                // Only what was moved aside is removed: the folder we named, found wrong.
                remove_read_only_tree(&aside)?;
            }
        }
    }
    Err(io::Error::other(
        "another process keeps replacing it; try again",
    ))
}

/// A free name beside `dir` for a wrong folder on its way out.
fn aside_name(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |time| time.as_nanos());
    dir.with_file_name(format!(".{name}.{}-{stamp}.stale", std::process::id()))
}

/// Removes a tree of ours that may be read-only: each folder is made writable first. Links
/// are removed, never followed.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: removes a read-only tree of this cache's own leftovers"
)]
fn remove_read_only_tree(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    if meta.is_dir() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
        // The folder is opened without following a link and checked to be the one looked at:
        // a folder swapped for a link meanwhile is refused, never made writable or emptied.
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(path)?;
        let opened = dir.metadata()?;
        if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
            return Err(io::Error::other(format!(
                "{} changed while it was removed",
                path.display()
            )));
        }
        dir.set_permissions(std::fs::Permissions::from_mode(0o700))?;
        // Listed and emptied through the open folder, not its name.
        let anchor = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
        for entry in std::fs::read_dir(&anchor)? {
            remove_read_only_tree(&anchor.join(entry?.file_name()))?;
        }
        drop(dir);
        std::fs::remove_dir(path)
    } else {
        std::fs::remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn the_embedded_list_is_every_shim_file_that_ships() {
        let shims = Path::new(env!("CARGO_MANIFEST_DIR")).join("shims");
        let mut on_disk: Vec<String> = walkdir::WalkDir::new(&shims)
            .into_iter()
            .filter_entry(|entry| {
                let name = entry.file_name().to_string_lossy();
                !(name == "node_modules" || (entry.depth() == 1 && name == "tests"))
            })
            .map(|entry| entry.unwrap())
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| {
                let relative = entry.path().strip_prefix(&shims).unwrap();
                relative.to_string_lossy().replace('\\', "/")
            })
            .filter(|path| {
                let name = path.rsplit('/').next().unwrap();
                !matches!(name, "README.md" | "package.json" | "package-lock.json")
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = SHIM_FILES.iter().map(|f| f.path.to_owned()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk, "add the new shim file to SHIM_FILES");
        for file in SHIM_FILES {
            let dir = file.path.rsplit_once('/').map(|(dir, _)| dir).unwrap();
            assert!(
                shim_dirs().contains(&dir),
                "{dir} is no language's shim folder (`Language::shim_folders`)"
            );
        }
    }

    #[test]
    fn the_cache_root_comes_from_the_environment() {
        let root = |vars: &[(&str, &str)]| cache_root(&env_with(vars));
        assert_eq!(
            root(&[("DLQSPEC_CACHE_DIR", "/c"), ("HOME", "/h")]),
            Ok(PathBuf::from("/c"))
        );
        assert_eq!(
            root(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]),
            Ok(PathBuf::from("/x/dlqspec"))
        );
        // A relative XDG_CACHE_HOME is invalid by the spec, and ignored.
        assert_eq!(
            root(&[("XDG_CACHE_HOME", "x"), ("HOME", "/h")]),
            Ok(PathBuf::from("/h/.cache/dlqspec"))
        );
        assert_eq!(
            root(&[("DLQSPEC_CACHE_DIR", ""), ("HOME", "/h")]),
            Ok(PathBuf::from("/h/.cache/dlqspec"))
        );
        assert_eq!(
            root(&[]).unwrap_err(),
            "no folder to keep the shims in: set DLQSPEC_CACHE_DIR (or HOME) to a writable folder"
        );
        assert!(root(&[("DLQSPEC_CACHE_DIR", "rel")]).unwrap().is_absolute());
    }

    #[test]
    fn the_folder_is_written_once_read_only_and_byte_for_byte() {
        let root = tempfile::tempdir().unwrap();
        let cache = root.path().join("deep/cache");
        let dir = materialise(&cache).unwrap();
        assert_eq!(dir, cache.join(folder_name()));
        for file in SHIM_FILES {
            assert_eq!(std::fs::read(dir.join(file.path)).unwrap(), file.bytes);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir), 0o555);
            assert_eq!(mode(&dir.join("node")), 0o555);
            assert_eq!(mode(&dir.join(SHIM_FILES[0].path)), 0o444);
            assert_eq!(mode(&cache), 0o700);
        }
        // Nothing is left beside it but the folder itself.
        let names: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [folder_name()]);
        // A second use finds it good and leaves it as it is.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
            let before = inode(&dir);
            assert_eq!(materialise(&cache).unwrap(), dir);
            assert_eq!(inode(&dir), before);
        }
    }

    /// A change made to a cache folder, as an attacker or a crash would make it.
    type Tamper = fn(&Path);

    /// Makes the read-only cache folder writable and changes it.
    fn tamper(dir: &Path, change: Tamper) {
        set_mode(dir, 0o755).unwrap();
        set_mode(&dir.join("node"), 0o755).unwrap();
        change(dir);
    }

    #[test]
    fn a_tampered_or_partial_folder_is_rebuilt_never_trusted() {
        let cases: Vec<(&str, Tamper)> = vec![
            ("differs from the built-in shim", |dir: &Path| {
                let shim = dir.join("node/dlqspec-shim.mjs");
                set_mode(&shim, 0o644).unwrap();
                std::fs::write(&shim, "process.exit(0)").unwrap();
                set_mode(&shim, 0o444).unwrap();
            }),
            ("shim files are missing", |dir: &Path| {
                std::fs::remove_file(dir.join("node/given.cjs")).unwrap()
            }),
            ("is not a shim file", |dir: &Path| {
                std::fs::create_dir(dir.join("node/node_modules")).unwrap();
            }),
            ("is writable by others", |dir: &Path| {
                set_mode(&dir.join("python"), 0o777).unwrap()
            }),
            ("is not a regular file", |dir: &Path| {
                std::fs::remove_file(dir.join("node/typescript.cjs")).unwrap();
                #[cfg(unix)]
                std::os::unix::fs::symlink("/etc/hostname", dir.join("node/typescript.cjs"))
                    .unwrap();
            }),
        ];
        for (why, change) in cases {
            let root = tempfile::tempdir().unwrap();
            let dir = materialise(root.path()).unwrap();
            tamper(&dir, change);
            match check(&dir) {
                Check::Wrong(reason) => assert!(reason.contains(why), "{why}: {reason}"),
                other => panic!("{why}: {other:?}"),
            }
            assert_eq!(materialise(root.path()).unwrap(), dir);
            assert_eq!(check(&dir), Check::Good, "{why}");
            // The wrong folder moved aside is gone too.
            assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1, "{why}");
        }
    }

    #[test]
    fn a_file_where_the_folder_goes_is_replaced() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(folder_name()), "half").unwrap();
        let dir = materialise(root.path()).unwrap();
        assert_eq!(check(&dir), Check::Good);
    }

    #[test]
    fn concurrent_writers_all_end_with_the_one_good_folder() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().to_path_buf();
        let writers: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || materialise(&path))
            })
            .collect();
        for writer in writers {
            assert_eq!(writer.join().unwrap(), Ok(path.join(folder_name())));
        }
        assert_eq!(std::fs::read_dir(&path).unwrap().count(), 1);
    }

    #[test]
    fn without_dlqspec_shims_a_solution_runs_under_the_cached_shim() {
        use crate::external::launch::{Target, parse_with};
        let root = tempfile::tempdir().unwrap();
        let solution = root.path().join("solution.py");
        std::fs::write(&solution, "").unwrap();
        let cache = root.path().join("cache").to_string_lossy().into_owned();
        let env = |name: &str| (name == "DLQSPEC_CACHE_DIR").then(|| cache.clone());
        let Ok(Target::External(launch)) = parse_with(&solution.to_string_lossy(), &env) else {
            panic!("expected an external target");
        };
        let shim = Path::new(&cache)
            .join(folder_name())
            .join("python/dlqspec_shim.py");
        assert_eq!(launch.args[0], shim.to_string_lossy());
        assert_eq!(std::fs::read(&shim).unwrap(), SHIM_FILES[0].bytes);
        // No folder to write to: the error says which variable fixes it.
        let error = parse_with(&solution.to_string_lossy(), &|_| None).unwrap_err();
        assert!(error.contains("set DLQSPEC_CACHE_DIR"), "{error}");
    }

    #[test]
    fn the_hash_names_the_contents() {
        assert_eq!(shims_hash().len(), 16);
        assert!(shims_hash().chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(folder_name(), format!("shims-{}", shims_hash()));
    }
}
