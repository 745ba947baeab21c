//! Finding spec files: the paths given, and every `.yaml`/`.yml` file below the folders given,
//! without ever leaving the tree they were given in.
//!
//! A spec folder may be written by someone else (a pull request, a shared checkout): a link
//! in it must not make dlqspec read, print or rewrite a file elsewhere, and one odd entry (an
//! editor's lock file, a loop, a folder it cannot open) must not stop every other spec. So a
//! symbolic link is followed only when its real target lies inside the folder given (or, for
//! a file named directly, inside that file's folder), a link loop is cut, and what is not a
//! regular file is skipped with a warning. A folder that cannot be read is reported at its
//! path as a broken spec, so that a run that could not see everything does not pass.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::text::source::{FileId, display_path};

/// A path given on the command line that is not there at all: a usage error.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{path}: {reason}")]
pub struct DiscoverError {
    pub(crate) path: String,
    pub(crate) reason: String,
}

/// A spec file to read, and which file it was when found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSpec {
    /// The path as found (through the folder given), which is the path reports show.
    pub(crate) path: PathBuf,
    /// The file it was when found: reading checks it is still that file, so that a link
    /// swapped in after discovery cannot point the read elsewhere.
    pub(crate) identity: Option<FileId>,
}

/// One entry of a discovery, in report order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscoveredPath {
    Spec(FoundSpec),
    /// A path that should have held specs but cannot be read; reported as a broken spec.
    Unreadable {
        path: PathBuf,
        reason: String,
    },
}

impl DiscoveredPath {
    pub(crate) fn path(&self) -> &Path {
        match self {
            DiscoveredPath::Spec(found) => &found.path,
            DiscoveredPath::Unreadable { path, .. } => path,
        }
    }
}

/// A path left out, with why: shown as a warning, never failing a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub(crate) path: PathBuf,
    pub(crate) reason: String,
}

impl Skipped {
    /// `warning: PATH: skipped, REASON` (not sanitized: renderers do that).
    pub(crate) fn warning(&self) -> String {
        format!(
            "warning: {}: skipped, {}",
            display_path(&self.path),
            self.reason
        )
    }
}

/// What a search of the paths given found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Spec files and unreadable paths, sorted within each folder so runs are reproducible.
    pub entries: Vec<DiscoveredPath>,
    pub(crate) skipped: Vec<Skipped>,
}

/// Spec files below `paths`; see the module documentation for what is followed and skipped.
/// A file named directly is taken whatever its extension. Only a path that does not exist at
/// all is an error.
pub fn discover(paths: &[PathBuf]) -> Result<Discovery, DiscoverError> {
    let mut discovery = Discovery::default();
    for path in paths {
        let Ok(link) = std::fs::symlink_metadata(path) else {
            return Err(DiscoverError {
                path: display_path(path),
                reason: "no such file or folder".into(),
            });
        };
        match std::fs::metadata(path) {
            Ok(target) if target.is_dir() => walk(path, &mut discovery),
            Ok(_) => discovery.entries.push(named_file(path)),
            Err(_) if link.file_type().is_symlink() => {
                return Err(DiscoverError {
                    path: display_path(path),
                    reason: format!(
                        "a symbolic link to {}, which does not exist",
                        link_target(path)
                    ),
                });
            }
            Err(error) => discovery.entries.push(DiscoveredPath::Unreadable {
                path: path.clone(),
                reason: format!("cannot read it: {error}"),
            }),
        }
    }
    let mut seen = std::collections::HashSet::new();
    discovery
        .entries
        .retain(|entry| seen.insert(entry.path().to_path_buf()));
    Ok(discovery)
}

/// The spec files below `paths`, without what was skipped or unreadable (for tools and tests
/// that read a known-good tree).
pub fn spec_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DiscoverError> {
    Ok(discover(paths)?
        .entries
        .into_iter()
        .filter_map(|entry| match entry {
            DiscoveredPath::Spec(found) => Some(found.path),
            DiscoveredPath::Unreadable { .. } => None,
        })
        .collect())
}

/// A file named on the command line: taken when it is a regular file whose real path lies in
/// the folder it was named in.
fn named_file(path: &Path) -> DiscoveredPath {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let unreadable = |reason: String| DiscoveredPath::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let (Ok(real), Ok(root)) = (std::fs::canonicalize(path), std::fs::canonicalize(folder)) else {
        return unreadable("cannot find where it is".into());
    };
    if !real.starts_with(&root) {
        return unreadable(format!(
            "it is a symbolic link to {}, outside its folder {}: dlqspec reads no file through a link that leaves the folder it was given",
            real.display(),
            display_path(folder)
        ));
    }
    match std::fs::metadata(&real) {
        Ok(meta) if meta.is_file() => DiscoveredPath::Spec(FoundSpec {
            path: path.to_path_buf(),
            identity: Some(FileId::of(&meta)),
        }),
        Ok(meta) => unreadable(format!("it is {}, not a regular file", kind_of(&meta))),
        Err(error) => unreadable(format!("cannot read it: {error}")),
    }
}

/// Walks `folder`, following only links that stay inside it.
fn walk(folder: &Path, discovery: &mut Discovery) {
    let Ok(root) = std::fs::canonicalize(folder) else {
        discovery.entries.push(DiscoveredPath::Unreadable {
            path: folder.to_path_buf(),
            reason: "cannot find where the folder is".into(),
        });
        return;
    };
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let walker = WalkDir::new(folder)
        .follow_links(true)
        .into_iter()
        .filter_entry(|entry| {
            if !entry.path_is_symlink() {
                return true;
            }
            let inside =
                std::fs::canonicalize(entry.path()).is_ok_and(|real| real.starts_with(&root));
            if !inside && (entry.file_type().is_dir() || is_spec(entry.path())) {
                skipped.push(Skipped {
                    path: entry.path().to_path_buf(),
                    reason: format!(
                        "a symbolic link to {}, outside {}",
                        link_target(entry.path()),
                        display_path(folder)
                    ),
                });
            }
            inside
        });
    let mut problems = Vec::new();
    for entry in walker {
        match entry {
            Ok(entry) => {
                let file_type = entry.file_type();
                if file_type.is_dir() || !is_spec(entry.path()) {
                    continue;
                }
                let meta = entry.metadata();
                match meta {
                    Ok(meta) if file_type.is_file() => {
                        found.push(DiscoveredPath::Spec(FoundSpec {
                            path: entry.into_path(),
                            identity: Some(FileId::of(&meta)),
                        }))
                    }
                    Ok(meta) => problems.push(Skipped {
                        path: entry.into_path(),
                        reason: format!("it is {}, not a regular file", kind_of(&meta)),
                    }),
                    Err(error) => found.push(DiscoveredPath::Unreadable {
                        path: entry.into_path(),
                        reason: format!("cannot read it: {error}"),
                    }),
                }
            }
            Err(error) => {
                let Some(path) = error.path().map(Path::to_path_buf) else {
                    continue;
                };
                if let Some(ancestor) = error.loop_ancestor() {
                    problems.push(Skipped {
                        reason: format!("a symbolic link loop back to {}", display_path(ancestor)),
                        path,
                    });
                } else if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
                    && std::fs::metadata(&path).is_err()
                {
                    if is_spec(&path) {
                        problems.push(Skipped {
                            reason: format!(
                                "a symbolic link to {}, which does not exist",
                                link_target(&path)
                            ),
                            path,
                        });
                    }
                } else {
                    let why = error
                        .io_error()
                        .map_or_else(|| error.to_string(), ToString::to_string);
                    found.push(DiscoveredPath::Unreadable {
                        reason: format!("cannot read it: {why}"),
                        path,
                    });
                }
            }
        }
    }
    found.sort_by(|a, b| a.path().cmp(b.path()));
    discovery.entries.extend(found);
    skipped.extend(problems);
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    discovery.skipped.extend(skipped);
}

/// Where a link points, as written in it.
fn link_target(path: &Path) -> String {
    std::fs::read_link(path).map_or_else(|_| "?".to_owned(), |target| display_path(&target))
}

/// What kind of file something that is not a regular file is, in words.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "a special file"
    }
}

/// Whether a file is a spec by its name: `.yaml` or `.yml`, but for an exercise folder's
/// `exercise.yaml`, which defines the exercise its specs are of.
pub(crate) fn is_spec(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    ) && path.file_name().and_then(|n| n.to_str()) != Some(EXERCISE_FILE)
}

use crate::contracts::EXERCISE_FILE;

/// How deep below a folder given `exercise_folders` looks for exercises.
const EXERCISE_DEPTH: usize = 4;

/// The exercise folders `paths` (specs, or folders of them) belong to or hold: the folder with
/// an `exercise.yaml` at or above each path, and those below each folder given (a few levels
/// down, not through links, nor into hidden folders, `node_modules` or `target`), each once,
/// in the order found.
pub fn exercise_folders(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut add = |folder: PathBuf| {
        let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
        if !found.contains(&folder) {
            found.push(folder);
        }
    };
    for path in paths {
        if let Some(folder) = crate::contracts::exercise_folder_of(path) {
            add(folder);
        }
        if !path.is_dir() {
            continue;
        }
        let below = WalkDir::new(path)
            .max_depth(EXERCISE_DEPTH)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                let name = entry.file_name().to_string_lossy();
                entry.depth() == 0
                    || !(name.starts_with('.') || name == "node_modules" || name == "target")
            })
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_file() && entry.file_name() == EXERCISE_FILE);
        for entry in below {
            if let Some(folder) = entry.path().parent() {
                add(folder.to_path_buf());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path, discovery: &Discovery) -> Vec<String> {
        discovery
            .entries
            .iter()
            .map(|entry| {
                entry
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect()
    }

    #[test]
    fn folders_are_walked_for_yaml_files_in_sorted_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for name in ["b.yaml", "a.yml", "notes.txt", "sub/c.yaml"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let found = discover(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(names(dir.path(), &found), ["a.yml", "b.yaml", "sub/c.yaml"]);
        assert!(found.skipped.is_empty());
    }

    #[test]
    fn a_missing_path_is_an_error() {
        let error = discover(&[PathBuf::from("/no/such/dlqspec/path")]).unwrap_err();
        assert_eq!(error.reason, "no such file or folder");
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_only_inside_the_tree_and_odd_entries_are_skipped() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.yaml"), "x").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/a.yaml"), "").unwrap();
        symlink(root.join("real"), root.join("inside")).unwrap();
        symlink(root.join("real/a.yaml"), root.join("b.yaml")).unwrap();
        symlink(outside.path().join("secret.yaml"), root.join("out.yaml")).unwrap();
        symlink(outside.path(), root.join("out-dir")).unwrap();
        symlink("nobody@host.1234", root.join(".#a.yaml")).unwrap();
        symlink(root, root.join("real/loop")).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("fifo.yaml"))
            .status()
            .unwrap();
        assert!(status.success());
        let found = discover(&[root.to_path_buf()]).unwrap();
        assert_eq!(
            names(root, &found),
            ["b.yaml", "inside/a.yaml", "real/a.yaml"]
        );
        let root_shown = display_path(root);
        let outside_shown = display_path(outside.path());
        let skipped: Vec<(String, String)> = found
            .skipped
            .iter()
            .map(|s| {
                let name = s.path.strip_prefix(root).unwrap().to_string_lossy();
                let reason = s
                    .reason
                    .replace(&outside_shown, "OUT")
                    .replace(&root_shown, "ROOT");
                (name.into_owned(), reason)
            })
            .collect();
        let expected = [
            (
                ".#a.yaml",
                "a symbolic link to nobody@host.1234, which does not exist",
            ),
            ("fifo.yaml", "it is a FIFO, not a regular file"),
            ("inside/loop", "a symbolic link loop back to ROOT"),
            ("out-dir", "a symbolic link to OUT, outside ROOT"),
            (
                "out.yaml",
                "a symbolic link to OUT/secret.yaml, outside ROOT",
            ),
            ("real/loop", "a symbolic link loop back to ROOT"),
        ]
        .map(|(name, reason)| (name.to_owned(), reason.to_owned()));
        assert_eq!(skipped, expected);
        // Named directly, a link out of its folder is refused at its path.
        let refused = discover(&[root.join("out.yaml")]).unwrap();
        assert!(
            matches!(&refused.entries[..], [DiscoveredPath::Unreadable { reason, .. }] if reason.contains("outside its folder")),
            "{refused:?}"
        );
    }
}
